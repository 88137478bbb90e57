import { useEffect, useRef, useState } from 'preact/hooks'
import { describeError, isSignedOut, type Artifact, type ArtifactComment, type ChainLink } from '../api.js'
import { ErrorText, Link, statusText, typeText, when } from '../components.js'
import { Content, anchorKey, anchorLabel, type Anchor } from '../content.js'
import { Markdown } from '../markdown.js'
import { useSession } from '../session.js'
import { watchWorkspace } from '../live.js'
import { fieldText, isTextPosition, placeQuote, type Placement } from '../text-anchor.js'
import { paintHighlight, quoteRange, selectionPosition } from '../selection.js'
import { Versions } from './artifact-versions.js'
import './comments.css'

/** how often the page asks again, while visible, when the event stream cannot be opened */
const REFRESH_MS = 5000
const OPEN = new Set(['draft', 'pending_review'])
/** how many earlier versions lend their comments on selections to the one shown */
const EARLIER_VERSIONS = 10

/** A comment on a selection made on an earlier version, shown on this one where its quote still is. */
export interface EarlierComment { comment: ArtifactComment; version: number }

/** A long quote cut to what a one-line hint can hold. */
function shorten(text: string, max = 90): string {
  return text.length <= max ? text : `${text.slice(0, max - 2)}…${text.slice(-1)}`
}

/** The versions this one descends from, nearest first (through `parent_artifact_id`). */
function ancestors(chain: ChainLink[], id: string): ChainLink[] {
  const byId = new Map(chain.map((link) => [link.id, link]))
  const out: ChainLink[] = []
  for (let at = byId.get(id)?.parent_artifact_id; at && out.length < EARLIER_VERSIONS;) {
    const link = byId.get(at)
    if (!link || out.includes(link)) break
    out.push(link)
    at = link.parent_artifact_id
  }
  return out
}

const POLICY_WORDS: Record<string, string> = {
  request_review: 'The assistant asked for a person\'s review: only a person signed in can approve or reject it; ' +
    'API keys cannot.',
  agent_decides: 'The assistant may decide on this artifact itself; a person can approve or reject it too.',
  always_proceed: 'The assistant goes ahead without waiting for a review; a person can still approve or reject it.'
}

/** One artifact: its content rendered by type, comments beside what they are about, the decision, the versions. */
export function ArtifactPage(props: { id: string }) {
  const { api, signedOut, workspace } = useSession()
  const [artifact, setArtifact] = useState<Artifact | null>(null)
  const [chain, setChain] = useState<ChainLink[]>([])
  const [earlier, setEarlier] = useState<EarlierComment[]>([])
  const [names, setNames] = useState<Map<string, string>>(new Map())
  const [loadError, setLoadError] = useState<string | null>(null)
  const [missing, setMissing] = useState(false)
  const chainIds = useRef(new Set<string>())

  const fail = (err: unknown, set: (text: string) => void) => {
    if (isSignedOut(err)) signedOut()
    else set(describeError(err))
  }
  const reload = async () => {
    try {
      const [a, c] = await Promise.all([api.getArtifact(props.id), api.artifactChain(props.id)])
      // comments on selections of earlier versions follow their quote onto this one
      const older = await Promise.all(ancestors(c, props.id).map((link) => api.getArtifact(link.id).then(
        (v) => (v.comments ?? []).filter((x) => isTextPosition(x.position))
          .map((comment) => ({ comment, version: c.indexOf(link) + 1 })),
        () => [] as EarlierComment[])))
      setArtifact(a)
      setChain(c)
      setEarlier(older.flat())
      chainIds.current = new Set(c.map((link) => link.id))
      setLoadError(null)
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) setMissing(true)
      else fail(err, setLoadError)
    }
  }

  useEffect(() => {
    let stopped = false
    void reload()
    // a change of this artifact or of its versions (a new version is a new artifact) reloads it
    const stop = watchWorkspace(workspace.id, {
      wants: (event, data) => event.startsWith('artifact.') && (data.id === props.id || event === 'artifact.created' ||
        chainIds.current.has(data.id ?? '')),
      onChange: reload, pollMs: REFRESH_MS
    })
    api.call('/api/v2/workspaces/{id}/members', 'get', { path: { id: workspace.id } }).then((res) => {
      if (!stopped) setNames(new Map(res.data.map((m) => [m.user_id, m.name || m.email])))
    }, () => { /* names are a nicety: ids are shown without them */ })
    return () => { stopped = true; stop() }
  }, [api, props.id])

  if (missing) {
    return (
      <section>
        <h1>Artifact not found</h1>
        <p>It was deleted, or it belongs to another workspace. <Link href="/review">Back to the queue</Link>.</p>
      </section>
    )
  }
  if (!artifact) return <section><ErrorText error={loadError} />{!loadError && <p>Loading…</p>}</section>
  const who = (id: string | null) => id ? names.get(id) ?? id : ''
  return <ArtifactView artifact={artifact} chain={chain} earlier={earlier} who={who} reload={reload} fail={fail}
    loadError={loadError} />
}

function ArtifactView(props: { artifact: Artifact; chain: ChainLink[]; earlier: EarlierComment[];
  who(id: string | null): string;
  reload(): Promise<void>; fail(err: unknown, set: (text: string) => void): void; loadError: string | null }) {
  const { api } = useSession()
  const a = props.artifact
  const [text, setText] = useState('')
  const [anchor, setAnchor] = useState<Anchor | null>(null)
  const [commentError, setCommentError] = useState<string | null>(null)
  const [decisionError, setDecisionError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const field = useRef<HTMLTextAreaElement>(null)
  const contentRef = useRef<HTMLDivElement>(null)
  const [selected, setSelected] = useState<Anchor | null>(null)
  const [selectionError, setSelectionError] = useState<string | null>(null)

  const comments = a.comments ?? []
  // where each comment on a selection is in this version's text, and which version it was made on
  const placed = new Map<string, { placement: Placement; version?: number }>()
  const place = (c: ArtifactComment, version?: number) => {
    if (isTextPosition(c.position)) {
      placed.set(c.id, { placement: placeQuote(fieldText(a.content, c.position.field), c.position), version })
    }
  }
  for (const c of comments) place(c)
  for (const e of props.earlier) place(e.comment, e.version)
  const byAnchor = new Map<string, ArtifactComment[]>()
  const file = (c: ArtifactComment) => {
    const key = placed.get(c.id)?.placement.state === 'changed' ? undefined : anchorKey(c.position)
    if (key) byAnchor.set(key, [...byAnchor.get(key) ?? [], c])
  }
  for (const c of comments) file(c)
  const carried = props.earlier.filter((e) => placed.get(e.comment.id)?.placement.state !== 'changed')
  for (const e of carried) file(e.comment)
  const mayDecide = OPEN.has(a.status)

  // the selection in the content, followed as it changes, for the button `Comment on selection`
  useEffect(() => {
    const follow = () => {
      const root = contentRef.current
      const position = root ? selectionPosition(root, a.content) : null
      const next = position ? { position: { ...position }, label: anchorLabel(position) ?? 'the selection' } : null
      // a drag changes the selection often: the page is drawn again only when the quote or its place changed
      setSelected((current) => JSON.stringify(current) === JSON.stringify(next) ? current : next)
      if (position) setSelectionError(null)
    }
    document.addEventListener('selectionchange', follow)
    return () => document.removeEventListener('selectionchange', follow)
  }, [a.content])

  // the quotes of comments (and the one being written) marked in the text
  useEffect(() => {
    const root = contentRef.current
    const rangeOf = (position: unknown, at?: Placement) => {
      if (!root || !isTextPosition(position)) return undefined
      const source = fieldText(a.content, position.field)
      const where = at ?? placeQuote(source, position)
      const el = root.querySelector<HTMLElement>(`[data-field="${CSS.escape(position.field)}"]`)
      return el && source !== undefined && where.state !== 'changed'
        ? quoteRange(el, source, where.start, where.end) : undefined
    }
    const quotes = [...comments, ...carried.map((e) => e.comment)]
      .map((c) => rangeOf(c.position, placed.get(c.id)?.placement)).filter((r): r is Range => r !== undefined)
    paintHighlight('cairn-quote', quotes)
    const pending = anchor ? rangeOf(anchor.position) : undefined
    paintHighlight('cairn-pending', pending ? [pending] : [])
  })
  useEffect(() => () => { paintHighlight('cairn-quote', []); paintHighlight('cairn-pending', []) }, [])

  const commentOn = (target: Anchor) => {
    setAnchor(target)
    field.current?.focus()
  }
  const commentOnSelection = () => {
    const root = contentRef.current
    const position = root ? selectionPosition(root, a.content) : null
    const target = position ? { position: { ...position }, label: anchorLabel(position) ?? 'the selection' } : selected
    if (target) commentOn(target)
    else setSelectionError('Nothing is selected: select words in the content first.')
  }
  /** the comment in the field, sent; false when sending failed (the error is beside the field) */
  const sendComment = async (): Promise<boolean> => {
    if (!text.trim()) return true
    try {
      await api.commentOnArtifact(a.id, text, anchor?.position)
      setText('')
      setAnchor(null)
      return true
    } catch (err) {
      props.fail(err, setCommentError)
      return false
    }
  }
  const addComment = async (event: Event) => {
    event.preventDefault()
    setCommentError(null)
    if (!text.trim()) return setCommentError('Write a comment first.')
    setBusy(true)
    await sendComment()
    await props.reload()
    setBusy(false)
  }
  const decide = async (status: 'approved' | 'rejected') => {
    setBusy(true)
    setDecisionError(null)
    setCommentError(null)
    // a rejection carries the comment in the field (what to change); an approval may too
    if (await sendComment()) {
      try {
        await api.setArtifactStatus(a.id, status)
      } catch (err) {
        props.fail(err, setDecisionError)
      }
    }
    await props.reload()
    setBusy(false)
  }

  const renderComments = (list: ArtifactComment[], showAnchor = false) => (
    <ul class="comments">
      {list.map((c) => {
        const at = placed.get(c.id)
        const label = anchorLabel(c.position)
        return (
          <li key={c.id} class="comment">
            <p class="comment-meta"><strong>{props.who(c.user_id)}</strong> · {when(c.created_at)}
              {at?.version !== undefined && <> · on version {at.version}</>}
              {label && !at && (showAnchor || !anchorKey(c.position)) && <> · on {label}</>}
            </p>
            {at && isTextPosition(c.position) && (
              <blockquote class={`quote quote-${at.placement.state}`}>
                <span class="visually-hidden">On the text </span>{c.position.quote}
              </blockquote>
            )}
            {at?.placement.state === 'changed' && (
              <p class="quote-note">Text changed: this quote is no longer in {at.version !== undefined
                ? 'this version' : 'the content'}.</p>
            )}
            <Markdown text={c.content} />
          </li>
        )
      })}
    </ul>
  )

  return (
    <article class="artifact">
      <p class="crumbs">{typeText(a.type)}</p>
      <h1>{a.title}</h1>
      <ErrorText error={props.loadError} />
      <dl class="facts">
        <div><dt>Status</dt><dd class={`status-text status-${a.status}`}>{statusText(a.status)}</dd></div>
        <div><dt>Type</dt><dd>{typeText(a.type)}{a.subtype ? ` (${a.subtype})` : ''}</dd></div>
        <div><dt>Confidence</dt><dd>{a.confidence_score === null ? 'Not given'
          : `${Math.round(a.confidence_score * 100)}%`}</dd></div>
        <div><dt>Reviewed by</dt><dd>{a.reviewed_by ? props.who(a.reviewed_by) : 'Nobody yet'}</dd></div>
        <div><dt>Written by</dt><dd>{props.who(a.created_by)} · {when(a.created_at)}</dd></div>
      </dl>
      <p class="policy">{POLICY_WORDS[a.review_policy] ?? `Review policy: ${a.review_policy}`}</p>

      {mayDecide && (
        <div class="decision" role="group" aria-label="Decision">
          <button type="button" class="approve" disabled={busy} onClick={() => decide('approved')}>Approve</button>
          <button type="button" class="reject" disabled={busy} onClick={() => decide('rejected')}
            aria-describedby="reject-hint">Reject</button>
          <span id="reject-hint" class="hint">Reject asks for changes; what you wrote in Comment is sent with it.</span>
          <ErrorText error={decisionError} />
        </div>
      )}

      <div ref={contentRef}>
        <Content type={a.type} content={a.content as Record<string, unknown>} comments={byAnchor}
          onCommentOn={commentOn} renderComments={(list) => renderComments(list)} />
      </div>
      {/* after the content, so that the bar's changing text never moves the text being selected */}
      <div class="selection-bar">
        {/* aria-disabled rather than disabled: the button stays in the Tab order, where its hint is read out */}
        <button type="button" aria-disabled={selected ? undefined : 'true'} aria-describedby="selection-hint"
          onMouseDown={(e) => e.preventDefault()} onClick={commentOnSelection}>Comment on selection</button>
        <span id="selection-hint" class="hint">{selected ? <>Selected: {shorten(selected.label)}</>
          : 'Select text in the content to comment on it (from the keyboard: caret browsing, F7, then Shift ' +
            'and the arrow keys).'}</span>
        <ErrorText error={selectionError} />
      </div>

      <section class="thread">
        <h2>Discussion</h2>
        {comments.length === 0 ? <p class="empty">No comments yet.</p> : renderComments(comments, true)}
        {props.earlier.length > 0 && (
          <>
            <h3>On selections of earlier versions</h3>
            {renderComments(props.earlier.map((e) => e.comment), true)}
          </>
        )}
        <form onSubmit={addComment} class="comment-form">
          {anchor && (
            <p class="anchor">On {anchor.label}.{' '}
              <button type="button" class="link-button" onClick={() => setAnchor(null)}>Comment on the whole artifact
              </button></p>
          )}
          <label>
            Comment
            <textarea ref={field} rows={4} value={text} aria-describedby={commentError ? 'comment-error' : undefined}
              onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
          </label>
          <ErrorText error={commentError} id="comment-error" />
          <button type="submit" disabled={busy}>Add comment</button>
        </form>
      </section>

      <Versions chain={props.chain} current={a.id} />
    </article>
  )
}
