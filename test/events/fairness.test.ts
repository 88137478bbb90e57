import t, { type Test } from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { build, signup, type TestUser } from '../helper.js'
import type { App } from '../../src/app.js'
import { holdingReceiver } from './webhook-helpers.js'

/** a receiver that answers at once; `received(n)` resolves once n requests have arrived */
async function promptReceiver(t: Test) {
  let count = 0
  const waiters: Array<{ n: number; resolve: () => void }> = []
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(204).end()
      count++
      for (const w of waiters.filter((w) => count >= w.n)) { waiters.splice(waiters.indexOf(w), 1); w.resolve() }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ok`,
    received: (n: number) => new Promise<void>((resolve) => {
      if (count >= n) resolve()
      else waiters.push({ n, resolve })
    })
  }
}

const ws = (u: TestUser) => ({ ...u.auth, 'x-workspace-id': u.workspaceId })
async function hook(app: App, u: TestUser, url: string) {
  const res = await app.inject({ method: 'POST', url: '/api/v2/developer/webhooks', headers: ws(u),
    payload: { url, events: ['message.created'] } })
  if (res.statusCode !== 201) throw new Error(res.body)
}
async function channel(app: App, u: TestUser): Promise<string> {
  return (await app.inject({ method: 'POST', url: '/api/v2/channels', headers: ws(u),
    payload: { name: 'general', type: 'public' } })).json().data.id
}
const post = (app: App, u: TestUser, channelId: string) =>
  app.inject({ method: 'POST', url: '/api/v2/messages', headers: u.auth, payload: { channel_id: channelId,
    content: 'hello' } })

t.test('one tenant\'s receivers that never answer take only its share of the attempt slots: another tenant\'s ' +
  'delivery goes out while they hang, and every held message is still sent once', async (t) => {
  const app = await build(t, { config: { allowPrivateUrls: true } })
  const hanging = await holdingReceiver(t)
  const prompt = await promptReceiver(t)
  const hostile = await signup(app)
  const other = await signup(app)
  // four webhooks of 16 slots each once filled every shared slot; 50 events make 200 messages, more than one
  // organization's waiting ones, so the fetch must pass over them to read the other tenant's
  for (let i = 0; i < 4; i++) await hook(app, hostile, hanging.url)
  const hostileChannel = await channel(app, hostile)
  await hook(app, other, prompt.url)
  const otherChannel = await channel(app, other)
  // the outbox and delivery threads are up
  t.equal((await post(app, other, otherChannel)).statusCode, 201)
  await prompt.received(1)

  for (let i = 0; i < 50; i++) t.equal((await post(app, hostile, hostileChannel)).statusCode, 201)
  t.equal((await post(app, other, otherChannel)).statusCode, 201)

  await prompt.received(2)
  t.equal(hanging.givenUp(), 0, 'the other tenant\'s delivery did not wait for the hanging attempts to time out')
  t.ok(hanging.ids.length <= 32, `at most half the slots held by one organization (${hanging.ids.length})`)

  hanging.answer()
  await app.jobs.idle()
  t.equal(hanging.ids.length, 200, 'every held message attempted')
  t.equal(new Set(hanging.ids).size, 200, 'each once')
  t.equal(app.outboxSqlite.prepare(`SELECT count(*) FROM webhook_messages WHERE state = 'delivered'`).pluck().get(),
    202)
})
