import t from 'tap'
import { checkPublicUrl, isPublicAddress } from '../src/net/address-guard.js'

const hostile = [
  'http://127.0.0.1/', 'http://127.1/', 'http://2130706433/', 'http://0x7f000001/', 'http://0177.0.0.1/', 'http://0x7f.0.0.1/',
  'http://017700000001/', 'http://localhost/', 'http://localhost:8080/hook', 'http://LOCALHOST./', 'http://0.0.0.0/', 'http://0/',
  'http://10.0.0.1/', 'http://172.16.5.4/', 'http://172.31.255.255/', 'http://192.168.1.1/', 'http://100.64.0.1/',
  'http://169.254.169.254/latest/meta-data/', 'http://169.254.0.1/', 'http://224.0.0.1/', 'http://239.255.255.250/',
  'http://255.255.255.255/', 'http://[::1]/', 'http://[::]/', 'http://[::ffff:127.0.0.1]/', 'http://[::ffff:7f00:1]/',
  'http://[::ffff:169.254.169.254]/', 'http://[fe80::1]/', 'http://[fc00::1]/', 'http://[fd12:3456::1]/', 'http://[ff02::1]/',
  'http://[64:ff9b::7f00:1]/', 'http://198.18.0.1/', 'http://192.0.2.1/', 'http://user:pass@example.com/', 'http://user@example.com/',
  'ftp://example.com/', 'file:///etc/passwd', 'gopher://example.com/', 'javascript:alert(1)', 'not a url', 'http://internal.test/'
]

t.test('at least 30 hostile URLs are refused', async (t) => {
  t.ok(hostile.length >= 30)
  // internal.test resolves to a loopback address (as a rebinding name would)
  const resolve = async (host: string) => host === 'internal.test' ? ['127.0.0.1'] : host.replace(/\.$/, '').toLowerCase() === 'localhost' ? ['127.0.0.1', '::1'] : ['93.184.216.34']
  for (const url of hostile) {
    await t.rejects(checkPublicUrl(url, { allowPrivate: false, resolve }), { name: 'UrlNotAllowedError' }, url)
  }
})

t.test('public URLs pass; private ones only when allowed', async (t) => {
  const resolve = async () => ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']
  t.equal((await checkPublicUrl('https://hooks.example.com/x?y=1', { allowPrivate: false, resolve })).hostname, 'hooks.example.com')
  t.equal((await checkPublicUrl('http://8.8.8.8/', { allowPrivate: false })).hostname, '8.8.8.8')
  t.equal((await checkPublicUrl('http://127.0.0.1:9999/', { allowPrivate: true })).port, '9999')
  await t.rejects(checkPublicUrl('ftp://127.0.0.1/', { allowPrivate: true }), { name: 'UrlNotAllowedError' }, 'scheme still checked')
  await t.rejects(checkPublicUrl('http://a:b@127.0.0.1/', { allowPrivate: true }), { name: 'UrlNotAllowedError' }, 'credentials still refused')
  // one private address among public ones is enough to refuse
  await t.rejects(checkPublicUrl('http://mixed.example/', { allowPrivate: false, resolve: async () => ['93.184.216.34', '10.1.2.3'] }))
})

t.test('address classes', async (t) => {
  for (const ip of ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111']) t.ok(isPublicAddress(ip), ip)
  for (const ip of ['127.0.0.1', '10.1.1.1', '::1', '::ffff:8.8.8.8', 'fe80::1', 'not-an-ip', '']) t.notOk(isPublicAddress(ip), ip)
})
