import { useState } from 'preact/hooks'
import type { ArtifactListItem } from '../api.js'
import { ARTIFACT_TYPES, ErrorText, Link, StatusBadge, typeText, when } from '../components.js'
import { navigate, useLocation } from '../router.js'
import { useSession } from '../session.js'
import { useWorkspaceList } from '../live.js'

const PAGE = 20
/** how often an open list asks again, while the page is visible, when the event stream cannot be opened */
const REFRESH_MS = 3000

const REVIEW_STATUSES = [['pending_review', 'Pending review'], ['draft', 'Draft asking for review']] as const
const ALL_STATUSES = [['draft', 'Draft'], ['pending_review', 'Pending review'], ['approved', 'Approved'],
  ['rejected', 'Changes requested'], ['superseded', 'Superseded']] as const

type Status = 'draft' | 'pending_review' | 'approved' | 'rejected' | 'superseded'
type Type = 'task_plan' | 'implementation_plan' | 'walkthrough' | 'verification_proof' | 'decision_record'
  | 'plan_mode' | 'code_change' | 'research_summary'

/**
 * The review queue (`mode="review"`: what awaits a person, newest first) or every artifact of the workspace,
 * filtered by type and status, a page at a time; the filters and page live in the address.
 */
export function ArtifactList(props: { mode: 'review' | 'all' }) {
  const { api, workspace } = useSession()
  const { path, query } = useLocation()
  const type = query.get('type') ?? ''
  const status = query.get('status') ?? ''
  const page = Math.max(1, Number(query.get('page')) || 1)
  const [items, setItems] = useState<ArtifactListItem[] | null>(null)
  const [count, setCount] = useState(0)
  // new and changed artifacts appear without a reload, as the workspace event stream tells of them
  const error = useWorkspaceList(() => api.listArtifacts({
    ...(props.mode === 'review' ? { awaiting: 'person' as const } : {}),
    ...(type ? { type: type as Type } : {}), ...(status ? { status: status as Status } : {}),
    limit: PAGE, offset: (page - 1) * PAGE
  }), ({ artifacts, meta }) => { setItems(artifacts); setCount(meta.count) },
  { wants: (event) => event.startsWith('artifact.'), pollMs: REFRESH_MS }, [api, props.mode, type, status, page])

  const setFilter = (name: string, value: string) => {
    const next = new URLSearchParams(query)
    if (value) next.set(name, value)
    else next.delete(name)
    next.delete('page')
    const qs = next.toString()
    navigate(`${path}${qs ? `?${qs}` : ''}`)
  }
  const goTo = (n: number) => {
    const next = new URLSearchParams(query)
    next.set('page', String(n))
    navigate(`${path}?${next.toString()}`)
  }
  const pages = Math.max(1, Math.ceil(count / PAGE))
  const statuses = props.mode === 'review' ? REVIEW_STATUSES : ALL_STATUSES
  const title = props.mode === 'review' ? 'Review' : 'Artifacts'

  return (
    <section>
      <h1>{title}</h1>
      <p class="lead">{props.mode === 'review'
        ? `What the assistants of ${workspace.name} wrote and asked a person to review, newest first.`
        : `Every artifact of ${workspace.name}, newest first.`}</p>
      <div class="filters">
        <label>
          Type
          <select value={type} onChange={(e) => setFilter('type', (e.target as HTMLSelectElement).value)}>
            <option value="">All types</option>
            {ARTIFACT_TYPES.map((t) => <option key={t} value={t}>{typeText(t)}</option>)}
          </select>
        </label>
        <label>
          Status
          <select value={status} onChange={(e) => setFilter('status', (e.target as HTMLSelectElement).value)}>
            <option value="">{props.mode === 'review' ? 'Everything awaiting review' : 'All statuses'}</option>
            {statuses.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
          </select>
        </label>
      </div>
      <ErrorText error={error} />
      {items === null && !error && <p>Loading…</p>}
      {items !== null && items.length === 0 && (
        <p class="empty">{props.mode === 'review'
          ? (type || status ? 'Nothing awaiting review matches these filters.'
              : 'Nothing awaits review. When an assistant writes an artifact with review_policy "request_review", ' +
              'or moves one to pending_review, it appears here.')
          : (type || status ? 'No artifact matches these filters.' : 'No artifacts yet in this workspace.')}</p>
      )}
      {items !== null && items.length > 0 && (
        <ul class="artifact-list">
          {items.map((a) => (
            <li key={a.id}>
              <Link href={`/artifacts/${a.id}`}>{a.title}</Link>
              <span class="meta">
                <StatusBadge status={a.status} /> {typeText(a.type)} · {when(a.created_at)}
                {a.confidence_score !== null && ` · confidence ${Math.round(a.confidence_score * 100)}%`}
              </span>
            </li>
          ))}
        </ul>
      )}
      {count > PAGE && (
        <nav class="pager" aria-label="Pages">
          <button type="button" disabled={page <= 1} onClick={() => goTo(page - 1)}>Previous page</button>
          <span>Page {page} of {pages} ({count} artifacts)</span>
          <button type="button" disabled={page >= pages} onClick={() => goTo(page + 1)}>Next page</button>
        </nav>
      )}
    </section>
  )
}
