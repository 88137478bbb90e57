import { useEffect, useState } from 'preact/hooks'
import { describeError, isSignedOut } from '../api.js'
import { ErrorText } from '../components.js'
import { useSession } from '../session.js'
import { at, type Answer, TableWrap } from './developer-parts.js'

type Entry = Answer<'/api/v2/developer/logs'>['data'][number]
type ApiKey = Answer<'/api/v2/api-keys'>['data'][number]

const CATEGORIES = ['knowledge', 'knowledge_graph', 'search', 'webhooks', 'developer', 'activity']
const PAGE = 25

interface Filters { categories: string[]; keyId: string; from: string; to: string }
const NO_FILTERS: Filters = { categories: [], keyId: '', from: '', to: '' }

/**
 * The caller's developer log (every request made with one of their keys, and activity entries), newest first, with
 * its filters; `Older entries` follows the log's cursor, `Newer entries` goes back the way it came.
 */
export function EventLog() {
  const { api, signedOut } = useSession()
  const [keys, setKeys] = useState<ApiKey[]>([])
  const [draft, setDraft] = useState<Filters>(NO_FILTERS)
  const [filters, setFilters] = useState<Filters>(NO_FILTERS)
  // the cursors of the pages shown so far: the last is this page's ('' for the first)
  const [cursors, setCursors] = useState<string[]>([''])
  const [entries, setEntries] = useState<Entry[] | null>(null)
  const [next, setNext] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [fieldError, setFieldError] = useState<string | null>(null)
  const cursor = cursors[cursors.length - 1]

  useEffect(() => {
    api.call('/api/v2/api-keys', 'get').then((r) => setKeys(r.data), () => undefined)
  }, [api])

  useEffect(() => {
    let stopped = false
    setEntries(null)
    api.call('/api/v2/developer/logs', 'get', { query: {
      limit: PAGE,
      ...(filters.categories.length ? { categories: filters.categories.join(',') } : {}),
      ...(filters.keyId ? { api_key_id: filters.keyId } : {}),
      ...(filters.from ? { start: new Date(filters.from).toISOString() } : {}),
      ...(filters.to ? { end: new Date(filters.to).toISOString() } : {}),
      ...(cursor ? { cursor } : {})
    } }).then((page) => {
      if (stopped) return
      setEntries(page.data)
      setNext(page.nextCursor)
      setError(null)
    }, (err: unknown) => {
      if (stopped) return
      if (isSignedOut(err)) return signedOut()
      setError(describeError(err))
    })
    return () => { stopped = true }
  }, [api, filters, cursor])

  const apply = (event: Event) => {
    event.preventDefault()
    if (draft.from && draft.to && new Date(draft.from) > new Date(draft.to)) {
      return setFieldError('“From” is after “To”: choose a “From” before it.')
    }
    setFieldError(null)
    setFilters(draft)
    setCursors([''])
  }
  const keyName = (id: string | null) => {
    if (!id) return 'Signed-in session'
    const k = keys.find((x) => x.id === id)
    return k ? `${k.name} (${k.key_prefix}…)` : 'A deleted key'
  }
  const filtered = filters !== NO_FILTERS
  const pageNo = cursors.length

  return (
    <>
      <h2>Event log</h2>
      <p class="lead">Every request made with your API keys, and the activity your scripts logged, newest first.</p>
      <form class="filters panel" onSubmit={apply} aria-label="Filter the event log">
        <fieldset>
          <legend>Categories</legend>
          <div class="checks row">
            {CATEGORIES.map((c) => (
              <label key={c} class="check">
                <input type="checkbox" checked={draft.categories.includes(c)} onChange={(e) => {
                  const on = (e.target as HTMLInputElement).checked
                  setDraft({ ...draft,
                    categories: on ? [...draft.categories, c] : draft.categories.filter((x) => x !== c) })
                }} />
                <span>{c}</span>
              </label>
            ))}
          </div>
        </fieldset>
        <label>
          API key
          <select value={draft.keyId}
            onChange={(e) => setDraft({ ...draft, keyId: (e.target as HTMLSelectElement).value })}>
            <option value="">All keys</option>
            {keys.map((k) => <option key={k.id} value={k.id}>{k.name} ({k.key_prefix}…)</option>)}
          </select>
        </label>
        <label>
          From
          <input type="datetime-local" value={draft.from} aria-describedby={fieldError ? 'log-range-error' : undefined}
            onInput={(e) => setDraft({ ...draft, from: (e.target as HTMLInputElement).value })} />
        </label>
        <label>
          To
          <input type="datetime-local" value={draft.to}
            onInput={(e) => setDraft({ ...draft, to: (e.target as HTMLInputElement).value })} />
        </label>
        <div class="filter-buttons">
          <button type="submit">Apply filters</button>
          <button type="button" onClick={() => {
            setDraft(NO_FILTERS)
            setFilters(NO_FILTERS)
            setCursors([''])
            setFieldError(null)
          }}>
            Clear filters</button>
        </div>
        <ErrorText error={fieldError} id="log-range-error" />
      </form>
      <ErrorText error={error} />
      {entries === null && !error && <p>Loading…</p>}
      {entries !== null && entries.length === 0 && (
        <p class="empty">{filtered || pageNo > 1 ? 'No entries match these filters. Clear them to see everything.'
          : 'Nothing logged yet. Requests made with one of your API keys appear here; create a key under ' +
            '“API keys”.'}</p>
      )}
      {entries !== null && entries.length > 0 && (
        <TableWrap label="Event log">
          <table class="grid">
            <caption class="visually-hidden">Event log, page {pageNo}</caption>
            <thead><tr><th scope="col">When</th><th scope="col">Category</th><th scope="col">Action</th>
              <th scope="col">Key</th><th scope="col">Status</th><th scope="col">Duration</th></tr></thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.id} class={e.status_code >= 400 ? 'failed' : ''}>
                  <td>{at(e.created_at)}</td>
                  <td>{e.category}</td>
                  <td><code>{e.action}</code>
                    {e.metadata && Object.keys(e.metadata).length > 0 && (
                      <details><summary>Details</summary><pre>{JSON.stringify(e.metadata, null, 2)}</pre></details>
                    )}</td>
                  <td>{keyName(e.api_key_id)}</td>
                  <td>{e.status_code}</td>
                  <td>{e.duration_ms} ms</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {(pageNo > 1 || next) && (
        <nav class="pager" aria-label="Pages of the event log">
          <button type="button" disabled={pageNo <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>
            Newer entries</button>
          <span>Page {pageNo}</span>
          <button type="button" disabled={!next} onClick={() => next && setCursors([...cursors, next])}>
            Older entries</button>
        </nav>
      )}
    </>
  )
}
