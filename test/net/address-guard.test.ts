import t from 'tap'
import { checkPublicUrl, isPublicAddress } from '../../src/net/address-guard.js'
import { hostile } from '../fixtures/hostile-urls.js'

t.test('at least 30 hostile URLs are refused', async (t) => {
  t.ok(hostile.length >= 30)
  // internal.test resolves to a loopback address (as a rebinding name would)
  const resolve = async (host: string) => host === 'internal.test' ? ['127.0.0.1']
    : host.replace(/\.$/, '').toLowerCase() === 'localhost' ? ['127.0.0.1', '::1'] : ['93.184.216.34']
  for (const url of hostile) {
    await t.rejects(checkPublicUrl(url, { allowPrivate: false, resolve }), { name: 'UrlNotAllowedError' }, url)
  }
})

t.test('public URLs pass; private ones only when allowed', async (t) => {
  const resolve = async () => ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']
  t.equal((await checkPublicUrl('https://hooks.example.com/x?y=1', { allowPrivate: false, resolve })).hostname, 'hooks.example.com')
  t.equal((await checkPublicUrl('http://8.8.8.8/', { allowPrivate: false })).hostname, '8.8.8.8')
  t.equal((await checkPublicUrl('http://127.0.0.1:9999/', { allowPrivate: true })).port, '9999')
  await t.rejects(checkPublicUrl('ftp://127.0.0.1/', { allowPrivate: true }), { name: 'UrlNotAllowedError' },
    'scheme still checked')
  await t.rejects(checkPublicUrl('http://a:b@127.0.0.1/', { allowPrivate: true }), { name: 'UrlNotAllowedError' }, 'credentials still refused')
  // one private address among public ones is enough to refuse
  await t.rejects(checkPublicUrl('http://mixed.example/', { allowPrivate: false, resolve: async () => ['93.184.216.34', '10.1.2.3'] }))
})

t.test('address classes', async (t) => {
  for (const ip of ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111']) t.ok(isPublicAddress(ip), ip)
  for (const ip of ['127.0.0.1', '10.1.1.1', '::1', '::ffff:8.8.8.8', 'fe80::1', 'not-an-ip',
    '']) t.notOk(isPublicAddress(ip), ip)
})

t.test('embedded IPv4 forms are judged by the address they carry; reserved IPv6 ranges are not public', async (t) => {
  const notPublic = [
    '::127.0.0.1', '::7f00:1', '::10.0.0.1', '::ffff:0:127.0.0.1', '::ffff:0:7f00:1', '::ffff:0:192.168.1.1',
    '64:ff9b::127.0.0.1',
    '64:ff9b::a9fe:a9fe', '2002:7f00:1::', '2002:a00:1:ffff::1', '3fff::', '3fff:fff:ffff::1', '5f00::1',
    '5f00:ffff::1', '2001:db8::1',
    '2001:db8:ffff::1', '2001::1', '64:ff9b:1::808:808', '::ffff:8.8.8.8', '::', '::1', '::0.0.0.1', 'fe80::1%eth0',
    '100.64.0.1', '192.0.0.9', '198.51.100.7',
    // the rest of the reserved ::/8, whatever IPv4 address its last groups spell
    '::ffff:0:0:7f00:1', '::ffff:0:0:808:808', '::1:0:0:0:808:808', '0:0:1::808:808', '::ffff:ffff:0:0:7f00:1',
    'ff:ffff::1', '1::', '::1:7f00:1', '64:ff9a::808:808', '64:ff9b:0:1::808:808'
  ]
  for (const ip of notPublic) t.notOk(isPublicAddress(ip), ip)
  const isPublic = ['::8.8.8.8', '::808:808', '::ffff:0:8.8.8.8', '64:ff9b::8.8.8.8', '64:ff9b::808:808',
    '2002:808:808::1', '2a00:1450:4001::1', '2606:4700:4700::1111']
  for (const ip of isPublic) t.ok(isPublicAddress(ip), ip)
  // as URLs, whatever spelling the parser normalises them to
  for (const url of ['http://[::127.0.0.1]/', 'http://[::ffff:0:127.0.0.1]/', 'http://[3fff::1]/', 'http://[5f00::1]/',
    'http://[::ffff:0:0:7f00:1]/', 'http://[::ffff:0:0:127.0.0.1]:8080/']) {
    await t.rejects(checkPublicUrl(url, { allowPrivate: false }), { name: 'UrlNotAllowedError' }, url)
  }
})
