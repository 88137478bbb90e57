// What the webhook test files share: a real receiver on 127.0.0.1 and the calls that make hooks and events.
import type { Test } from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestUser } from '../helper.js'
import type { App } from '../../src/app.js'
export interface Received { path: string; headers: http.IncomingHttpHeaders; raw: Buffer }

/**
 * A real receiver on 127.0.0.1. Paths: /ok answers 204; /fail answers 500; /flaky fails its first two
 * requests, then answers 200; /hold keeps each request open until release() is called.
 */
export async function receiver(t: Test) {
  const got: Received[] = []
  const waiters: Array<{ n: number; resolve: () => void }> = []
  const held: http.ServerResponse[] = []
  let flaky = 0
  let droppedHolds = 0
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      got.push({ path: req.url!, headers: req.headers, raw: Buffer.concat(chunks) })
      for (const w of waiters.filter((w) => got.length >= w.n)) { waiters.splice(waiters.indexOf(w), 1); w.resolve() }
      if (req.url === '/ok') res.writeHead(204).end()
      else if (req.url === '/fail') res.writeHead(500).end('down')
      else if (req.url === '/flaky') res.writeHead(++flaky <= 2 ? 503 : 200).end()
      else if (req.url === '/hold') {
        held.push(res); res.on('close',
          () => { if (!res.writableEnded) droppedHolds++ })
      } else res.writeHead(404).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    got,
    /** resolves once n requests in all have arrived */
    received: (n: number) => new Promise<void>((resolve) => {
      if (got.length >= n) resolve(); else waiters.push({ n,
        resolve })
    }),
    release: () => { for (const r of held.splice(0)) r.writeHead(200).end() },
    /** held requests the sender gave up on */
    dropped: () => droppedHolds
  }
}

export const BASE = '/api/v2/developer'
export const ws = (u: TestUser) => ({ ...u.auth, 'x-workspace-id': u.workspaceId })

export async function hookAndChannel(app: App, u: TestUser, url: string, events = ['message.created']) {
  const hook = (await app.inject({ method: 'POST', url: `${BASE}/webhooks`, headers: ws(u),
    payload: { url, events } })).json().data
  const channel = (await app.inject({ method: 'POST', url: '/api/v2/channels', headers: ws(u),
    payload: { name: 'general', type: 'public' } })).json().data
  return { hook, channel }
}
export const post = (app: App, u: TestUser, channelId: string, content = 'hello') =>
  app.inject({ method: 'POST', url: '/api/v2/messages', headers: u.auth, payload: { channel_id: channelId, content } })
/** outbox events to be fanned out that the outbox thread has not expanded yet */
export const eventsToExpand = (app: App) => app.sqlite.prepare(`SELECT COUNT(*) FROM webhook_events
  WHERE expanded = 0 AND seq > ?`).pluck().get(app.outboxSqlite.prepare(`SELECT expanded_through FROM outbox_state`)
  .pluck().get()) as number
export const deliveries = async (app: App, u: TestUser, hookId: string) =>
  (await app.inject({ url: `${BASE}/webhooks/${hookId}/deliveries`, headers: ws(u) })).json().data as Array<{
    id: string; message_id: string; attempt: number; next_attempt_at: string | null; success: boolean;
    status_code: number; event_type: string
  }>

/**
 * A real receiver on 127.0.0.1 that holds requests open (never answering) until `answer()`; from then on it answers
 * at once. `failFirst`: each message's first attempt (by webhook-id) is answered 500 at once instead, and only the
 * attempts after it are held. `ids` lists the held (or, after `answer()`, answered) attempts' webhook-ids;
 * `held(n)` resolves once there have been n of them; `givenUp()` counts held requests the sender gave up on.
 */
export async function holdingReceiver(t: Test, options: { failFirst?: boolean } = {}) {
  const seen = new Set<string>()
  const ids: string[] = []
  const held: http.ServerResponse[] = []
  const waiters: Array<{ n: number; resolve: () => void }> = []
  let answering = false
  let givenUp = 0
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const id = String(req.headers['webhook-id'])
      if (options.failFirst && !seen.has(id)) { seen.add(id); res.writeHead(500).end(); return }
      ids.push(id)
      for (const w of waiters.filter((w) => ids.length >= w.n)) { waiters.splice(waiters.indexOf(w), 1); w.resolve() }
      if (answering) { res.writeHead(204).end(); return }
      held.push(res)
      res.on('close', () => { if (!res.writableEnded) givenUp++ })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hold`,
    ids,
    givenUp: () => givenUp,
    held: (n: number) => new Promise<void>((resolve) => {
      if (ids.length >= n) resolve(); else waiters.push({ n, resolve })
    }),
    answer() {
      answering = true
      for (const res of held.splice(0)) res.writeHead(204).end()
    }
  }
}
