// What the console's accessibility tests share: one of every page (with something on it to show), axe-core run in
// the page, and a walk through the page with the Tab key alone.
import fs from 'node:fs'
import { createRequire } from 'node:module'
import type { Test } from 'tap'
import type { Page } from 'playwright-core'
import type { Harness } from './harness.js'
import { signup, createKey } from '../helper.js'
import { CairnClient } from '../../clients/typescript/src/client.js'

// axe-core from the installed package, put into each page as it is (nothing is downloaded while testing)
const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

interface Violation { id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[];
  failureSummary?: string }> }

/** The page's serious and critical violations of WCAG 2.x A/AA and axe's best practices, one line each. */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!await page.evaluate(() => 'axe' in globalThis)) await page.addScriptTag({ content: AXE_SOURCE })
  const violations = await page.evaluate(async () => {
    type Axe = { run(context: unknown, options: unknown): Promise<{ violations: Violation[] }> }
    const axe = (globalThis as unknown as { axe: Axe }).axe
    const result = await axe.run({ exclude: [] }, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
      resultTypes: ['violations']
    })
    return result.violations
  })
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id} (${v.help}): ${v.nodes.slice(0, 4).map((n) => JSON.stringify(n.target))
      .join(', ')}${v.nodes.length > 4 ? ` and ${v.nodes.length - 4} more` : ''}`)
}

interface Stop { name: string; visible: boolean; inOrder: boolean }

/** Tab presses sent at once between two looks at the page's record of the walk (8: fewer looks than 4, fewer presses
 * past the end than 16; `npx tap --disable-coverage test/console/keyboard.test.ts`: 10.8 s, against 11.9 s with 16) */
const TABS_PER_LOOK = 8

/**
 * Tabs through the page from its start until the focus comes back around, recording each control reached, whether
 * the focus is drawn (an outline or a shadow) and whether it moved forward in the document; then lists the page's
 * controls that Tab never reached. Each stop is recorded in the page as the focus arrives (a `focusin` listener), so
 * the presses go to Chromium as a batch of real key events (DevTools' Input.dispatchKeyEvent, handled in the order
 * sent) and the walk asks the page how far it got once per batch, instead of two round trips and a look per press.
 */
export async function keyboardWalk(page: Page): Promise<{ stops: Stop[]; missed: string[]; positiveTabindex: number
  first: string; firstReached: boolean }> {
  // Tab starts from the top of the page: the body is focused for a moment (it is where Chromium's next Tab starts)
  await page.evaluate(() => {
    type El = { tagName: string; getAttribute(n: string): string | null; textContent: string | null; id: string
      compareDocumentPosition(o: El): number; labels?: Array<{ textContent: string | null }> | null
      setAttribute(n: string, v: string): void; removeAttribute(n: string): void; focus(): void; blur(): void }
    type Walk = { stops: Array<{ name: string; visible: boolean; inOrder: boolean }>; done: boolean }
    type Style = { outlineStyle: string; outlineWidth: string; boxShadow: string }
    const g = globalThis as unknown as { document: { activeElement: El | null; body: El
      addEventListener(type: string, f: () => void, capture: boolean): void }
    __tabbed: El[]; __walk: Walk; __walkListens?: true; getComputedStyle(e: El): Style }
    const body = g.document.body
    body.setAttribute('tabindex', '-1')
    body.focus()
    body.blur()
    body.removeAttribute('tabindex')
    g.__tabbed = []
    g.__walk = { stops: [], done: false }
    // one listener per document: the next pages of the walk are reached by the console's router, in the same document
    if (g.__walkListens) return
    g.__walkListens = true
    g.document.addEventListener('focusin', () => {
      const walk = g.__walk
      const el = g.document.activeElement
      if (walk.done || !el || el === g.document.body) return
      const previous = g.__tabbed[g.__tabbed.length - 1]
      // a date field's parts (day, month, year) are Tab stops inside one element
      if (el === previous) return
      // back around to a control already reached: the walk is over
      if (g.__tabbed.includes(el)) {
        walk.done = true
        return
      }
      // Node.DOCUMENT_POSITION_FOLLOWING
      const inOrder = !previous || (previous.compareDocumentPosition(el) & 4) !== 0
      g.__tabbed.push(el)
      const style = g.getComputedStyle(el)
      const visible = (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0) ||
        style.boxShadow !== 'none'
      const label = el.getAttribute('aria-label') ?? el.labels?.[0]?.textContent ?? el.textContent ?? ''
      walk.stops.push({ inOrder, visible,
        name: `${el.tagName.toLowerCase()} “${label.replace(/\s+/g, ' ').trim().slice(0, 60)}”` })
    }, true)
  })
  let stops: Stop[] = []
  const cdp = await page.context().newCDPSession(page)
  const tab = { key: 'Tab', code: 'Tab', windowsVirtualKeyCode: 9, nativeVirtualKeyCode: 9 }
  for (let pressed = 0; pressed < 300; pressed += TABS_PER_LOOK) {
    await Promise.all(Array.from({ length: TABS_PER_LOOK }, () => [
      cdp.send('Input.dispatchKeyEvent', { type: 'rawKeyDown', ...tab }),
      cdp.send('Input.dispatchKeyEvent', { type: 'keyUp', ...tab })]).flat())
    const walk = await page.evaluate(() => {
      const g = globalThis as unknown as { document: { activeElement: unknown; body: unknown }
        __walk: { stops: Stop[]; done: boolean } }
      // the focus left the page's last control for the page itself: the walk is over too
      const done = g.__walk.done || (g.__walk.stops.length > 0 && (!g.document.activeElement ||
        g.document.activeElement === g.document.body))
      g.__walk.done = done
      return { stops: g.__walk.stops, done }
    })
    stops = walk.stops
    if (walk.done) break
  }
  const rest = await page.evaluate(() => {
    type El = { tagName: string; getAttribute(n: string): string | null; textContent: string | null
      getClientRects(): { length: number }; closest(s: string): El | null; disabled?: boolean; type?: string
      parentElement: El | null
      labels?: Array<{ textContent: string | null }> | null }
    const g = globalThis as unknown as { document: { querySelectorAll(s: string): El[] }; __tabbed: El[]
      getComputedStyle(e: El): { visibility: string } }
    // what a closed <details> holds is not shown, its summary is
    const folded = (el: El) => {
      const closed = el.closest('details:not([open])')
      return !!closed && !(el.tagName === 'SUMMARY' && el.parentElement === closed)
    }
    const controls = [...g.document.querySelectorAll(
      'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])')]
      .filter((el) => !el.disabled && el.type !== 'hidden' && el.getClientRects().length > 0 &&
        g.getComputedStyle(el).visibility !== 'hidden' && !el.closest('[inert]') && !folded(el))
    // a group of radio buttons is one stop
    const missed = controls.filter((el) => !g.__tabbed.includes(el) && !(el.type === 'radio' &&
      g.__tabbed.some((x) => x.type === 'radio' && x.getAttribute('name') === el.getAttribute('name'))))
    const nameOf = (el: El) => `${el.tagName.toLowerCase()} “${(el.getAttribute('aria-label') ??
      el.labels?.[0]?.textContent ?? el.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 60)}”`
    return {
      first: controls[0] ? nameOf(controls[0]) : '',
      firstReached: controls[0] !== undefined && g.__tabbed[0] === controls[0],
      missed: missed.map(nameOf),
      positiveTabindex: [...g.document.querySelectorAll('[tabindex]')]
        .filter((el) => Number(el.getAttribute('tabindex')) > 0).length
    }
  })
  return { stops, ...rest }
}

/** the app options the pages need: a webhook whose receiver is a closed local port */
export const PAGES_CONFIG = { config: { allowPrivateUrls: true } }

export interface PageCase { name: string; path: string; signedIn: boolean; ready: (p: Page) => Promise<unknown> }

/**
 * An organization with one of each thing the console shows, and every page of the console to open: `open` gives a
 * browser profile signed in as its owner (the console's cookie), or a fresh one.
 */
export async function consolePages(h: Harness) {
  const { app, base, browser } = h
  const owner = await signup(app)
  const inWs = { ...owner.auth, 'x-workspace-id': owner.workspaceId }

  // one of each thing the pages show
  const artifact = await app.inject({ method: 'POST', url: `/api/v2/artifacts?workspace_id=${owner.workspaceId}`,
    headers: owner.auth, payload: { type: 'implementation_plan', title: 'Move the build to the new runners',
      review_policy: 'request_review', confidence: { score: 0.8 },
      content: { summary: 'Two **steps**.', steps: [{ title: 'Copy the jobs', detail: 'One job at a time' },
        { title: 'Switch over', files: ['ci.yml'] }] } } })
  if (artifact.statusCode !== 201) throw new Error(artifact.body)
  const artifactId = artifact.json().data.id as string
  const person = new CairnClient({ baseUrl: base, token: owner.token, workspaceId: owner.workspaceId })
  const doc = await person.uploadDocument({ data: 'Runners\n\nThe new build runners start on Monday.',
    fileName: 'runners.md' })
  const workflow = await app.inject({ method: 'POST', url: '/api/v2/workflows', headers: inWs,
    payload: { name: 'Weekly notes', inputs: [{ name: 'topic', required: true }],
      steps: [{ id: 'write', type: 'create_artifact', artifactType: 'research_summary',
        title: 'Notes on {{inputs.topic}}', content: { summary: 'Nothing yet.' } }] } })
  if (workflow.statusCode !== 201) throw new Error(workflow.body)
  const workflowId = workflow.json().workflow.id as string
  const run = await app.inject({ method: 'POST', url: `/api/v2/workflows/${workflowId}/execute`, headers: inWs,
    payload: { inputs: { topic: 'runners' } } })
  if (run.statusCode !== 202) throw new Error(run.body)
  const runId = run.json().run.id as string
  const note = await app.inject({ method: 'POST', url: '/api/v2/voice-notes', headers: owner.auth,
    payload: { audioUrl: 'http://127.0.0.1:9/standup.webm', title: 'Stand-up', workspaceId: owner.workspaceId } })
  if (note.statusCode !== 201) throw new Error(note.body)
  const noteId = note.json().voiceNote.id as string
  const channel = await app.inject({ method: 'POST', url: '/api/v2/channels', headers: inWs,
    payload: { name: 'builds', type: 'public' } })
  if (channel.statusCode !== 201) throw new Error(channel.body)
  const channelId = channel.json().data.id as string
  const message = await app.inject({ method: 'POST', url: '/api/v2/messages', headers: inWs,
    payload: { channel_id: channelId, content: 'The runners are ready.' } })
  if (message.statusCode !== 201) throw new Error(message.body)
  const key = await createKey(app, owner, ['read'])
  await app.inject({ url: '/api/knowledge/stats', headers: { authorization: `Bearer ${key.key}` } })
  const hook = await app.inject({ method: 'POST', url: `/api/v2/developer/webhooks?workspaceId=${owner.workspaceId}`,
    headers: owner.auth, payload: { url: 'http://127.0.0.1:9/closed', events: ['test.ping'] } })
  if (hook.statusCode !== 201) throw new Error(hook.body)
  const hookId = hook.json().data.id as string
  await app.inject({ method: 'POST', url: `/api/v2/developer/webhooks/${hookId}/test?workspaceId=${owner.workspaceId}`,
    headers: owner.auth })
  const invitation = await app.inject({ method: 'POST', url: '/api/v2/invitations', headers: owner.auth,
    payload: { email: 'invited@example.test' } })
  const inviteUrl = new URL(invitation.json().data.url as string).pathname
  const reset = await app.inject({ method: 'POST', url: `/api/v2/users/${owner.userId}/password-reset`,
    headers: owner.auth })
  const resetUrl = new URL(reset.json().data.url as string).pathname

  const documentId = doc.document.id
  const pages: PageCase[] = [
    { name: 'sign-in', path: '/review', signedIn: false,
      ready: (p) => p.getByRole('button', { name: 'Sign in' }).waitFor() },
    { name: 'invitation', path: inviteUrl, signedIn: false,
      ready: (p) => p.getByRole('button', { name: 'Join' }).waitFor() },
    { name: 'password reset', path: resetUrl, signedIn: false,
      ready: (p) => p.getByRole('button', { name: 'Set new password' }).waitFor() },
    { name: 'review queue', path: '/review', signedIn: true,
      ready: (p) => p.getByRole('link', { name: 'Move the build to the new runners' }).waitFor() },
    { name: 'artifact', path: `/artifacts/${artifactId}`, signedIn: true,
      ready: (p) => p.getByRole('button', { name: 'Comment on step 2' }).waitFor() },
    { name: 'knowledge', path: '/knowledge', signedIn: true,
      ready: (p) => p.getByText('runners.md').first().waitFor() },
    { name: 'knowledge document', path: `/knowledge/documents/${documentId}`, signedIn: true,
      ready: (p) => p.getByRole('heading', { level: 1, name: 'runners.md' }).waitFor() },
    { name: 'chat', path: '/chat', signedIn: true, ready: (p) => p.getByRole('heading', { level: 1 }).waitFor() },
    { name: 'channels', path: '/chat/channels', signedIn: true,
      ready: (p) => p.getByRole('link', { name: 'builds' }).waitFor() },
    { name: 'a channel', path: `/chat/channels/${channelId}`, signedIn: true,
      ready: (p) => p.getByText('The runners are ready.').waitFor() },
    { name: 'voice notes', path: '/voice-notes', signedIn: true,
      ready: (p) => p.getByRole('heading', { level: 1 }).waitFor() },
    { name: 'a voice note', path: `/voice-notes/${noteId}`, signedIn: true,
      ready: (p) => p.getByRole('heading', { level: 1, name: 'Stand-up' }).waitFor() },
    { name: 'workflows', path: '/workflows', signedIn: true,
      ready: (p) => p.getByRole('link', { name: 'Weekly notes' }).waitFor() },
    { name: 'a workflow', path: `/workflows/${workflowId}`, signedIn: true,
      ready: (p) => p.getByRole('button', { name: 'Run workflow' }).waitFor() },
    { name: 'a new workflow', path: '/workflows/new', signedIn: true,
      ready: (p) => p.getByRole('button', { name: 'Create workflow' }).waitFor() },
    { name: 'a workflow\'s editor', path: `/workflows/${workflowId}/edit`, signedIn: true,
      ready: (p) => p.getByLabel('Title of step 1').waitFor() },
    { name: 'a workflow run', path: `/workflows/${workflowId}/runs/${runId}`, signedIn: true,
      ready: (p) => p.getByRole('link', { name: 'Notes on runners' }).waitFor() },
    { name: 'developer: API keys', path: '/developer', signedIn: true,
      ready: (p) => p.getByRole('button', { name: 'Create API key' }).waitFor() },
    { name: 'developer: webhooks', path: '/developer/webhooks', signedIn: true,
      ready: (p) => p.getByRole('checkbox', { name: /test\.ping/ }).waitFor() },
    { name: 'developer: a webhook\'s deliveries', path: `/developer/webhooks/${hookId}`, signedIn: true,
      ready: (p) => p.getByRole('table', { name: 'Deliveries' }).getByRole('button', { name: 'Redeliver' }).first()
        .waitFor() },
    { name: 'developer: event log', path: '/developer/logs', signedIn: true,
      ready: (p) => p.getByRole('cell', { name: /knowledge/ }).first().waitFor() },
    { name: 'settings: people', path: '/settings', signedIn: true,
      ready: (p) => p.getByRole('heading', { level: 2, name: 'Invite a teammate' }).waitFor() },
    { name: 'settings: workspace members', path: '/settings/members', signedIn: true,
      ready: (p) => p.getByText(owner.email).first().waitFor() },
    { name: 'settings: your account', path: '/settings/account', signedIn: true,
      ready: (p) => p.getByRole('button', { name: 'Sign out everywhere' }).waitFor() }
  ]

  /** A signed-in browser profile (the console's cookie), or a fresh one. */
  async function context(tt: Test, viewport: { width: number; height: number }, signedIn: boolean) {
    // the page's Content-Security-Policy allows no inline script, which is how axe is put in: set aside here only
    const ctx = await browser.newContext({ viewport, bypassCSP: true })
    tt.teardown(() => ctx.close())
    if (signedIn) {
      const res = await ctx.request.post(`${base}/api/v2/auth/login`, { headers: { 'x-cairn-csrf': '1' },
        data: { email: owner.email, password: owner.password, cookie: true } })
      if (res.status() !== 200) throw new Error(`sign-in: ${res.status()}`)
    }
    return ctx
  }
  return { pages, context }
}

/**
 * Opens a page of the console: the first one loaded, the next ones reached as a click on a link would (the console's
 * router follows the address), so that the console and axe are loaded once per browser profile.
 */
async function visit(page: Page, base: string, path: string) {
  if (page.url() === 'about:blank') {
    await page.goto(base + path)
    return
  }
  await page.evaluate((to) => {
    const g = globalThis as unknown as { history: { pushState(s: null, t: string, u: string): void }
      dispatchEvent(e: unknown): void; PopStateEvent: new (type: string) => unknown }
    g.history.pushState(null, '', to)
    g.dispatchEvent(new g.PopStateEvent('popstate'))
  }, path)
}

/** Every page, at the viewport's size: axe-core finds no serious or critical violation. */
export async function checkWithAxe(t: Test, h: Harness, viewport: { width: number; height: number }) {
  const { pages, context } = await consolePages(h)
  const contexts = { true: await context(t, viewport, true), false: await context(t, viewport, false) }
  const tabs = { true: await contexts.true.newPage(), false: await contexts.false.newPage() }
  for (const tab of Object.values(tabs)) tab.on('pageerror', (err) => t.fail(`script error: ${err.message}`))
  for (const p of pages) {
    const page = tabs[String(p.signedIn) as 'true' | 'false']
    await visit(page, h.base, p.path)
    await p.ready(page)
    t.same(await axeViolations(page), [], `${p.name} (${p.path})`)
  }
}

/** Every page walked with Tab alone: each control reached, in the page's order, the focus drawn. */
export async function checkWithKeyboard(t: Test, h: Harness, viewport: { width: number; height: number }) {
  const { pages, context } = await consolePages(h)
  const contexts = { true: await context(t, viewport, true), false: await context(t, viewport, false) }
  const tabs = { true: await contexts.true.newPage(), false: await contexts.false.newPage() }
  for (const p of pages) {
    const page = tabs[String(p.signedIn) as 'true' | 'false']
    await visit(page, h.base, p.path)
    await p.ready(page)
    const walk = await keyboardWalk(page)
    t.ok(walk.firstReached, `${p.name}: the first Tab reaches the page's first control, ${walk.first}`)
    t.same(walk.missed, [], `${p.name}: every control is reached`)
    t.same(walk.stops.filter((s) => !s.visible).map((s) => s.name), [], `${p.name}: the focus is always drawn`)
    t.same(walk.stops.filter((s) => !s.inOrder).map((s) => s.name), [], `${p.name}: in the page's order`)
    t.equal(walk.positiveTabindex, 0, `${p.name}: no tabindex reorders it`)
  }
}
