import { EventEmitter } from 'node:events'
import { fileURLToPath } from 'node:url'
import { Launcher, type LaunchedProcess } from './launcher.js'
import type { ExtractorKind } from './formats.js'
import type { ChunkOptions } from './chunker.js'
import type { ExtractLimits } from './extract.js'
import { UnreadableFileError } from './text.js'
import { typeScriptHooks } from '../worker-entry.js'

export interface ExtractJob {
  source: string
  target: string
  kind: ExtractorKind
  chunk: ChunkOptions
  limits: ExtractLimits
}

export type ExtractOutcome =
  | { ok: true; textLength: number; chunkCount: number }
  | { ok: false; unreadable: boolean; outOfMemory?: boolean; message: string }

export interface WorkerLimits extends ExtractLimits {
  /** the longest one file may take: its process is then killed */
  timeoutMs: number
  /** the JavaScript heap of one extraction process */
  maxHeapMb: number
  /**
   * the address space of one extraction process: bounds everything it allocates, the buffers pdf.js and
   * zlib hold outside the JavaScript heap included (a heap limit alone does not)
   */
  maxMemoryMb: number
  /** extraction processes running at once; one organization or user holds at most concurrency - 1 of them */
  concurrency: number
  /**
   * extraction time (recent, halving every minute) after which an organization or user counts as heavy: heavy
   * callers together hold at most concurrency - 1 processes, and a light caller that finds every process
   * taken gets one more, so that long files never make a newcomer wait
   */
  heavyMs: number
}

export const DEFAULT_WORKER_LIMITS: WorkerLimits = {
  timeoutMs: 60_000,
  maxHeapMb: 768,
  maxMemoryMb: 1536,
  maxUncompressedBytes: 256 * 1024 * 1024,
  // as much text as a plain-text upload may have (the knowledge upload limit)
  maxTextBytes: 50 * 1024 * 1024,
  maxPdfPages: 5000,
  pdfPageTimeoutMs: 5000,
  concurrency: 2,
  heavyMs: 5000
}

/** Who an extraction is for: turns are taken per organization and per user. */
export interface ExtractCaller { organization: string; user: string }

/** What the pool reports, for tests and logs: `queued`, `start` and `end`, each with the caller and source. */
export interface ExtractEvent { caller: string; user: string; source: string }

// The process starts from a small bootstrap. pdf.js requires @napi-rs/canvas when it loads (for rendering,
// which text extraction never does); that native module reserves more than a gigabyte of address space, so
// it is refused here, and the classes pdf.js takes from it are empty stand-ins. From source (tsx, tap) the
// worker is TypeScript: its loader (tsx, a dev dependency, or the tests' own) is registered after pdf.js has loaded
// (through tsx's module hooks pdf.js took seconds to load).
const fromSource = fileURLToPath(import.meta.url).endsWith('.ts')
const workerUrl = new URL(fromSource ? './extract-worker.ts' : './extract-worker.js', import.meta.url)
const PRELOAD = ['pdfjs-dist/legacy/build/pdf.mjs', 'pdfjs-dist/legacy/build/pdf.worker.mjs']
const bootstrap = `import Module from 'node:module'
const createRequire = Module.createRequire
Module.createRequire = (from) => {
  const require = createRequire(from)
  return Object.assign((id) => {
    if (id === '@napi-rs/canvas') throw new Error('not loaded for text extraction')
    return require(id)
  }, require)
}
for (const name of ['DOMMatrix', 'ImageData', 'Path2D']) globalThis[name] ??= class {}
await Promise.all(${JSON.stringify(PRELOAD)}.map((m) => import(m)))
${fromSource ? `await ${typeScriptHooks()}` : ''}
await import(${JSON.stringify(workerUrl.href)})
// the thread pool (zlib, files) starts now, before the address space is limited to what this holds
await import('node:fs/promises').then((fs) => fs.readFile('/proc/self/status', 'utf8')).then((status) =>
  process.send({ ready: Number(/VmSize:\\s*(\\d+)/.exec(status)[1]) }))`

/** usage halves over this time */
const HALF_LIFE_MS = 60_000

interface Usage { ms: number; at: number }
interface Running { caller: ExtractCaller; started: number }

export function createExtractor(limits: WorkerLimits = DEFAULT_WORKER_LIMITS) {
  /** idle processes, kept warm (pdf.js and mammoth stay loaded); one that failed is never reused */
  const idle: LaunchedProcess[] = []
  const all = new Set<LaunchedProcess>()
  const perCaller = Math.max(1, limits.concurrency - 1)
  /** running extractions: who for, and since when */
  const running = new Set<Running>()
  /** files waiting, per organization, in arrival order */
  const waiting = new Map<string, Array<{ caller: ExtractCaller; go: (entry: Running) => void }>>()
  /** when each organization was last handed a process: among equals, the one served longest ago goes first */
  const lastServed = new Map<string, number>()
  /** recent extraction time, per `o:` organization and `u:` user */
  const usage = new Map<string, Usage>()
  let turn = 0
  const events = new EventEmitter()

  const decayed = (u: Usage | undefined, now: number) => (u ? u.ms * 2 ** (-(now - u.at) / HALF_LIFE_MS) : 0)
  /** an organization's or user's recent extraction time, what is running now included */
  function recent(key: string, now: number): number {
    let ms = decayed(usage.get(key), now)
    for (const r of running) {
      if (`o:${r.caller.organization}` === key || `u:${r.caller.user}` === key) ms += now - r.started
    }
    return ms
  }
  const weight = (c: ExtractCaller, now: number) => Math.max(recent(`o:${c.organization}`, now),
    recent(`u:${c.user}`, now))
  const holding = (c: ExtractCaller) => {
    let n = 0
    for (const r of running) if (r.caller.organization === c.organization || r.caller.user === c.user) n++
    return n
  }

  const launcher = new Launcher(() => process.emitWarning('prlimit (util-linux) is not installed: text extraction ' +
    'runs without its address-space limit (install util-linux to bound its memory)', { code: 'CAIRN_NO_PRLIMIT' }))
  /**
   * A new extraction process, loaded, and then limited: its address space may grow by `maxMemoryMb` past
   * what it holds once loaded (prlimit from util-linux sets RLIMIT_AS on it; where there is none, as on macOS or a
   * trimmed image, extraction still runs, bounded by the stream measurement, its heap limit and its time limit, and
   * the service says once, as a warning, that the hard memory backstop is missing). Started by the launcher
   * (./launcher.ts), at the background priority (src/thread-priority.ts).
   */
  async function startProcess(): Promise<LaunchedProcess> {
    // WebAssembly's trap handler reserves gigabytes of address space per memory: it is turned off (bounds are
    // checked in code instead)
    const child = await launcher.start([`--max-old-space-size=${limits.maxHeapMb}`, '--disable-wasm-trap-handler',
      '--input-type=module', '--eval', bootstrap], limits.maxMemoryMb * 1024 * 1024)
    all.add(child)
    child.once('exit', () => all.delete(child))
    try {
      await new Promise<void>((resolve, reject) => {
        const onMessage = (m: { ready?: number }) => {
          if (typeof m.ready !== 'number') return
          settle()
          resolve()
        }
        const onExit = () => {
          settle()
          reject(new Error(`The text extraction process did not start: ${child.stderrTail}`))
        }
        const settle = () => child.off('message', onMessage).off('exit', onExit)
        child.on('message', onMessage).on('exit', onExit)
      })
    } catch (err) {
      child.kill('SIGKILL')
      throw err
    }
    // a process waiting for work does not keep the service (or a test) alive
    child.unref()
    return child
  }

  /** Hands free processes to waiting callers in turn (the one served longest ago first), within the caps. */
  function pump() {
    for (;;) {
      const now = performance.now()
      const isHeavy = (c: ExtractCaller) => weight(c, now) >= limits.heavyMs
      const heavyRunning = [...running].filter((r) => isHeavy(r.caller)).length
      const free = running.size < limits.concurrency
      let chosen: string | undefined
      for (const [org, queue] of waiting) {
        const { caller } = queue[0]
        if (holding(caller) >= perCaller) continue
        // heavy work leaves a process for others; light work may take one more when heavy work holds them all
        const allowed = isHeavy(caller)
          ? free && (limits.concurrency === 1 || heavyRunning < limits.concurrency - 1)
          : free || (running.size === limits.concurrency && heavyRunning === running.size)
        if (!allowed) continue
        if (chosen === undefined || (lastServed.get(org) ?? -1) < (lastServed.get(chosen) ?? -1)) chosen = org
      }
      if (chosen === undefined) return
      const queue = waiting.get(chosen)!
      const { caller, go } = queue.shift()!
      if (queue.length === 0) waiting.delete(chosen)
      lastServed.set(chosen, ++turn)
      const entry = { caller, started: now }
      running.add(entry)
      go(entry)
    }
  }

  async function slot(caller: ExtractCaller): Promise<() => void> {
    const entry = await new Promise<Running>((go) => {
      const queue = waiting.get(caller.organization)
      if (queue) queue.push({ caller, go })
      else waiting.set(caller.organization, [{ caller, go }])
      pump()
    })
    return () => {
      running.delete(entry)
      const now = performance.now()
      for (const key of [`o:${caller.organization}`, `u:${caller.user}`]) {
        const ms = decayed(usage.get(key), now) + (now - entry.started)
        usage.set(key, { ms, at: now })
      }
      // forget callers whose usage has worn off
      for (const [key, u] of usage) if (decayed(u, now) < 1) usage.delete(key)
      if (!waiting.has(caller.organization) && ![...running].some((r) => r.caller.organization ===
        caller.organization)) lastServed.delete(caller.organization)
      pump()
    }
  }

  const outOfMemory = () => new UnreadableFileError(
    `Text extraction needed more than the ${limits.maxMemoryMb} MB of memory allowed: refused`)

  function run(child: LaunchedProcess, job: ExtractJob) {
    type Result = { result?: { textLength: number; chunkCount: number }; error?: Error; reusable: boolean }
    return new Promise<Result>((resolve) => {
      const done = (outcome: Result) => {
        clearTimeout(timer)
        child.off('message', onMessage).off('exit', onExit)
        resolve(outcome)
      }
      const onMessage = (o: ExtractOutcome) => done(o.ok
        ? { result: { textLength: o.textLength, chunkCount: o.chunkCount }, reusable: true }
        : o.outOfMemory ? { error: outOfMemory(), reusable: false }
          : { error: o.unreadable ? new UnreadableFileError(o.message) : new Error(o.message), reusable: true })
      const onExit = (code: number | null, signal: string | null) => {
        const tail = child.stderrTail
        // V8 aborts (SIGABRT, SIGTRAP) when the address space or the heap is exhausted
        const memory = /out of memory|allocation failed|failed to reserve|heap limit/i.test(tail) ||
          signal === 'SIGABRT' || signal === 'SIGTRAP' || signal === 'SIGSEGV' || signal === 'SIGBUS'
        done({ error: memory ? outOfMemory()
          : new UnreadableFileError(`Text extraction stopped unexpectedly (${signal ?? `exit ${code}`})`),
        reusable: false })
      }
      const timer = setTimeout(() => done({
        error: new UnreadableFileError(
          `Text extraction took longer than ${Math.round(limits.timeoutMs / 1000)} s: refused`),
        reusable: false
      }), limits.timeoutMs)
      child.on('message', onMessage).on('exit', onExit)
      child.send(job)
    })
  }

  /**
   * Extracts `source` into the text file `target` in a pooled process with a time and memory limit, taking
   * turns with other organizations and users. Rejects with UnreadableFileError for a file that cannot be
   * read within the limits.
   */
  async function extract(source: string, target: string, kind: ExtractorKind, chunk: ChunkOptions,
    who: ExtractCaller | string = '') {
    const caller = typeof who === 'string' ? { organization: who, user: who } : who
    const event: ExtractEvent = { caller: caller.organization, user: caller.user, source }
    events.emit('queued', event)
    const done = await slot(caller)
    events.emit('start', event)
    try {
      let child = idle.pop()
      // one that died while idle (killed, or its launcher gone) is passed over
      while (child && !child.connected) child = idle.pop()
      child ??= await startProcess()
      child.ref()
      const { maxUncompressedBytes, maxTextBytes, maxPdfPages, pdfPageTimeoutMs } = limits
      const outcome = await run(child,
        { source, target, kind, chunk, limits: { maxUncompressedBytes, maxTextBytes, maxPdfPages, pdfPageTimeoutMs } })
      if (outcome.reusable && child.connected) {
        child.unref()
        idle.push(child)
      } else {
        child.kill('SIGKILL')
      }
      if (outcome.error) throw outcome.error
      return outcome.result!
    } finally {
      done()
      events.emit('end', event)
    }
  }

  /** Stops every process (at shutdown). */
  async function close() {
    idle.length = 0
    await Promise.all([...all].map((child) => new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) { resolve(); return }
      child.once('exit', () => resolve())
      // held until it is gone: an idle process does not hold the event loop, and its exit would not be seen
      child.ref()
      child.kill('SIGKILL')
    })))
    await launcher.close()
  }

  return { extract, close, events }
}

export type Extractor = ReturnType<typeof createExtractor>
