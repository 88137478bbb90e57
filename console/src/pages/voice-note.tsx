import { useEffect, useRef, useState } from 'preact/hooks'
import { describeError, isSignedOut, type VoiceNoteDetail } from '../api.js'
import { ErrorText, Link, when } from '../components.js'
import { clock } from '../format.js'
import { useSession } from '../session.js'
import { watchWorkspace } from '../live.js'
import { VoiceStatus } from './voice.js'

const REFRESH_MS = 3000
const OWN_AUDIO = '/api/v2/voice-notes/audio/'

/**
 * Audio stored by Cairn plays from this page's own address (the API's public URL may name another host); any other
 * address is a link, since the page's Content-Security-Policy plays only its own origin's media.
 */
function playable(audioUrl: string): string | undefined {
  try {
    const url = new URL(audioUrl, location.origin)
    return url.pathname.startsWith(OWN_AUDIO) ? url.pathname : undefined
  } catch {
    return undefined
  }
}

/** One voice note: its audio, its status as transcription goes on, and the transcript's timed segments. */
export function VoiceNotePage(props: { id: string }) {
  const { api, signedOut, workspace } = useSession()
  const [note, setNote] = useState<VoiceNoteDetail | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [missing, setMissing] = useState(false)
  const [actionError, setActionError] = useState<string | null>(null)
  const [now, setNow] = useState(0)
  const audio = useRef<HTMLAudioElement>(null)

  const load = async () => {
    try {
      setNote(await api.getVoiceNote(props.id))
      setError(null)
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return setMissing(true)
      if (isSignedOut(err)) return signedOut()
      setError(describeError(err))
    }
  }
  useEffect(() => {
    void load()
    return watchWorkspace(workspace.id, { wants: (event, data) => event === 'voice_note.updated' &&
      data.id === props.id, onChange: load, pollMs: REFRESH_MS })
  }, [api, props.id])

  const transcribe = async () => {
    setActionError(null)
    try {
      await api.transcribeVoiceNote(props.id)
      await load()
    } catch (err) {
      if (isSignedOut(err)) return signedOut()
      setActionError(describeError(err))
    }
  }
  const playFrom = (seconds: number) => {
    const a = audio.current
    if (!a) return
    a.currentTime = seconds
    void a.play().catch(() => { /* the person presses play themselves */ })
  }

  if (missing) {
    return (
      <section>
        <h1>Voice note not found</h1>
        <p>It was deleted, or it is not yours. <Link href="/voice-notes">Back to your voice notes</Link>.</p>
      </section>
    )
  }
  if (!note) return <section><ErrorText error={error} />{!error && <p>Loading…</p>}</section>
  const src = playable(note.audio_url)
  const segments = note.transcript_segments ?? []
  return (
    <section>
      <p class="crumbs"><Link href="/voice-notes">Voice notes</Link> /</p>
      <h1>{note.title}</h1>
      <dl class="facts">
        <div><dt>Status</dt><dd aria-live="polite"><VoiceStatus status={note.status} /></dd></div>
        {note.duration > 0 && <div><dt>Length</dt><dd>{clock(note.duration)}</dd></div>}
        <div><dt>Recorded</dt><dd>{when(note.created_at)}</dd></div>
        {note.tags.length > 0 && <div><dt>Tags</dt><dd>{note.tags.join(', ')}</dd></div>}
      </dl>
      <ErrorText error={error} />
      {src
        ? <audio ref={audio} controls preload="metadata" src={src} class="player" aria-label={`Audio of ${note.title}`}
            onTimeUpdate={(e) => setNow((e.target as HTMLAudioElement).currentTime)} />
        : <p><a href={note.audio_url} rel="noreferrer noopener" target="_blank">Open the recording</a> (stored
          elsewhere)</p>}
      {note.status === 'failed' && (
        <div class="policy">
          <p class="error">Transcription failed: {note.error ?? 'no reason was given.'}</p>
          <button type="button" onClick={transcribe}>Transcribe again</button>
        </div>
      )}
      {note.status === 'created' && (
        <p>Not transcribed yet. <button type="button" onClick={transcribe}>Transcribe</button></p>
      )}
      <ErrorText error={actionError} />
      <h2 id="transcript-title">Transcript</h2>
      {note.status === 'processing' &&
        <p class="meta">Being transcribed: the transcript appears here when it is done.</p>}
      {note.status === 'completed' && segments.length === 0 && (
        <p class="transcript-text">{note.transcript || 'The recording held no speech.'}</p>
      )}
      {segments.length > 0 && (
        <ol class="segments" aria-labelledby="transcript-title">
          {segments.map((s, i) => {
            const playing = now >= s.start && now < s.end
            return (
              <li key={i} class={playing ? 'segment playing' : 'segment'}>
                <button type="button" class="link-button time" disabled={!src} onClick={() => playFrom(s.start)}
                  aria-label={`Play from ${clock(s.start)}`}>{clock(s.start)}–{clock(s.end)}</button>
                <span class="segment-text">{s.text.trim()}</span>
              </li>
            )
          })}
        </ol>
      )}
    </section>
  )
}
