import t from 'tap'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { build, signup, createKey, ROOT } from '../helper.js'
import { needsPrograms } from '../system-tools.js'

const PACKAGE = path.join(ROOT, 'clients/python')

// cairn_client's unittest suite against a Cairn listening here; without python3 it skips in one line (fails under CI)
t.test('the Python client (python3 -m unittest) against a listening Cairn', async (t) => {
  if (!needsPrograms(t, ['python3'], 'apt-get install python3')) return
  const watched = new Set<string>()
  const waiters = new Map<string, Array<() => void>>()
  const app = await build(t, {
    before: (app) => {
      // hooks for the Python tests: wait for background indexing, flush the developer log, wait until a review is
      // awaited
      app.post('/test/idle', { config: { auth: 'public' } }, async () => { await app.jobs.idle(); return {} })
      app.post('/test/flush', { config: { auth: 'public' } }, async () => { app.devLog.flush(); return {} })
      app.post('/test/watching', { config: { auth: 'public' } }, async (request) => {
        const id = (request.body as { id: string }).id
        if (!watched.has(id)) await new Promise<void>((resolve) => waiters.set(id, [...waiters.get(id) ?? [], resolve]))
        return {}
      })
    }
  })
  const watch = app.reviewWatch.watch
  app.reviewWatch.watch = (id, listener) => {
    watched.add(id)
    for (const resolve of waiters.get(id) ?? []) resolve()
    waiters.delete(id)
    return watch(id, listener)
  }
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  const u = await signup(app)
  const other = await signup(app)
  const key = await createKey(app, u,
    ['knowledge:read', 'knowledge:write', 'artifacts:read', 'artifacts:write', 'write'])

  // a Standard Webhooks delivery signed by the reference library, for the Python verifier
  const secret = 'whsec_' + randomBytes(32).toString('hex')
  const oldSecret = 'whsec_' + randomBytes(32).toString('hex')
  const body = JSON.stringify({ event: 'workflow.completed', data: { id: 'r1', note: 'ünïcode' } })
  const stamp = new Date()
  const signature =
    `${new Webhook(oldSecret).sign('msg_py', stamp, body)} ${new Webhook(secret).sign('msg_py', stamp, body)}`
  const webhook = { body, secret, oldSecret,
    headers: { 'webhook-id': 'msg_py', 'webhook-timestamp': String(Math.floor(stamp.getTime() / 1000)),
      'webhook-signature': signature } }

  const env = {
    ...process.env,
    PYTHONPATH: path.join(PACKAGE, 'src'),
    PYTHONDONTWRITEBYTECODE: '1',
    CAIRN_TEST_URL: url,
    CAIRN_TEST_KEY: key.key,
    CAIRN_TEST_JWT: u.token,
    CAIRN_TEST_EMAIL: u.email,
    CAIRN_TEST_PASSWORD: u.password,
    CAIRN_TEST_WORKSPACE: u.workspaceId,
    CAIRN_TEST_OTHER_JWT: other.token,
    CAIRN_TEST_OTHER_WORKSPACE: other.workspaceId,
    CAIRN_TEST_WEBHOOK: JSON.stringify(webhook)
  }
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn('python3', ['-m', 'unittest', 'discover', '-s', 'tests', '-v'], { env, cwd: PACKAGE })
    let output = ''
    child.stdout.on('data', (d) => { output += d })
    child.stderr.on('data', (d) => { output += d })
    child.on('error', (err) => resolve({ code: -1, output: `could not start python3: ${err.message}` }))
    child.on('close', (code) => resolve({ code, output }))
  })
  t.equal(code, 0, 'python3 -m unittest passes')
  t.match(output, /Ran \d+ tests/)
  t.notMatch(output, /skipped/, 'nothing skipped')
  t.comment(output.split('\n').filter((l) => / \.\.\. |^Ran /.test(l)).join('\n'))
})
