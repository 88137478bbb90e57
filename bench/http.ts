// `npm run bench -- http`: requests/s of authenticated JSON GETs (JWT, API key, a knowledge listing) against
// bare Fastify.
//
// Both servers run at once, each in its own process, started fresh every round (see run()). Within a round
// each Cairn case is measured right after its own bare Fastify run: a machine whose speed drifts (a shared VM)
// then slows both sides of a ratio alike. The table gives, per case, the min, median and max of those ratios
// over the rounds, with the median requests/s and latencies, and the servers' CPU time per request.
import fs from 'node:fs'
import os from 'node:os'
import { startServer, stopServer, load, table, type Load } from './lib.js'
import { cpuMicros } from './proc.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
/** passages seeded for the listing case (200 per document: 20 documents) */
const PASSAGES = 4000
/** BENCH_CASES=jwt,key: only the Cairn cases whose short names are listed (health, jwt, key, listing) */
const ONLY = process.env.BENCH_CASES?.split(',').map((c) => c.trim()).filter(Boolean)

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/**
 * Times the kernel took a process off a core it still wanted (nonvoluntary context switches, from /proc), or
 * undefined. On two cores shared by the server and the load generator this is the main source of noise: a run
 * where the two keep preempting each other (up to one switch per request) costs the server 20-55 % more CPU per
 * request than one where each keeps its core, whatever the code.
 */
function preemptions(pid: number | undefined): number | undefined {
  try {
    return Number(/nonvoluntary_ctxt_switches:\s*(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
  } catch {
    return undefined
  }
}

/** A measured run with the server's CPU µs and preemptions per 1,000 requests. */
async function measured(pid: number | undefined, url: string, headers?: Record<string, string>) {
  const before = cpuMicros(pid)
  const switchesBefore = preemptions(pid)
  const r = await load(url, headers, SECONDS, 10, false)
  const after = cpuMicros(pid)
  const switchesAfter = preemptions(pid)
  const requests = r.requestsPerSec * SECONDS
  return {
    ...r,
    cpuPerRequest: before === undefined || after === undefined || requests === 0 ? NaN : (after - before) / requests,
    preemptedPer1000: switchesBefore === undefined || switchesAfter === undefined || requests === 0 ? NaN
      : (switchesAfter - switchesBefore) * 1000 / requests
  }
}

interface Case { name: string; short?: string; url: string; headers?: Record<string, string> }

export async function run() {
  type Measured = Load & { cpuPerRequest: number; preemptedPer1000: number }
  const runs = new Map<string, { cairn: Measured[]; bare: Measured[]; ratios: number[]; cpuRatios: number[] }>()
  for (let round = 0; round < ROUNDS; round++) {
    // fresh processes every round: now and then a Node process (bare Fastify's too) settles into a state
    // where request objects survive young-generation GCs and the whole process runs slower; one such
    // process then costs one round, not the run
    const bare = await startServer<{ address: string }>('bare')
    type CairnInfo = { address: string; token: string; keyId: string; apiKey: string }
    const cairn = await startServer<CairnInfo>('cairn', ['knowledge', String(PASSAGES)])
    try {
      const { address, token, keyId, apiKey } = cairn.info
      const jwt = { authorization: `Bearer ${token}` }
      const baseline: Case = { name: 'bare Fastify GET /hello', url: `${bare.info.address}/hello` }
      const cases: Case[] = [
        { name: 'Cairn public GET /api/health', short: 'health', url: `${address}/api/health` },
        { name: 'Cairn JWT GET /api/v2/auth/me', short: 'jwt', url: `${address}/api/v2/auth/me`, headers: jwt },
        {
          name: 'Cairn API key GET .../usage',
          short: 'key',
          url: `${address}/api/v2/developer/api-keys/${keyId}/usage`,
          headers: { 'x-api-key': apiKey }
        },
        {
          name: 'Cairn JWT GET /api/knowledge/documents?limit=10',
          short: 'listing',
          url: `${address}/api/knowledge/documents?limit=10`,
          headers: jwt
        }
      ].filter((c) => !ONLY || ONLY.includes(c.short!))
      for (const c of [baseline, ...cases]) await load(c.url, c.headers, 1, 10, false) // warm-up: JIT, caches
      for (const c of cases) {
        const b = await measured(bare.child.pid, baseline.url)
        const r = await measured(cairn.child.pid, c.url, c.headers)
        const entry = runs.get(c.name) ?? { cairn: [], bare: [], ratios: [], cpuRatios: [] }
        entry.cairn.push(r)
        entry.bare.push(b)
        entry.ratios.push(r.requestsPerSec / b.requestsPerSec)
        entry.cpuRatios.push(b.cpuPerRequest / r.cpuPerRequest)
        runs.set(c.name, entry)
      }
    } finally {
      await stopServer(cairn.child)
      await stopServer(bare.child)
    }
  }
  const fixed = (x: number) => x.toFixed(2)
  table([...runs].map(([name, e]) => ({
    case: name,
    'req/s (median)': Math.round(median(e.cairn.map((r) => r.requestsPerSec))),
    'bare req/s (median)': Math.round(median(e.bare.map((r) => r.requestsPerSec))),
    'p50 ms': median(e.cairn.map((r) => r.p50)),
    'p99 ms': median(e.cairn.map((r) => r.p99)),
    non2xx: e.cairn.reduce((n, r) => n + r.non2xx, 0),
    'ratio min': fixed(Math.min(...e.ratios)),
    'ratio median': fixed(median(e.ratios)),
    'ratio max': fixed(Math.max(...e.ratios)),
    'CPU µs/req': fixed(median(e.cairn.map((r) => r.cpuPerRequest))),
    'bare CPU µs/req': fixed(median(e.bare.map((r) => r.cpuPerRequest))),
    'CPU ratio (median)': fixed(median(e.cpuRatios)),
    'preempted /1000 req (median)': Math.round(median(e.cairn.map((r) => r.preemptedPer1000))),
    'bare preempted /1000 req': Math.round(median(e.bare.map((r) => r.preemptedPer1000)))
  })))
  console.log(`${ROUNDS} rounds of ${SECONDS} s per run, fresh servers each round; ` +
    'each Cairn case right after its own bare run; CPU: the server process\'s user + system time per request ' +
    '(CPU ratio: bare\'s over Cairn\'s); preempted: the server\'s nonvoluntary context switches (a run with many ' +
    'is slowed by sharing its core with the load generator, not by its code); load average at the end ' +
    os.loadavg().map((l) => l.toFixed(2)).join(' '))
}
