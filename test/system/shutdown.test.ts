import t from 'tap'
import type { Test } from 'tap'
import http from 'node:http'
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import type { AddressInfo, Socket } from 'node:net'
import { tempDir, ROOT, TS_CHILD } from '../helper.js'

const root = ROOT

/** An OpenAI-compatible model server that holds every answer until released (or forever). */
async function heldModel(t: Test) {
  let release: () => void = () => {}
  const released = new Promise<void>((r) => { release = r })
  let seen: () => void = () => {}
  const asked = new Promise<void>((r) => { seen = r })
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      // the start's probe lists the models: answered at once, as a model server does; only a completion is held
      if (req.method === 'GET' && req.url?.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'fake', object: 'model' }] }))
        return
      }
      seen()
      void released.then(() => {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.write(`data: ${JSON.stringify({
          id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'late answer' } }]
        })}\n\n`)
        res.end('data: [DONE]\n\n')
      })
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, release, asked }
}

async function startServer(t: Test, extra: Record<string, string>) {
  const dataDir = tempDir(t)
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, CAIRN_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1',
    CAIRN_LOG_LEVEL: 'info', ...extra }
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath,
    [...TS_CHILD, path.join(root, 'src', 'server.ts')], { env, stdio: 'pipe' })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let output = ''
  const waiters: Array<[RegExp, () => void]> = []
  const onOutput = (chunk: Buffer) => {
    output += chunk.toString()
    for (const w of waiters.splice(0)) { if (w[0].test(output)) w[1](); else waiters.push(w) }
  }
  child.stdout.on('data', onOutput)
  child.stderr.on('data', onOutput)
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const logged = (re: RegExp) => new Promise<void>((resolve) => {
    if (re.test(output)) resolve(); else waiters.push([re, resolve])
  })
  await Promise.race([logged(/Server listening at/),
    exited.then((c) => { throw new Error(`server exited ${c}: ${output}`) })])
  const port = Number(/Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output)![1])
  return { child, dataDir, port, exited, logged, output: () => output }
}

function request(port: number, agent: http.Agent, method: string, url: string, headers: Record<string, string> = {},
  body?: string) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string; socket: Socket }>((resolve,
    reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: url, agent,
      headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      let text = ''
      res.on('data', (c) => { text += c })
      res.on('end',
        () => resolve({ status: res.statusCode!, headers: res.headers, body: text, socket: req.socket as Socket }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

t.test('SIGTERM with keep-alive clients: in-flight answered with Connection: close, idle sockets closed, ' +
  'database closed', async (t) => {
  const model = await heldModel(t)
  const s = await startServer(t,
    { CAIRN_LLM_BASE_URL: model.baseUrl, CAIRN_LLM_MODEL: 'fake', CAIRN_SHUTDOWN_TIMEOUT: '60' })
  const busy = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const idle = new http.Agent({ keepAlive: true, maxSockets: 1 })
  t.teardown(() => { busy.destroy(); idle.destroy() })
  const signup = await request(s.port, busy, 'POST', '/api/v2/auth/signup', {},
    JSON.stringify({ email: 'a@example.test', password: 'long enough pw' }))
  t.equal(signup.status, 201)
  t.equal(signup.headers.connection, 'keep-alive', 'keep-alive while running')
  const token = JSON.parse(signup.body).data.token

  const idleReply = await request(s.port, idle, 'GET', '/api/health')
  t.equal(idleReply.headers.connection, 'keep-alive')
  const idleClosed = new Promise<void>((r) => idleReply.socket.once('close', () => r()))

  const inFlight = request(s.port, busy, 'POST', '/api/v2/chat', { authorization: `Bearer ${token}` },
    JSON.stringify({ message: 'hello' }))
  await model.asked
  s.child.kill('SIGTERM')
  await s.logged(/shutting down/)
  await idleClosed
  t.pass('the idle keep-alive socket was closed by the server')
  model.release()
  const answered = await inFlight
  t.equal(answered.status, 200, answered.body)
  t.equal(answered.headers.connection, 'close', 'the in-flight answer says Connection: close')
  t.equal(JSON.parse(answered.body).reply, 'late answer')
  t.equal(await s.exited, 0, 'exits cleanly, without waiting for the client')
  t.notMatch(s.output(), /timed out|cutting/, 'no forcing was needed')
  const wal = path.join(s.dataDir, 'cairn.db-wal')
  t.ok(!fs.existsSync(wal) || fs.statSync(wal).size === 0, 'WAL checkpointed and the database closed')
})

t.test('a request that never ends does not hold shutdown past CAIRN_SHUTDOWN_TIMEOUT; the database ' +
  'is still closed', async (t) => {
  const model = await heldModel(t)
  const s = await startServer(t,
    { CAIRN_LLM_BASE_URL: model.baseUrl, CAIRN_LLM_MODEL: 'fake', CAIRN_SHUTDOWN_TIMEOUT: '1' })
  const agent = new http.Agent({ keepAlive: true })
  t.teardown(() => agent.destroy())
  const signup = await request(s.port, agent, 'POST', '/api/v2/auth/signup', {},
    JSON.stringify({ email: 'a@example.test', password: 'long enough pw' }))
  const token = JSON.parse(signup.body).data.token
  const hanging = request(s.port, agent, 'POST', '/api/v2/chat', { authorization: `Bearer ${token}` },
    JSON.stringify({ message: 'hello' })).catch((err: Error) => err)
  await model.asked
  s.child.kill('SIGTERM')
  const code = await s.exited
  t.ok(code === 0 || code === 1, `exited (${code})`)
  t.match(s.output(), /cutting the connections still open/)
  t.type(await hanging, Error, 'the hanging request was cut')
  const wal = path.join(s.dataDir, 'cairn.db-wal')
  t.ok(!fs.existsSync(wal) || fs.statSync(wal).size === 0, 'WAL checkpointed and the database closed')
})

t.test('npm start passes SIGTERM to the server process', async (t) => {
  // the start script as package.json has it, run by npm (through sh) against a stand-in start.mjs
  const dir = tempDir(t)
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }
  fs.mkdirSync(path.join(dir, 'scripts'))
  fs.writeFileSync(path.join(dir, 'package.json'),
    JSON.stringify({ name: 'probe', version: '1.0.0', scripts: { start: pkg.scripts.start } }))
  fs.writeFileSync(path.join(dir, 'scripts', 'start.mjs'),
    `process.on('SIGTERM', () => { console.log('server got SIGTERM'); process.exit(0) }); ` +
    `console.log('server pid ' + process.pid); setInterval(() => {}, 1000)\n`)
  const npm = spawn('npm', ['start', '--silent'],
    { cwd: dir, env: { PATH: process.env.PATH, HOME: process.env.HOME }, stdio: 'pipe' })
  let out = ''
  const pid = await new Promise<number>((resolve) => npm.stdout.on('data', (c: Buffer) => {
    out += c.toString()
    const m = /server pid (\d+)/.exec(out)
    if (m) resolve(Number(m[1]))
  }))
  t.teardown(() => { try { process.kill(pid, 'SIGKILL') } catch { /* gone */ } })
  const got = new Promise<void>((resolve) => npm.stdout.on('data',
    () => { if (/server got SIGTERM/.test(out)) resolve() }))
  npm.kill('SIGTERM')
  await got
  t.pass('the server process received the signal sent to npm')
  await new Promise<void>((resolve) => {
    const check = () => { try { process.kill(pid, 0); setTimeout(check, 50) } catch { resolve() } }
    check()
  })
  t.pass('and is gone: no orphan')
})
