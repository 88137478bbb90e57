// Comments on a text selection in Chromium: selected with the mouse's way (a range in the page) and commented on
// from the keyboard, stored with the field, quote and offsets, shown beside the quoted text and highlighted there,
// and followed onto a later version (found again by its quote, or said to be changed).
import t from 'tap'
import type { Page } from 'playwright-core'
import { signup } from '../helper.js'
import { CairnClient } from '../../clients/typescript/src/client.js'
import { harness, PHONE, fitsWidth } from './harness.js'

type Globals = {
  document: {
    querySelector(s: string): unknown
    createTreeWalker(root: unknown, what: number): { nextNode(): { data: string } | null }
    createRange(): { setStart(n: unknown, o: number): void; setEnd(n: unknown, o: number): void
      getBoundingClientRect(): { left: number; right: number; top: number; bottom: number } }
    getSelection(): { removeAllRanges(): void; addRange(r: unknown): void; toString(): string }
  }
  CSS: { highlights: { get(name: string): Set<{ toString(): string }> | undefined } }
}

/** Selects `text` inside the element `selector`, across its elements, as dragging the mouse over it would. */
async function select(page: Page, selector: string, text: string): Promise<string> {
  return page.evaluate(([sel, wanted]) => {
    const g = globalThis as unknown as Globals
    const root = g.document.querySelector(sel)
    const walker = g.document.createTreeWalker(root, 4)
    const nodes: Array<{ data: string }> = []
    for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(n)
    const all = nodes.map((n) => n.data).join('')
    const from = all.indexOf(wanted)
    if (from < 0) throw new Error(`"${wanted}" is not in ${sel}`)
    const at = (i: number, end: boolean): [unknown, number] => {
      let seen = 0
      for (const n of nodes) {
        if (i < seen + n.data.length || (end && i === seen + n.data.length)) return [n, i - seen]
        seen += n.data.length
      }
      throw new Error('out of range')
    }
    const range = g.document.createRange()
    range.setStart(...at(from, false))
    range.setEnd(...at(from + wanted.length, true))
    const selection = g.document.getSelection()
    selection.removeAllRanges()
    selection.addRange(range)
    return selection.toString()
  }, [selector, text] as const)
}

/** Drags the mouse over `text` inside `selector`, from its first character's left edge to its last's right. */
async function drag(page: Page, selector: string, text: string): Promise<void> {
  const box = await page.evaluate(([sel, wanted]) => {
    const g = globalThis as unknown as Globals
    const walker = g.document.createTreeWalker(g.document.querySelector(sel), 4)
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const i = n.data.indexOf(wanted)
      if (i < 0) continue
      const char = (at: number) => {
        const r = g.document.createRange()
        r.setStart(n, at)
        r.setEnd(n, at + 1)
        return r.getBoundingClientRect()
      }
      const first = char(i)
      const last = char(i + wanted.length - 1)
      return { x1: first.left + 1, x2: last.right - 1, y: (first.top + first.bottom) / 2 }
    }
    throw new Error(`"${wanted}" is not within one piece of text in ${sel}`)
  }, [selector, text] as const)
  await page.mouse.move(box.x1, box.y)
  await page.mouse.down()
  await page.mouse.move(box.x2, box.y, { steps: 8 })
  await page.mouse.up()
}

/** The text of every range marked under a highlight name. */
async function highlighted(page: Page, name: string): Promise<string[]> {
  return page.evaluate((n) => [...(globalThis as unknown as Globals).CSS.highlights.get(n) ?? []]
    .map((r) => r.toString()), name)
}

const h = await harness(t)
if (h) {
  const { app, base, open, signIn, shot } = h

  await t.test('a selection in the summary and one in a step are commented on, stored and marked', async (t) => {
    const u = await signup(app)
    const person = new CairnClient({ baseUrl: base, token: u.token, workspaceId: u.workspaceId })
    const plan = await person.createArtifact({ type: 'implementation_plan', title: 'Cache sessions in Redis',
      review_policy: 'request_review',
      content: { summary: 'Move the **session cache** out of process before the launch.',
        steps: [{ title: 'Add a client' },
          { title: 'Write through', detail: 'Every update writes to Redis first, then to the map.' }] } })

    const page = await open(t, `/artifacts/${plan.id}`)
    await signIn(page, u)
    await page.getByRole('heading', { level: 1, name: 'Cache sessions in Redis' }).waitFor()
    const button = page.getByRole('button', { name: 'Comment on selection' })
    t.equal(await button.getAttribute('aria-disabled'), 'true', 'nothing selected: the button waits')
    await button.focus()
    await page.keyboard.press('Enter')
    await page.getByText('Nothing is selected: select words in the content first.').waitFor()
    t.pass('reached by Tab, it says what to do')

    // a selection that starts inside the bold words and ends after them
    t.equal(await select(page, '[data-field="summary"]', 'session cache out of process'),
      'session cache out of process')
    await page.getByText('Selected: “session cache out of process”').waitFor()
    await button.focus()
    await page.keyboard.press('Enter')
    await page.getByText('On “session cache out of process”.').waitFor()
    t.same(await highlighted(page, 'cairn-pending'), ['session cache out of process'],
      'the text being commented on is marked')
    t.equal(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { tagName: string } } })
      .document.activeElement.tagName), 'TEXTAREA', 'the Comment field has the focus')
    await page.keyboard.type('Which process, the web one or the worker?')
    await page.getByRole('button', { name: 'Add comment' }).click()
    await page.locator('.content .anchored-side').getByText('Which process, the web one or the worker?').waitFor()

    await drag(page, '[data-field="steps.1.detail"]', 'writes to Redis first')
    await page.getByText('Selected: “writes to Redis first”').waitFor()
    await button.click()
    await page.getByLabel('Comment').fill('What if Redis is down?')
    await page.getByRole('button', { name: 'Add comment' }).click()
    await page.locator('.steps > li').nth(1).getByText('What if Redis is down?').waitFor()
    t.ok(await page.locator('.steps > li').nth(1).locator('blockquote').getByText('writes to Redis first').isVisible(),
      'the quote is shown beside its step')

    const read = await person.getArtifact(plan.id)
    const summary = 'Move the **session cache** out of process before the launch.'
    t.match(read.comments, [
      { content: 'Which process, the web one or the worker?', position: { kind: 'text', field: 'summary',
        quote: 'session cache out of process', start: summary.indexOf('session'),
        end: summary.indexOf(' before') } },
      { content: 'What if Redis is down?', position: { kind: 'text', field: 'steps.1.detail',
        quote: 'writes to Redis first', start: 13, end: 34 } }
    ], 'field, quote and offsets into the source are stored')
    t.same((await highlighted(page, 'cairn-quote')).sort(), ['session cache out of process', 'writes to Redis first'],
      'both quotes are marked in the text')
    await shot(page, 'comment-on-selection')

    // a later version: one quote still there (elsewhere), the other gone
    const summary2 = 'Before the launch, move the **session cache** out of process.'
    const next = await person.supersedeArtifact(plan.id, { content: { summary: summary2,
      steps: [{ title: 'Add a client' }, { title: 'Write through', detail: 'Every update goes to the map only.' }] } })
    await page.goto(`${base}/artifacts/${next.id}`)
    await page.getByRole('heading', { level: 1, name: 'Cache sessions in Redis' }).waitFor()
    const side = page.locator('.content .anchored-side')
    await side.getByText('Which process, the web one or the worker?').waitFor()
    t.ok(await side.getByText('on version 1').isVisible(), 'the comment says which version it was made on')
    t.same(await highlighted(page, 'cairn-quote'), ['session cache out of process'],
      'found again by its quote on the new text')
    const thread = page.locator('.thread')
    await thread.getByText('What if Redis is down?').waitFor()
    t.ok(await thread.getByText('Text changed: this quote is no longer in this version.').isVisible(),
      'the other is said to be about text that changed')
    t.equal(await page.locator('.steps > li').nth(1).getByText('What if Redis is down?').count(), 0,
      'and is not put beside text it was not about')
  })

  await t.test('on a phone-wide screen; a selection across two fields is not offered', async (t) => {
    const u = await signup(app)
    const person = new CairnClient({ baseUrl: base, token: u.token, workspaceId: u.workspaceId })
    const proof = await person.createArtifact({ type: 'verification_proof', title: 'Retries are bounded',
      content: { summary: 'The loop stops.',
        claims: [{ statement: 'Three tries at most', evidence: 'See the test.' }] } })
    const page = await open(t, `/artifacts/${proof.id}`, PHONE)
    await signIn(page, u)
    await page.getByRole('heading', { level: 1, name: 'Retries are bounded' }).waitFor()
    const button = page.getByRole('button', { name: 'Comment on selection' })
    await select(page, '[data-field="claims.0.evidence"]', 'the test')
    await page.getByText('Selected: “the test”').waitFor()
    await select(page, '.content', 'stops.ClaimsThree')
    await page.getByText('Select text in the content to comment on it').waitFor()
    t.equal(await button.getAttribute('aria-disabled'), 'true', 'two fields at once: not a quote of one text')
    await select(page, '[data-field="claims.0.evidence"]', 'the test')
    await page.getByText('Selected: “the test”').waitFor()
    await button.click()
    await page.getByLabel('Comment').fill('Which test?')
    await page.getByRole('button', { name: 'Add comment' }).click()
    await page.locator('.steps > li').first().getByText('Which test?').waitFor()
    t.ok(await fitsWidth(page), 'nothing wider than the phone')
    t.match((await person.getArtifact(proof.id)).comments,
      [{ position: { kind: 'text', field: 'claims.0.evidence', quote: 'the test', start: 4, end: 12 } }])
  })

  await t.test('another workspace\'s artifact is not found, and its comments are not shown', async (t) => {
    const owner = await signup(app)
    const stranger = await signup(app)
    const person = new CairnClient({ baseUrl: base, token: owner.token, workspaceId: owner.workspaceId })
    const a = await person.createArtifact({ type: 'task_plan', title: 'Private plan',
      content: { summary: 'Secret words here.', steps: [{ title: 'one' }] } })
    await person.commentOnArtifact(a.id, 'A private remark',
      { kind: 'text', field: 'summary', quote: 'Secret words', start: 0, end: 12 })
    const page = await open(t, `/artifacts/${a.id}`)
    await signIn(page, stranger)
    await page.getByRole('heading', { level: 1, name: 'Artifact not found' }).waitFor()
    t.equal(await page.getByText('A private remark').count(), 0)
  })
}
