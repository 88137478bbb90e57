// The delivery thread: makes the HTTP attempts the event bus hands it (signing, address guard, timeouts), so
// the request thread spends a message each way on a delivery instead of an HTTP exchange.
import { parentPort, workerData } from 'node:worker_threads'
import { createDeliverer, failedAttempt, type DeliveryAttempt, type OutgoingMessage } from './delivery.js'
import { lowerThreadPriority } from '../thread-priority.js'
import { secretBox } from './secret-box.js'

/** `secrets` as stored (sealed to `webhookId`), the current one first */
export interface SendRequest { n: number; url: string; webhookId: string; secrets: string[]; message: OutgoingMessage }
export type ToWorker = { send?: SendRequest[]; abort?: number[] }
/** `unreadable`: the webhook whose current secret could not be opened (the attempt failed with the reason) */
export type FromWorker = Array<{ n: number; attempt: DeliveryAttempt; unreadable?: string }>

const port = parentPort!

const options = workerData as { allowPrivate: boolean; allow: string[];
  timeoutMs?: number; webhookKey: string; niceness: number }
// on a machine with few cores, a stream of deliveries waits for the cores the requests leave idle
lowerThreadPriority(options.niceness)
const deliverer = createDeliverer(options)
const box = secretBox(options.webhookKey)
const controllers = new Map<number, AbortController>()
let finished: FromWorker = []
let posting = false

/**
 * results go back together, at most once per RESULTS_EVERY_MS: the 10 deliveries of an event to 10 receivers end
 * within a few ms of each other, and each message wakes the request thread
 */
const RESULTS_EVERY_MS = 5

function post() {
  posting = false
  const batch = finished
  finished = []
  port.postMessage(batch)
}

function done(n: number, attempt: DeliveryAttempt, unreadable?: string) {
  finished.push(unreadable === undefined ? { n, attempt } : { n, attempt, unreadable })
  if (!posting) { posting = true; setTimeout(post, RESULTS_EVERY_MS) }
}

port.on('message', (msg: ToWorker) => {
  for (const job of msg.send ?? []) {
    const [current, ...replaced] = job.secrets
    let secrets: string[]
    try {
      // (a replaced secret that cannot be read only loses its second signature: rotating is the way out)
      secrets = [box.open(current, job.webhookId), ...replaced.flatMap((s) => {
        try { return [box.open(s, job.webhookId)] } catch { return [] }
      })]
    } catch (err) {
      // recorded as a failed attempt (retried, then the webhook goes inactive), and logged by the request thread
      done(job.n, failedAttempt(job.message, (err as Error).message), job.webhookId)
      continue
    }
    const controller = new AbortController()
    controllers.set(job.n, controller)
    void deliverer.deliver(job.url, secrets, job.message, controller.signal).then((attempt) => {
      controllers.delete(job.n)
      done(job.n, attempt)
    })
  }
  for (const n of msg.abort ?? []) controllers.get(n)?.abort()
})
