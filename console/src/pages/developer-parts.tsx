import type { ComponentChildren } from 'preact'
import { useLayoutEffect, useRef, useState } from 'preact/hooks'
import type { CairnClient, Operation, Path, Success } from '../../../clients/typescript/src/client.js'
import { describeError, isSignedOut } from '../api.js'
import { ErrorText } from '../components.js'
import './developer.css'

/**
 * A wide table's box: it scrolls sideways on a narrow screen, and while it does it is a named region the keyboard
 * can reach and scroll (arrow keys), since its rows may hold nothing else to focus.
 */
export function TableWrap(props: { label: string; children: ComponentChildren }) {
  const ref = useRef<HTMLDivElement>(null)
  const [scrolls, setScrolls] = useState(false)
  useLayoutEffect(() => {
    const box = ref.current
    if (!box) return
    const check = () => setScrolls(box.scrollWidth > box.clientWidth + 1)
    check()
    const watch = new ResizeObserver(check)
    watch.observe(box)
    if (box.firstElementChild) watch.observe(box.firstElementChild)
    return () => watch.disconnect()
  }, [])
  return (
    <div ref={ref} class="table-wrap" tabIndex={scrolls ? 0 : undefined} role={scrolls ? 'region' : undefined}
      aria-label={scrolls ? props.label : undefined}>
      {props.children}
    </div>
  )
}

/** What a GET of the API answers (its typed body). */
export type Answer<P extends Path> = Success<Operation<P, 'get'>>
export type { CairnClient }

/**
 * A value the API shows only once (a new API key, a signing secret, an invitation link): a read-only field labelled
 * `label`, a `Copy` button, and the warning that it will not be shown again.
 */
export function OnceValue(props: { label: string; value: string; note: ComponentChildren; onDone?(): void }) {
  const field = useRef<HTMLInputElement>(null)
  const [copied, setCopied] = useState<string | null>(null)
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.value)
      setCopied('Copied.')
    } catch {
      // the clipboard can be refused (permissions, plain http): the value is selected for Ctrl+C instead
      field.current?.select()
      setCopied('Selected: press Ctrl+C (⌘C) to copy.')
    }
  }
  return (
    <div class="once" role="group" aria-label={props.label}>
      <p class="once-note">{props.note}</p>
      <div class="once-row">
        <label class="grow">
          {props.label}
          <input ref={field} type="text" readOnly value={props.value} spellcheck={false} autocomplete="off"
            onFocus={(e) => (e.target as HTMLInputElement).select()} />
        </label>
        <button type="button" onClick={copy}>Copy</button>
        {props.onDone && <button type="button" onClick={props.onDone}>Done</button>}
      </div>
      <p class="hint" role="status">{copied ?? ''}</p>
    </div>
  )
}

/** Page buttons for a list cut into pages of `size` (kept in the component; the lists here are short-lived). */
export function Pager(props: { page: number; count: number; size: number; noun: string; onPage(n: number): void;
  label?: string }) {
  const pages = Math.max(1, Math.ceil(props.count / props.size))
  if (props.count <= props.size) return null
  return (
    <nav class="pager" aria-label={props.label ?? 'Pages'}>
      <button type="button" disabled={props.page <= 1} onClick={() => props.onPage(props.page - 1)}>
        Previous page</button>
      <span>Page {props.page} of {pages} ({props.count} {props.noun})</span>
      <button type="button" disabled={props.page >= pages} onClick={() => props.onPage(props.page + 1)}>
        Next page</button>
    </nav>
  )
}

/** The items of page `page` (1-based). */
export function pageOf<T>(items: T[], page: number, size: number): T[] {
  const last = Math.max(1, Math.ceil(items.length / size))
  const p = Math.min(Math.max(1, page), last)
  return items.slice((p - 1) * size, p * size)
}

/**
 * A button whose action the person confirms in place (no browser dialog): the first press asks, naming what
 * happens, the second does it. Errors are shown beside the button.
 */
export function ConfirmButton(props: { label: string; question: string; confirm: string; run(): Promise<void>;
  class?: string; signedOut(): void }) {
  const [asking, setAsking] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const go = async () => {
    setBusy(true)
    setError(null)
    try {
      await props.run()
      setAsking(false)
    } catch (err) {
      if (isSignedOut(err)) return props.signedOut()
      setError(describeError(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <span class="confirm">
      {!asking && <button type="button" class={props.class} onClick={() => { setAsking(true); setError(null) }}>
        {props.label}</button>}
      {asking && (
        <span class="confirm-ask" role="group" aria-label={props.question}>
          <span>{props.question}</span>
          <button type="button" class="danger" disabled={busy} onClick={go}>{props.confirm}</button>
          <button type="button" disabled={busy} onClick={() => setAsking(false)}>Cancel</button>
        </span>
      )}
      <ErrorText error={error} />
    </span>
  )
}

/** Runs an action of a form or button: busy while it runs, its error in words, a 401 back to sign-in. */
export function useAction(signedOut: () => void) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const run = async (action: () => Promise<void>) => {
    setBusy(true)
    setError(null)
    try {
      await action()
    } catch (err) {
      if (isSignedOut(err)) return signedOut()
      setError(describeError(err))
    } finally {
      setBusy(false)
    }
  }
  return { busy, error, setError, run }
}

/** A date and time in the reader's locale, or a dash. */
export function at(iso: string | null | undefined): string {
  if (!iso) return '—'
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString()
}
