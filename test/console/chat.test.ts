// The console's chat in a real browser, against an OpenAI-compatible model server on a real socket: the answer
// appears as it is written, with the passages it was made from, and Stop ends it and the model's work.
import t from 'tap'
import { CairnClient } from '../../clients/typescript/src/client.js'
import { signup } from '../helper.js'
import { fakeLlm } from '../fake-llm.js'
import { fitsWidth, harness, PHONE, type PageGlobals } from './harness.js'

const LONG = Array.from({ length: 60 }, (_, i) => `Sentence ${i + 1} of a very long answer.`).join(' ')

const llm = await fakeLlm(t, {
  toolQuery: 'albatross',
  // deltas of 7 characters, 40 ms apart: an answer takes a second or more to write
  delayMs: 40,
  answer: (b) => {
    const question = [...b.messages].reverse().find((m) => m.role === 'user')?.content ?? ''
    if (question.includes('at length')) return LONG
    const tool = b.messages.find((m) => m.role === 'tool')
    const found = tool ? (JSON.parse(tool.content) as Array<{ text: string }>)[0]?.text : undefined
    return `**From your notes:** ${found ?? 'nothing'} That is all the notes say about it, in a few more words.`
  }
})
const h = await harness(t, { config: { llm: { baseUrl: llm.baseUrl, model: 'fake-1' } } })
if (h) {
  const { app, base, open, signIn, shot } = h

  await t.test('the answer streams in as it is written, then its cited passages', async (t) => {
    const u = await signup(app)
    const person = new CairnClient({ baseUrl: base, token: u.token, workspaceId: u.workspaceId })
    await person.uploadDocument({ data: 'The albatross can glide for hours <b>without</b> flapping.',
      fileName: 'birds.txt' })
    const page = await open(t, '/chat')
    await signIn(page, u)
    await page.getByText('No questions yet.').waitFor()
    await page.getByLabel('Message').fill('What do we know about the albatross?')
    await page.getByRole('button', { name: 'Send' }).click()
    const answer = page.locator('.answer').last()
    await answer.getByText('From your notes:').waitFor()
    t.equal(await page.getByRole('button', { name: 'Stop' }).count(), 1,
      'the first words are shown while the answer is still being written')
    await page.getByRole('button', { name: 'Send' }).waitFor()
    t.match(await answer.textContent(), /glide for hours <b>without<\/b> flapping\. That is all/,
      'the whole answer, the document\'s markup as text')
    t.equal(await answer.locator('strong').filter({ hasText: 'From your notes:' }).count(), 1, 'Markdown rendered')
    t.equal(await answer.locator('b').count(), 0, 'no element made of the document\'s text')
    const cited = page.getByRole('region', { name: 'Cited passages' })
    await cited.getByRole('link', { name: 'birds.txt, passage 1' }).waitFor()
    t.ok(await cited.getByText('The albatross can glide for hours <b>without</b> flapping.').isVisible(),
      'the cited passage, as text')
    await shot(page, 'chat')

    // the conversation goes on: the second question carries the first one's conversation
    await page.getByLabel('Message').fill('And how long?')
    await page.getByLabel('Message').press('Control+Enter')
    await page.locator('.answer').nth(1).getByText('From your notes:').waitFor()
    await page.getByRole('button', { name: 'Send' }).waitFor()
    const last = llm.requests[llm.requests.length - 1].body.messages
    t.ok(last.some((m) => m.content === 'What do we know about the albatross?'), 'the earlier turn went along')

    await cited.getByRole('link', { name: 'birds.txt, passage 1' }).first().click()
    await page.getByRole('heading', { level: 1, name: 'birds.txt' }).waitFor()
    t.pass('a cited passage opens in its document')
    t.equal(await page.evaluate(() => (globalThis as unknown as PageGlobals).__xss), undefined)
  })

  await t.test('Stop ends the answer where it is, and the model call with it', async (t) => {
    const u = await signup(app)
    const page = await open(t, '/chat', PHONE)
    await signIn(page, u)
    const before = llm.requests.length
    await page.getByLabel('Message').fill('Tell me everything at length')
    await page.getByRole('button', { name: 'Send' }).click()
    await page.locator('.answer').getByText('Sentence 2 of').waitFor()
    t.ok(await fitsWidth(page), 'nothing wider than a 390-pixel screen')
    await page.getByRole('button', { name: 'Stop' }).click()
    await page.getByText('Stopped: the answer ends here.').waitFor()
    const shown = await page.locator('.answer').textContent() ?? ''
    t.notMatch(shown, /Sentence 60 of/, 'the answer ends where it was stopped')
    // the answer's request (after the one that called the search tool)
    const call = llm.requests.slice(before).filter((r) => r.body.messages.some((m) => m.role === 'tool')).pop()
    // the service cancels the model call once the browser's connection closes
    for (let i = 0; i < 200 && !call?.aborted; i++) await new Promise((resolve) => setTimeout(resolve, 50))
    t.ok(call?.aborted, 'the model server saw the request cancelled')
    t.equal(await page.getByRole('button', { name: 'Send' }).count(), 1, 'ready for the next question')
    await shot(page, 'chat-stopped-phone')
  })
}
