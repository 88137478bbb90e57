import { useEffect, useState } from 'preact/hooks'
import { describeError, isSignedOut } from '../api.js'
import { ErrorText } from '../components.js'
import { useSession } from '../session.js'
import { at, ConfirmButton, OnceValue, Pager, pageOf, useAction, type Answer, TableWrap } from './developer-parts.js'

type User = Answer<'/api/v2/users'>['data'][number]
type Invitation = Answer<'/api/v2/invitations'>['data'][number]

const PAGE = 20
export const ROLE_WORDS: Record<string, string> = { owner: 'Owner', admin: 'Admin', member: 'Member' }

/** The organization's people (roles, reset links, removal) and its invitations (new, pending, revoked). */
export function People() {
  const { api, signedOut, me } = useSession()
  const [users, setUsers] = useState<User[] | null>(null)
  const [invitations, setInvitations] = useState<Invitation[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [page, setPage] = useState(1)
  const [link, setLink] = useState<{ label: string; url: string; note: string } | null>(null)

  const load = async () => {
    try {
      const [u, i] = await Promise.all([api.call('/api/v2/users', 'get'), api.call('/api/v2/invitations', 'get')])
      setUsers(u.data)
      setInvitations(i.data)
      setError(null)
    } catch (err) {
      if (isSignedOut(err)) return signedOut()
      setError(describeError(err))
    }
  }
  useEffect(() => { void load() }, [api])

  return (
    <>
      <h2>Invite a teammate</h2>
      <Invite onInvited={(inv) => {
        setLink({ label: 'Invitation link', url: inv.url, note: `${inv.email} can join with this link ` +
          `until ${at(inv.expires_at)}. It works once.${inv.emailed ? ' It was also sent to them by e-mail.'
            : ' Send it to them yourself: Cairn has no mail server configured, or the mail did not go out.'}` })
        void load()
      }} />
      {link && <OnceValue label={link.label} value={link.url} note={link.note} onDone={() => setLink(null)} />}
      <ErrorText error={error} />

      <h2>Pending invitations</h2>
      {invitations !== null && invitations.length === 0 && (
        <p class="empty">No invitation is waiting. Invite someone above; their invitation waits here until they
          join.</p>
      )}
      {invitations !== null && invitations.length > 0 && (
        <TableWrap label="Pending invitations">
          <table class="grid">
            <caption class="visually-hidden">Pending invitations</caption>
            <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Workspaces</th>
              <th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {invitations.map((inv) => (
                <tr key={inv.id}>
                  <td>{inv.email}</td>
                  <td>{ROLE_WORDS[inv.role]}</td>
                  <td>{inv.workspaces.map((w) => `${me.workspaces.find((x) => x.id === w.id)?.name ?? 'a workspace'} ` +
                    `(${ROLE_WORDS[w.role].toLowerCase()})`).join(', ') || '—'}</td>
                  <td>{at(inv.expires_at)}</td>
                  <td><ConfirmButton label="Revoke invitation" class="danger" signedOut={signedOut}
                    question={`Revoke the invitation of ${inv.email}? Its link stops working.`} confirm="Revoke it"
                    run={async () => {
                      await api.call('/api/v2/invitations/{id}', 'delete', { path: { id: inv.id } })
                      await load()
                    }} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}

      <h2>People of the organization</h2>
      {users === null && !error && <p>Loading…</p>}
      {users !== null && (
        <>
          <TableWrap label="People of the organization">
            <table class="grid">
              <caption class="visually-hidden">People of the organization</caption>
              <thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th>
                <th scope="col">Joined</th>
                <th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                {pageOf(users, page, PAGE).map((u) => (
                  <UserRow key={u.id} user={u} onChanged={load} onLink={(url, expires) => setLink({
                    label: 'Password reset link', url,
                    note: `${u.email} can choose a new password with this link until ${at(expires)}; it works once ` +
                      'and signs them out everywhere.'
                  })} />
                ))}
              </tbody>
            </table>
          </TableWrap>
          <Pager page={page} count={users.length} size={PAGE} noun="people" onPage={setPage} />
        </>
      )}
    </>
  )
}

function UserRow(props: { user: User; onChanged(): Promise<void>; onLink(url: string, expires: string): void }) {
  const { api, signedOut, me } = useSession()
  const u = props.user
  const self = u.id === me.user.id
  const role = useAction(signedOut)
  const reset = useAction(signedOut)
  // an admin manages admins and members; owners are an owner's to change
  const mayChange = !self && (me.orgRole === 'owner' || u.role !== 'owner')
  const setRole = (next: string) => role.run(async () => {
    await api.call('/api/v2/users/{id}', 'patch', { path: { id: u.id }, body: { role: next as User['role'] } })
    await props.onChanged()
  })
  const resetLink = () => reset.run(async () => {
    const r = (await api.call('/api/v2/users/{id}/password-reset', 'post', { path: { id: u.id } })).data
    props.onLink(r.url, r.expires_at)
  })
  return (
    <tr>
      <td>{u.name || '—'}{self && ' (you)'}</td>
      <td>{u.email}</td>
      <td>
        {mayChange
          ? <select aria-label={`Role of ${u.email}`} value={u.role} disabled={role.busy}
              onChange={(e) => setRole((e.target as HTMLSelectElement).value)}>
              {(me.orgRole === 'owner' ? ['owner', 'admin', 'member'] : ['admin', 'member']).map((r) =>
                <option key={r} value={r}>{ROLE_WORDS[r]}</option>)}
            </select>
          : ROLE_WORDS[u.role]}
        <ErrorText error={role.error} />
      </td>
      <td>{at(u.created_at)}</td>
      <td>
        {mayChange && (
          <div class="actions">
            <button type="button" disabled={reset.busy} onClick={resetLink}
              aria-label={`Password reset link for ${u.email}`}>Reset link</button>
            <ConfirmButton label="Remove" class="danger" signedOut={signedOut}
              question={`Remove ${u.email} from the organization? Their sessions and API keys stop at once; ` +
                'what they wrote stays.'} confirm={`Remove ${u.email}`} run={async () => {
                await api.call('/api/v2/users/{id}', 'delete', { path: { id: u.id } })
                await props.onChanged()
              }} />
          </div>
        )}
        <ErrorText error={reset.error} />
      </td>
    </tr>
  )
}

function Invite(props: { onInvited(invitation: { email: string; url: string; expires_at: string;
  emailed: boolean }): void }) {
  const { api, signedOut, me, workspace } = useSession()
  const [email, setEmail] = useState('')
  const [role, setRole] = useState<'admin' | 'member'>('member')
  // the workspaces they join, with their role in each (the current workspace, as a member, to begin with)
  const [spaces, setSpaces] = useState<Record<string, 'admin' | 'member'>>({ [workspace.id]: 'member' })
  const { busy, error, run } = useAction(signedOut)
  const submit = (event: Event) => {
    event.preventDefault()
    void run(async () => {
      const made = (await api.call('/api/v2/invitations', 'post', { body: {
        email: email.trim(), role, workspaces: Object.entries(spaces).map(([id, r]) => ({ id, role: r }))
      } })).data
      setEmail('')
      props.onInvited(made)
    })
  }
  return (
    <form class="panel form-grid" onSubmit={submit} aria-label="Invite a teammate">
      <label>
        Email of the teammate
        <input type="email" required value={email} autocomplete="off"
          aria-describedby={error ? 'invite-error' : undefined}
          onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
      </label>
      <label>
        Role in the organization
        <select value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value as 'admin' | 'member')}>
          <option value="member">Member</option>
          <option value="admin">Admin (manages people and workspaces)</option>
        </select>
      </label>
      <fieldset>
        <legend>Workspaces they join</legend>
        <div class="checks">
          {me.workspaces.map((w) => (
            <div key={w.id} class="ws-choice">
              <label class="check">
                <input type="checkbox" checked={w.id in spaces} onChange={(e) => {
                  const next = { ...spaces }
                  if ((e.target as HTMLInputElement).checked) next[w.id] = 'member'
                  else delete next[w.id]
                  setSpaces(next)
                }} />
                <span>{w.name}</span>
              </label>
              {w.id in spaces && (
                <select aria-label={`Role in ${w.name}`} value={spaces[w.id]}
                  onChange={(e) => setSpaces({ ...spaces, [w.id]: (e.target as HTMLSelectElement).value as 'admin' })}>
                  <option value="member">Member</option>
                  <option value="admin">Admin</option>
                </select>
              )}
            </div>
          ))}
        </div>
      </fieldset>
      <ErrorText error={error} id="invite-error" />
      <div><button type="submit" disabled={busy}>Invite</button></div>
    </form>
  )
}
