import { useState } from 'preact/hooks'
import { client } from '../api.js'
import { ErrorText, Link } from '../components.js'
import { useSession } from '../session.js'
import { useAction } from './developer-parts.js'
import { People } from './settings-people.js'
import { Members } from './settings-members.js'

/**
 * Settings: the organization's people and invitations (organization owners and admins), the members of each
 * workspace (its owners and admins), and, for everyone, their own password and sessions.
 */
export function Settings(props: { path: string }) {
  const { me, workspace } = useSession()
  const orgAdmin = me.orgRole === 'owner' || me.orgRole === 'admin'
  const wsAdmin = orgAdmin || me.workspaces.some((w) => w.role !== 'member') || workspace.role !== 'member'
  const asked = props.path.startsWith('/settings/members') ? 'members'
    : props.path.startsWith('/settings/account') ? 'account' : 'people'
  // a tab the person may not use shows the first one they may
  const tab = asked === 'people' && !orgAdmin ? (wsAdmin ? 'members' : 'account')
    : asked === 'members' && !wsAdmin ? 'account' : asked
  return (
    <section>
      <h1>Settings</h1>
      <nav class="tabs" aria-label="Settings">
        {orgAdmin && <Link href="/settings" current={tab === 'people'}>People</Link>}
        {wsAdmin && <Link href="/settings/members" current={tab === 'members'}>Workspace members</Link>}
        <Link href="/settings/account" current={tab === 'account'}>Your account</Link>
      </nav>
      {tab === 'people' && <People />}
      {tab === 'members' && <Members />}
      {tab === 'account' && <Account />}
    </section>
  )
}

function Account() {
  const { me, signedOut } = useSession()
  const [current, setCurrent] = useState('')
  const [next, setNext] = useState('')
  const [again, setAgain] = useState('')
  const [done, setDone] = useState<string | null>(null)
  const change = useAction(signedOut)
  const everywhere = useAction(signedOut)

  const submit = (event: Event) => {
    event.preventDefault()
    setDone(null)
    if (next.length < 8) return change.setError('The new password needs at least 8 characters.')
    if (next !== again) return change.setError('The two new passwords differ: type the same one twice.')
    void change.run(async () => {
      await client.call('/api/v2/auth/password', 'post', { body: { currentPassword: current, newPassword: next } })
      setCurrent('')
      setNext('')
      setAgain('')
      setDone('Password changed. Every other session of yours has been signed out; this one stays.')
    })
  }
  const signOutEverywhere = () => everywhere.run(async () => {
    await client.call('/api/v2/auth/logout-everywhere', 'post')
    signedOut()
  })

  return (
    <>
      <h2>Your account</h2>
      <p>Signed in as <strong>{me.user.name || me.user.email}</strong> ({me.user.email}), {me.orgRole} of the
        organization.</p>
      <form class="panel form-grid" onSubmit={submit} aria-label="Change your password">
        <h3>Change your password</h3>
        <label>
          Current password
          <input type="password" autocomplete="current-password" required value={current}
            onInput={(e) => setCurrent((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          New password
          <input type="password" autocomplete="new-password" required minLength={8} value={next}
            aria-describedby="new-password-hint" onInput={(e) => setNext((e.target as HTMLInputElement).value)} />
        </label>
        <p class="hint" id="new-password-hint">At least 8 characters.</p>
        <label>
          Repeat the new password
          <input type="password" autocomplete="new-password" required value={again}
            onInput={(e) => setAgain((e.target as HTMLInputElement).value)} />
        </label>
        <ErrorText error={change.error} />
        <p role="status" class="hint">{done ?? ''}</p>
        <div><button type="submit" disabled={change.busy}>Change password</button></div>
      </form>
      <div class="panel">
        <h3>Sessions</h3>
        <p>Signed in on another computer, or left a browser signed in? This ends every session of yours, this one
          included. API keys keep working: revoke them under Developer.</p>
        <button type="button" disabled={everywhere.busy} onClick={signOutEverywhere}>Sign out everywhere</button>
        <ErrorText error={everywhere.error} />
      </div>
    </>
  )
}
