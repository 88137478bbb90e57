import t from 'tap'
import { checkPublicUrl, isPublicAddress } from '../../src/net/address-guard.js'
import { hostile } from '../fixtures/hostile-urls.js'

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
