import t from 'tap'
import { spawn } from 'node:child_process'
import { build, tempDir } from '../helper.js'
import { needsPrograms } from '../system-tools.js'
import { codeBlockAfter, readPage } from './pages.js'

// The README's "First steps with curl", pasted into a shell as a newcomer would, against a listening Cairn
t.test('the README\'s curl walkthrough runs against a fresh Cairn', async (t) => {
  if (!needsPrograms(t, ['bash', 'curl'], 'apt-get install bash curl')) return
  const script = codeBlockAfter(readPage('README.md'), 'First steps with curl', 'sh')
  t.match(script, /localhost:3000/, 'the walkthrough talks to the default address')

  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  // each answer on a line of its own, so that the output can be read step by step
  const shell = 'curl() { command curl "$@"; echo; }\n' + script.replaceAll('localhost:3000', `127.0.0.1:${port}`)

  const dir = tempDir(t)
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
    (resolve) => {
      const child = spawn('bash', ['-eu', '-o', 'pipefail', '-c', shell], { cwd: dir })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d) => { stdout += d })
      child.stderr.on('data', (d) => { stderr += d })
      child.on('close', (code) => resolve({ code, stdout, stderr }))
    })
  t.equal(code, 0, 'the script runs to its end')
  t.equal(stderr, '', 'nothing on standard error')
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answers of several routes, read by path
  type Answer = Record<string, any>
  const answers = stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Answer)
  t.ok(answers.length >= 4, `${answers.length} JSON answers`)
  t.same(answers.filter((a) => a.success === false), [], 'no step answers an error')
  const me = answers.find((a) => a.data?.user?.email === 'ada@example.org')
  t.ok(me, 'step 3: who am I')
  t.equal(me?.data.workspaces.length, 1, 'in the first workspace')
  const upload = answers.find((a) => a.document?.fileName === 'handbook.txt')
  t.ok(upload, 'step 5: the file is uploaded')
  const placed = app.sqlite.prepare('SELECT scope, workspace_id AS workspaceId FROM knowledge_documents').all()
  const workspace = answers.find((a) => a.data?.workspaces)?.data.workspaces[0].id
  t.same(placed, [{ scope: 'workspace', workspaceId: workspace }], 'into the key\'s workspace')
  const search = answers.find((a) => Array.isArray(a.results))
  t.match(search?.results?.[0]?.chunk?.text ?? '', /sixteen weeks/, 'step 5: the search finds the passage')
  const plan = answers.find((a) => a.data?.type === 'task_plan')
  t.match(plan?.data, { title: 'Review the leave policy', review_policy: 'request_review', status: 'draft' },
    'step 6: the plan awaits a person')
  t.match(stdout, /event: text_delta/, 'step 7: the answer streams')
  t.match(stdout, /event: done\ndata: .*sixteen weeks/, 'step 7: and ends with an answer from the handbook')
})
