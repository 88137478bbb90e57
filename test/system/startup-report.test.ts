import t from 'tap'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { build, closedPort, multipart, ROOT, signup, tempDir, TS_CHILD } from '../helper.js'
import { fakeLlm } from '../fake-llm.js'

t.test('a start on a data dir restored without its files: the warning, the summary in the pretty format, and 410 ' +
  'downloads', async (t) => {
  // a data dir as a restore of cairn.db alone leaves it: the rows name files that are not there
  const dataDir = tempDir(t)
  const app = await build(t, { dataDir })
  const owner = await signup(app)
  const body = multipart([{ filename: 'plan.txt', content: 'The plan for the quarter.', contentType: 'text/plain' }])
  const doc = (await app.inject({ method: 'POST', url: '/api/knowledge/upload',
    headers: { ...owner.auth, ...body.headers }, payload: body.payload })).json().document.id as string
  await app.jobs.idle()
  await app.close()
  fs.rmSync(path.join(dataDir, 'knowledge'), { recursive: true })

  const llm = await fakeLlm(t, { models: ['llama3.2:latest'] })
  const closed = `http://127.0.0.1:${await closedPort()}/v1`
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, CAIRN_DATA_DIR: dataDir, PORT: '0',
    HOST: '127.0.0.1', CAIRN_LOG_FORMAT: 'pretty', CAIRN_LLM_BASE_URL: llm.baseUrl, CAIRN_LLM_MODEL: 'llama3.2',
    CAIRN_LLM_API_KEY: 'llm-key-never-shown', CAIRN_EMBED_BASE_URL: closed, CAIRN_EMBED_MODEL: 'nomic-embed-text',
    CAIRN_EMBED_API_KEY: 'embed-key-never-shown', CAIRN_STT: 'none' }
  const child = spawn(process.execPath, [...TS_CHILD, path.join(ROOT, 'src', 'server.ts')],
    { env, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { child.kill('SIGKILL') })
  let output = ''
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  // the summary is the last thing a start writes: its speech line ends it
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      if (/\n {4}storedFiles: .*\n/.test(output)) resolve()
    })
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
    void exited.then((code) => reject(new Error(`server exited with ${code}: ${output}`)))
  })
  const address = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)![1]

  t.match(output, /^\d\d:\d\d:\d\d WARN {2}stored files are missing from the data directory: 1 document lack their files/m)
  t.match(output, new RegExp(`^ {4}examples\\.documents: \\["${doc}"\\]$`, 'm'), 'the warning names the document')
  const summary = output.slice(output.indexOf('Cairn is ready'))
  t.match(summary, new RegExp(`^Cairn is ready at ${address}; needs attention: the embedder, stored files\n`))
  t.match(summary, new RegExp(`\n {4}url: ${address}\n`))
  t.match(summary, new RegExp(`\n {4}dataDir: ${dataDir}, [\\d.]+ [KMG]B free\n`))
  t.match(summary, /\n {4}database: SQLite 3\.\d+\.\d+ at .*cairn\.db \([\d.]+ [KMG]B\): answers\n/)
  t.match(summary, `\n    languageModel: llama3.2 at ${llm.baseUrl}: answers\n`)
  t.match(summary, `\n    embedder: nomic-embed-text at ${closed}: does not answer (connection refused)\n`)
  t.match(summary, '\n    speech: off (CAIRN_STT=none): voice notes are kept untranscribed\n')
  t.match(summary, '\n    storedFiles: 1 document(s) and 0 audio file(s) lack their files (see the warning above)\n')
  t.notOk(output.includes('never-shown'), 'no API key in the output')
  t.notOk(output.includes('{"level"'), 'no JSON lines in the pretty format')

  const login = await fetch(`${address}/api/v2/auth/login`, { method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: owner.email, password: owner.password }) })
  const token = (await login.json() as { data: { token: string } }).data.token
  const download = await fetch(`${address}/api/knowledge/document/${doc}/download`,
    { headers: { authorization: `Bearer ${token}` } })
  t.equal(download.status, 410)
  t.match(await download.json(), { code: 'STORED_FILE_MISSING' })

  child.kill('SIGTERM')
  t.equal(await exited, 0, 'exits cleanly')
})
