import type { Test } from 'tap'
import { spawn } from 'node:child_process'
import { build, signup, createKey, type TestUser } from '../helper.js'
import type { App } from '../../src/app.js'

// For the client examples of docs/clients.md, run as a reader would run them, with the credentials that page asks
// for: a key bound to the workspace with knowledge:read/write and artifacts:read/write, and a person's session for
// chat. The test plays the person who reviews: it approves the plan as soon as the example waits for the review.

const SCOPES = ['knowledge:read', 'knowledge:write', 'artifacts:read', 'artifacts:write']

export interface Run { code: number | null; stdout: string; stderr: string }

export function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Run> {
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
export async function server(t: Test) {
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

export function checkOutput(t: Test, app: App, out: Run, approved: string[]) {
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
