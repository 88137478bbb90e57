// The delivery thread: makes the HTTP attempts the event bus hands it (signing, address guard, timeouts), so
// the request thread spends a message each way on a delivery instead of an HTTP exchange.
import { parentPort, workerData } from 'node:worker_threads'
import { createDeliverer, type DeliveryAttempt, type OutgoingMessage } from './delivery.js'

export interface SendRequest { n: number; url: string; secrets: string[]; message: OutgoingMessage }
export type ToWorker = { send?: SendRequest[]; abort?: number[] }
export type FromWorker = Array<{ n: number; attempt: DeliveryAttempt }>

const port = parentPort!
const deliverer = createDeliverer(workerData as { allowPrivate: boolean; timeoutMs?: number })
const controllers = new Map<number, AbortController>()
let finished: FromWorker = []
let posting = false

// results go back together, once per turn
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
      if (!posting) { posting = true; setImmediate(post) }
    })
  }
  for (const n of msg.abort ?? []) controllers.get(n)?.abort()
})
