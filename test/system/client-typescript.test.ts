import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import http from 'node:http'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { createHmac, randomBytes } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import { Webhook } from 'standardwebhooks'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { build, signup, createKey, tempDir, ROOT } from '../helper.js'
import type * as ClientModule from '../../clients/typescript/src/index.js'

const PACKAGE = path.join(ROOT, 'clients/typescript')
const BRIDGE = path.join(ROOT, 'clients/mcp-bridge/dist/cairn-mcp.js')

/** The packages as they ship: built with their own tsc configurations; the client imported from dist/. */
async function buildPackage(): Promise<typeof ClientModule> {
  for (const dir of [PACKAGE, path.join(ROOT, 'clients/mcp-bridge')]) {
    await promisify(execFile)(process.execPath,
      [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', path.join(dir, 'tsconfig.json')])
  }
  t.ok(fs.existsSync(path.join(PACKAGE, 'dist/index.d.ts')), 'declarations emitted')
  return import(pathToFileURL(path.join(PACKAGE, 'dist/index.js')).href) as Promise<typeof ClientModule>
}

t.test('@cairn/client against a listening Cairn', async (t) => {
  const lib = await buildPackage()
  const { CairnClient, CairnError } = lib
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  const u = await signup(app)
  const other = await signup(app)
  const key = await createKey(app, u,
    ['knowledge:read', 'knowledge:write', 'artifacts:read', 'artifacts:write', 'write'])
  const cairn = new CairnClient({ baseUrl, token: key.key, workspaceId: u.workspaceId })
  const person = new CairnClient({ baseUrl, token: u.token, workspaceId: u.workspaceId })

  await t.test('uploads from a path and from bytes, search, document pages', async (t) => {
    const dir = tempDir(t)
    const file = path.join(dir, 'runbook.md')
    fs.writeFileSync(file, '# Runbook\n\nRotate the zebra certificates every Tuesday.')
    const fromPath = await cairn.uploadDocument({ path: file }, { category: 'ops', tags: ['ops'] })
    t.match(fromPath.document, { fileName: 'runbook.md', chunkCount: 1 })
    const fromBytes = await cairn.uploadDocument({ data: new TextEncoder().encode('Zebra crossings need paint.'),
      fileName: 'notes.txt' })
    t.equal(fromBytes.document.fileName, 'notes.txt')
    await app.jobs.idle() // passages are indexed in the background
    const found = await cairn.searchKnowledge({ query: 'zebra' })
    t.equal(found.count, 2)
    const doc = await cairn.getDocument(fromPath.document.id)
    t.match(doc.chunks[0].text, /zebra certificates/)
    const all = []
    for await (const d of cairn.documents({ limit: 1 })) all.push(d.fileName)
    t.same(all.sort(), ['notes.txt', 'runbook.md'], 'the iterator pages through every document')
  })

  await t.test('artifacts, typed errors, the review rule and waitForReview', async (t) => {
    const plan = await cairn.createArtifact({ type: 'implementation_plan', title: 'Plan', content: { steps: ['a'] },
      review_policy: 'request_review' })
    t.equal(plan.status, 'draft')
    const refused = await cairn.setArtifactStatus(plan.id, 'approved').catch((e: unknown) => e)
    t.ok(refused instanceof CairnError)
    t.match(refused, { statusCode: 403, code: 'HUMAN_REVIEW_REQUIRED' })
    t.equal((await cairn.commentOnArtifact(plan.id, 'ready')).comments.length, 1)
    t.equal((await cairn.updateArtifact(plan.id, { title: 'Plan v1' })).title, 'Plan v1')
    const v2 = await cairn.supersedeArtifact(plan.id, { title: 'Plan v2' })
    t.same((await cairn.artifactChain(v2.id)).map((l) => l.id), [plan.id, v2.id])
    for (let i = 0; i < 3; i++) await cairn.createArtifact({ type: 'task_plan', title: `Task ${i}` })
    const titles = []
    for await (const a of cairn.artifacts({ limit: 2 })) titles.push(a.title)
    t.equal(titles.length, 5, 'every artifact through pages of 2')
    t.equal((await cairn.listArtifacts({ type: 'task_plan' })).meta.count, 3)
    const foreign = new CairnClient({ baseUrl, token: other.token, workspaceId: other.workspaceId })
    t.match(await foreign.getArtifact(v2.id).catch((e: unknown) => e), { statusCode: 404, code: 'NOT_FOUND' },
      'another tenant: 404')
    t.match(await cairn.with({ workspaceId: other.workspaceId }).listArtifacts().catch((e: unknown) => e),
      { statusCode: 403, code: 'WORKSPACE_FORBIDDEN' })
    t.match(await cairn.createArtifact({ type: 'poem' as 'task_plan', title: 'x' }).catch((e: unknown) => e),
      { statusCode: 400, code: 'VALIDATION_ERROR' })

    const watch = app.reviewWatch
    const listening = new Promise<void>((resolve) => {
      const original = watch.watch
      watch.watch = (id, listener) => {
        const off = original(id, listener)
        if (id === v2.id) { watch.watch = original; resolve() }
        return off
      }
    })
    const waiting = cairn.waitForReview(v2.id, { timeoutMs: 60_000 })
    await listening
    t.equal((await person.setArtifactStatus(v2.id, 'approved')).status, 'approved', 'a person approves')
    const decided = await waiting
    t.match(decided, { id: v2.id, status: 'approved', changed: true })
    const quiet = await cairn.createArtifact({ type: 'task_plan', title: 'Quiet' })
    t.match(await cairn.waitForReview(quiet.id, { timeoutMs: 1000 }), { status: 'draft', changed: false })
  })

  await t.test('developer-log cursor iterator, activity', async (t) => {
    await cairn.logActivity({ action: 'client.test', metadata: { n: 1 } })
    app.devLog.flush()
    const entries = []
    for await (const e of person.logs({ limit: 2 })) entries.push(e)
    t.ok(entries.length > 4, `followed the cursor over ${entries.length} entries`)
    t.equal(new Set(entries.map((e) => e.id)).size, entries.length, 'no entry twice')
    t.ok(entries.some((e) => e.action === 'client.test'))
  })

  await t.test('the chat stream: typed events, and cancel', async (t) => {
    const events = []
    for await (const e of person.chatStream({ message: 'What about zebra certificates?' })) events.push(e)
    t.ok(events.some((e) => e.type === 'text_delta'))
    t.match(events.at(-1), { type: 'done', conversationId: /^[0-9a-f-]{36}$/ })
    const stream = person.chatStream({ message: 'zebra again' })
    let seen = 0
    for await (const _e of stream) {
      seen++
      stream.cancel()
    }
    t.equal(seen, 1, 'nothing after cancel')
    t.match(await cairn.chatStream({ message: 'x' })[Symbol.asyncIterator]().next().catch((e: unknown) => e),
      { statusCode: 403 }, 'keys cannot chat')
  })

  await t.test('the workspace event stream: an async iterator that resumes with Last-Event-ID', async (t) => {
    const created = await cairn.createArtifact({ type: 'task_plan', title: 'Streamed plan', content: {} })
    // from the first event kept: what happened before the stream opened comes first
    const stream = cairn.events({ lastEventId: '0' })
    for await (const e of stream) {
      if (e.type === 'artifact.created' && e.data.id === created.id) {
        t.equal(e.data.workspace_id, u.workspaceId)
        break
      }
    }
    t.match(stream.lastEventId, /^\d+$/)
    const missed = await cairn.createArtifact({ type: 'task_plan', title: 'Made while away', content: {} })
    const resumed = person.events({ lastEventId: stream.lastEventId })
    const next = await resumed[Symbol.asyncIterator]().next()
    t.match(next.value, { type: 'artifact.created', data: { id: missed.id, title: 'Made while away' } })
    resumed.close()
    const gone = person.events({ lastEventId: '999999999' })
    t.match((await gone[Symbol.asyncIterator]().next()).value, { type: 'reset' })
    gone.close()
    const strangers = new CairnClient({ baseUrl, token: other.token, workspaceId: u.workspaceId })
    t.match(await strangers.events()[Symbol.asyncIterator]().next().catch((e: unknown) => e), { statusCode: 403 },
      'another organization is refused')
  })

  await t.test('cairn-mcp: the stdio bridge', async (t) => {
    const bridge = new Client({ name: 'bridge-test', version: '1.0.0' })
    await bridge.connect(new StdioClientTransport({
      command: process.execPath,
      args: [BRIDGE, '--url', baseUrl, '--key', key.key, '--workspace',
        u.workspaceId],
      stderr: 'pipe'
    }))
    t.teardown(() => bridge.close())
    const names = (await bridge.listTools()).tools.map((x) => x.name)
    t.ok(names.includes('search_knowledge') && names.includes('wait_for_review'))
    const res = await bridge.callTool({ name: 'search_knowledge', arguments: { query: 'zebra' } })
    t.equal((res.structuredContent as { count: number }).count, 2)
    const bad = new Client({ name: 'bridge-test', version: '1.0.0' })
    await t.rejects(bad.connect(new StdioClientTransport({
      command: process.execPath,
      args: [BRIDGE, '--url', baseUrl, '--key', 'cairn_' + 'x'.repeat(43)],
      stderr: 'pipe'
    })), 'a bad key: the assistant gets an error, not a hang')
    await bad.close()
  })

  await t.test('helpers: login, workspaces and keys; a bound key uploads to its workspace by default', async (t) => {
    const session = await CairnClient.login({ baseUrl, email: u.email, password: u.password, maxRetries: 0 })
    const workspaces = await session.listWorkspaces()
    t.match(workspaces, [{ id: u.workspaceId, role: 'owner' }])
    const team = await session.createWorkspace('Team')
    t.match(team, { name: 'Team', role: 'owner' })
    t.match(await session.workspaceMembers(team.id), [{ user_id: u.userId, role: 'owner' }])
    const made = await session.createApiKey({ name: 'bound', scopes: ['knowledge:read', 'knowledge:write'],
      workspaceId: team.id })
    t.match(made, { name: 'bound', workspace_id: team.id, key: /^cairn_/ })
    t.ok((await session.listApiKeys()).some((k) => k.id === made.id && !('key' in k)), 'listed without its value')
    t.equal((await session.getApiKey(made.id)).name, 'bound')

    const bound = new CairnClient({ baseUrl, token: made.key, maxRetries: 0 })
    const uploaded = await bound.uploadDocument({ data: 'Team notes about the wombat rota.', fileName: 'rota.txt' })
    const placed = await session.getDocument(uploaded.document.id)
    t.match(placed.document, { scope: 'workspace', workspaceId: team.id }, 'no scope given: the key\'s workspace')
    t.match(await bound.uploadDocument({ data: 'x', fileName: 'x.txt' }, { scope: 'organization' })
      .catch((e: unknown) => e), { statusCode: 403, code: 'WORKSPACE_FORBIDDEN' })

    const rotated = await session.rotateApiKey(made.id)
    t.not(rotated.key, made.key)
    t.match(await bound.listArtifacts().catch((e: unknown) => e), { statusCode: 401 }, 'the old value stops')
    await session.revokeApiKey(rotated.id)
    t.match(await bound.with({ token: rotated.key }).searchKnowledge({ query: 'wombat' }).catch((e: unknown) => e),
      { statusCode: 401 }, 'revoked')
    const stranger = await CairnClient.login({ baseUrl, email: other.email, password: other.password })
    t.match(await stranger.getApiKey(made.id).catch((e: unknown) => e), { statusCode: 404 }, 'another tenant: 404')
    t.match(await stranger.workspaceMembers(team.id).catch((e: unknown) => e), { statusCode: 403 })
    t.match(await CairnClient.login({ baseUrl, email: u.email, password: 'wrong password', maxRetries: 0 })
      .catch((e: unknown) => e), { statusCode: 401 })
    await session.signOut()
  })

  await t.test('sessions: login and signOut; a browser session signs in by cookie and sends the CSRF header',
    async (t) => {
      const anonymous = new CairnClient({ baseUrl, maxRetries: 0 })
      const { token } = await anonymous.login(u.email, u.password)
      const session = anonymous.with({ token })
      t.equal((await session.me()).user.email, u.email)
      await session.signOut()
      t.match(await session.me().catch((e: unknown) => e), { statusCode: 401 }, 'the token stops working')

      // a browser's cookie jar of one cookie, as a page of the console has
      let cookie = ''
      const seen: Array<Record<string, string>> = []
      const browserFetch: typeof fetch = async (input, init) => {
        const headers = { ...(init?.headers as Record<string, string>), ...(cookie ? { cookie } : {}) }
        seen.push(headers)
        const res = await fetch(input, { ...init, headers })
        const set = res.headers.get('set-cookie')
        if (set) cookie = set.split(';')[0].endsWith('=') ? '' : set.split(';')[0]
        return res
      }
      const browser = new CairnClient({ baseUrl, browserSession: true, fetch: browserFetch,
        workspaceId: u.workspaceId, maxRetries: 0 })
      await browser.signIn(u.email, u.password)
      t.match(cookie, /^cairn_session=/)
      t.equal(seen[0]['x-cairn-csrf'], '1')
      t.equal((await browser.me()).user.email, u.email)
      const plan = await browser.createArtifact({ type: 'task_plan', title: 'Queued', review_policy: 'request_review',
        content: { steps: [{ title: 'one' }] } })
      const queue = await browser.listArtifacts({ awaiting: 'person' })
      t.ok(queue.artifacts.some((a) => a.id === plan.id), 'the review queue lists it')
      const copied = cookie
      await browser.signOut()
      t.equal(cookie, '', 'the cookie is removed')
      cookie = copied
      t.match(await browser.me().catch((e: unknown) => e), { statusCode: 401 }, 'a copied cookie stops working')
    })
})

t.test('retries, backoff and Idempotency-Key (a faulty server on a real socket)', async (t) => {
  const { CairnClient, CairnError } = await import(pathToFileURL(path.join(PACKAGE,
    'dist/index.js')).href) as typeof ClientModule
  const seen: Array<{ method: string; url: string; key?: string }> = []
  const plan: Array<(req: http.IncomingMessage, res: http.ServerResponse) => void> = []
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, key: req.headers['idempotency-key'] as string | undefined })
    req.resume()
    req.on('end', () => (plan.shift() ?? ((_q, r) => r.writeHead(500).end()))(req, res))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const port = (server.address() as { port: number }).port
  const cairn = new CairnClient({ baseUrl: `http://127.0.0.1:${port}`, token: 'cairn_test', baseDelayMs: 1, maxRetries: 3 })
  const json = (status: number, body: object, headers: Record<string, string> = {}) =>
    (_q: http.IncomingMessage, r: http.ServerResponse) => r.writeHead(status,
      { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body))
  const artifact = { success: true, data: { id: 'a1', title: 'T', status: 'draft' } }
  const limited = json(429,
    { success: false, statusCode: 429, error: 'Too Many Requests', code: 'RATE_LIMITED', message: 'slow down' },
    { 'retry-after': '0' })

  plan.push(limited, json(503, { success: false, statusCode: 503, code: 'SERVICE_UNAVAILABLE', message: 'closing' }),
    json(201, artifact))
  t.match(await cairn.createArtifact({ type: 'task_plan', title: 'T' }), { id: 'a1' })
  t.equal(seen.length, 3, '429 and 503 are retried')
  t.ok(seen[0].key && seen.every((s) => s.key === seen[0].key), 'one Idempotency-Key across the retries')
  seen.length = 0
  plan.push(json(201, artifact))
  await cairn.createArtifact({ type: 'task_plan', title: 'T' })
  t.not(seen[0].key, undefined)

  seen.length = 0
  plan.push((_q, r) => r.destroy(), json(200, artifact))
  t.match(await cairn.getArtifact('a1'), { id: 'a1' }, 'a GET survives a dropped connection')
  t.equal(seen.length, 2)
  seen.length = 0
  plan.push((_q, r) => r.destroy(), json(200, artifact))
  t.match(await cairn.updateArtifact('a1', { title: 'x' }).catch((e: unknown) => e),
    { statusCode: 0, code: 'NETWORK_ERROR' }, 'PATCH is not repeated blindly')
  t.equal(seen.length, 1)
  plan.length = 0

  seen.length = 0
  plan.push(limited, limited, limited, limited)
  const exhausted = await cairn.getArtifact('a1').catch((e: unknown) => e)
  t.ok(exhausted instanceof CairnError)
  t.match(exhausted, { statusCode: 429, code: 'RATE_LIMITED', message: 'slow down', retryAfter: 0 })
  t.equal(seen.length, 4, 'one attempt and three retries')

  seen.length = 0
  plan.push(json(429, { code: 'RATE_LIMITED', message: 'later' }, { 'retry-after': '3600' }))
  t.match(await cairn.getArtifact('a1').catch((e: unknown) => e), { statusCode: 429, retryAfter: 3600 },
    'a Retry-After beyond maxDelayMs is not waited out')
  t.equal(seen.length, 1)

  t.equal(cairn.transport.delayFor(0, 2), 2000, 'Retry-After wins')
  const delays = Array.from({ length: 50 }, () => cairn.transport.delayFor(3))
  t.ok(delays.every((d) => d >= 4 && d <= 8), 'exponential: 1 ms × 2³, jittered within [½, 1]')
  t.ok(new Set(delays).size > 1, 'jittered')
})

t.test('webhook signatures: both schemes of docs/api/webhooks.md', async (t) => {
  const { verifyWebhook, verifyCairnSignature, verifyStandardWebhook } = await import(pathToFileURL(path.join(PACKAGE,
    'dist/index.js')).href) as typeof ClientModule
  const secret = 'whsec_' + randomBytes(32).toString('hex')
  const body = JSON.stringify({ event: 'message.created', data: { id: 1, text: 'héllo' } })
  const hex = createHmac('sha256', secret).update(body).digest('hex')
  t.ok(await verifyCairnSignature(body, hex, secret))
  t.ok(await verifyCairnSignature(new TextEncoder().encode(body), hex, secret), 'bytes as well')
  t.notOk(await verifyCairnSignature(body + ' ', hex, secret), 'a changed body')
  t.notOk(await verifyCairnSignature(body, hex.slice(2), secret))
  t.notOk(await verifyCairnSignature(body, undefined, secret))

  // Standard Webhooks, signed by its reference library with the same secret
  const now = Math.floor(Date.now() / 1000)
  const signature = new Webhook(secret).sign('msg_1', new Date(now * 1000), body)
  const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(now), 'webhook-signature': signature,
    'x-cairn-signature': hex }
  t.ok(await verifyStandardWebhook(body, headers, secret))
  t.ok(await verifyWebhook(body, new Headers(headers), secret), 'a Headers object')
  const oldSecret = 'whsec_' + randomBytes(32).toString('hex')
  const rotated = `${new Webhook(oldSecret).sign('msg_1', new Date(now * 1000), body)} ${signature}`
  t.ok(await verifyStandardWebhook(body, { ...headers, 'webhook-signature': rotated }, secret),
    'any of several signatures')
  t.ok(await verifyStandardWebhook(body, { ...headers, 'webhook-signature': rotated }, oldSecret),
    'the old secret during a rotation')
  t.notOk(await verifyStandardWebhook(body, headers, oldSecret), 'another secret')
  t.notOk(await verifyStandardWebhook(body, { ...headers, 'webhook-id': 'msg_2' }, secret), 'the id is signed')
  t.notOk(await verifyStandardWebhook(body, headers, secret, { now: now + 301 }), 'too old')
  t.ok(await verifyStandardWebhook(body, headers, secret, { now: now + 299 }))
  t.notOk(await verifyStandardWebhook(body, headers, secret, { now: now - 400 }), 'from the future')
  t.notOk(await verifyWebhook(body, { 'x-cairn-signature': hex.replace(/.$/, (c) => (c === '0' ? '1' : '0')) }, secret))
  t.ok(await verifyWebhook(body, { 'X-Cairn-Signature': hex }, secret),
    'header names in any case; the Cairn scheme alone')
  t.notOk(await verifyWebhook(body, {}, secret), 'unsigned')
})
