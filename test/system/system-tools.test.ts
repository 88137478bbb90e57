import t from 'tap'
import net from 'node:net'
import { needsPrograms, needsPostgres } from '../system-tools.js'

/** a stand-in for tap's test object that records what a missing program or server made of it */
function recorder() {
  const calls: Array<{ kind: 'skip' | 'fail'; line: string }> = []
  return { calls, skip: (line: string) => { calls.push({ kind: 'skip', line }) }, fail: (line: string) => {
    calls.push({ kind: 'fail', line })
  } }
}

/** runs `fn` with CI set to `ci` (or unset), restoring it after */
async function withCi<T>(ci: string | undefined, fn: () => T | Promise<T>): Promise<T> {
  const before = process.env.CI
  if (ci === undefined) delete process.env.CI
  else process.env.CI = ci
  try { return await fn() } finally {
    if (before === undefined) delete process.env.CI
    else process.env.CI = before
  }
}

t.test('a missing program skips the test in one line saying what to install; under CI=true it fails', async (t) => {
  const present = recorder()
  t.equal(await withCi(undefined, () => needsPrograms(present, ['sh'], 'apt-get install dash')), true)
  t.same(present.calls, [], 'a program on the path: the test runs')

  const missing = recorder()
  t.equal(await withCi(undefined, () => needsPrograms(missing, ['sh', 'cairn-no-such-program'],
    'apt-get install cairn-no-such-program')), false)
  t.same(missing.calls, [{ kind: 'skip',
    line: 'needs cairn-no-such-program: install with `apt-get install cairn-no-such-program`' }])
  t.notMatch(missing.calls[0].line, /\n/, 'one line')

  const ci = recorder()
  t.equal(await withCi('true', () => needsPrograms(ci, ['cairn-no-such-program'], 'apt-get install x')), false)
  t.same(ci.calls.map((c) => c.kind), ['fail'], 'CI never passes by skipping')
})

t.test('no PostgreSQL server answering skips in one line; under CI=true it fails', async (t) => {
  // a port nothing listens on: taken and let go again
  const port = await new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
  const url = `postgres://postgres@127.0.0.1:${port}/test`
  const quiet = recorder()
  t.equal(await withCi(undefined, () => needsPostgres(quiet, url)), false)
  t.equal(quiet.calls.length, 1)
  t.match(quiet.calls[0], { kind: 'skip', line: new RegExp(`^needs a PostgreSQL server at 127\\.0\\.0\\.1:${port} `) })
  const ci = recorder()
  t.equal(await withCi('true', () => needsPostgres(ci, url)), false)
  t.same(ci.calls.map((c) => c.kind), ['fail'])
})
