import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { build, signup, tempDir } from '../helper.js'
import { manyPagePdf } from '../pdf-helper.js'
import { needsPrograms } from '../system-tools.js'
import { codeBlockAfter, readPage } from './pages.js'

// The curl examples of the API reference pages, pasted into a shell with the variables they name ($TOKEN, $WS), against
// a listening Cairn; then the next step the page describes.

/** bash running `script` in `dir`, the page's localhost:3000 pointed at `base` */
function bash(script: string, base: string, dir: string, env: Record<string, string>, detached = false) {
  return spawn('bash', ['-eu', '-o', 'pipefail', '-c', script.replaceAll('localhost:3000', base)],
    { cwd: dir, env: { PATH: process.env.PATH, ...env }, detached })
}

/** runs `script` with bash in `dir`, the page's localhost:3000 pointed at `base`; its standard output */
function shell(script: string, base: string, dir: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = bash(script, base, dir, env)
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { err += d })
    child.on('error', reject)
    child.on('close', (code) => code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}`)))
  })
}

/** runs `script` as shell() does, for a command that keeps its connection open: the output so far, and a stop */
function streaming(script: string, base: string, dir: string, env: Record<string, string>) {
  // a process group of its own: stopping it ends curl too, not only the shell
  const child = bash(script, base, dir, env, true)
  let out = ''
  child.stdout.on('data', (d) => { out += d })
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()))
  return {
    /** resolves once the output matches `pattern`; rejects when the command ends or after 20 s without it */
    until: async (pattern: RegExp) => {
      const giveUp = Date.now() + 20_000
      let done = false
      void exited.then(() => { done = true })
      while (!pattern.test(out)) {
        if (done || Date.now() > giveUp) throw new Error(`no ${pattern} in: ${out}`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      return out
    },
    stop: () => {
      try {
        process.kill(-child.pid!)
      } catch {
        // ended already
      }
      return exited
    }
  }
}

t.test('the curl examples of docs/api: invitation, upload, chat, event stream, webhook, voice note', async (t) => {
  if (!needsPrograms(t, ['bash', 'curl'], 'apt-get install bash curl')) return
  const app = await build(t, { config: { publicUrl: 'https://cairn.example.org' } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  const owner = await signup(app)
  const env = { TOKEN: owner.token, WS: owner.workspaceId }
  const dir = tempDir(t)

  await t.test('docs/api/auth.md: invite, then join with a password of one\'s own', async (t) => {
    const invited = JSON.parse(await shell(codeBlockAfter(readPage('docs/api/auth.md'), 'Teammates', 'sh'), base, dir,
      env)) as { success: boolean; data: { email: string; url: string; workspaces: Array<{ id: string }> } }
    t.match(invited, { success: true, data: { email: 'sam@example.org', workspaces: [{ id: owner.workspaceId }] } })
    t.match(invited.data.url, /^https:\/\/cairn\.example\.org\/invite\/./, 'the link, at CAIRN_PUBLIC_URL/invite/')
    const token = invited.data.url.split('/invite/')[1]
    const joined = await app.inject({ method: 'POST', url: '/api/v2/invitations/accept',
      payload: { token, password: 'sams own long password', name: 'Sam' } })
    t.equal(joined.statusCode, 201, joined.body)
    const me = await app.inject({ url: '/api/v2/auth/me',
      headers: { authorization: `Bearer ${joined.json().data.token}` } })
    t.match(me.json().data, { user: { email: 'sam@example.org' }, orgRole: 'member',
      workspaces: [{ id: owner.workspaceId, role: 'member' }] }, 'in the organization and the invited workspace')
    const login = await app.inject({ method: 'POST', url: '/api/v2/auth/login',
      payload: { email: 'sam@example.org', password: 'sams own long password' } })
    t.equal(login.statusCode, 200, 'signs in with the password they chose')
  })

  await t.test('docs/api/knowledge.md: the upload, with the workspace header, category and tags', async (t) => {
    fs.writeFileSync(path.join(dir, 'handbook.pdf'), manyPagePdf(1, 'Parental leave is sixteen weeks'))
    const uploaded = JSON.parse(await shell(codeBlockAfter(readPage('docs/api/knowledge.md'), 'Uploading', 'sh'),
      base, dir, env)) as { success: boolean; document: { id: string; fileName: string } }
    t.match(uploaded, { success: true, document: { fileName: 'handbook.pdf' } })
    const doc = (await app.inject({ url: `/api/knowledge/document/${uploaded.document.id}`, headers: owner.auth }))
      .json().document
    t.match(doc, { scope: 'workspace', workspaceId: owner.workspaceId, category: 'policies',
      tags: ['hr', 'onboarding'] })
  })

  await t.test('docs/api/assistant.md: the chat stream, its events in order, answered from the upload', async (t) => {
    const out = await shell(codeBlockAfter(readPage('docs/api/assistant.md'), 'Chat', 'sh'), base, dir, env)
    const events = [...out.matchAll(/^event: (.+)$/gm)].map((m) => m[1])
    t.equal(events[0], 'ready', 'ready first')
    t.ok(events.includes('text_delta'), 'the answer as it is written')
    t.equal(events.at(-1), 'done', 'done last')
    const done = JSON.parse(out.trim().split('\n').at(-1)!.replace(/^data: /, '')) as { conversationId: string;
      reply: string }
    t.match(done, { conversationId: /./, reply: /sixteen weeks/i }, 'the reply cites the handbook just uploaded')
  })

  await t.test('docs/api/events.md: the event stream shows a decision as it is made', async (t) => {
    const stream = streaming(codeBlockAfter(readPage('docs/api/events.md'), 'Workspace event stream', 'sh'), base, dir,
      env)
    t.teardown(() => stream.stop())
    await stream.until(/^: connected/m)
    const made = await app.inject({ method: 'POST', url: '/api/v2/artifacts',
      headers: { ...owner.auth, 'x-workspace-id': owner.workspaceId }, payload: { type: 'task_plan', title: 'Plan' } })
    const id = made.json().data.id as string
    await app.inject({ method: 'POST', url: `/api/v2/artifacts/${id}/status`,
      headers: { ...owner.auth, 'x-workspace-id': owner.workspaceId }, payload: { status: 'approved' } })
    const out = await stream.until(/event: artifact\.status_changed\ndata: .*\n/)
    const line = out.split('event: artifact.status_changed\n')[1].split('\n')[0]
    t.match(JSON.parse(line.replace(/^data: /, '')), { id, workspace_id: owner.workspaceId, status: 'approved',
      reviewed_by: owner.userId }, 'the shape the page shows')
    t.match(out, /^id: \d+$/m, 'each event with an id')
  })

  await t.test('docs/api/webhooks.md: a webhook created, its signing secret shown once', async (t) => {
    // the page's receiver, hooks.example.org, has no address where the tests run: its name is not resolved here
    app.config.allowPrivateUrls = true
    t.teardown(() => { app.config.allowPrivateUrls = false })
    const created = JSON.parse(await shell(codeBlockAfter(readPage('docs/api/webhooks.md'), 'Webhooks', 'sh'), base,
      dir, env)) as { success: boolean; data: { id: string; signing_secret: string } }
    t.match(created, { success: true, data: { signing_secret: /^whsec_/ } })
    const listed = await app.inject({ url: '/api/v2/developer/webhooks',
      headers: { ...owner.auth, 'x-workspace-id': owner.workspaceId } })
    t.match(listed.json().data, [{ id: created.data.id, url: 'https://hooks.example.org/cairn',
      events: ['message.created'] }])
    t.notMatch(listed.body, created.data.signing_secret, 'the secret is not shown again')
  })

  await t.test('docs/api/voice-notes.md: a recording stored, a note made of it, its transcription asked for',
    async (t) => {
      // the page's three commands, each with the id the one before answered in place of its placeholder
      const [store, note, transcribe] = codeBlockAfter(readPage('docs/api/voice-notes.md'), 'Voice notes', 'sh')
        .split('\n').filter((line) => !line.startsWith('#')).join('\n').split(/\n(?=curl )/)
      // what the recording holds is the speech engine's matter (test/plugins/voice-notes): here it is only stored
      fs.writeFileSync(path.join(dir, 'memo.webm'), Buffer.from('a recording'))
      const stored = JSON.parse(await shell(store, base, dir, env)) as { data: { audioUrl: string } }
      t.match(stored.data.audioUrl, /\/api\/v2\/voice-notes\/audio\/./)
      const made = JSON.parse(await shell(note.replace(/http:\/\/127\.0\.0\.1:3000\S*<id>/, stored.data.audioUrl), base,
        dir, env)) as { success: boolean; voiceNote: { id: string; tags: string[] } }
      t.match(made, { success: true, voiceNote: { tags: ['ideas'], status: 'created' } })
      const asked = JSON.parse(await shell(transcribe.replace('<note id>', made.voiceNote.id), base, dir, env)) as
        { success: boolean }
      t.match(asked, { success: true }, 'the transcription is queued')
    })
})
