import { useEffect, useRef, useState } from 'preact/hooks'
import { describeError, isSignedOut, type VoiceNote } from '../api.js'
import { ErrorText, Link, Pager, when } from '../components.js'
import { clock } from '../format.js'
import { navigate, useLocation, withQuery } from '../router.js'
import { useSession } from '../session.js'
import { useWorkspaceList } from '../live.js'

const PAGE = 20
const REFRESH_MS = 5000
const STATUSES = [['created', 'Not transcribed'], ['processing', 'Being transcribed'], ['completed', 'Transcribed'],
  ['failed', 'Failed']] as const
type Status = (typeof STATUSES)[number][0]

export function VoiceStatus(props: { status: string }) {
  const words = STATUSES.find(([value]) => value === props.status)?.[1] ?? props.status
  return <span class={`status status-voice-${props.status}`}>{words}</span>
}

/** The person's voice notes, newest first: record one by uploading its audio, and follow its transcription live. */
export function VoiceNotesPage() {
  const { api } = useSession()
  const { query } = useLocation()
  const status = (query.get('status') ?? '') as Status | ''
  const search = query.get('search') ?? ''
  const page = Math.max(1, Number(query.get('page')) || 1)
  const [notes, setNotes] = useState<VoiceNote[] | null>(null)
  const [total, setTotal] = useState(0)
  const [searchText, setSearchText] = useState(search)
  const [added, setAdded] = useState(0)
  useEffect(() => setSearchText(search), [search])

  const error = useWorkspaceList(() => api.listVoiceNotes({ limit: PAGE, offset: (page - 1) * PAGE,
    ...(status ? { status } : {}), ...(search ? { search } : {}) }),
  (res) => { setNotes(res.voiceNotes); setTotal(res.total) },
  { wants: (event) => event === 'voice_note.updated', pollMs: REFRESH_MS }, [api, status, search, page, added])

  const filtered = !!(status || search)
  return (
    <section>
      <h1>Voice notes</h1>
      <p class="lead">Your recordings and their transcripts. Voice notes are yours alone: nobody else sees them.</p>
      <NewVoiceNote onAdded={() => setAdded((n) => n + 1)} />
      <h2 id="notes-title">Your notes</h2>
      <form class="filters" onSubmit={(e) => {
        e.preventDefault()
        navigate(withQuery({ search: searchText.trim(), page: undefined }))
      }}>
        <label>
          Show
          <select value={status}
            onChange={(e) => navigate(withQuery({ status: (e.target as HTMLSelectElement).value, page: undefined }))}>
            <option value="">Every note</option>
            {STATUSES.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
          </select>
        </label>
        <label>
          Search my notes
          <input type="search" value={searchText} maxLength={300}
            onInput={(e) => setSearchText((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" class="filter-button">Find</button>
      </form>
      <ErrorText error={error} />
      {notes === null && !error && <p>Loading…</p>}
      {notes !== null && notes.length === 0 && (
        <p class="empty">{filtered ? 'No voice note matches.'
          : 'No voice notes yet. Upload a recording above (MP3, M4A, WAV, WebM, OGG): it is transcribed for you.'}</p>
      )}
      {notes !== null && notes.length > 0 && (
        <ul class="doc-list" aria-labelledby="notes-title">
          {notes.map((n) => (
            <li key={n.id}>
              <Link href={`/voice-notes/${n.id}`}>{n.title}</Link>
              <span class="meta">
                <VoiceStatus status={n.status} />{n.duration > 0 ? ` ${clock(n.duration)}` : ''} · {when(n.created_at)}
                {n.tags.length > 0 && ` · ${n.tags.join(', ')}`}
              </span>
              {n.status === 'failed' && n.error && <span class="error">{n.error}</span>}
            </li>
          ))}
        </ul>
      )}
      <Pager page={page} pageSize={PAGE} total={total} noun="voice notes" label="Pages of voice notes"
        onPage={(n) => navigate(withQuery({ page: n }))} />
    </section>
  )
}

/** Upload a recording: the audio is stored, a note made for it, and its transcription started. */
function NewVoiceNote(props: { onAdded(): void }) {
  const { api, signedOut } = useSession()
  const [title, setTitle] = useState('')
  const [busy, setBusy] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const input = useRef<HTMLInputElement>(null)

  const submit = async (e: Event) => {
    e.preventDefault()
    const file = input.current?.files?.[0]
    if (!file) {
      setError('Choose a recording first.')
      input.current?.focus()
      return
    }
    setError(null)
    try {
      setBusy('Uploading the recording…')
      const audio = await api.uploadAudio({ data: file, fileName: file.name })
      setBusy('Starting its transcription…')
      const note = await api.createVoiceNote({ audioUrl: audio.audioUrl, mimeType: audio.mimeType,
        ...(title.trim() ? { title: title.trim() } : {}) })
      await api.transcribeVoiceNote(note.id)
      setTitle('')
      if (input.current) input.current.value = ''
      props.onAdded()
    } catch (err) {
      if (isSignedOut(err)) return signedOut()
      setError(describeError(err))
    } finally {
      setBusy(null)
    }
  }
  return (
    <form class="upload" onSubmit={submit} aria-labelledby="new-note-title">
      <h2 id="new-note-title">New voice note</h2>
      <div class="upload-fields">
        <label>
          Recording
          <input ref={input} type="file" accept="audio/*,.mp3,.m4a,.wav,.webm,.ogg,.flac"
            aria-describedby={error ? 'new-note-error' : undefined} />
        </label>
        <label>
          Title
          <input type="text" value={title} maxLength={300} placeholder="optional"
            onInput={(e) => setTitle((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" disabled={!!busy}>Upload and transcribe</button>
      </div>
      <ErrorText error={error} id="new-note-error" />
      {busy && <p class="meta" aria-live="polite">{busy}</p>}
    </form>
  )
}
