import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { tempDir, ROOT, TS_CHILD } from '../helper.js'

// a real full disk: a small tmpfs in a mount namespace of its own (unshare -Urm needs no root where user namespaces
// are allowed); elsewhere the test says why it does not run
const namespaces = spawnSync('unshare', ['-Urm', 'true']).status === 0

t.test('a start on a full disk says so in one line, without a stack trace, and exits 1', {
  skip: namespaces ? false : 'unshare -Urm is not allowed here (user namespaces): no small file system to fill'
}, async (t) => {
  const dataDir = path.join(tempDir(t), 'data')
  fs.mkdirSync(dataDir)
  // 400 KB: the database file is made, its tables are not (the first migrations fill it)
  const script = 'mount -t tmpfs -o size=400k tmpfs "$1" && shift && exec "$@"'
  const child = spawn('unshare', ['-Urm', 'sh', '-c', script, 'sh', dataDir, process.execPath, ...TS_CHILD,
    path.join(ROOT, 'src', 'server.ts')], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, CAIRN_DATA_DIR: dataDir, PORT: '0',
      CAIRN_JWT_SECRET: 'a-test-secret-of-enough-length' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk })
  child.stdout.resume()
  const code = await new Promise((resolve) => child.on('exit', resolve))
  t.equal(code, 1)
  const lines = stderr.trimEnd().split('\n')
  t.equal(lines.length, 1, `one line (before: a stack trace): ${stderr}`)
  t.match(lines[0], /^Cairn cannot start: disk full: no space left to write in .*; free some space and start again$/)
})
