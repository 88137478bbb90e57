// Channels in Chromium: the Channels tab of Chat, a channel created and written in from the keyboard alone, messages
// posted through the API arriving in the open page from the workspace event stream, older messages on request,
// errors beside their cause, a phone-wide screen, and channels of others not found.
import t from 'tap'
import { addUser, signup } from '../helper.js'
import { CairnClient } from '../../clients/typescript/src/client.js'
import { harness, PHONE, fitsWidth } from './harness.js'

type Focused = { document: { activeElement: { tagName: string; textContent: string } | null } }

const h = await harness(t)
if (h) {
  const { app, base, open, signIn, shot } = h

  await t.test('keyboard only: the tab, a new channel, a message; one posted through the API arrives live',
    async (t) => {
      const u = await signup(app)
      const person = new CairnClient({ baseUrl: base, token: u.token, workspaceId: u.workspaceId })
      const page = await open(t, '/chat')
      let streamed = false
      page.on('request', (r) => { if (r.url().includes('/api/v2/events/stream')) streamed = true })
      await signIn(page, u)
      await page.getByRole('navigation', { name: 'Chat' }).getByRole('link', { name: 'Channels' }).focus()
      await page.keyboard.press('Enter')
      await page.getByText('No channels yet. Create the first one below').waitFor()

      await page.getByLabel('Channel name').focus()
      await page.keyboard.type('releases')
      await page.keyboard.press('Tab')
      t.equal(await page.evaluate(() => (globalThis as unknown as Focused).document.activeElement?.tagName),
        'SELECT', 'Tab reaches the Type select')
      await page.keyboard.press('Tab')
      await page.keyboard.press('Enter')
      await page.getByRole('heading', { level: 2, name: 'releases' }).waitFor()
      t.match(page.url(), /\/chat\/channels\/[0-9a-f-]+$/, 'the new channel is opened')
      await page.getByText('No messages yet. Write the first one below.').waitFor()

      await page.getByLabel('Message', { exact: true }).focus()
      await page.keyboard.press('Control+Enter')
      await page.getByText('Write a message first.').waitFor()
      t.pass('an empty message is refused in words beside the field')
      await page.keyboard.type('v1.2 is **out**')
      await page.keyboard.press('Control+Enter')
      const log = page.getByRole('log', { name: 'Messages' })
      await log.getByText('v1.2 is out').waitFor()
      t.equal(await log.locator('strong', { hasText: 'out' }).count(), 1, 'Markdown rendered')

      const channel = (await person.listChannels()).find((c) => c.name === 'releases')
      t.ok(channel, 'created through the API the page called')
      const other = await person.createChannel({ name: 'random', type: 'public' })
      await person.postMessage({ channel_id: other.id, content: 'Not for this channel' })
      await person.postMessage({ channel_id: channel!.id, content: 'Posted from a script' })
      await log.getByText('Posted from a script').waitFor({ timeout: 15_000 })
      t.ok(streamed, 'told by the workspace event stream')
      t.equal(await page.getByText('Not for this channel').count(), 0, 'another channel\'s message stays there')
      t.same(await log.locator('.message .md').allTextContents(), ['v1.2 is out', 'Posted from a script'],
        'oldest first, each once')
      await page.getByRole('link', { name: 'random' }).waitFor()
      t.pass('a channel made elsewhere is listed once a message in it is told')
      await shot(page, 'channels')
    })

  await t.test('a long channel pages back; a phone-wide screen; errors in words', async (t) => {
    const u = await signup(app)
    const person = new CairnClient({ baseUrl: base, token: u.token, workspaceId: u.workspaceId })
    const channel = await person.createChannel({ name: 'busy', type: 'text' })
    for (let i = 1; i <= 55; i++) await person.postMessage({ channel_id: channel.id, content: `message ${i}` })
    const page = await open(t, `/chat/channels/${channel.id}`, PHONE)
    await signIn(page, u)
    const log = page.getByRole('log', { name: 'Messages' })
    await log.getByText('message 55', { exact: true }).waitFor()
    t.equal(await log.getByText('message 1', { exact: true }).count(), 0, 'the newest page first')
    await page.getByRole('button', { name: 'Older messages' }).click()
    await log.getByText('message 1', { exact: true }).waitFor()
    t.equal(await log.locator('.message').count(), 55)
    t.equal(await page.getByRole('button', { name: 'Older messages' }).count(), 0, 'nothing older')
    t.ok(await fitsWidth(page), 'nothing wider than a 390-pixel phone screen')

    t.notOk(await page.getByLabel('Channel name').isVisible(), 'with channels listed, the new-channel form is folded')
    await page.locator('summary', { hasText: 'New channel' }).focus()
    await page.keyboard.press('Enter')
    await page.getByRole('button', { name: 'Create channel' }).click()
    await page.getByText('Give the channel a name.').waitFor()
    t.pass('a channel without a name is refused beside the field')
    await shot(page, 'channels-phone')
  })

  await t.test('another organization\'s channel, and a teammate\'s private one, are not found', async (t) => {
    const owner = await signup(app)
    const stranger = await signup(app)
    const teammate = await addUser(app, owner, 'member')
    await app.inject({ method: 'POST', url: `/api/v2/workspaces/${owner.workspaceId}/members`, headers: owner.auth,
      payload: { userId: teammate.userId, role: 'member' } })
    const person = new CairnClient({ baseUrl: base, token: owner.token, workspaceId: owner.workspaceId })
    const secret = await person.createChannel({ name: 'leadership', type: 'private' })
    await person.postMessage({ channel_id: secret.id, content: 'Quiet plans' })
    await person.createChannel({ name: 'general', type: 'public' })

    for (const who of [stranger, teammate]) {
      const page = await open(t, `/chat/channels/${secret.id}`)
      await signIn(page, who)
      await page.getByRole('heading', { level: 2, name: 'Channel not found' }).waitFor()
      t.equal(await page.getByText('Quiet plans').count(), 0)
      t.equal(await page.getByRole('link', { name: 'leadership' }).count(), 0, 'not listed')
      t.equal(await page.getByRole('link', { name: 'general' }).count(), who === teammate ? 1 : 0,
        'the workspace\'s public channel is listed to its members only')
    }
  })
}
