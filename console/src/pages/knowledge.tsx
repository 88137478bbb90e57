import { useEffect, useState } from 'preact/hooks'
import { describeError, isSignedOut, type KnowledgeDocument, type SearchResult } from '../api.js'
import { ErrorText, Link, Pager, when } from '../components.js'
import { byteSize, plural, snippetParts } from '../format.js'
import { navigate, useLocation, withQuery } from '../router.js'
import { useSession } from '../session.js'
import { useWorkspaceList } from '../live.js'
import { Uploader } from './knowledge-upload.js'

const PAGE = 20
/** how often an open list asks again, while visible, when the event stream cannot be opened */
const REFRESH_MS = 5000
const MODES = [['hybrid', 'Hybrid (best of all)'], ['substring', 'Exact text'], ['words', 'Any of the words'],
  ['semantic', 'Meaning (semantic)']] as const
type Mode = (typeof MODES)[number][0]
const SCOPES = [['workspace', 'This workspace'], ['personal', 'Only mine'], ['organization', 'Organization']] as const
type Scope = (typeof SCOPES)[number][0]

const STATUS_WORDS: Record<string, string> = { pending: 'Waiting to be indexed', processing: 'Being indexed',
  indexed: 'Indexed' }

export function DocumentStatus(props: { status: string }) {
  return <span class={`status status-doc-${props.status}`}>{STATUS_WORDS[props.status] ?? props.status}</span>
}

/** The knowledge base: upload, search (the query and mode in the address), and the documents with their filters. */
export function KnowledgePage() {
  const { workspace } = useSession()
  const [uploads, setUploads] = useState(0)
  return (
    <section>
      <h1>Knowledge</h1>
      <p class="lead">The documents the assistants of {workspace.name} answer from: search them, read their passages,
        add more.</p>
      <KnowledgeSearch />
      <Uploader onUploaded={() => setUploads((n) => n + 1)} />
      <DocumentList reloadKey={uploads} />
    </section>
  )
}

function KnowledgeSearch() {
  const { api, signedOut } = useSession()
  const { query } = useLocation()
  const q = query.get('q') ?? ''
  const mode = (query.get('mode') ?? 'hybrid') as Mode
  const [text, setText] = useState(q)
  const [chosenMode, setChosenMode] = useState<Mode>(mode)
  const [result, setResult] = useState<SearchResult | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [searching, setSearching] = useState(false)

  useEffect(() => { setText(q); setChosenMode(mode) }, [q, mode])
  useEffect(() => {
    if (!q.trim()) { setResult(null); setError(null); return }
    const controller = new AbortController()
    setSearching(true)
    api.searchKnowledge({ query: q, mode, limit: 20 }, controller.signal).then((r) => {
      setResult(r)
      setError(null)
    }, (err: unknown) => {
      if (controller.signal.aborted) return
      if (isSignedOut(err)) return signedOut()
      setResult(null)
      setError(describeError(err))
    }).finally(() => { if (!controller.signal.aborted) setSearching(false) })
    return () => controller.abort()
  }, [api, q, mode])

  const submit = (e: Event) => {
    e.preventDefault()
    if (!text.trim()) {
      setError('Type what to look for.')
      return
    }
    navigate(withQuery({ q: text.trim(), mode: chosenMode === 'hybrid' ? undefined : chosenMode }))
  }
  return (
    <div class="search">
      <form role="search" class="search-form" onSubmit={submit}>
        <label class="grow">
          Search knowledge
          <input type="search" value={text} maxLength={1000} aria-describedby={error ? 'search-error' : undefined}
            onInput={(e) => setText((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Mode
          <select value={chosenMode} onChange={(e) => setChosenMode((e.target as HTMLSelectElement).value as Mode)}>
            {MODES.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
          </select>
        </label>
        <button type="submit">Search</button>
      </form>
      <ErrorText error={error} id="search-error" />
      {searching && !result && <p>Searching…</p>}
      {result && (
        <section aria-label="Search results" class="results">
          <p class="meta" aria-live="polite">
            {result.count === 0 ? `Nothing found for “${result.query}”. Try fewer words, another mode, or upload the ` +
              'document that holds the answer.'
              : `${plural(result.count, 'passage')} for “${result.query}”` +
                (result.partial ? ' (the search stopped early: the best found so far)' : '')}
          </p>
          <ol class="result-list">
            {result.results.map((r) => (
              <li key={r.chunk.id}>
                <Link href={`/knowledge/documents/${r.document.id}?passage=${r.chunk.chunkIndex + 1}`}>
                  {r.document.fileName}, passage {r.chunk.chunkIndex + 1}
                </Link>
                <p class="snippet"><Snippet text={r.snippet} /></p>
                <span class="meta">found by {r.matchedBy.join(', ')} · score {r.score.toFixed(3)}</span>
              </li>
            ))}
          </ol>
        </section>
      )}
    </div>
  )
}

/** A snippet with its matches highlighted; the document's characters are only ever text. */
export function Snippet(props: { text: string }) {
  return <>{snippetParts(props.text).map((p, i) => p.mark ? <mark key={i}>{p.text}</mark> : p.text)}</>
}

function DocumentList(props: { reloadKey: number }) {
  const { api } = useSession()
  const { query } = useLocation()
  const scope = (query.get('scope') ?? '') as Scope | ''
  const category = query.get('category') ?? ''
  const tag = query.get('tag') ?? ''
  const page = Math.max(1, Number(query.get('page')) || 1)
  const [docs, setDocs] = useState<KnowledgeDocument[] | null>(null)
  const [count, setCount] = useState(0)
  const [categoryText, setCategoryText] = useState(category)
  const [tagText, setTagText] = useState(tag)
  useEffect(() => { setCategoryText(category); setTagText(tag) }, [category, tag])

  // a document finishing its indexing changes its status here without a reload
  const listing = { limit: PAGE, offset: (page - 1) * PAGE,
    ...(scope ? { scope } : {}), ...(category ? { category } : {}), ...(tag ? { tag } : {}) }
  const error = useWorkspaceList(() => api.call('/api/knowledge/documents', 'get', { query: listing }),
    (res) => { setDocs(res.documents); setCount(res.count) },
    { wants: (event) => event === 'document.indexed', pollMs: REFRESH_MS },
    [api, scope, category, tag, page, props.reloadKey])

  const filter = (e: Event) => {
    e.preventDefault()
    navigate(withQuery({ category: categoryText.trim(), tag: tagText.trim(), page: undefined }))
  }
  const filtered = !!(scope || category || tag)
  return (
    <section aria-labelledby="documents-title">
      <h2 id="documents-title">Documents</h2>
      <form class="filters" onSubmit={filter}>
        <label>
          Show
          <select value={scope}
            onChange={(e) => navigate(withQuery({ scope: (e.target as HTMLSelectElement).value, page: undefined }))}>
            <option value="">Everything I can read</option>
            {SCOPES.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
          </select>
        </label>
        <label>
          With category
          <input type="text" value={categoryText} maxLength={100}
            onInput={(e) => setCategoryText((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          With tag
          <input type="text" value={tagText} maxLength={100}
            onInput={(e) => setTagText((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" class="filter-button">Apply filters</button>
      </form>
      <ErrorText error={error} />
      {docs === null && !error && <p>Loading…</p>}
      {docs !== null && docs.length === 0 && (
        <p class="empty">{filtered ? 'No document matches these filters.'
          : 'No documents yet. Upload the team\'s handbook, specs or notes above: the assistants answer from them.'}</p>
      )}
      {docs !== null && docs.length > 0 && (
        <ul class="doc-list">
          {docs.map((d) => (
            <li key={d.id}>
              <Link href={`/knowledge/documents/${d.id}`}>{d.fileName}</Link>
              <span class="meta">
                <DocumentStatus status={d.status} /> {d.fileType.toUpperCase()} · {byteSize(d.size)} ·{' '}
                {plural(d.chunkCount, 'passage')} · {scopeWords(d.scope)}{d.category && d.category !== 'general'
                  ? ` · ${d.category}` : ''}{d.tags.length ? ` · ${d.tags.join(', ')}` : ''} · {when(d.uploadedAt)}
              </span>
            </li>
          ))}
        </ul>
      )}
      <Pager page={page} pageSize={PAGE} total={count} noun="documents" label="Pages of documents"
        onPage={(n) => navigate(withQuery({ page: n }))} />
    </section>
  )
}

export function scopeWords(scope: string): string {
  return scope === 'workspace' ? 'workspace' : scope === 'personal' ? 'only mine' : scope === 'organization'
    ? 'organization' : scope
}
