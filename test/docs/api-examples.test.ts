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

/** runs `script` with bash in `dir`, the page's localhost:3000 pointed at `base`; its standard output */
function shell(script: string, base: string, dir: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-eu', '-o', 'pipefail', '-c', script.replaceAll('localhost:3000', base)],
      { cwd: dir, env: { PATH: process.env.PATH, ...env } })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { err += d })
    child.on('error', reject)
    child.on('close', (code) => code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}`)))
  })
}

t.test('the curl examples of docs/api: an invitation accepted, an upload into the workspace', async (t) => {
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
})
