import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { tempDir } from '../helper.js'
import { needsPrograms } from '../system-tools.js'
import { ROOT, codeBlockAfter, readPage } from './pages.js'
import { run, server, checkOutput } from './client-examples.js'

// The Python example of docs/clients.md, run as a reader would run it (see client-examples.ts)
t.test('the Python example of docs/clients.md', async (t) => {
  if (!needsPrograms(t, ['python3'], 'apt-get install python3')) return
  const example = codeBlockAfter(readPage('docs/clients.md'), 'Python: `cairn_client`', 'python')
  const dir = tempDir(t)
  fs.writeFileSync(path.join(dir, 'example.py'), example)
  const { app, env, approved } = await server(t)
  const out = await run('python3', ['example.py'], { cwd: dir,
    env: { ...env, PYTHONPATH: path.join(ROOT, 'clients/python/src'), PYTHONDONTWRITEBYTECODE: '1' } })
  checkOutput(t, app, out, approved)
})
