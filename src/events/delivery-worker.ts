// The delivery thread: makes the HTTP attempts the event bus hands it (signing, address guard, timeouts), so
// the request thread spends a message each way on a delivery instead of an HTTP exchange.
import { parentPort, workerData } from 'node:worker_threads'
import { createDeliverer, type DeliveryAttempt, type OutgoingMessage } from './delivery.js'
import { lowerThreadPriority } from './thread-priority.js'

export interface SendRequest { n: number; url: string; secrets: string[]; message: OutgoingMessage }
export type ToWorker = { send?: SendRequest[]; abort?: number[] }
export type FromWorker = Array<{ n: number; attempt: DeliveryAttempt }>

const port = parentPort!

const options = workerData as { allowPrivate: boolean; timeoutMs?: number; niceness: number }
// on a machine with few cores, a stream of deliveries waits for the cores the requests leave idle
lowerThreadPriority(options.niceness)
const deliverer = createDeliverer(options)
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

port.on('message', (msg: ToWorker) => {
  for (const job of msg.send ?? []) {
    const controller = new AbortController()
    controllers.set(job.n, controller)
    void deliverer.deliver(job.url, job.secrets, job.message, controller.signal).then((attempt) => {
      controllers.delete(job.n)
      finished.push({ n: job.n, attempt })
      if (!posting) { posting = true; setTimeout(post, RESULTS_EVERY_MS) }
    })
  }
  for (const n of msg.abort ?? []) controllers.get(n)?.abort()
})
