// Settings and the invitation page in Chromium: a teammate invited, the invitation accepted in a second browser,
// their role changed and their removal ending their session; revoked links; one's own password and sessions.
import t from 'tap'
import { harness, fitsWidth, PHONE } from './harness.js'
import { signup } from '../helper.js'

const h = await harness(t)
if (h) await main(h)

async function main(h: NonNullable<Awaited<ReturnType<typeof harness>>>) {
  const { app, base, open, signIn, shot } = h

  await t.test('a teammate invited, joining in another browser, made admin of the workspace, taken out of it and ' +
    'added back, made admin of the organization, then removed: their session ends',
  async (t) => {
    const owner = await signup(app)
    const stranger = await signup(app)
    const page = await open(t, '/settings')
    await signIn(page, owner)
    await page.getByRole('heading', { level: 2, name: 'Invite a teammate' }).waitFor()
    t.equal(await page.getByText(stranger.email).count(), 0, 'nobody of another organization is listed')
    await page.getByText('No invitation is waiting').waitFor()

    const email = `teammate-${Date.now()}@example.test`
    await page.getByLabel('Email of the teammate').fill(email)
    await page.getByRole('button', { name: 'Invite', exact: true }).click()
    const url = await page.getByRole('textbox', { name: 'Invitation link' }).inputValue()
    t.match(url, /\/invite\/[^/]+$/, 'the link is shown once')
    const pending = page.getByRole('table', { name: 'Pending invitations' })
    await pending.getByRole('row').filter({ hasText: email }).waitFor()
    t.match(await pending.getByRole('row').filter({ hasText: email }).textContent(), /General \(member\)/,
      'with the workspace they join')
    await shot(page, 'settings-people')

    // the teammate, in a browser of their own
    const theirs = await open(t, new URL(url).pathname)
    await theirs.getByRole('heading', { level: 1, name: 'Join Cairn' }).waitFor()
    await theirs.getByLabel('Your name').fill('Robin Teammate')
    await theirs.getByLabel('New password').fill('robin password 1')
    await theirs.getByLabel('Repeat the password').fill('robin password 2')
    await theirs.getByRole('button', { name: 'Join' }).click()
    await theirs.getByRole('alert').filter({ hasText: 'The two passwords differ' }).waitFor()
    await theirs.getByLabel('Repeat the password').fill('robin password 1')
    await theirs.getByRole('button', { name: 'Join' }).click()
    await theirs.getByRole('button', { name: 'Sign out' }).waitFor()
    t.equal(new URL(theirs.url()).pathname, '/review', 'signed in, in the queue')
    t.equal(app.sqlite.prepare('SELECT count(*) FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = ?')
      .pluck().get(email), 1, 'signed in by joining: one session, no second sign-in')
    t.equal(await theirs.getByRole('link', { name: 'Settings' }).count(), 0, 'a member: no Settings')
    await theirs.getByRole('link', { name: 'Robin Teammate' }).waitFor()

    // made an admin of the workspace
    await page.getByRole('link', { name: 'Workspace members' }).click()
    const role = page.getByRole('combobox', { name: `Role of ${email} in General` })
    await role.selectOption('admin')
    await page.waitForFunction((e) => {
      const doc = (globalThis as unknown as { document: { querySelector(s: string): { value: string } | null } })
        .document
      return doc.querySelector(`select[aria-label="Role of ${e} in General"]`)?.value === 'admin'
    }, email)
    const members = (await app.inject({ url: `/api/v2/workspaces/${owner.workspaceId}/members`,
      headers: owner.auth })).json().data as Array<{ email: string; role: string }>
    t.equal(members.find((m) => m.email === email)?.role, 'admin', 'the role changed')
    await theirs.reload()
    await theirs.getByRole('link', { name: 'Settings' }).waitFor()
    t.pass('the new admin sees Settings')
    await shot(page, 'settings-members')

    // taken out of the workspace (still in the organization), then added back from the organization's people
    const memberRow = page.getByRole('table', { name: 'Members of General' }).getByRole('row')
      .filter({ hasText: email })
    await memberRow.getByRole('button', { name: 'Remove from workspace' }).click()
    await memberRow.getByRole('button', { name: `Remove ${email}` }).click()
    await memberRow.waitFor({ state: 'detached' })
    t.notOk((await app.inject({ url: `/api/v2/workspaces/${owner.workspaceId}/members`, headers: owner.auth }))
      .json().data.some((m: { email: string }) => m.email === email), 'no longer a member of the workspace')
    await page.getByLabel('Person').selectOption({ label: `Robin Teammate (${email})` })
    await page.getByRole('button', { name: 'Add to workspace' }).click()
    await role.waitFor()
    t.equal(await role.inputValue(), 'member', 'added back, as a member')

    // removed from the organization: the open console returns to sign-in by itself
    await page.getByRole('link', { name: 'People' }).click()
    // made an admin of the organization
    await page.getByRole('combobox', { name: `Role of ${email}`, exact: true }).selectOption('admin')
    const orgRole = async () => ((await app.inject({ url: '/api/v2/users', headers: owner.auth })).json()
      .data as Array<{ email: string; role: string }>).find((u) => u.email === email)?.role
    for (let i = 0; i < 200 && await orgRole() !== 'admin'; i++) await new Promise((r) => setTimeout(r, 50))
    t.equal(await orgRole(), 'admin', 'the organization role changed')
    const row = page.getByRole('table', { name: 'People of the organization' }).getByRole('row')
      .filter({ hasText: email })
    await row.getByRole('button', { name: 'Remove' }).click()
    await row.getByRole('button', { name: `Remove ${email}` }).click()
    await row.waitFor({ state: 'detached' })
    await theirs.getByRole('button', { name: 'Sign in' }).waitFor({ timeout: 30_000 })
    t.pass('their session ended')
    await theirs.getByLabel('Email').fill(email)
    await theirs.getByLabel('Password').fill('robin password 1')
    await theirs.getByRole('button', { name: 'Sign in' }).click()
    await theirs.getByRole('alert').waitFor()
    t.equal(await theirs.getByRole('button', { name: 'Sign out' }).count(), 0, 'and they cannot sign in again')
  })

  await t.test('a revoked invitation and a used reset link say so in words', async (t) => {
    const owner = await signup(app)
    const page = await open(t, '/settings')
    await signIn(page, owner)
    const email = `revoked-${Date.now()}@example.test`
    await page.getByLabel('Email of the teammate').fill(email)
    await page.getByRole('button', { name: 'Invite', exact: true }).click()
    const url = await page.getByRole('textbox', { name: 'Invitation link' }).inputValue()
    const row = page.getByRole('table', { name: 'Pending invitations' }).getByRole('row').filter({ hasText: email })
    await row.getByRole('button', { name: 'Revoke invitation' }).click()
    await row.getByRole('button', { name: 'Revoke it' }).click()
    await page.getByText('No invitation is waiting').waitFor()

    const theirs = await open(t, new URL(url).pathname)
    await theirs.getByLabel('New password').fill('robin password 1')
    await theirs.getByLabel('Repeat the password').fill('robin password 1')
    await theirs.getByRole('button', { name: 'Join' }).click()
    await theirs.getByRole('alert').filter({ hasText: 'This link does not work any more' }).waitFor()
    t.pass('the revoked link is refused in words')

    // a reset link for a colleague: it sets a new password once
    const made = await app.inject({ method: 'POST', url: '/api/v2/users', headers: owner.auth,
      payload: { email: `colleague-${Date.now()}@example.test`, password: 'colleague password', name: 'Colleague' } })
    const colleague = made.json().data as { email: string }
    await page.reload()
    await page.getByRole('button', { name: `Password reset link for ${colleague.email}` }).click()
    const reset = await page.getByRole('textbox', { name: 'Password reset link' }).inputValue()
    t.match(reset, /\/reset-password\/[^/]+$/)
    const other = await open(t, new URL(reset).pathname, PHONE)
    await other.getByRole('heading', { level: 1, name: 'Choose a new password' }).waitFor()
    t.ok(await fitsWidth(other), 'fits a phone')
    await other.getByLabel('New password').fill('a brand new password')
    await other.getByLabel('Repeat the password').fill('a brand new password')
    await other.getByRole('button', { name: 'Set new password' }).click()
    await other.getByRole('heading', { level: 1, name: 'Password changed' }).waitFor()
    await other.getByRole('button', { name: 'Sign in' }).click()
    await signIn(other, { ...owner, email: colleague.email, password: 'a brand new password' })
    t.pass('the colleague signs in with the new password')
  })

  await t.test('one\'s own account: a wrong current password said beside the form, then signing out everywhere',
    async (t) => {
      const u = await signup(app)
      const elsewhere = await open(t, '/review')
      await signIn(elsewhere, u)
      const page = await open(t, '/review', PHONE)
      await signIn(page, u)
      await page.getByRole('link', { name: u.email.split('@')[0] }).click()
      await page.getByRole('heading', { level: 2, name: 'Your account' }).waitFor()
      t.ok(await fitsWidth(page), 'fits a phone')
      await page.getByLabel('Current password').fill('not my password')
      await page.getByLabel('New password', { exact: true }).fill('a new password 1')
      await page.getByLabel('Repeat the new password').fill('a new password 1')
      await page.getByRole('button', { name: 'Change password' }).click()
      await page.getByRole('alert').filter({ hasText: 'The current password is not right' }).waitFor()
      t.equal(await page.getByRole('button', { name: 'Sign in' }).count(), 0, 'still signed in')
      await shot(page, 'settings-account-phone')

      await page.getByRole('button', { name: 'Sign out everywhere' }).click()
      await page.getByRole('button', { name: 'Sign in' }).waitFor()
      await elsewhere.reload()
      await elsewhere.getByRole('button', { name: 'Sign in' }).waitFor()
      t.pass('the other browser is signed out too')
      t.equal((await fetch(`${base}/api/v2/auth/me`, { headers: u.auth })).status, 401, 'and every token')
    })
}
