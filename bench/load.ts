// `npm run bench -- load`: a mixed workload (searches, uploads, artifact writes, messages fanned out to a
// webhook) at rising concurrency; throughput, p99, errors and the server's memory per stage.
// BENCH_LOAD_SECONDS (default 300) is the whole run; it is split evenly over the stages.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import autocannon from 'autocannon'
import { startServer, stopServer, table } from './lib.js'

export async function run() {
  const total = Number(process.env.BENCH_LOAD_SECONDS ?? 300)
  const stages = [2, 8, 32]
  const stageSeconds = Math.max(5, Math.floor(total / stages.length))
  let delivered = 0
  const receiver = http.createServer((req, res) => {
    req.resume(); req.on('end',
      () => { delivered++; res.writeHead(204); res.end() })
  })
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
  const { info, child } = await startServer<{ address: string; token: string; workspaceId: string }>('cairn',
    ['knowledge', '20000'])
  const base = info.address
  const auth = `Bearer ${info.token}`
  const json = { authorization: auth, 'content-type': 'application/json', 'x-workspace-id': info.workspaceId }
  const post = async (url: string,
    body: object) => (await fetch(base + url,
    { method: 'POST', headers: json, body: JSON.stringify(body) })).json() as Promise<{ data: { id: string } }>
  await post('/api/v2/developer/webhooks', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`, events: ['message.created'] })
  const channel = (await post('/api/v2/channels', { name: 'load', type: 'public' })).data.id
  const boundary = 'loadboundary'
  const upload = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="note.md"\r\n` +
    `Content-Type: text/markdown\r\n\r\n# Load\n\n${'A small note for the load test. '.repeat(40)}\r\n` +
    `--${boundary}--\r\n`
  const mixes: Array<{ name: string; weight: number; opts: autocannon.Options }> = [
    { name: 'search', weight: 4,
      opts: { url: `${base}/api/knowledge/search`, method: 'POST', headers: json,
        body: JSON.stringify({ query: 'kalo', limit: 10 }) } },
    { name: 'artifact write', weight: 2,
      opts: { url: `${base}/api/v2/artifacts`, method: 'POST', headers: json,
        body: JSON.stringify({ type: 'task_plan', title: 'load', content: { step: 1 } }) } },
    { name: 'message + webhook', weight: 1,
      opts: { url: `${base}/api/v2/messages`, method: 'POST', headers: json,
        body: JSON.stringify({ channel_id: channel, content: 'hello under load' }) } },
    { name: 'upload', weight: 1,
      opts: { url: `${base}/api/knowledge/upload`, method: 'POST',
        headers: { authorization: auth, 'content-type': `multipart/form-data; boundary=${boundary}` }, body: upload } }
  ]
  const rows = []
  const memory = async () => (await (await fetch(`${base}/bench/memory`)).json()) as { rssMb: number; heapMb: number }
  const start = await memory()
  for (const connections of stages) {
    const weightSum = mixes.reduce((n, m) => n + m.weight, 0)
    const results = await Promise.all(mixes.map((m) => autocannon({
      ...m.opts, duration: stageSeconds, connections: Math.max(1, Math.round((connections * m.weight) / weightSum))
    })))
    const mem = await memory()
    for (const [i, r] of results.entries()) {
      rows.push({
        connections, kind: mixes[i].name, 'req/s': Math.round(r.requests.average), 'p99 ms': r.latency.p99,
        errors: r.errors + r.timeouts, non2xx: r.non2xx, 'rss MB': Math.round(mem.rssMb),
        'heap MB': Math.round(mem.heapMb)
      })
    }
  }
  const end = await memory()
  await stopServer(child)
  receiver.close()
  table(rows)
  console.log(`memory: rss ${Math.round(start.rssMb)} → ${Math.round(end.rssMb)} MB, ` +
    `heap ${Math.round(start.heapMb)} → ${Math.round(end.heapMb)} MB after GC; ` +
    `${delivered} webhook deliveries received; ${total} s in all`)
}
