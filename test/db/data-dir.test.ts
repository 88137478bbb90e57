import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { build, signup, multipart, tempDir } from '../helper.js'
import { loggerOptions } from '../../src/app.js'

const mode = (p: string) => fs.statSync(p).mode & 0o777
function tree(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true }).map((e) => path.join(e.parentPath, e.name))
}

t.test('the data directory is 0700 and every file in it 0600, the database\'s WAL and SHM and stored ' +
  'files included', async (t) => {
  const dataDir = path.join(tempDir(t), 'data')
  const app = await build(t, { dataDir })
  const u = await signup(app)
  const body = multipart([{ filename: 'notes.md', content: '# Notes\n\nPrivate words.\n',
    contentType: 'text/markdown' }])
  t.equal((await app.inject({ method: 'POST', url: '/api/knowledge/upload', headers: { ...u.auth, ...body.headers },
    payload: body.payload })).statusCode, 201)
  const audio = multipart([{ filename: 'memo.wav', content: Buffer.alloc(2048, 7), contentType: 'audio/wav' }])
  t.equal((await app.inject({ method: 'POST', url: '/api/v2/voice-notes/audio',
    headers: { ...u.auth, ...audio.headers }, payload: audio.payload })).statusCode, 201)
  await app.jobs.idle()
  t.equal(mode(dataDir), 0o700, 'data dir')
  const files = tree(dataDir)
  for (const name of ['cairn.db', 'cairn.db-wal', 'cairn.db-shm',
    'jwt-secret']) t.ok(files.includes(path.join(dataDir, name)), name)
  t.ok(files.length >= 7, 'stored files too')
  for (const p of files) t.equal(mode(p), fs.statSync(p).isDirectory() ? 0o700 : 0o600, path.relative(dataDir, p))
})

t.test('an existing world-readable data directory is fixed at start, and the change is logged', async (t) => {
  const dataDir = path.join(tempDir(t), 'data')
  const first = await build(t, { dataDir })
  await first.close()
  fs.chmodSync(dataDir, 0o755)
  fs.chmodSync(path.join(dataDir, 'cairn.db'), 0o644)
  fs.chmodSync(path.join(dataDir, 'jwt-secret'), 0o644)
  fs.mkdirSync(path.join(dataDir, 'old'), { mode: 0o755 })
  fs.writeFileSync(path.join(dataDir, 'old', 'left.txt'), 'x', { mode: 0o666 })
  fs.chmodSync(path.join(dataDir, 'old', 'left.txt'), 0o666)
  const lines: string[] = []
  const app = await build(t, { dataDir, logger: loggerOptions('info', { write: (l: string) => { lines.push(l) } }) })
  for (const p of [dataDir, path.join(dataDir, 'old')]) t.equal(mode(p), 0o700, p)
  for (const p of ['cairn.db', 'jwt-secret', 'old/left.txt']) t.equal(mode(path.join(dataDir, p)), 0o600, p)
  const logged = lines.map((l) => JSON.parse(l)).find((l) => /permission/.test(l.msg))
  t.ok(logged, 'logged')
  t.match(logged.changed, [/data: 0755 -> 0700/])
  t.ok(logged.changed.some((c: string) => c.endsWith('jwt-secret: 0644 -> 0600')))
  t.ok(logged.changed.some((c: string) => c.endsWith('left.txt: 0666 -> 0600')))
  await app.close()
})
