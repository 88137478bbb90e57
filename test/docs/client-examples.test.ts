import t, { type Test } from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { execFile, spawn } from 'node:child_process'
import { promisify } from 'node:util'
import { build, signup, createKey, tempDir, type TestUser } from '../helper.js'
import type { App } from '../../src/app.js'
import { needsPrograms } from '../system-tools.js'
import { ROOT, codeBlockAfter, readPage } from './pages.js'

// The client examples of docs/clients.md, run as a reader would run them, with the credentials that page asks for:
// a key bound to the workspace with knowledge:read/write and artifacts:read/write, and a person's session for chat.
// The test plays the person who reviews: it approves the plan as soon as the example waits for the review.

const SCOPES = ['knowledge:read', 'knowledge:write', 'artifacts:read', 'artifacts:write']

interface Run { code: number | null; stdout: string; stderr: string }

function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, options)
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => { stdout += d })
    child.stderr.on('data', (d) => { stderr += d })
    child.on('error', (err) => resolve({ code: -1, stdout, stderr: `${stderr}${err.message}` }))
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** A listening Cairn, a person, the key of docs/clients.md, and the person approving each plan that is waited on. */
async function server(t: Test) {
  const app: App = await build(t)
  const person: TestUser = await signup(app)
  const key = await createKey(app, person, SCOPES, { workspaceId: person.workspaceId })
  const approved: string[] = []
  const watch = app.reviewWatch.watch
  app.reviewWatch.watch = (id, listener) => {
    const stop = watch(id, listener)
    if (!approved.includes(id)) {
      approved.push(id)
      void app.inject({ method: 'POST', url: `/api/v2/artifacts/${id}/status`,
        headers: { ...person.auth, 'x-workspace-id': person.workspaceId }, payload: { status: 'approved' } })
    }
    return stop
  }
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  const env = { ...process.env, CAIRN_URL: url, CAIRN_KEY: key.key, CAIRN_TOKEN: person.token }
  return { app, env, approved }
}

function checkOutput(t: Test, app: App, out: Run, approved: string[]) {
  t.equal(out.code, 0, `the example runs to its end${out.code === 0 ? '' : `: ${out.stderr}`}`)
  t.match(out.stdout, /^uploaded deploy\.md; [1-9]\d* passage\(s\) found$/m, 'uploads and finds it')
  t.same(app.sqlite.prepare('SELECT scope FROM knowledge_documents').all(), [{ scope: 'workspace' }],
    'into the key\'s workspace')
  t.match(out.stdout, /^403 HUMAN_REVIEW_REQUIRED$/m, 'the key may not approve the plan itself')
  t.equal(approved.length, 1, 'a person was asked to review')
  t.match(out.stdout, /^plan approved$/m, 'the person\'s decision arrives')
  t.match(out.stdout, /^Roll out v2 behind a flag$/m, 'the approved plans are listed')
  t.match(out.stdout, /deploy the previous release tag/, 'the chat answers from the knowledge base')
}

t.test('the TypeScript example of docs/clients.md', async (t) => {
  const example = codeBlockAfter(readPage('docs/clients.md'), 'TypeScript: `@cairn/client`', 'ts')
  const dir = tempDir(t)
  // the package as a project installs it: built by its own tsc configuration into node_modules/@cairn/client
  const pkg = path.join(dir, 'node_modules', '@cairn', 'client')
  fs.mkdirSync(pkg, { recursive: true })
  fs.copyFileSync(path.join(ROOT, 'clients/typescript/package.json'), path.join(pkg, 'package.json'))
  await promisify(execFile)(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'),
    '-p', path.join(ROOT, 'clients/typescript/tsconfig.json'), '--outDir', path.join(pkg, 'dist')])
  fs.writeFileSync(path.join(dir, 'example.mts'), example)
  // it type-checks as a strict project would compile it
  const tsc = await promisify(execFile)(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'),
    '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022',
    '--skipLibCheck', '--typeRoots', path.join(ROOT, 'node_modules/@types'), '--types', 'node', 'example.mts'],
  { cwd: dir }).then(() => '', (err: { stdout?: string }) => err.stdout ?? String(err))
  t.equal(tsc, '', 'the example type-checks')

  const { app, env, approved } = await server(t)
  const out = await run(process.execPath, [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), 'example.mts'],
    { cwd: dir, env: { ...env, NODE_OPTIONS: '' } })
  checkOutput(t, app, out, approved)
})

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
