import { Worker } from 'node:worker_threads'
import { workerEntry } from '../worker-entry.js'
import { failedAttempt, type DeliveryAttempt, type OutgoingMessage } from './delivery.js'
import type { FromWorker, SendRequest, ToWorker } from './delivery-worker.js'

const entry = workerEntry(import.meta.url, 'delivery-worker')

/**
 * How much nicer than the process the delivery thread runs: its HTTP exchanges take the cores the request thread
 * leaves idle (see src/thread-priority.ts).
 */
export const DELIVERY_NICENESS = 10

interface Pending { resolve: (a: DeliveryAttempt) => void; message: OutgoingMessage; started: number }

/**
 * Attempts whose signing secrets are given as stored (sealed, secret-box.ts): the thread opens them. An attempt
 * whose current secret cannot be opened fails without sending, with the reason as its error; `onUnreadable` is
 * told (the request thread logs it).
 */
export interface SealedDeliverer {
  /** see Deliverer#deliver; `secrets` as stored, the current one first, each sealed to `webhookId` */
  deliver(url: string, webhookId: string, secrets: readonly string[], message: OutgoingMessage,
    signal?: AbortSignal): Promise<DeliveryAttempt>
  close(): void
}

/**
 * A deliverer whose attempts run in a worker thread: the HTTP exchanges, signatures, address checks and the
 * opening of sealed secrets (an AES-GCM decryption each, ~14 µs) of a burst leave the request thread. Attempts
 * asked for in one turn go to the thread in one message, and its results come back in batches. A thread that
 * dies fails its attempts in flight (they are retried) and is replaced on the next attempt. `webhookKey` is the
 * data dir's `webhook-key` (secret-box.ts), handed to the thread in memory.
 */
export function createWorkerDeliverer(opts: { allowPrivate: boolean; allow?: readonly string[];
  timeoutMs?: number; webhookKey: string;
  onUnreadable(webhookId: string, error: string): void }): SealedDeliverer {
  let worker: Worker | undefined
  let next = 0
  const pending = new Map<number, Pending>()
  let outgoing: SendRequest[] = []
  let closed = false

  function spawn(): Worker {
    const w = new Worker(entry.script, { eval: entry.eval, workerData: { allowPrivate: opts.allowPrivate,
      allow: [...opts.allow ?? []],
      timeoutMs: opts.timeoutMs, webhookKey: opts.webhookKey, niceness: DELIVERY_NICENESS } })
    w.unref()
    w.on('message', (results: FromWorker) => {
      for (const { n, attempt, unreadable } of results) {
        const p = pending.get(n)
        if (unreadable) opts.onUnreadable(unreadable, attempt.error ?? '')
        if (!p) continue
        pending.delete(n)
        p.resolve(attempt)
      }
      if (pending.size === 0) w.unref()
    })
    const fail = (why: string) => {
      if (worker === w) worker = undefined
      for (const [n, p] of pending) { pending.delete(n); p.resolve(failedAttempt(p.message, why, p.started)) }
    }
    w.on('error', (err) => fail(`delivery thread failed: ${err.message}`))
    w.on('exit', () => fail('delivery thread stopped'))
    return w
  }

  function flush() {
    const send = outgoing
    outgoing = []
    if (send.length === 0) return
    worker ??= spawn()
    worker.ref()
    worker.postMessage({ send } satisfies ToWorker)
  }

  return {
    deliver(url, webhookId, secrets, message, signal) {
      const started = performance.now()
      if (closed || signal?.aborted) return Promise.resolve(failedAttempt(message, 'aborted', started))
      const n = ++next
      return new Promise<DeliveryAttempt>((resolve) => {
        const onAbort = () => {
          if (!pending.delete(n)) return
          worker?.postMessage({ abort: [n] } satisfies ToWorker)
          resolve(failedAttempt(message, 'aborted', started))
        }
        pending.set(n,
          { resolve: (a) => { signal?.removeEventListener('abort', onAbort); resolve(a) }, message, started })
        if (outgoing.length === 0) queueMicrotask(flush)
        outgoing.push({ n, url, webhookId, secrets: [...secrets], message })
        signal?.addEventListener('abort', onAbort, { once: true })
      })
    },
    close() {
      closed = true
      const w = worker
      worker = undefined
      void w?.terminate()
    }
  }
}
