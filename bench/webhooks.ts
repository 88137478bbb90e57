// `npm run bench -- webhooks`: what webhook fan-out costs the request that causes it, and how fast it delivers.
// Each round starts a fresh server and measures, neighbours in time:
//  - `POST /api/v2/messages` at a steady 50 msg/s with no webhook, then with 10 webhooks subscribed (each message
//    fans out to 10 deliveries): p50/p99 and their ratio;
//  - a burst of BENCH_WEBHOOK_BURST messages (x 10 webhooks) posted as fast as 10 connections allow, quiet and
//    while the 50 msg/s stream runs: deliveries per second, from the first post to the last delivery received.
// BENCH_WEBHOOK_SECONDS (default 10) per steady run, BENCH_WEBHOOK_ROUNDS (default 3).
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import autocannon from 'autocannon'
import { startServer, stopServer, table } from './lib.js'

const HOOKS = 10
const RATE = 50

export async function run() {
  const seconds = Number(process.env.BENCH_WEBHOOK_SECONDS ?? 10)
  const rounds = Number(process.env.BENCH_WEBHOOK_ROUNDS ?? 3)
  const burst = Number(process.env.BENCH_WEBHOOK_BURST ?? 300)

  let delivered = 0
  let burstDelivered = 0
  let burstWaiter: (() => void) | undefined
  let burstTarget = Infinity
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      delivered++
      if (Buffer.concat(chunks).includes('"content":"burst')) {
        if (++burstDelivered >= burstTarget && burstWaiter) { burstWaiter(); burstWaiter = undefined }
      }
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`

  const rows: Array<Record<string, string | number>> = []
  const ratios: number[] = []
  const rates: { quiet: number[]; loaded: number[] } = { quiet: [], loaded: [] }
  for (let round = 1; round <= rounds; round++) {
    const { info, child } = await startServer<{ address: string; token: string; workspaceId: string }>('cairn')
    const headers = { authorization: `Bearer ${info.token}`, 'content-type': 'application/json',
      'x-workspace-id': info.workspaceId }
    const post = async (url: string,
      body: object) => (await fetch(info.address + url,
      { method: 'POST', headers, body: JSON.stringify(body) })).json() as Promise<{ data: { id: string } }>
    const channel = (await post('/api/v2/channels', { name: 'bench', type: 'public' })).data.id
    const messages = (opts: Partial<autocannon.Options>, content = 'steady message') => autocannon({
      url: `${info.address}/api/v2/messages`, method: 'POST', headers,
      body: JSON.stringify({ channel_id: channel, content }), ...opts
    })
    const steady = (duration: number) => messages({ connections: 5, overallRate: RATE, duration })

    await steady(2) // warm-up
    const bare = await steady(seconds)
    for (let i = 0; i < HOOKS; i++) await post('/api/v2/developer/webhooks',
      { url: hookUrl, events: ['message.created'] })
    const before = delivered
    const hooked = await steady(seconds)
    const ratio = hooked.latency.p99 / bare.latency.p99
    ratios.push(ratio)
    rows.push({ round, case: 'no webhook', 'req/s': Math.round(bare.requests.average), 'p50 ms': bare.latency.p50,
      'p99 ms': bare.latency.p99, non2xx: bare.non2xx })
    rows.push({ round, case: `${HOOKS} webhooks`, 'req/s': Math.round(hooked.requests.average),
      'p50 ms': hooked.latency.p50, 'p99 ms': hooked.latency.p99, non2xx: hooked.non2xx, 'p99 ratio': ratio.toFixed(2),
      deliveries: delivered - before })

    // bursts: quiet, then under the steady stream
    for (const loaded of [false, true]) {
      const background = loaded ? steady(seconds) : undefined
      if (loaded) await new Promise((r) => setTimeout(r, 1000))
      burstDelivered = 0
      burstTarget = burst * HOOKS
      const allDelivered = new Promise<void>((r) => { burstWaiter = r })
      const started = performance.now()
      await messages({ connections: 10, amount: burst }, 'burst')
      await allDelivered
      const rate = (burst * HOOKS) / ((performance.now() - started) / 1000)
      rates[loaded ? 'loaded' : 'quiet'].push(rate)
      rows.push({ round, case: `burst ${burst} x ${HOOKS}${loaded ? ` + ${RATE} msg/s` : ''}`,
        'deliveries/s': Math.round(rate) })
      await background
    }
    await stopServer(child)
  }
  receiver.close()
  table(rows)
  const summary = (xs: number[], digits: number) => {
    const s = [...xs].sort((a, b) => a - b)
    return `min ${s[0].toFixed(digits)}, median ${s[Math.floor(s.length / 2)].toFixed(digits)}, ` +
      `max ${s[s.length - 1].toFixed(digits)}`
  }
  console.log(`p99 with ${HOOKS} webhooks / without (target ≤ 1.1): ${summary(ratios, 2)}`)
  console.log(`deliveries/s in a burst, quiet: ${summary(rates.quiet, 0)}; ` +
    `under ${RATE} msg/s (target ≥ 1,000): ${summary(rates.loaded, 0)}`)
}
