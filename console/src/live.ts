import { useEffect, useState } from 'preact/hooks'
import { describeError, isSignedOut } from './api.js'
import { useSession } from './session.js'

/**
 * Changes of the workspace as they happen: the workspace event stream (GET /api/v2/events/stream, the session's
 * cookie goes along), or, where it cannot be opened, a look every `pollMs` while the page is visible.
 */
export interface WatchOptions {
  /** which events matter (all of the stream's when absent) */
  wants?: (event: string, data: { id?: string; [k: string]: unknown }) => boolean
  /** called once for each burst of changes (and after a `reset`: what was missed is gone) */
  onChange: () => void | Promise<void>
  /** the interval of the fallback looks */
  pollMs: number
}

const EVENTS = ['artifact.created', 'artifact.updated', 'artifact.status_changed', 'artifact.commented',
  'artifact.deleted', 'document.indexed', 'voice_note.updated', 'message.created', 'workflow_run.updated']
/** errors in a row before the stream is given up for the looks (EventSource retries by itself meanwhile) */
const GIVE_UP_AFTER = 3

/** Starts watching; returns the function that stops. */
export function watchWorkspace(workspaceId: string, options: WatchOptions): () => void {
  let stopped = false
  let running = false
  let again = false
  let timer: ReturnType<typeof setTimeout> | undefined
  // one reload at a time: changes that come during one make one more after it
  const change = async () => {
    if (running) { again = true; return }
    running = true
    try {
      do {
        again = false
        await options.onChange()
      } while (again && !stopped)
    } finally {
      running = false
    }
  }

  const poll = () => {
    const tick = async () => {
      if (stopped) return
      if (document.visibilityState === 'visible') await change()
      if (!stopped) timer = setTimeout(tick, document.visibilityState === 'visible' ? options.pollMs : 1000)
    }
    timer = setTimeout(tick, options.pollMs)
  }

  if (typeof EventSource === 'undefined') {
    poll()
    return () => { stopped = true; clearTimeout(timer) }
  }
  const source = new EventSource(`/api/v2/events/stream?workspace_id=${encodeURIComponent(workspaceId)}`)
  let failures = 0
  const onEvent = (e: MessageEvent<string>) => {
    let data: { id?: string } = {}
    try { data = JSON.parse(e.data) as { id?: string } } catch { /* a malformed event counts as a change */ }
    if (!options.wants || options.wants(e.type, data)) void change()
  }
  for (const name of EVENTS) source.addEventListener(name, onEvent)
  // the events missed while away are gone: read everything again
  source.addEventListener('reset', () => void change())
  source.onopen = () => { failures = 0 }
  source.onerror = () => {
    failures++
    // refused (a closed source is not retried by the browser) or failing again and again: looks instead
    if (source.readyState === EventSource.CLOSED || failures >= GIVE_UP_AFTER) {
      source.close()
      if (!stopped) {
        void change()
        poll()
      }
    }
  }
  return () => {
    stopped = true
    source.close()
    clearTimeout(timer)
  }
}

/**
 * A list page's data: `fetch`ed when `deps` change and again whenever the workspace event stream tells of a change
 * `wants` names (every `pollMs` where the stream cannot be opened), each answer given to `show`. Returns the last
 * load's error in words (null once one succeeds); a session that has ended goes back to sign-in; an answer that
 * comes after `deps` changed is dropped.
 */
export function useWorkspaceList<T>(fetch: () => Promise<T>, show: (answer: T) => void,
  watch: Omit<WatchOptions, 'onChange'>, deps: unknown[]): string | null {
  const { signedOut, workspace } = useSession()
  const [error, setError] = useState<string | null>(null)
  useEffect(() => {
    let stopped = false
    const load = async () => {
      try {
        const answer = await fetch()
        if (stopped) return
        show(answer)
        setError(null)
      } catch (err) {
        if (stopped) return
        if (isSignedOut(err)) return signedOut()
        setError(describeError(err))
      }
    }
    void load()
    const stop = watchWorkspace(workspace.id, { ...watch, onChange: load })
    return () => { stopped = true; stop() }
  }, [workspace.id, ...deps])
  return error
}
