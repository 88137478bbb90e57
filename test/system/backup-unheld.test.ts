import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { build, multipart, runCli, signup, tempDir } from '../helper.js'

t.test('a backup of a data dir that has lost stored files says so, and so does its restore', async (t) => {
  const dataDir = tempDir(t)
  const app = await build(t, { dataDir })
  const owner = await signup(app)
  const ids: string[] = []
  for (const name of ['kept.txt', 'lost.txt']) {
    const body = multipart([{ filename: name, content: `The text of ${name}.`, contentType: 'text/plain' }])
    ids.push((await app.inject({ method: 'POST', url: '/api/knowledge/upload',
      headers: { ...owner.auth, ...body.headers }, payload: body.payload })).json().document.id as string)
  }
  await app.jobs.idle()
  await app.close()
  fs.rmSync(path.join(dataDir, 'knowledge', 'originals', ids[1]))

  const archive = path.join(tempDir(t), 'cairn.tar')
  const backup = await runCli('backup', dataDir, archive)
  t.equal(backup.code, 0, backup.stderr)
  t.match(backup.stderr, `note: the database names stored files that are not there: 1 document (e.g. ${ids[1]}); ` +
    'their downloads answer 410 STORED_FILE_MISSING, in this data dir and after a restore of this backup')

  const restored = tempDir(t)
  const restore = await runCli('restore', restored, archive)
  t.equal(restore.code, 0, restore.stderr)
  t.match(restore.stderr, /^restored .* 3 stored files and \d key files/m, 'what the archive holds is restored')
  t.match(restore.stderr, `note: the database names stored files that are not there: 1 document (e.g. ${ids[1]}); ` +
    'their downloads answer 410 STORED_FILE_MISSING: the data dir this backup was made from had already lost them')

  // a whole data dir: no note
  const whole = path.join(tempDir(t), 'whole.tar')
  const app2 = await build(t, { dataDir: tempDir(t) })
  await app2.close()
  const clean = await runCli('backup', app2.config.dataDir, whole)
  t.equal(clean.code, 0, clean.stderr)
  t.notMatch(clean.stderr, /note:/)
})
