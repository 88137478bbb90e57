import t from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type dns from 'node:dns'
import { checkPublicUrl, guardedLookup } from '../../src/net/address-guard.js'
import { parseAllowList } from '../../src/net/allow-list.js'
import { ConfigError, loadConfig } from '../../src/config.js'
import { hostile } from '../fixtures/hostile-urls.js'
import { build, signup } from '../helper.js'

const ALLOW = ['10.0.0.0/8', '192.168.50.0/24', 'fd00::/8', 'homeassistant.lan', '*.office.lan', '100.64.1.0/24']
/** names of the LAN as its resolver answers them; internal.test stands for a name resolving to loopback */
const names: Record<string, string[]> = {
  'homeassistant.lan': ['192.168.1.20'],
  'n8n.internal': ['10.20.30.40'],
  'printer.office.lan': ['172.16.4.4', 'fd12::4'],
  'metadata.office.lan': ['169.254.169.254'],
  'loop.office.lan': ['127.0.0.1'],
  'internal.test': ['127.0.0.1'],
  localhost: ['127.0.0.1', '::1']
}
const resolve = async (host: string) => names[host.replace(/\.$/, '').toLowerCase()] ?? ['93.184.216.34']

t.test('with an allow list, every hostile URL it does not name is still refused', async (t) => {
  const allow = ['10.20.0.0/16', '192.168.50.0/24', 'fd00:1::/32', 'homeassistant.lan', '*.office.lan']
  for (const url of hostile) {
    await t.rejects(checkPublicUrl(url, { allowPrivate: false, allow, resolve }), { name: 'UrlNotAllowedError' }, url)
  }
})

t.test('the allowed ranges and names pass; a named host reaches LAN addresses only', async (t) => {
  const ok = ['http://10.1.2.3:8123/hook', 'http://n8n.internal/webhook/x', 'http://192.168.50.7/',
    'http://homeassistant.lan:8123/api/webhook/abc', 'http://printer.office.lan/', 'http://[fd00::1]/',
    'http://[::ffff:10.0.0.9]/', 'http://100.64.1.5/', 'https://hooks.example.com/']
  for (const url of ok) t.ok(await checkPublicUrl(url, { allowPrivate: false, allow: ALLOW, resolve }), url)
  // a name on the list is not a way to loopback, cloud metadata, or a LAN address outside the list's ranges by IP
  for (const url of ['http://metadata.office.lan/', 'http://loop.office.lan/', 'http://office.lan/',
    'http://homeassistant.lan.evil.example/', 'http://192.168.1.20/', 'http://100.64.2.1/', 'http://[fc00::1]/']) {
    const refused = url === 'http://homeassistant.lan.evil.example/' || url === 'http://office.lan/'
      ? checkPublicUrl(url, { allowPrivate: false, allow: ALLOW, resolve: async () => ['192.168.1.20'] })
      : checkPublicUrl(url, { allowPrivate: false, allow: ALLOW, resolve })
    await t.rejects(refused, { name: 'UrlNotAllowedError' }, url)
  }
  // loopback only when a range names it
  t.ok(await checkPublicUrl('http://127.0.0.1:9000/', { allowPrivate: false, allow: ['127.0.0.1'] }))
  await t.rejects(checkPublicUrl('http://127.0.0.2:9000/', { allowPrivate: false, allow: ['127.0.0.1'] }))
})

t.test('the refusal says how to allow a private receiver', async (t) => {
  await t.rejects(checkPublicUrl('http://192.168.1.20/', { allowPrivate: false }),
    { message: /CAIRN_WEBHOOK_ALLOW.*10\.0\.0\.0\/8,homeassistant\.lan/ })
})

t.test('at connect time the address is checked again: an allowed name rebound to loopback is refused', async (t) => {
  let answer = '192.168.1.20'
  const resolver = ((_host: string, _opts: unknown, cb: (e: null, a: dns.LookupAddress[]) => void) =>
    cb(null, [{ address: answer, family: 4 }])) as unknown as typeof dns.lookup
  const lookup = guardedLookup(false, ALLOW, resolver)
  const look = (host: string) => new Promise<string>((resolve, reject) =>
    lookup(host, { family: 0 }, (err, address) => err ? reject(err) : resolve(address as string)))
  t.equal(await look('homeassistant.lan'), '192.168.1.20')
  answer = '127.0.0.1'
  await t.rejects(look('homeassistant.lan'), { name: 'UrlNotAllowedError', message: /127\.0\.0\.1/ })
  answer = '10.9.9.9'
  t.equal(await look('anything.example'), '10.9.9.9', 'inside an allowed range, whatever the name')
  answer = '192.168.1.20'
  await t.rejects(look('anything.example'), { name: 'UrlNotAllowedError' }, 'a LAN address outside the ranges')
})

t.test('CAIRN_WEBHOOK_ALLOW is read at start; a wrong entry stops it with a clear error', async (t) => {
  t.same(loadConfig({}).webhookAllow, [])
  t.same(loadConfig({ CAIRN_WEBHOOK_ALLOW: ' 10.0.0.0/8, homeassistant.lan ,fd00::/8,*.lan,[fd00::1]' }).webhookAllow,
    ['10.0.0.0/8', 'homeassistant.lan', 'fd00::/8', '*.lan', '[fd00::1]'])
  for (const bad of ['http://homeassistant.lan', 'homeassistant.lan:8123', '10.0.0.0/33', 'fd00::/129', 'a b', '*',
    '10.0.0.0/8/1', 'host/path']) {
    let error: unknown
    try { loadConfig({ CAIRN_WEBHOOK_ALLOW: `10.0.0.0/8,${bad}` }) } catch (err) { error = err }
    t.ok(error instanceof ConfigError, bad)
    t.match((error as Error).message, `CAIRN_WEBHOOK_ALLOW: ${JSON.stringify(bad)}`, bad)
  }
  t.same(parseAllowList('').entries, [])
})

t.test('through the API: a LAN receiver is refused with the way out named, then allowed and delivered to',
  async (t) => {
    const got: string[] = []
    const server = http.createServer((req, res) => {
      req.resume()
      req.on('end', () => { got.push(req.url!); res.writeHead(204).end() })
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    t.teardown(() => { server.closeAllConnections(); server.close() })
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ha`

    const closed = await build(t)
    const u1 = await signup(closed)
    const refused = await closed.inject({ method: 'POST', url: '/api/v2/developer/webhooks',
      headers: { ...u1.auth, 'x-workspace-id': u1.workspaceId }, payload: { url, events: ['message.created'] } })
    t.equal(refused.statusCode, 400)
    t.equal(refused.json().code, 'URL_NOT_ALLOWED')
    t.match(refused.json().message, /CAIRN_WEBHOOK_ALLOW/)

    const open = await build(t, { config: { webhookAllow: ['127.0.0.1/32'] } })
    const u2 = await signup(open)
    const headers = { ...u2.auth, 'x-workspace-id': u2.workspaceId }
    const made = await open.inject({ method: 'POST', url: '/api/v2/developer/webhooks', headers,
      payload: { url, events: ['message.created'] } })
    t.equal(made.statusCode, 201)
    const ping = await open.inject({ method: 'POST', url: `/api/v2/developer/webhooks/${made.json().data.id}/test`,
      headers })
    t.equal(ping.json().data.delivered, true, 'delivered through the delivery thread, which applies the same list')
    t.same(got, ['/ha'])
    // another private address stays refused on the same server
    const other = await open.inject({ method: 'POST', url: '/api/v2/developer/webhooks', headers,
      payload: { url: 'http://127.0.0.2/', events: ['message.created'] } })
    t.equal(other.json().code, 'URL_NOT_ALLOWED')
  })
