// A server for the benchmarks, in its own process: `bare` (Fastify hello-world) or `cairn`.
// Prints one JSON line with its address (and, for cairn, credentials) once it listens.
import Fastify from 'fastify'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { loadConfig } from '../src/config.js'
import { buildApp } from '../src/app.js'
import { writeWaitsOf } from '../src/db/write-intent.js'
import type { SearchSettingsOverrides } from '../src/knowledge/search-settings.js'
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks'
import { seedArtifacts, seedPassages } from './seed.js'
import { cpuMicros } from './proc.js'

const mode = process.argv[2]

if (mode === 'bare') {
  const app = Fastify()
  app.get('/hello', async () => ({ hello: 'world' }))
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  console.log(JSON.stringify({ address }))
  process.on('SIGTERM', () => { void app.close().then(() => process.exit(0)) })
} else if (mode === 'cairn') {
  // BENCH_DATA_DIR: a data dir seeded earlier and kept between runs (bench/search.ts)
  const kept = process.env.BENCH_DATA_DIR
  const dataDir = kept ?? fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'))
  if (!kept) process.on('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }))
  const config = {
    ...loadConfig({ CAIRN_DATA_DIR: dataDir, CAIRN_SIGNUP: 'open' }),
    rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 },
    allowPrivateUrls: true,
    // BENCH_SEARCH_SETTINGS (JSON of search-settings.ts overrides, e.g. {"substring":{"pairs":false}}): the search
    // workers run with them (bench/search.ts compares the indexes this way); the service reads no such variable
    searchSettings: process.env.BENCH_SEARCH_SETTINGS
      ? JSON.parse(process.env.BENCH_SEARCH_SETTINGS) as SearchSettingsOverrides : undefined
  }
  const app = await buildApp(config)
  // bench only: the worst event-loop delay since the last call
  const loop = monitorEventLoopDelay({ resolution: 10 })
  loop.enable()
  app.get('/bench/memory', { config: { auth: 'public' } }, async () => {
    if (global.gc) global.gc()
    return { rssMb: process.memoryUsage().rss / 1048576, heapMb: process.memoryUsage().heapUsed / 1048576 }
  })
  // since the last call: the loop's delay, the longest GC pause, and the blocking waits of the request thread's writes
  // for another thread's write lock (src/db/write-intent.ts: how many, their total and the longest)
  let longestGc = 0
  let waitsBefore = { count: 0, ms: 0 }
  app.get('/bench/loop-delay', { config: { auth: 'public' } }, async () => {
    const waits = writeWaitsOf(app.sqlite) ?? { count: 0, ms: 0 }
    const out = { maxMs: loop.max / 1e6, p99Ms: loop.percentile(99) / 1e6, gcMaxMs: longestGc,
      lockWaits: waits.count - waitsBefore.count, lockWaitMs: waits.ms - waitsBefore.ms }
    loop.reset()
    longestGc = 0
    waitsBefore = { ...waits }
    return out
  })
  // bench only, read and reset by GET /bench/request-times: how long each POST /api/v2/messages took inside the
  // server, from its parsed headers to the end of its response (ms), when it started, how long it waited for
  // another thread's write lock, and the main thread's GC pauses ([start, ms], on the same clock);
  // BENCH_SCHEDSTAT=1: also the request thread's time on a core and waiting for one meanwhile ([cpu, wait] ms,
  // from /proc/thread-self/schedstat; the rest of a request's time it was blocked: the disk, a lock)
  const schedstat = process.env.BENCH_SCHEDSTAT === '1'
    ? () => fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').slice(0, 2).map(Number)
    : undefined
  let requestTimes: number[] = []
  let requestStarts: number[] = []
  let requestSched: Array<[number, number]> = []
  let requestLockWaits: number[] = []
  const lockWaitMs = () => writeWaitsOf(app.sqlite)?.ms ?? 0
  let gcPauses: Array<[number, number]> = []
  app.server.on('request', (req, res) => {
    if (req.method !== 'POST' || req.url !== '/api/v2/messages') return
    const sched = schedstat?.()
    const start = performance.now()
    const waitedBefore = lockWaitMs()
    res.on('finish', () => {
      requestTimes.push(performance.now() - start)
      requestStarts.push(start)
      requestLockWaits.push(lockWaitMs() - waitedBefore)
      if (sched) {
        const end = schedstat!()
        requestSched.push([(end[0] - sched[0]) / 1e6, (end[1] - sched[1]) / 1e6])
      }
    })
  })
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcPauses.push([e.startTime, e.duration])
      longestGc = Math.max(longestGc, e.duration)
    }
  }).observe({ entryTypes: ['gc'] })
  app.get('/bench/request-times', { config: { auth: 'public' } }, async () => {
    const out = { ms: requestTimes, starts: requestStarts, gc: gcPauses, sched: requestSched,
      lockWaits: requestLockWaits }
    requestTimes = []
    requestLockWaits = []
    requestStarts = []
    requestSched = []
    gcPauses = []
    return out
  })
  // a small write on the server's connection, timed: what a request's write waits while a worker holds the lock,
  // from the request's routing to the write's end (the wait for its turn, src/http/write-turn.ts, comes before the
  // handler), in the server (a client's own stalls are not the server's)
  app.sqlite.exec('CREATE TABLE IF NOT EXISTS bench_write_probe (at INTEGER)')
  const probeWrite = app.sqlite.prepare('INSERT INTO bench_write_probe (at) VALUES (?)')
  app.post('/bench/write', { config: { auth: 'public' } }, async (_request, reply) => {
    probeWrite.run(Date.now())
    return { ms: reply.elapsedTime }
  })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  if (kept) {
    console.log(JSON.stringify({ address, dataDir }))
    process.on('SIGTERM', () => { void app.close().then(() => process.exit(0)) })
    await new Promise(() => {})
  }
  const signup = await app.inject({ method: 'POST', url: '/api/v2/auth/signup',
    payload: { email: 'bench@example.test', password: 'benchmark password' } })
  const token = signup.json().data.token as string
  const key = await app.inject({ method: 'POST', url: '/api/v2/api-keys', headers: { authorization: `Bearer ${token}` },
    payload: { name: 'bench', scopes: ['read'] } })
  const { id, key: apiKey } = key.json().data as { id: string; key: string }
  const seeded = process.argv[3] === 'artifacts'
    ? seedArtifacts(app.sqlite, signup.json().data, Number(process.argv[4] ?? 100_000))
    : process.argv[3] === 'knowledge'
      ? seedPassages(app.sqlite, signup.json().data, Number(process.argv[4] ?? 200_000))
      : {}
  // the seeded passages are indexed in the background (trigram file, pair and run indexes, character filters):
  // measuring starts once that is done, so that no case is timed against the catch-up
  if (process.argv[3]) await backgroundSettled()
  console.log(JSON.stringify({ address, token, keyId: id, apiKey, workspaceId: signup.json().data.workspaceId, dataDir,
    ...seeded }))
  process.on('SIGTERM', () => { void app.close().then(() => process.exit(0)) })
} else {
  console.error('usage: server.ts bare|cairn')
  process.exit(2)
}

/** Resolves once the process's threads have used under 5 % of a core for two half-seconds in a row (at most 120 s). */
async function backgroundSettled(): Promise<void> {
  const until = Date.now() + 120_000
  let quiet = 0
  while (quiet < 2 && Date.now() < until) {
    const before = cpuMicros(process.pid) ?? 0
    await new Promise((resolve) => setTimeout(resolve, 500))
    quiet = (cpuMicros(process.pid) ?? 0) - before < 25_000 ? quiet + 1 : 0
  }
}
