import t from 'tap'
import { ConfigError, loadConfig, trustedProxies } from '../../src/config.js'
import { trustProxyOption } from '../../src/net/client-address.js'

t.test('CAIRN_TRUST_PROXY: off by default; addresses, CIDR ranges, range names or a number of proxies', async (t) => {
  const parse = (v: string | undefined) => {
    const problems: string[] = []
    return { value: trustedProxies(v, problems), problems }
  }
  for (const off of [undefined, '', ' ', 'false', '0']) t.same(parse(off), { value: false, problems: [] }, String(off))
  t.same(parse('1').value, 1)
  t.same(parse('127.0.0.1').value, ['127.0.0.1'])
  t.same(parse(' 10.0.0.0/8, ::1 ,fd00::/8,loopback ').value, ['10.0.0.0/8', '::1', 'fd00::/8', 'loopback'])
  for (const bad of ['true', '*', '10.0.0.0/33', '::1/129', '10.0.0.1/8/1', 'proxy.example.org', '11', '1.2.3']) {
    t.equal(parse(bad).problems.length, 1, bad)
  }
  t.match(parse('true').problems[0], /would let any client name its own address/)
  t.throws(() => loadConfig({ CAIRN_TRUST_PROXY: 'true' }), ConfigError)
  t.same(loadConfig({}).trustProxy, false)
  t.same(loadConfig({ CAIRN_TRUST_PROXY: '2' }).trustProxy, 2)

  const hops = trustProxyOption(2) as (address: string, hop: number) => boolean
  t.same([hops('10.0.0.1', 0), hops('10.0.0.2', 1), hops('10.0.0.3', 2)], [true, true, false],
    'two proxies: the socket\'s peer and the one before it')
  t.same(trustProxyOption(['127.0.0.1']), ['127.0.0.1'])
  t.equal(trustProxyOption(false), false)
})
