import type { ComponentChildren } from 'preact'
import type { ArtifactComment } from './api.js'
import { CodeChange } from './diff-view.js'
import { Markdown, safeHref } from './markdown.js'
import { isTextPosition } from './text-anchor.js'

/** A comment position of the API (`{kind: 'step', step: 0}` …) and the words that name it. */
export interface Anchor { position: Record<string, unknown>; label: string }

export interface ContentProps {
  type: string
  content: Record<string, unknown>
  /** comments of this version by anchor key (see anchorKey) */
  comments: Map<string, ArtifactComment[]>
  onCommentOn(anchor: Anchor): void
  renderComments(list: ArtifactComment[]): ComponentChildren
}

/** The key a position is filed under, or undefined for a general comment. */
export function anchorKey(position: unknown): string | undefined {
  if (!position || typeof position !== 'object') return undefined
  const p = position as Record<string, unknown>
  const n = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0
  if (p.kind === 'step' && n(p.step)) return `step:${p.step}`
  if (p.kind === 'claim' && n(p.claim)) return `claim:${p.claim}`
  if (p.kind === 'option' && n(p.option)) return `option:${p.option}`
  if (p.kind === 'line' && typeof p.path === 'string' && n(p.line)) return `line:${p.path}:${p.line}`
  if (isTextPosition(p)) return `text:${p.field}`
  return undefined
}

/** Words for a position: "step 2", "line 14 of src/a.ts", "“quoted text”". */
export function anchorLabel(position: unknown): string | undefined {
  if (!position || typeof position !== 'object') return undefined
  const p = position as Record<string, unknown>
  if (p.kind === 'step' && typeof p.step === 'number') return `step ${p.step + 1}`
  if (p.kind === 'claim' && typeof p.claim === 'number') return `claim ${p.claim + 1}`
  if (p.kind === 'option' && typeof p.option === 'number') return `option ${p.option + 1}`
  if (p.kind === 'line' && typeof p.line === 'number') return `line ${p.line} of ${String(p.path)}`
  if (p.kind === 'text' && typeof p.quote === 'string') return `“${p.quote}”`
  return undefined
}

const PLAN_TYPES = new Set(['task_plan', 'implementation_plan', 'plan_mode', 'walkthrough'])
export const arr = (v: unknown): unknown[] => Array.isArray(v) ? v : []
export const obj = (v: unknown): Record<string, unknown> => v && typeof v === 'object' && !Array.isArray(v)
  ? v as Record<string, unknown> : {}
const str = (v: unknown): string | undefined => typeof v === 'string' ? v : undefined

/** Known fields of each shape; anything else is kept and shown as data. */
const KNOWN: Record<string, string[]> = {
  plan: ['summary', 'steps', 'risks'],
  verification_proof: ['summary', 'claims'],
  decision_record: ['context', 'options', 'decision', 'consequences'],
  code_change: ['summary', 'diff', 'files'],
  research_summary: ['question', 'summary', 'findings']
}

export function Content(props: ContentProps) {
  const c = props.content
  const shape = PLAN_TYPES.has(props.type) && Array.isArray(c.steps) ? 'plan'
    : props.type === 'verification_proof' && Array.isArray(c.claims) ? 'verification_proof'
      : props.type === 'decision_record' && c.decision !== undefined ? 'decision_record'
        : props.type === 'code_change' && typeof c.diff === 'string' ? 'code_change'
          : props.type === 'research_summary' && c.summary !== undefined ? 'research_summary' : undefined
  if (!shape) {
    return (
      <div class="content">
        <p class="hint">This content does not follow the shape of its type; it is shown as data.</p>
        <pre class="json">{JSON.stringify(c, null, 2)}</pre>
      </div>
    )
  }
  const rest = Object.fromEntries(Object.entries(c).filter(([k]) => !KNOWN[shape].includes(k)))
  return (
    <div class="content">
      {shape === 'plan' && <Plan {...props} />}
      {shape === 'verification_proof' && <Proof {...props} />}
      {shape === 'decision_record' && <Decision {...props} />}
      {shape === 'code_change' && <CodeChange {...props} />}
      {shape === 'research_summary' && <Research {...props} />}
      {Object.keys(rest).length > 0 && (
        <details class="rest">
          <summary>Other fields</summary>
          <pre class="json">{JSON.stringify(rest, null, 2)}</pre>
        </details>
      )}
    </div>
  )
}

/** Comments on selections in the fields under `prefix` (`steps.1` holds `steps.1.title`, `steps.1.detail`). */
function textCommentsUnder(comments: Map<string, ArtifactComment[]>, prefix: string): ArtifactComment[] {
  const list: ArtifactComment[] = []
  for (const [key, value] of comments) if (key.startsWith(`text:${prefix}.`)) list.push(...value)
  return list
}

/**
 * A text field of the content, marked with its path so that a selection in it can be commented on (and the quotes
 * of its comments highlighted).
 */
function Field(props: { field: string; text: unknown; inline?: boolean }) {
  return props.inline
    ? <span class="text-field" data-field={props.field}><Markdown text={props.text} inline /></span>
    : <div class="text-field" data-field={props.field}><Markdown text={props.text} /></div>
}

function Anchored(props: ContentProps & { anchorKey: string; anchor: Anchor; button: string; fields: string;
  children: ComponentChildren }) {
  const list = [...props.comments.get(props.anchorKey) ?? [], ...textCommentsUnder(props.comments, props.fields)]
  return (
    <div class="anchored">
      <div class="anchored-body">{props.children}</div>
      <div class="anchored-side">
        <button type="button" class="link-button" onClick={() => props.onCommentOn(props.anchor)}>
          {props.button}
        </button>
        {list.length > 0 && props.renderComments(list)}
      </div>
    </div>
  )
}

/** A text field of its own (a summary, the decision…), with the comments on selections in it beside it. */
export function Summary(props: { text: unknown; label?: string; field: string; content: ContentProps }) {
  if (props.text === undefined || props.text === null || props.text === '') return null
  const list = props.content.comments.get(`text:${props.field}`) ?? []
  const body = (
    <div class="summary">
      {props.label && <h2>{props.label}</h2>}
      <Field field={props.field} text={props.text} />
    </div>
  )
  if (list.length === 0) return body
  return (
    <div class="anchored">
      <div class="anchored-body">{body}</div>
      <div class="anchored-side">{props.content.renderComments(list)}</div>
    </div>
  )
}

const STEP_STATUS: Record<string, string> = { pending: 'Pending', in_progress: 'In progress', done: 'Done',
  skipped: 'Skipped' }

function Plan(props: ContentProps) {
  const c = props.content
  return (
    <>
      <Summary text={c.summary} field="summary" content={props} />
      <h2>Steps</h2>
      <ol class="steps">
        {arr(c.steps).map((raw, i) => {
          const s = typeof raw === 'string' ? { title: raw } : obj(raw)
          const status = str(s.status)
          return (
            <li key={i}>
              <Anchored {...props} anchorKey={`step:${i}`} button={`Comment on step ${i + 1}`} fields={`steps.${i}`}
                anchor={{ position: { kind: 'step', step: i, ...(str(s.id) ? { stepId: s.id } : {}) },
                  label: `step ${i + 1}` }}>
                <h3>{typeof raw === 'string' ? <Field field={`steps.${i}`} text={raw} inline />
                  : <Field field={`steps.${i}.title`} text={s.title ?? `Step ${i + 1}`} inline />}</h3>
                {status && <p class="step-status">{STEP_STATUS[status] ?? status}</p>}
                {s.detail !== undefined && <Field field={`steps.${i}.detail`} text={s.detail} />}
                {arr(s.files).length > 0 && (
                  <p class="files">Files: {arr(s.files).map((f, j) => <code key={j}>{String(f)}</code>)}</p>
                )}
                {arr(s.media).map((m, j) => {
                  const media = obj(m)
                  const href = safeHref(String(media.url ?? ''))
                  return <p key={j}>{href ? <a href={href} rel="noopener noreferrer nofollow" target="_blank">
                    {str(media.caption) ?? href}</a> : <span>{String(media.caption ?? media.url ?? '')}</span>}</p>
                })}
              </Anchored>
            </li>
          )
        })}
      </ol>
      {arr(c.risks).length > 0 && <Risks {...props} />}
    </>
  )
}

function Risks(props: ContentProps) {
  const list = textCommentsUnder(props.comments, 'risks')
  const body = (
    <>
      <h2>Risks</h2>
      <ul>{arr(props.content.risks).map((r, i) => <li key={i}><Field field={`risks.${i}`} text={r} inline /></li>)}</ul>
    </>
  )
  if (list.length === 0) return body
  return (
    <div class="anchored">
      <div class="anchored-body">{body}</div>
      <div class="anchored-side">{props.renderComments(list)}</div>
    </div>
  )
}

function Proof(props: ContentProps) {
  const c = props.content
  return (
    <>
      <Summary text={c.summary} field="summary" content={props} />
      <h2>Claims</h2>
      <ol class="steps">
        {arr(c.claims).map((raw, i) => {
          const claim = obj(raw)
          const verdict = claim.passed === true ? 'Passed' : claim.passed === false ? 'Failed' : 'Not checked'
          return (
            <li key={i}>
              <Anchored {...props} anchorKey={`claim:${i}`} button={`Comment on claim ${i + 1}`} fields={`claims.${i}`}
                anchor={{ position: { kind: 'claim', claim: i, ...(str(claim.id) ? { claimId: claim.id } : {}) },
                  label: `claim ${i + 1}` }}>
                <h3><Field field={`claims.${i}.statement`} text={claim.statement ?? `Claim ${i + 1}`} inline /></h3>
                <p class={`verdict verdict-${verdict.toLowerCase().replace(' ', '-')}`}>{verdict}</p>
                {claim.evidence !== undefined && <Field field={`claims.${i}.evidence`} text={claim.evidence} />}
                {str(claim.command) && <pre class="command"><code>$ {claim.command as string}</code></pre>}
                {str(claim.output) && <pre class="output"><code>{claim.output as string}</code></pre>}
              </Anchored>
            </li>
          )
        })}
      </ol>
    </>
  )
}

function Decision(props: ContentProps) {
  const c = props.content
  return (
    <>
      <Summary label="Context" text={c.context} field="context" content={props} />
      {arr(c.options).length > 0 && <h2>Options</h2>}
      <ol class="steps">
        {arr(c.options).map((raw, i) => {
          const o = obj(raw)
          return (
            <li key={i}>
              <Anchored {...props} anchorKey={`option:${i}`} button={`Comment on option ${i + 1}`}
                fields={`options.${i}`}
                anchor={{ position: { kind: 'option', option: i }, label: `option ${i + 1}` }}>
                <h3><Field field={`options.${i}.name`} text={o.name ?? `Option ${i + 1}`} inline /></h3>
                {arr(o.pros).length > 0 && <><p class="pros-label">Pros</p>
                  <ul>{arr(o.pros).map((p, j) => <li key={j}><Field field={`options.${i}.pros.${j}`} text={p} inline />
                  </li>)}</ul></>}
                {arr(o.cons).length > 0 && <><p class="cons-label">Cons</p>
                  <ul>{arr(o.cons).map((p, j) => <li key={j}><Field field={`options.${i}.cons.${j}`} text={p} inline />
                  </li>)}</ul></>}
              </Anchored>
            </li>
          )
        })}
      </ol>
      <Summary label="Decision" text={c.decision} field="decision" content={props} />
      <Summary label="Consequences" text={c.consequences} field="consequences" content={props} />
    </>
  )
}

function Research(props: ContentProps) {
  const c = props.content
  return (
    <>
      <Summary label="Question" text={c.question} field="question" content={props} />
      <Summary label="Summary" text={c.summary} field="summary" content={props} />
      {arr(c.findings).length > 0 && <h2>Findings</h2>}
      <ol class="steps">
        {arr(c.findings).map((raw, i) => {
          const f = obj(raw)
          return (
            <li key={i}>
              <Summary text={f.text} field={`findings.${i}.text`} content={props} />
              {arr(f.sources).length > 0 && (
                <ul class="sources">
                  {arr(f.sources).map((s, j) => {
                    const src = obj(s)
                    const href = safeHref(String(src.url ?? ''))
                    const name = str(src.title) ?? str(src.url) ??
                      (src.documentId ? `document ${String(src.documentId)}` : 'source')
                    return <li key={j}>{href
                      ? <a href={href} rel="noopener noreferrer nofollow" target="_blank">{name}</a> : name}</li>
                  })}
                </ul>
              )}
            </li>
          )
        })}
      </ol>
    </>
  )
}
