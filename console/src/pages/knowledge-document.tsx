import { useEffect, useState } from 'preact/hooks'
import { describeError, isSignedOut, type DocumentWithChunks } from '../api.js'
import { ErrorText, Link, Pager, when } from '../components.js'
import { byteSize } from '../format.js'
import { navigate, useLocation, withQuery } from '../router.js'
import { useSession } from '../session.js'
import { watchWorkspace } from '../live.js'
import { DocumentStatus, scopeWords } from './knowledge.js'

const PAGE = 20
const REFRESH_MS = 5000

/**
 * One document: what it is, its passages a page at a time (`?passage=N` opens the page holding passage N and marks
 * it), its original to download, and deleting it (for those who may).
 */
export function DocumentPage(props: { id: string }) {
  const { api, signedOut, workspace } = useSession()
  const { query } = useLocation()
  const wanted = Number(query.get('passage')) || 0
  const page = Math.max(1, Number(query.get('page')) || (wanted > 0 ? Math.ceil(wanted / PAGE) : 1))
  const [doc, setDoc] = useState<DocumentWithChunks | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [missing, setMissing] = useState(false)

  useEffect(() => {
    let stopped = false
    const load = async () => {
      try {
        const d = await api.getDocument(props.id, { chunkOffset: (page - 1) * PAGE, chunkLimit: PAGE })
        if (stopped) return
        setDoc(d)
        setError(null)
      } catch (err) {
        if (stopped) return
        if ((err as { statusCode?: number }).statusCode === 404) return setMissing(true)
        if (isSignedOut(err)) return signedOut()
        setError(describeError(err))
      }
    }
    void load()
    const stop = watchWorkspace(workspace.id, { wants: (event, data) => event === 'document.indexed' &&
      data.id === props.id, onChange: load, pollMs: REFRESH_MS })
    return () => { stopped = true; stop() }
  }, [api, props.id, page])

  useEffect(() => {
    if (doc && wanted) document.getElementById(`passage-${wanted}`)?.scrollIntoView({ block: 'center' })
  }, [doc, wanted])

  if (missing) {
    return (
      <section>
        <h1>Document not found</h1>
        <p>It was deleted, or you cannot read it. <Link href="/knowledge">Back to the knowledge base</Link>.</p>
      </section>
    )
  }
  if (!doc) return <section><ErrorText error={error} />{!error && <p>Loading…</p>}</section>
  const d = doc.document
  return (
    <section>
      <p class="crumbs"><Link href="/knowledge">Knowledge</Link> /</p>
      <h1>{d.fileName}</h1>
      <dl class="facts">
        <div><dt>Status</dt><dd><DocumentStatus status={d.status} /></dd></div>
        <div><dt>Type</dt><dd>{d.fileType.toUpperCase()}</dd></div>
        <div><dt>Size</dt><dd>{byteSize(d.size)}</dd></div>
        <div><dt>Passages</dt><dd>{d.chunkCount}</dd></div>
        <div><dt>Shared with</dt><dd>{scopeWords(d.scope)}</dd></div>
        <div><dt>Category</dt><dd>{d.category}</dd></div>
        {d.tags.length > 0 && <div><dt>Tags</dt><dd>{d.tags.join(', ')}</dd></div>}
        <div><dt>Uploaded</dt><dd>{when(d.uploadedAt)}</dd></div>
      </dl>
      <p class="actions">
        <a href={`/api/knowledge/document/${encodeURIComponent(d.id)}/download`} download>Download the original</a>
        <DeleteDocument id={d.id} name={d.fileName} />
      </p>
      <ErrorText error={error} />
      <h2 id="passages-title">Passages</h2>
      {d.status !== 'indexed' && (
        <p class="hint" aria-live="polite">This document is still being indexed: its passages are all here, and
          searching them by meaning follows once indexing is done.</p>
      )}
      {doc.chunks.length === 0
        ? <p class="empty">No passages: the file held no text Cairn could read.</p>
        : (
            <ol class="passages" aria-labelledby="passages-title" start={doc.chunks[0].chunkIndex + 1}>
              {doc.chunks.map((c) => (
                <li key={c.id} id={`passage-${c.chunkIndex + 1}`}
                  class={c.chunkIndex + 1 === wanted ? 'passage wanted' : 'passage'}
                  aria-current={c.chunkIndex + 1 === wanted ? 'true' : undefined}>
                  <span class="meta">Passage {c.chunkIndex + 1} · {c.chunkSize} characters</span>
                  <pre class="passage-text">{c.text}</pre>
                </li>
              ))}
            </ol>
          )}
      <Pager page={page} pageSize={PAGE} total={d.chunkCount} noun="passages" label="Pages of passages"
        onPage={(n) => navigate(withQuery({ page: n, passage: undefined }))} />
    </section>
  )
}

function DeleteDocument(props: { id: string; name: string }) {
  const { api, signedOut } = useSession()
  const [asking, setAsking] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const remove = async () => {
    try {
      await api.call('/api/knowledge/document/{id}', 'delete', { path: { id: props.id } })
      navigate('/knowledge')
    } catch (err) {
      if (isSignedOut(err)) return signedOut()
      setError((err as { statusCode?: number }).statusCode === 404
        ? 'Only its uploader, or an owner or admin of where it is shared, can delete this document.'
        : describeError(err))
      setAsking(false)
    }
  }
  return (
    <span class="delete-document">
      {asking
        ? (
            <>
              <span>Delete {props.name} and its passages for everyone?</span>{' '}
              <button type="button" class="reject" onClick={remove}>Delete for good</button>{' '}
              <button type="button" onClick={() => setAsking(false)}>Keep it</button>
            </>
          )
        : <button type="button" onClick={() => setAsking(true)}>Delete document</button>}
      <ErrorText error={error} />
    </span>
  )
}
