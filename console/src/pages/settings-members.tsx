import { useEffect, useState } from 'preact/hooks'
import { describeError, isSignedOut } from '../api.js'
import { ErrorText } from '../components.js'
import { useSession } from '../session.js'
import { ConfirmButton, Pager, pageOf, useAction, type Answer, TableWrap } from './developer-parts.js'
import { ROLE_WORDS } from './settings-people.js'

type Member = Answer<'/api/v2/workspaces/{id}/members'>['data'][number]
type User = Answer<'/api/v2/users'>['data'][number]

const PAGE = 20

/** The members of a workspace the person belongs to: add people of the organization, change roles, remove. */
export function Members() {
  const { api, signedOut, me, workspace } = useSession()
  const [chosen, setChosen] = useState(workspace.id)
  const [members, setMembers] = useState<Member[] | null>(null)
  const [users, setUsers] = useState<User[]>([])
  const [error, setError] = useState<string | null>(null)
  const [page, setPage] = useState(1)
  const space = me.workspaces.find((w) => w.id === chosen) ?? workspace
  const manager = space.role !== 'member' || me.orgRole === 'owner' || me.orgRole === 'admin'

  const load = async () => {
    try {
      const [m, u] = await Promise.all([api.call('/api/v2/workspaces/{id}/members', 'get', { path: { id: space.id } }),
        api.call('/api/v2/users', 'get')])
      setMembers(m.data)
      setUsers(u.data)
      setError(null)
    } catch (err) {
      if (isSignedOut(err)) return signedOut()
      setError(describeError(err))
    }
  }
  useEffect(() => { setMembers(null); setPage(1); void load() }, [api, space.id])

  const outside = users.filter((u) => !members?.some((m) => m.user_id === u.id))
  return (
    <>
      <h2>Workspace members</h2>
      <label class="inline">
        Members of
        <select value={space.id} onChange={(e) => setChosen((e.target as HTMLSelectElement).value)}>
          {me.workspaces.map((w) => <option key={w.id} value={w.id}>{w.name}</option>)}
        </select>
      </label>
      {!manager && <p class="hint">Only owners and admins of {space.name} can change its members.</p>}
      {manager && <AddMember workspaceId={space.id} candidates={outside} onAdded={load} />}
      <ErrorText error={error} />
      {members === null && !error && <p>Loading…</p>}
      {members !== null && (
        <>
          <TableWrap label={`Members of ${space.name}`}>
            <table class="grid">
              <caption class="visually-hidden">Members of {space.name}</caption>
              <thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th>
                <th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                {pageOf(members, page, PAGE).map((m) => (
                  <MemberRow key={m.user_id} member={m} workspaceId={space.id} workspaceName={space.name}
                    manager={manager && m.user_id !== me.user.id} onChanged={load} />
                ))}
              </tbody>
            </table>
          </TableWrap>
          <Pager page={page} count={members.length} size={PAGE} noun="members" onPage={setPage} />
        </>
      )}
    </>
  )
}

function MemberRow(props: { member: Member; workspaceId: string; workspaceName: string; manager: boolean;
  onChanged(): Promise<void> }) {
  const { api, signedOut } = useSession()
  const m = props.member
  const role = useAction(signedOut)
  const editable = props.manager && m.role !== 'owner'
  const setRole = (next: string) => role.run(async () => {
    await api.call('/api/v2/workspaces/{id}/members/{userId}', 'patch', { path: { id: props.workspaceId,
      userId: m.user_id }, body: { role: next as Member['role'] } })
    await props.onChanged()
  })
  return (
    <tr>
      <td>{m.name || '—'}</td>
      <td>{m.email}</td>
      <td>
        {editable
          ? <select aria-label={`Role of ${m.email} in ${props.workspaceName}`} value={m.role} disabled={role.busy}
              onChange={(e) => setRole((e.target as HTMLSelectElement).value)}>
              <option value="admin">Admin</option>
              <option value="member">Member</option>
            </select>
          : ROLE_WORDS[m.role]}
        <ErrorText error={role.error} />
      </td>
      <td>
        {editable && (
          <ConfirmButton label="Remove from workspace" class="danger" signedOut={signedOut}
            question={`Remove ${m.email} from ${props.workspaceName}? They stay in the organization.`}
            confirm={`Remove ${m.email}`} run={async () => {
              await api.call('/api/v2/workspaces/{id}/members/{userId}', 'delete',
                { path: { id: props.workspaceId, userId: m.user_id } })
              await props.onChanged()
            }} />
        )}
      </td>
    </tr>
  )
}

function AddMember(props: { workspaceId: string; candidates: User[]; onAdded(): Promise<void> }) {
  const { api, signedOut } = useSession()
  const [userId, setUserId] = useState('')
  const [role, setRole] = useState<'admin' | 'member'>('member')
  const { busy, error, setError, run } = useAction(signedOut)
  if (props.candidates.length === 0) {
    return <p class="hint">Everyone in the organization is a member here. Invite new people under “People”.</p>
  }
  const submit = (event: Event) => {
    event.preventDefault()
    if (!userId) return setError('Choose a person to add.')
    void run(async () => {
      await api.call('/api/v2/workspaces/{id}/members', 'post', { path: { id: props.workspaceId },
        body: { userId, role } })
      setUserId('')
      await props.onAdded()
    })
  }
  return (
    <form class="panel filters" onSubmit={submit} aria-label="Add a member">
      <label>
        Person
        <select value={userId} onChange={(e) => setUserId((e.target as HTMLSelectElement).value)}>
          <option value="">Choose…</option>
          {props.candidates.map((u) =>
            <option key={u.id} value={u.id}>{u.name ? `${u.name} (${u.email})` : u.email}</option>)}
        </select>
      </label>
      <label>
        Role
        <select value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value as 'admin' | 'member')}>
          <option value="member">Member</option>
          <option value="admin">Admin</option>
        </select>
      </label>
      <div class="filter-buttons"><button type="submit" disabled={busy}>Add to workspace</button></div>
      <ErrorText error={error} />
    </form>
  )
}
