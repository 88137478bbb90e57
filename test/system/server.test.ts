import t from 'tap'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { tempDir, ROOT, TS_CHILD } from '../helper.js'

const root = ROOT

t.test('the server starts on its data dir, serves, and shuts down gracefully on SIGTERM', async (t) => {
  const dataDir = tempDir(t)
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, CAIRN_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1',
    CAIRN_LOG_LEVEL: 'info' }
  const child = spawn(process.execPath, [...TS_CHILD, path.join(root, 'src', 'server.ts')],
    { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const address = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (m) resolve(m[1])
    })
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
    void exited.then((code) => reject(new Error(`server exited with ${code}: ${output}`)))
  })

  const health = await fetch(`${address}/api/health`)
  t.equal(health.status, 200)
  const body = await health.json() as { status: string; database: string; version: string; uptime: number }
  t.equal(body.status, 'ok')
  t.equal(body.database, 'ok')
  t.match(body.version, /^\d+\.\d+\.\d+/)
  t.type(body.uptime, 'number')

  const signup = await fetch(`${address}/api/v2/auth/signup`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'first@example.test', password: 'long enough' })
  })
  t.equal(signup.status, 201, 'the first user may sign up')

  t.ok(fs.existsSync(path.join(dataDir, 'cairn.db')), 'cairn.db created in the data dir')
  const secret = fs.statSync(path.join(dataDir, 'jwt-secret'))
  t.equal(secret.mode & 0o777, 0o600, 'generated JWT secret is private')

  child.kill('SIGTERM')
  t.equal(await exited, 0, 'exits cleanly')
  const wal = path.join(dataDir, 'cairn.db-wal')
  t.ok(!fs.existsSync(wal) || fs.statSync(wal).size === 0, 'WAL checkpointed on close')
  t.match(output, /shutting down/)
})
