// The console in a real browser: Debian's Chromium driven by playwright-core, against the app on a real socket.
import t from 'tap'
import http from 'node:http'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import { createKey, signup } from '../helper.js'
import { CairnClient } from '../../clients/typescript/src/client.js'
import { harness, SHOTS, type Harness, type PageGlobals } from './harness.js'

// a machine without Chromium skips in one line, except CI, which must run these
const h = await harness(t)
if (h) await main(h)

async function main({ app, base, open, signIn }: Harness) {
  const cookieOf = async (page: Page) =>
    (await page.context().cookies()).find((c) => c.name === 'cairn_session')

  await t.test('sign in, the session survives a reload, sign out ends it for good', async (t) => {
    const u = await signup(app)
    const page = await open(t, '/artifacts?status=approved')
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    await page.screenshot({ path: path.join(SHOTS, 'sign-in.png') })
    await page.getByLabel('Email').fill(u.email)
    await page.getByLabel('Password').fill('not the password')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('alert').filter({ hasText: 'Invalid email or password' }).waitFor()
    t.pass('a wrong password is said in words beside the form')
    await signIn(page, u)
    t.equal(new URL(page.url()).pathname + new URL(page.url()).search, '/artifacts?status=approved',
      'the page asked for is kept')
    await page.getByRole('heading', { level: 1, name: 'Artifacts' }).waitFor()

    const cookie = await cookieOf(page)
    t.ok(cookie, 'a session cookie')
    t.equal(cookie?.httpOnly, true, 'HttpOnly')
    t.equal(cookie?.sameSite, 'Strict', 'SameSite=Strict')
    t.equal(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.cookie), '',
      'page scripts cannot read it')

    await page.reload()
    await page.getByRole('button', { name: 'Sign out' }).waitFor()
    t.pass('still signed in after a reload')
    for (const name of ['Review', 'Artifacts', 'Knowledge', 'Chat', 'Voice notes', 'Workflows', 'Developer',
      'Settings']) {
      t.equal(await page.getByRole('link', { name, exact: true }).count(), 1, `navigation link ${name}`)
    }
    t.equal(await page.getByLabel('Workspace').count(), 1, 'the Workspace select')

    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    t.equal(await cookieOf(page), undefined, 'the cookie is gone')
    const copied = await fetch(`${base}/api/v2/auth/me`, { headers: { cookie: `cairn_session=${cookie!.value}` } })
    t.equal(copied.status, 401, 'a copy of the cookie no longer works')
  })

  await t.test('a member sees no Settings; an ended session returns to sign-in with the page kept', async (t) => {
    const owner = await signup(app)
    const created = await app.inject({ method: 'POST', url: '/api/v2/users', headers: owner.auth,
      payload: { email: `member-${Date.now()}@example.test`, password: 'member password 1', role: 'member' } })
    const member = { ...owner, email: created.json().data.email as string, password: 'member password 1' }
    await app.inject({ method: 'POST', url: `/api/v2/workspaces/${owner.workspaceId}/members`, headers: owner.auth,
      payload: { userId: created.json().data.id, role: 'member' } })
    const page = await open(t, '/review')
    await signIn(page, member)
    t.equal(await page.getByRole('link', { name: 'Settings' }).count(), 0, 'no Settings for a member')
    // the session ends elsewhere (signed out in another tab, removed by an admin): the next request says so
    const cookie = await cookieOf(page)
    await fetch(`${base}/api/v2/auth/logout`, { method: 'POST',
      headers: { cookie: `cairn_session=${cookie!.value}`, 'x-cairn-csrf': '1' } })
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    t.equal(new URL(page.url()).pathname, '/review', 'the page is kept')
  })

  await t.test('the review loop: a key writes a plan, a person comments on step 2 and approves, the waiting ' +
    'assistant gets the decision', async (t) => {
    const u = await signup(app)
    const key = await createKey(app, u, ['artifacts:read', 'artifacts:write'], { workspaceId: u.workspaceId })
    const assistant = new CairnClient({ baseUrl: base, token: key.key })
    const plan = await assistant.createArtifact({ type: 'implementation_plan', title: 'Migrate the cache to Redis',
      review_policy: 'request_review', confidence: { score: 0.82 },
      content: { summary: 'Move the **session cache** out of process.', steps: [
        { title: 'Add a Redis client', detail: 'Use `ioredis`.', status: 'done' },
        { title: 'Write through on every update', files: ['src/cache.ts'] },
        { title: 'Remove the in-process map' }
      ], risks: ['A Redis outage stops sign-ins'] } })
    const waiting = assistant.waitForReview(plan.id, { timeoutMs: 60_000 })

    const page = await open(t, '/review')
    await signIn(page, u)
    await page.getByRole('link', { name: 'Migrate the cache to Redis' }).click()
    await page.getByRole('heading', { level: 1, name: 'Migrate the cache to Redis' }).waitFor()
    t.ok(await page.getByText('82%').isVisible(), 'confidence shown')
    t.ok(await page.getByText('only a person signed in can approve or reject it').isVisible(),
      'the machine-review rule is shown')
    await page.screenshot({ path: path.join(SHOTS, 'artifact.png'), fullPage: true })

    await page.getByRole('button', { name: 'Comment on step 2' }).click()
    await page.getByLabel('Comment').fill('Write-through needs a timeout.')
    await page.getByRole('button', { name: 'Add comment' }).click()
    await page.locator('.steps > li').nth(1).getByText('Write-through needs a timeout.').waitFor()
    t.pass('the comment is shown beside step 2')

    await page.getByRole('button', { name: 'Approve' }).click()
    await page.locator('.status-text').filter({ hasText: 'Approved' }).waitFor()
    t.equal(await page.getByRole('button', { name: 'Approve' }).count(), 0, 'decided: no more buttons')
    t.ok(await page.getByText(u.email.split('@')[0]).first().isVisible(), 'reviewed_by shown by name')

    const decided = await waiting
    t.equal(decided.status, 'approved', 'wait_for_review returns approved')
    const read = await assistant.getArtifact(plan.id)
    t.equal(read.reviewed_by, u.userId)
    t.match(read.comments, [{ content: 'Write-through needs a timeout.', position: { kind: 'step', step: 1 } }])
  })

  await t.test('reject, supersede, approve across versions with the two versions compared', async (t) => {
    const u = await signup(app)
    const person = new CairnClient({ baseUrl: base, token: u.token, workspaceId: u.workspaceId })
    const first = await person.createArtifact({ type: 'code_change', title: 'Fix the retry loop',
      review_policy: 'request_review', content: { summary: 'Stop after 3 tries.',
        diff: 'diff --git a/src/retry.ts b/src/retry.ts\n--- a/src/retry.ts\n+++ b/src/retry.ts\n' +
          '@@ -1,3 +1,3 @@\n const max = 3\n-while (true) {\n+for (let i = 0; i < max; i++) {\n   attempt()\n' } })
    const page = await open(t, `/artifacts/${first.id}`, { width: 390, height: 844 })
    await signIn(page, u)
    await page.getByRole('heading', { level: 1, name: 'Fix the retry loop' }).waitFor()
    t.ok(await page.evaluate(() => {
      const g = globalThis as unknown as PageGlobals
      return g.document.documentElement.scrollWidth <= g.innerWidth + 1
    }),
    'nothing wider than a 390-pixel phone screen')
    await page.getByRole('button', { name: 'Comment on line 2' }).click()
    await page.getByLabel('Comment').fill('Use the configured maximum.')
    await page.getByRole('button', { name: 'Reject' }).click()
    await page.locator('.status-text').filter({ hasText: 'Changes requested' }).waitFor()
    t.match((await person.getArtifact(first.id)).comments,
      [{ content: 'Use the configured maximum.', position: { kind: 'line', path: 'src/retry.ts', line: 2 } }],
      'the rejection carries its comment, on the diff line')

    const second = await person.supersedeArtifact(first.id, { title: 'Fix the retry loop (v2)',
      content: { summary: 'Stop after the configured tries.', diff: '--- a/src/retry.ts\n+++ b/src/retry.ts\n' +
        '@@ -1,3 +1,3 @@\n-const max = 3\n+const max = config.retries\n while (true) {\n   attempt()\n' } })
    await page.goto(`${base}/artifacts/${second.id}`)
    await page.getByRole('heading', { level: 1, name: 'Fix the retry loop (v2)' }).waitFor()
    const versions = page.getByRole('region', { name: 'Versions' })
    await versions.getByText('Version 2: Draft (this one)').waitFor()
    await versions.getByRole('button', { name: 'Compare' }).click()
    const table = page.getByRole('table', { name: 'Comparison of two versions' })
    await table.waitFor()
    t.ok(await table.locator('.cmp-changed').filter({ hasText: 'config.retries' }).count() > 0,
      'the changed line side by side')
    await page.screenshot({ path: path.join(SHOTS, 'compare-phone.png'), fullPage: true })
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.locator('.status-text').filter({ hasText: 'Approved' }).waitFor()
    t.equal((await person.getArtifact(second.id)).status, 'approved')
  })

  await t.test('a plan created through the API appears in an open queue without a reload; the queue pages by ' +
    '20 and filters by type and status', async (t) => {
    const u = await signup(app)
    const page = await open(t, '/review')
    await signIn(page, u)
    await page.getByText('Nothing awaits review').waitFor()
    const person = new CairnClient({ baseUrl: base, token: u.token, workspaceId: u.workspaceId })
    await person.createArtifact({ type: 'task_plan', title: 'Arrives while watching', review_policy: 'request_review',
      content: { steps: [{ title: 'one' }] } })
    await page.getByRole('link', { name: 'Arrives while watching' }).waitFor({ timeout: 15_000 })
    t.pass('it appeared')
    await page.screenshot({ path: path.join(SHOTS, 'review-queue.png') })

    // a longer queue: 20 a page, newest first; the filters narrow it
    for (let i = 1; i <= 20; i++) {
      const res = await app.inject({ method: 'POST', url: `/api/v2/artifacts?workspace_id=${u.workspaceId}`,
        headers: u.auth, payload: { type: 'implementation_plan', title: `Later plan ${i}`,
          review_policy: 'request_review', content: { steps: [{ title: 'one' }] } } })
      t.equal(res.statusCode, 201)
    }
    const pager = page.getByRole('navigation', { name: 'Pages' })
    await pager.getByText('Page 1 of 2 (21 artifacts)').waitFor({ timeout: 15_000 })
    t.equal(await page.locator('.artifact-list li').count(), 20, 'a page of 20')
    t.equal(await page.getByRole('link', { name: 'Arrives while watching' }).count(), 0, 'the newest first')
    await pager.getByRole('button', { name: 'Next page' }).click()
    await page.getByRole('link', { name: 'Arrives while watching' }).waitFor()
    t.equal(await page.locator('.artifact-list li').count(), 1, 'the oldest on page 2')
    t.match(new URL(page.url()).search, /page=2/, 'the page is in the address')
    await page.getByLabel('Type').selectOption('task_plan')
    await page.getByRole('link', { name: 'Arrives while watching' }).waitFor()
    await pager.waitFor({ state: 'detached' })
    t.equal(await page.locator('.artifact-list li').count(), 1, 'only the task plan, on one page')
    t.notMatch(new URL(page.url()).search, /page=/, 'from the first page again')
    await page.getByLabel('Status').selectOption('pending_review')
    await page.getByText('Nothing awaiting review matches these filters.').waitFor()
    t.pass('the filters together, with what to do said when nothing matches')
  })

  await t.test('the Workspace select shows another workspace\'s queue; a proof, a decision record, a research ' +
    'summary and an unknown shape drawn readably, commented on by claim and option', async (t) => {
    const u = await signup(app)
    const person = new CairnClient({ baseUrl: base, token: u.token })
    const second = await person.createWorkspace('Research')
    const there = person.with({ workspaceId: second.id })
    const proof = await there.createArtifact({ type: 'verification_proof', title: 'Retries are bounded',
      review_policy: 'request_review', content: { summary: 'Checked on **staging**.', claims: [
        { statement: 'The loop stops after 3 tries', passed: true, command: 'npm test -- retry', output: '3 passed' },
        { statement: 'The delay doubles', passed: false, evidence: 'Seen in `retry.log`.' }] } })
    const decision = await there.createArtifact({ type: 'decision_record', title: 'Pick a queue',
      review_policy: 'request_review', content: { context: 'Jobs pile up.', decision: 'Use SQLite.',
        options: [{ name: 'Redis', pros: ['fast'], cons: ['one more server'] },
          { name: 'SQLite', pros: ['no server'] }],
        consequences: 'One writer.' } })
    const research = await there.createArtifact({ type: 'research_summary', title: 'Queues compared',
      review_policy: 'request_review', content: { question: 'Which queue?', summary: 'SQLite is enough.',
        findings: [{ text: 'Fewer moving parts.', sources: [{ title: 'SQLite docs', url: 'https://sqlite.org/wal.html' },
          { title: 'A trap', url: 'javascript:window.__xss=1' }] }] } })
    const odd = await there.createArtifact({ type: 'decision_record', title: 'Shapeless',
      review_policy: 'request_review', content: { notes: ['no decision field'] } })

    const page = await open(t, '/review')
    await signIn(page, u)
    await page.getByText('Nothing awaits review').waitFor()
    await page.getByLabel('Workspace').selectOption({ label: 'Research' })
    for (const title of ['Retries are bounded', 'Pick a queue', 'Queues compared', 'Shapeless']) {
      await page.getByRole('link', { name: title }).waitFor()
    }
    t.pass('the queue of the workspace chosen')
    await page.reload()
    await page.getByRole('link', { name: 'Shapeless' }).waitFor()
    t.equal(await page.getByLabel('Workspace').evaluate((el) => (el as unknown as { value: string }).value), second.id,
      'the choice is kept across a reload')

    await page.getByRole('link', { name: 'Retries are bounded' }).click()
    await page.getByRole('heading', { level: 1, name: 'Retries are bounded' }).waitFor()
    const claims = page.locator('.steps > li')
    t.match(await claims.nth(0).textContent(), /The loop stops after 3 tries.*Passed.*\$ npm test -- retry.*3 passed/,
      'a claim with its verdict, command and output')
    t.match(await claims.nth(1).textContent(), /The delay doubles.*Failed.*Seen in retry\.log/)
    t.equal(await page.locator('main strong').filter({ hasText: 'staging' }).count(), 1, 'the summary\'s Markdown')
    await page.getByRole('button', { name: 'Comment on claim 2' }).click()
    await page.getByLabel('Comment').fill('Show the delays.')
    await page.getByRole('button', { name: 'Add comment' }).click()
    await claims.nth(1).getByText('Show the delays.').waitFor()
    t.match((await there.getArtifact(proof.id)).comments, [{ content: 'Show the delays.',
      position: { kind: 'claim', claim: 1 } }], 'the comment is on the second claim')

    await page.goto(`${base}/artifacts/${decision.id}`)
    await page.getByRole('heading', { level: 1, name: 'Pick a queue' }).waitFor()
    for (const name of ['Context', 'Options', 'Decision', 'Consequences']) {
      await page.getByRole('heading', { level: 2, name }).waitFor()
    }
    t.match(await page.locator('.steps > li').nth(0).textContent(), /Redis.*Pros.*fast.*Cons.*one more server/,
      'an option with its pros and cons')
    await page.getByRole('button', { name: 'Comment on option 1' }).click()
    await page.getByLabel('Comment').fill('Redis is already running.')
    await page.getByRole('button', { name: 'Reject' }).click()
    await page.locator('.status-text').filter({ hasText: 'Changes requested' }).waitFor()
    t.match((await there.getArtifact(decision.id)).comments, [{ content: 'Redis is already running.',
      position: { kind: 'option', option: 0 } }], 'the rejection\'s comment is on the first option')

    await page.goto(`${base}/artifacts/${research.id}`)
    await page.getByRole('heading', { level: 1, name: 'Queues compared' }).waitFor()
    t.equal(await page.getByRole('link', { name: 'SQLite docs' }).getAttribute('href'), 'https://sqlite.org/wal.html',
      'a source is a link')
    await page.getByText('A trap').waitFor()
    t.equal(await page.getByRole('link', { name: 'A trap' }).count(), 0, 'a javascript: source is no link')
    t.ok(await page.getByText('Fewer moving parts.').isVisible(), 'the finding')

    await page.goto(`${base}/artifacts/${odd.id}`)
    await page.getByRole('heading', { level: 1, name: 'Shapeless' }).waitFor()
    await page.getByText('shown as data').waitFor()
    t.match(await page.locator('pre.json').textContent(), /"notes": \[\s*"no decision field"\s*\]/,
      'an unknown shape as formatted JSON')
  })

  await t.test('an open artifact follows a comment and a decision made elsewhere, told by the event stream',
    async (t) => {
      const u = await signup(app)
      const person = new CairnClient({ baseUrl: base, token: u.token, workspaceId: u.workspaceId })
      const a = await person.createArtifact({ type: 'task_plan', title: 'Decided elsewhere',
        review_policy: 'request_review', content: { steps: [{ title: 'one' }] } })
      const page = await open(t, `/artifacts/${a.id}`)
      let streamed = false
      page.on('request', (r) => { if (r.url().includes('/api/v2/events/stream')) streamed = true })
      await signIn(page, u)
      await page.getByRole('button', { name: 'Approve' }).waitFor()
      await person.commentOnArtifact(a.id, 'Said in another window')
      await page.getByText('Said in another window').waitFor({ timeout: 15_000 })
      await person.setArtifactStatus(a.id, 'approved')
      await page.getByRole('button', { name: 'Approve' }).waitFor({ state: 'detached', timeout: 15_000 })
      t.ok(streamed, 'the page follows the workspace event stream')
    })

  await t.test('XSS probes render as text', async (t) => {
    const u = await signup(app)
    const person = new CairnClient({ baseUrl: base, token: u.token, workspaceId: u.workspaceId })
    const probe = '<img src=x onerror="window.__xss=1">'
    const a = await person.createArtifact({ type: 'task_plan', title: `Probe ${probe}`, review_policy: 'request_review',
      content: { summary: `<script>window.__xss=2</script> and [a link](javascript:window.__xss=3)`, steps: [
        { title: '<svg onload="window.__xss=4">', detail: `${probe}\n\n[click](javascript:window.__xss=5) ` +
          '<a href="javascript:window.__xss=6">raw</a>' }] } })
    await person.commentOnArtifact(a.id, '<iframe src="javascript:window.__xss=7"></iframe>', { kind: 'step', step: 0 })
    const page = await open(t, `/artifacts/${a.id}`)
    await signIn(page, u)
    await page.getByRole('heading', { level: 1 }).waitFor()
    t.equal(await page.getByRole('heading', { level: 1 }).textContent(), `Probe ${probe}`, 'the title as text')
    await page.getByRole('link', { name: 'Review', exact: true }).click()
    await page.getByRole('link', { name: `Probe ${probe}` }).click()
    await page.getByRole('heading', { level: 1 }).waitFor()
    // the links that were written are there as text, and none of them is a javascript: link
    for (const link of await page.getByText('click').all()) await link.click().catch(() => undefined)
    t.equal(await page.evaluate(() => (globalThis as unknown as PageGlobals).__xss), undefined, 'nothing ran')
    t.equal(await page.locator('main img, main svg, main script, main iframe').count(), 0, 'no element was made')
    t.equal(await page.locator('a[href^="javascript:" i]').count(), 0, 'no javascript: link')
    t.ok(await page.getByText('<script>window.__xss=2</script>', { exact: false }).count() > 0, 'shown as text')
    t.ok(await page.getByText('<iframe src="javascript:window.__xss=7"></iframe>').count() > 0, 'comments too')
  })

  await t.test('CSRF: a page of another origin cannot act with the cookie', async (t) => {
    const u = await signup(app)
    const page = await open(t, '/review')
    await signIn(page, u)
    // a hostile page on another port of the same host: same site, so the SameSite cookie goes along
    const evil = http.createServer((req, res) => {
      res.setHeader('content-type', 'text/html')
      if (req.url !== '/') return res.end('<p>elsewhere</p>')
      res.end(`<form id=f method=post action="${base}/api/v2/workspaces" enctype="text/plain">` +
        '<input name=\'{"name":"pwned","x":"\' value=\'"}\'></form>' +
        '<script>document.getElementById("f").submit()</script>')
    })
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve))
    t.teardown(() => evil.close())
    const evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`
    await page.goto(evilUrl)
    await page.waitForURL(`${base}/api/v2/workspaces`)
    t.match(await page.textContent('body'), /CSRF_REJECTED/, 'the forged form is refused')

    await page.goto(evilUrl.replace(/\/$/, '/nothing'))
    const fetched = await page.evaluate(async (target) => {
      const res = await fetch(target, { method: 'POST', credentials: 'include', mode: 'no-cors',
        headers: { 'content-type': 'text/plain' }, body: '{"name":"pwned"}' })
      return res.type
    }, `${base}/api/v2/workspaces`)
    t.equal(fetched, 'opaque')
    t.equal(app.sqlite.prepare('SELECT count(*) FROM workspaces WHERE name = ?').pluck().get('pwned'), 0,
      'nothing was created')

    // the console itself, without its header: refused too
    await page.goto(`${base}/review`)
    await page.getByRole('button', { name: 'Sign out' }).waitFor()
    const own = await page.evaluate(async () => {
      const res = await fetch('/api/v2/workspaces', { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'pwned' }) })
      return { status: res.status, code: (await res.json() as { code: string }).code }
    })
    t.same(own, { status: 403, code: 'CSRF_REJECTED' })
  })
}
