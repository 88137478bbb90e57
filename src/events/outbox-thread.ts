import { Worker } from 'node:worker_threads'
import { workerEntry } from '../worker-entry.js'
import { OUTBOX_HOLDER, releaseHolder } from '../db/write-intent.js'
import type { DeliveryAttempt } from './delivery.js'
import type { Chore, FromOutbox, OutboxThreadData, SingleRequest, ToOutbox } from './outbox-worker.js'
import { eventWritten, listenWithoutRun, newWakeFlags } from './wake-flags.js'

const entry = workerEntry(import.meta.url, 'outbox-worker')

/** how long `close()` waits for the thread to record what has finished and end, before it is terminated */
const CLOSE_WAIT_MS = 5000

export interface OutboxThread {
  /**
   * One fan-out run in the thread: resolves once nothing was left to expand or attempt for a while, every
   * outcome recorded; rejects when `signal` stops it (its attempts in flight stay pending) or the thread dies.
   */
  fanout(signal: AbortSignal): Promise<void>
  /** an event was written: wakes the run; with none running, the thread answers with `onKick` */
  wake(): void
  /**
   * One attempt of a message, recorded before this resolves: the attempt, or undefined when there was nothing to
   * attempt (the message is gone, or a retry is no longer due). Rejects when stopped or the thread dies.
   */
  single(request: Omit<SingleRequest, 'n'>, signal?: AbortSignal): Promise<DeliveryAttempt | undefined>
  /** one of the outbox file's other writes (its thread is that file's only writer): what it removed */
  chore(chore: Chore): Promise<Record<string, number>>
  /** records what has finished and ends the thread */
  close(): Promise<void>
}

interface Waiting<T> { resolve(value: T): void; reject(err: Error): void }

/**
 * The request thread's handle on the outbox thread (outbox-worker.ts), started at the first call. A thread that
 * dies fails what it was doing (the jobs are retried) and is started again by the next call.
 */
export function createOutboxThread(given: Omit<OutboxThreadData, 'wakeFlags'>, hooks: {
  /** a wake found no run: queue one */
  onKick(): void
  /** the thread queued retry jobs */
  onRetries(): void
  log(level: 'warn' | 'error', fields: Record<string, unknown>, msg: string): void
}): OutboxThread {
  const data: OutboxThreadData = { ...given, wakeFlags: newWakeFlags() }
  let worker: Worker | undefined
  let run: Waiting<void> | undefined
  let next = 0
  const singles = new Map<number, Waiting<DeliveryAttempt | undefined>>()
  const chores = new Map<number, Waiting<Record<string, number>>>()
  let closed = false

  const busy = () => run !== undefined || singles.size > 0 || chores.size > 0
  function spawn(): Worker {
    // a new thread has no run (one that died may have left the flag down)
    listenWithoutRun(data.wakeFlags)
    const w = new Worker(entry.script, { eval: entry.eval, workerData: data })
    w.on('message', (m: FromOutbox) => {
      if ('done' in m) {
        const r = run
        run = undefined
        if (m.error === undefined) r?.resolve()
        else r?.reject(new Error(m.error))
      } else if ('single' in m) {
        const s = singles.get(m.single)
        singles.delete(m.single)
        if (m.error === undefined) s?.resolve(m.attempt)
        else s?.reject(new Error(m.error))
      } else if ('chore' in m) {
        const c = chores.get(m.chore)
        chores.delete(m.chore)
        if (m.error === undefined) c?.resolve(m.removed ?? {})
        else c?.reject(new Error(m.error))
      } else if ('kick' in m) hooks.onKick()
      else if ('retries' in m) hooks.onRetries()
      else if ('log' in m) hooks.log(m.log, m.fields, m.msg)
      if (!busy()) w.unref()
    })
    const fail = (why: string) => {
      if (worker === w) worker = undefined
      // a thread that ended while it held the write lock cannot signal its end
      releaseHolder(data.intent, OUTBOX_HOLDER)
      const err = new Error(why)
      run?.reject(err)
      run = undefined
      for (const waiting of [...singles.values(), ...chores.values()]) waiting.reject(err)
      singles.clear()
      chores.clear()
    }
    w.on('error', (err) => {
      hooks.log('error', { error: err.message }, 'webhook outbox thread failed')
      fail(`outbox thread failed: ${err.message}`)
    })
    w.on('exit', () => fail('outbox thread stopped'))
    return w
  }
  function send(message: ToOutbox) {
    worker ??= spawn()
    if (busy()) worker.ref()
    worker.postMessage(message)
  }
  /** sends `message`; settles with the thread's answer, as `register` files it; `signal` stops the thread's work */
  function answer<T>(signal: AbortSignal | undefined, register: (waiting: Waiting<T>) => void, message: ToOutbox) {
    return new Promise<T>((resolve, reject) => {
      const stop = () => worker?.postMessage({ stop: true } satisfies ToOutbox)
      const settle = <A extends unknown[]>(fn: (...a: A) => void) => (...a: A) => {
        signal?.removeEventListener('abort', stop)
        fn(...a)
      }
      register({ resolve: settle(resolve), reject: settle(reject) })
      signal?.addEventListener('abort', stop, { once: true })
      send(message)
      if (signal?.aborted) stop()
    })
  }

  return {
    fanout(signal) {
      if (closed) return Promise.reject(new Error('outbox thread closed'))
      if (run) return Promise.reject(new Error('a fan-out run is already under way'))
      return answer<void>(signal, (waiting) => { run = waiting }, { run: true })
    },
    wake() {
      if (closed || !worker) return
      // a message only when the thread asked for one (wake-flags.ts)
      if (eventWritten(data.wakeFlags)) worker.postMessage({ wake: true } satisfies ToOutbox)
    },
    single(request, signal) {
      if (closed) return Promise.reject(new Error('outbox thread closed'))
      const n = ++next
      return answer<DeliveryAttempt | undefined>(signal, (waiting) => singles.set(n, waiting),
        { single: { ...request, n } })
    },
    chore(chore) {
      if (closed) return Promise.reject(new Error('outbox thread closed'))
      const n = ++next
      return answer<Record<string, number>>(undefined, (waiting) => chores.set(n, waiting), { chore, n })
    },
    async close() {
      closed = true
      const w = worker
      if (!w) return
      const ended = new Promise<void>((resolve) => w.once('exit', () => resolve()))
      w.postMessage({ close: true } satisfies ToOutbox)
      const cut = setTimeout(() => void w.terminate(), CLOSE_WAIT_MS)
      await ended
      clearTimeout(cut)
    }
  }
}
