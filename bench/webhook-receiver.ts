// The webhook receiver of bench/webhooks.ts, in a process of its own: in the bench's process its 500 requests/s
// shared the event loop that timestamps the message responses, and added its own delays to their latencies.
// Prints {"port"} once it listens; over IPC, {burst: n} starts counting deliveries of burst messages and
// {burstDone} answers once n have arrived; {count} asks for the deliveries received so far.
import http from 'node:http'
import type { AddressInfo } from 'node:net'

let delivered = 0
let burstDelivered = 0
let burstTarget = Infinity

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    delivered++
    if (Buffer.concat(chunks).includes('"content":"burst') && ++burstDelivered === burstTarget) {
      process.send!({ burstDone: true })
    }
    res.writeHead(204).end()
  })
})

process.on('message', (m: { burst?: number; count?: true }) => {
  if (m.burst !== undefined) { burstDelivered = 0; burstTarget = m.burst }
  if (m.count) process.send!({ delivered })
})
process.on('disconnect', () => { server.close(); process.exit(0) })

server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port }))
})
