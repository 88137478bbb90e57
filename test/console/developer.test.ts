// The Developer pages in Chromium: API keys shown once, rotated and revoked; a webhook tested, its failed delivery
// redelivered to a real receiver and its secret rotated; the event log's filters and cursor pages.
import t from 'tap'
import type { Test } from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { harness, fitsWidth, PHONE } from './harness.js'
import { signup, addUser } from '../helper.js'
import { CairnClient } from '../../clients/typescript/src/client.js'
import { verifyCairnSignature, verifyStandardWebhook } from '../../clients/typescript/src/webhooks.js'
import { EVENT_NAMES } from '../../src/events/names.js'

// receivers on 127.0.0.1 are allowed; automatic retries wait an hour, so only the buttons send
const h = await harness(t, { config: { allowPrivateUrls: true, webhookRetrySchedule: [3600] } })
if (h) await main(h)

interface Received { body: string; headers: http.IncomingHttpHeaders }

/** A webhook receiver on a real socket: answers `status()` and keeps what it received. */
async function receiver(tt: Test, status: () => number) {
  const received: Received[] = []
  const waiters: Array<() => void> = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: req.headers })
      res.statusCode = status()
      res.end(res.statusCode >= 400 ? 'receiver says no' : 'ok')
      for (const w of waiters.splice(0)) w()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  tt.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
  /** resolves once `n` requests have arrived */
  const count = (n: number) => new Promise<void>((resolve) => {
    const check = () => { if (received.length >= n) resolve(); else waiters.push(check) }
    check()
  })
  return { url, received, count }
}

async function main(h: NonNullable<Awaited<ReturnType<typeof harness>>>) {
  const { app, base, open, signIn, shot } = h

  await t.test('an API key: made by keyboard, its value shown once, used, rotated, then revoked', async (t) => {
    const u = await signup(app)
    const page = await open(t, '/developer')
    await signIn(page, u)
    await page.getByRole('heading', { level: 2, name: 'API keys' }).waitFor()
    await page.getByText('You have no API keys yet').waitFor()

    // keyboard only: the name field, a scope, Enter submits
    await page.getByLabel('Key name').focus()
    await page.keyboard.type('Nightly export')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Tab')
    await page.keyboard.press('Space') // write, beside read
    await page.getByLabel('Key name').focus()
    await page.keyboard.press('Enter')
    const field = page.getByRole('textbox', { name: 'New API key' })
    await field.waitFor()
    const value = await field.inputValue()
    t.match(value, /^cairn_[A-Za-z0-9_-]{43}$/, 'the value is shown')
    t.ok(await page.getByRole('button', { name: 'Copy' }).isVisible(), 'with a copy button')
    await shot(page, 'developer-api-key')

    const listed = (await app.inject({ method: 'GET', url: '/api/v2/api-keys', headers: u.auth })).json().data
    t.match(listed, [{ name: 'Nightly export', scopes: ['read', 'write'], workspace_id: u.workspaceId }],
      'made with the scopes chosen, bound to the workspace')

    // the key works; its use is drawn in the usage chart
    const keyClient = new CairnClient({ baseUrl: base, token: value })
    await keyClient.logActivity({ action: 'export.started', category: 'activity' })
    await page.reload()
    await page.getByRole('heading', { level: 3, name: 'Nightly export' }).waitFor()
    t.equal(await page.getByRole('textbox', { name: 'New API key' }).count(), 0, 'a reload no longer shows it')
    t.equal(await page.getByText(value).count(), 0, 'nor anywhere else on the page')
    const card = page.getByRole('listitem', { name: 'Nightly export' })
    await card.getByRole('img', { name: /1 in all, 1 today/ }).waitFor()
    t.equal(await card.locator('svg.sparkline rect').count(), 30, 'a bar per day')

    await card.getByRole('button', { name: 'Rotate' }).click()
    await card.getByRole('button', { name: 'Rotate now' }).click()
    const rotated = await page.getByRole('textbox', { name: 'New API key' }).inputValue()
    t.not(rotated, value, 'a new value')
    t.equal((await fetch(`${base}/api/v2/api-keys`, { headers: { authorization: `Bearer ${value}` } })).status, 401,
      'the old value stopped working')

    const live = page.getByRole('listitem', { name: 'Nightly export' }).filter({ hasText: 'Active' })
    await live.getByRole('button', { name: 'Revoke' }).click()
    await live.getByRole('button', { name: 'Revoke for good' }).click()
    await page.getByRole('listitem', { name: 'Nightly export' }).filter({ hasText: 'Revoked' }).nth(1).waitFor()
    t.equal(await page.getByRole('button', { name: 'Revoke' }).count(), 0, 'nothing left to revoke')
    const refused = await fetch(`${base}/api/v2/developer/logs`, { headers: { authorization: `Bearer ${rotated}` } })
    t.equal(refused.status, 401, 'the revoked key is refused')
  })

  await t.test('a webhook: created with its events, Send test listed in Deliveries, the failure redelivered, ' +
    'the secret rotated', async (t) => {
    const u = await signup(app)
    let answer = 500
    const rx = await receiver(t, () => answer)
    const page = await open(t, '/developer/webhooks')
    await signIn(page, u)
    await page.getByText('No webhooks yet').waitFor()
    const picker = page.getByRole('group', { name: 'Events' })
    await picker.getByRole('checkbox', { name: /knowledge\.indexed/ }).waitFor()
    t.same(await picker.getByRole('checkbox').evaluateAll((boxes) => boxes.map((b) =>
      (b as unknown as { parentElement: { textContent: string } }).parentElement.textContent.split(' ')[0]).sort()),
    [...EVENT_NAMES].sort(), 'the picker offers the names the service lists')
    await page.getByLabel('Webhook URL').fill('not an address')
    await page.getByRole('button', { name: 'Create webhook' }).click()
    t.ok(await page.getByLabel('Webhook URL').evaluate((el) => !(el as unknown as { validity: { valid: boolean } })
      .validity.valid), 'the browser asks for a URL first')

    await page.getByLabel('Webhook URL').fill(rx.url)
    await page.getByLabel('Description (optional)').fill('Staging receiver')
    await page.getByRole('checkbox', { name: /workflow\.completed/ }).check()
    await page.getByRole('button', { name: 'Create webhook' }).click()
    const secret = await page.getByRole('textbox', { name: 'Signing secret' }).inputValue()
    t.match(secret, /^whsec_/, 'the signing secret shown once')
    const hooks = (await app.inject({ method: 'GET', url: '/api/v2/developer/webhooks',
      headers: { ...u.auth, 'x-workspace-id': u.workspaceId } })).json().data
    t.match(hooks, [{ url: rx.url, events: ['test.ping', 'workflow.completed'], description: 'Staging receiver' }])

    await page.getByRole('link', { name: rx.url }).first().click()
    await page.getByText('Nothing was sent yet').waitFor()
    await page.getByRole('button', { name: 'Send test' }).click()
    await page.getByRole('status').filter({ hasText: 'Not delivered' }).waitFor()
    const deliveries = page.getByRole('table', { name: 'Deliveries' })
    await deliveries.getByRole('row').filter({ hasText: 'test.ping' }).filter({ hasText: 'Failed (500)' }).waitFor()
    t.equal(rx.received.length, 1, 'the receiver was asked')
    t.ok(await verifyCairnSignature(rx.received[0].body, rx.received[0].headers['x-cairn-signature'] as string, secret),
      'signed with the secret shown')
    const row = deliveries.getByRole('row').filter({ hasText: 'Failed (500)' })
    await row.getByText(/bytes/).click()
    await row.getByText('"test.ping"', { exact: false }).first().waitFor()
    t.ok(await row.getByText('receiver says no').isVisible(), 'the body preview and the answer')
    t.match(await row.textContent(), /\d+ ms/, 'the latency')

    answer = 204
    await row.getByRole('button', { name: 'Redeliver' }).click()
    await deliveries.getByRole('row').filter({ hasText: 'Delivered (204)' }).waitFor({ timeout: 30_000 })
    await rx.count(2)
    t.equal(rx.received[1].headers['webhook-id'], rx.received[0].headers['webhook-id'], 'the same message again')
    await shot(page, 'developer-webhook-deliveries')

    await page.getByRole('button', { name: 'Rotate secret' }).click()
    await page.getByRole('button', { name: 'Make a new secret' }).click()
    const fresh = await page.getByRole('textbox', { name: 'New signing secret' }).inputValue()
    t.match(fresh, /^whsec_/)
    t.not(fresh, secret, 'a new secret')
    await page.getByRole('button', { name: 'Send test' }).click()
    await rx.count(3)
    const last = rx.received[2]
    t.ok(await verifyStandardWebhook(last.body, last.headers as Record<string, string>, fresh), 'the new secret signs')
    t.ok(await verifyStandardWebhook(last.body, last.headers as Record<string, string>, secret),
      'the old one still does, for a while')
    await page.getByRole('status').filter({ hasText: 'Delivered: the receiver answered 204' }).waitFor()
  })

  await t.test('a member sees the webhooks but not the buttons that change them; another organization\'s webhook ' +
    'is not found', async (t) => {
    const owner = await signup(app)
    const rx = await receiver(t, () => 200)
    const made = await app.inject({ method: 'POST', url: '/api/v2/developer/webhooks',
      headers: { ...owner.auth, 'x-workspace-id': owner.workspaceId },
      payload: { url: rx.url, events: ['test.ping'] } })
    const hookId = made.json().data.id as string
    const member = await addUser(app, owner, 'member')
    await app.inject({ method: 'POST', url: `/api/v2/workspaces/${owner.workspaceId}/members`, headers: owner.auth,
      payload: { userId: member.userId, role: 'member' } })
    const page = await open(t, `/developer/webhooks/${hookId}`)
    await signIn(page, member)
    await page.getByRole('heading', { level: 2, name: rx.url }).waitFor()
    t.equal(await page.getByRole('button', { name: 'Send test' }).count(), 0, 'no Send test for a member')
    t.equal(await page.getByRole('button', { name: 'Rotate secret' }).count(), 0, 'no Rotate secret')

    const stranger = await signup(app)
    const other = await open(t, `/developer/webhooks/${hookId}`)
    await signIn(other, stranger)
    await other.getByRole('heading', { level: 2, name: 'Webhook not found' }).waitFor()
    t.equal(await other.getByText(rx.url).count(), 0, 'nothing of it is shown')
  })

  await t.test('the event log: filters and cursor pages, on a phone-wide screen', async (t) => {
    const u = await signup(app)
    const key = (await app.inject({ method: 'POST', url: '/api/v2/api-keys', headers: u.auth,
      payload: { name: 'Logger', scopes: ['read', 'write'] } })).json().data as { key: string }
    const keyClient = new CairnClient({ baseUrl: base, token: key.key })
    for (let i = 1; i <= 30; i++) await keyClient.logActivity({ action: `step.${i}`, category: 'activity' })
    await keyClient.call('/api/v2/developer/logs', 'get', { query: { limit: 1 } })

    const page = await open(t, '/developer/logs', PHONE)
    await signIn(page, u)
    const table = page.getByRole('table', { name: 'Event log, page 1' })
    await table.waitFor()
    t.equal(await table.locator('tbody tr').count(), 25, 'a page of 25')
    t.ok(await table.getByText('developer.logs').isVisible(), 'the newest first')
    t.ok(await fitsWidth(page), 'nothing wider than a phone')
    await shot(page, 'developer-event-log-phone')
    await page.getByRole('button', { name: 'Older entries' }).click()
    const second = page.getByRole('table', { name: 'Event log, page 2' })
    await second.waitFor()
    t.equal(await second.locator('tbody tr').count(), 6, 'the rest on page 2')
    await second.getByText('step.1', { exact: true }).waitFor()
    t.ok(await page.getByRole('button', { name: 'Older entries' }).isDisabled(), 'the last page')
    await page.getByRole('button', { name: 'Newer entries' }).click()
    await page.getByRole('table', { name: 'Event log, page 1' }).waitFor()

    await page.getByRole('checkbox', { name: 'developer' }).check()
    await page.getByRole('button', { name: 'Apply filters' }).click()
    // (a locator, not waitForFunction: the console's CSP allows no string evaluation in the page)
    await page.locator('tbody tr').nth(1).waitFor({ state: 'detached' })
    await page.getByText('developer.logs').waitFor()
    t.equal(await page.locator('tbody tr').count(), 1, 'only the developer category')

    await page.getByLabel('From').fill('2030-01-02T00:00')
    await page.getByLabel('To').fill('2030-01-01T00:00')
    await page.getByRole('button', { name: 'Apply filters' }).click()
    await page.getByRole('alert').filter({ hasText: '“From” is after “To”' }).waitFor()
    t.pass('a wrong range is said beside the fields')
  })
}
