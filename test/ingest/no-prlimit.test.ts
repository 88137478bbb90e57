import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { once } from 'node:events'
import { createExtractor } from '../../src/ingest/run.js'
import { tempDir } from '../helper.js'

t.test('without prlimit (macOS, a trimmed image) text is still extracted, and a warning says what is missing',
  async (t) => {
    const dir = tempDir(t)
    fs.writeFileSync(path.join(dir, 'in.html'), '<h1>Kestrels</h1><p>The amber kestrel hovers.</p>')
    // a PATH with no prlimit on it: the extraction process itself is started by its absolute path
    const saved = process.env.PATH
    process.env.PATH = dir
    t.teardown(() => { process.env.PATH = saved })
    const warned = once(process, 'warning')
    const pool = createExtractor()
    t.teardown(() => pool.close())
    await pool.extract(path.join(dir, 'in.html'), path.join(dir, 'out.txt'), 'html',
      { chunkSize: 1000, chunkOverlap: 100 })
    t.match(fs.readFileSync(path.join(dir, 'out.txt'), 'utf8'), /amber kestrel hovers/)
    const [warning] = await warned as [Error & { code?: string }]
    t.equal(warning.code, 'CAIRN_NO_PRLIMIT')
    t.match(warning.message, /install util-linux/)
  })
