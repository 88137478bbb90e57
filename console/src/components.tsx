import type { ComponentChildren } from 'preact'
import { onLinkClick } from './router.js'

/** A link inside the console: navigates without reloading. */
export function Link(props: { href: string; children: ComponentChildren; class?: string; current?: boolean }) {
  return (
    <a href={props.href} class={props.class} onClick={onLinkClick}
      aria-current={props.current ? 'page' : undefined}>{props.children}</a>
  )
}

/** An error of the API, in words, beside what caused it (announced to screen readers). */
export function ErrorText(props: { error?: string | null; id?: string }) {
  return props.error ? <p class="error" role="alert" id={props.id}>{props.error}</p> : null
}

const STATUS_WORDS: Record<string, string> = {
  draft: 'Draft', pending_review: 'Pending review', approved: 'Approved', rejected: 'Changes requested',
  superseded: 'Superseded'
}

export function statusText(status: string): string {
  return STATUS_WORDS[status] ?? status
}

export function StatusBadge(props: { status: string }) {
  return <span class={`status status-${props.status}`}>{statusText(props.status)}</span>
}

const TYPE_WORDS: Record<string, string> = {
  task_plan: 'Task plan', implementation_plan: 'Implementation plan', walkthrough: 'Walkthrough',
  verification_proof: 'Verification proof', decision_record: 'Decision record', plan_mode: 'Plan',
  code_change: 'Code change', research_summary: 'Research summary'
}

export const ARTIFACT_TYPES = Object.keys(TYPE_WORDS)

export function typeText(type: string): string {
  return TYPE_WORDS[type] ?? type
}

export function when(iso: string): string {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString()
}

/** Previous and next page of a long list, with where the person is. */
export function Pager(props: { page: number; pageSize: number; total: number; noun: string; onPage(page: number): void;
  label?: string }) {
  const pages = Math.max(1, Math.ceil(props.total / props.pageSize))
  if (props.total <= props.pageSize && props.page <= 1) return null
  return (
    <nav class="pager" aria-label={props.label ?? 'Pages'}>
      <button type="button" disabled={props.page <= 1} onClick={() => props.onPage(props.page - 1)}>
        Previous page
      </button>
      <span>Page {props.page} of {pages} ({props.total} {props.noun})</span>
      <button type="button" disabled={props.page >= pages} onClick={() => props.onPage(props.page + 1)}>
        Next page
      </button>
    </nav>
  )
}
