import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.dirname(here)

let built = false
/**
 * The servers run compiled, as `npm start` runs Cairn (tsx alone adds ~100 MB of RSS at rest): bench/server.ts
 * (or another script of bench/: `script`) and the code it runs are compiled into dist/ (incremental) once per
 * bench process. BENCH_SOURCE=1 runs them from source with tsx instead.
 */
export function serverEntry(script = 'server'): string[] {
  if (process.env.BENCH_SOURCE === '1') return ['--import', 'tsx', path.join(here, `${script}.ts`)]
  if (!built) {
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')
    const r = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.bench.json')], { stdio: 'inherit' })
    if (r.status !== 0) throw new Error('building the bench server failed')
    built = true
  }
  return [path.join(root, 'dist', 'bench', `${script}.js`)]
}

/** Starts bench/server.ts in a child process and resolves with its first JSON line. */
export async function startServer<T>(mode: string, args: string[] = [],
  env: Record<string, string> = {}): Promise<{ info: T; child: ChildProcess }> {
  // BENCH_CPU_PROF=<dir>: the server writes a V8 CPU profile there when it stops
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF,
    ...(process.env.BENCH_CPU_PROF_INTERVAL ? [`--cpu-prof-interval=${process.env.BENCH_CPU_PROF_INTERVAL}`] : [])] : []
  // glibc's malloc arenas as `npm start` and the Dockerfile set them (MALLOC_ARENA_MAX, docs/self-hosting.md#systemd):
  // with one arena per thread, the index, trigram and search threads' freed memory stays in resident memory
  const child = spawn(process.execPath, ['--expose-gc', ...prof, ...serverEntry(), mode, ...args],
    { stdio: ['ignore', 'pipe', 'inherit'], env: { MALLOC_ARENA_MAX: '2', ...process.env, ...env } })
  const info = await new Promise<T>((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString()
      const nl = out.indexOf('\n')
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)) as T)
    })
    child.on('exit', (code) => reject(new Error(`bench server ${mode} exited with ${code}`)))
  })
  return { info, child }
}

export async function stopServer(child: ChildProcess) {
  const done = new Promise((r) => child.once('exit', r))
  child.kill('SIGTERM')
  await done
}

export interface Load { requestsPerSec: number; p50: number; p99: number; non2xx: number }

export async function load(url: string, headers: Record<string, string> = {}, seconds = 8, connections = 10,
  warmUp = true): Promise<Load> {
  // a short warm-up, then the measured run
  if (warmUp) await autocannon({ url, headers, duration: 1, connections })
  const r = await autocannon({ url, headers, duration: seconds, connections })
  return { requestsPerSec: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx }
}

export function table(rows: Array<Record<string, string | number>>) {
  console.table(rows)
}

/** The p-th percentile of `xs` (nearest rank), to a tenth; 0 for none. */
export function pct(xs: number[], p: number): number {
  if (xs.length === 0) return 0
  const s = [...xs].sort((a, b) => a - b)
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] * 10) / 10
}

// The health checker runs in a process of its own, as a load balancer's or an orchestrator's does: timed inside the
// bench process, a probe's time would also hold that process's own stalls (it builds and sends every attack).
const PROBE = `
const base = process.argv[1]
// the first request loads fetch's HTTP client and opens the connection: not a measure of the server
await (await fetch(base + '/api/health')).arrayBuffer()
for (;;) {
  const start = performance.now()
  await (await fetch(base + '/api/health')).arrayBuffer()
  process.stdout.write((performance.now() - start).toFixed(2) + '\\n')
  await new Promise((r) => setTimeout(r, 50))
}`

/** GET /api/health every 50 ms from a process of its own while `going()`; each answer's time (ms) into `into` */
export async function probeHealth(base: string, into: number[], going: () => boolean): Promise<void> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', PROBE, base],
    { stdio: ['ignore', 'pipe', 'inherit'] })
  let partial = ''
  child.stdout!.on('data', (c: Buffer) => {
    const lines = (partial + c.toString()).split('\n')
    partial = lines.pop()!
    for (const line of lines) into.push(Number(line))
  })
  const exited = new Promise((r) => child.once('exit', r))
  while (going()) await new Promise((r) => setTimeout(r, 20))
  child.kill('SIGTERM')
  await exited
}
