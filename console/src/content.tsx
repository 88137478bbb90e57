import type { ComponentChildren } from 'preact'
import type { ArtifactComment } from './api.js'
import { highlight } from './highlight.js'
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
const arr = (v: unknown): unknown[] => Array.isArray(v) ? v : []
const obj = (v: unknown): Record<string, unknown> => v && typeof v === 'object' && !Array.isArray(v)
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
function Summary(props: { text: unknown; label?: string; field: string; content: ContentProps }) {
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

interface DiffLine { kind: 'add' | 'del' | 'ctx' | 'hunk' | 'meta'; text: string; old?: number; new?: number }
interface DiffFile { path: string; lines: DiffLine[] }

/**
 * A unified diff, file by file, each line with its old and new line numbers. Inside a hunk the header's counts
 * say which lines are content, so a removed line that reads "-- x" is not taken for a file header.
 */
export function parseDiff(diff: string): DiffFile[] {
  const files: DiffFile[] = []
  let file: DiffFile | undefined
  let oldNo = 0
  let newNo = 0
  let oldLeft = 0
  let newLeft = 0
  const start = (path: string) => { file = { path, lines: [] }; files.push(file); return file }
  for (const line of diff.replace(/\r\n?/g, '\n').split('\n')) {
    if (oldLeft > 0 || newLeft > 0) {
      const f = file ?? start('')
      if (line.startsWith('+')) {
        f.lines.push({ kind: 'add', text: line.slice(1), new: newNo++ })
        newLeft--
        continue
      }
      if (line.startsWith('-')) {
        f.lines.push({ kind: 'del', text: line.slice(1), old: oldNo++ })
        oldLeft--
        continue
      }
      if (line.startsWith(' ') || line === '') {
        f.lines.push({ kind: 'ctx', text: line.slice(1), old: oldNo++, new: newNo++ })
        oldLeft--
        newLeft--
        continue
      }
      if (line.startsWith('\\')) continue // "\ No newline at end of file"
      oldLeft = newLeft = 0
    }
    if (line.startsWith('diff --git')) start(/ b\/(.+)$/.exec(line)?.[1] ?? '')
    else if (line.startsWith('--- ')) {
      if (!file || file.lines.length > 0) start('')
    } else if (line.startsWith('+++ ')) (file ?? start('')).path = line.slice(4).replace(/^b\//, '').trim()
    else if (line.startsWith('@@')) {
      const m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line)
      oldNo = m ? Number(m[1]) : 0
      newNo = m ? Number(m[3]) : 0
      oldLeft = m ? Number(m[2] ?? 1) : 0
      newLeft = m ? Number(m[4] ?? 1) : 0
      ;(file ?? start('')).lines.push({ kind: 'hunk', text: line })
    }
  }
  return files
}

function CodeChange(props: ContentProps) {
  const c = props.content
  const files = parseDiff(String(c.diff))
  return (
    <>
      <Summary text={c.summary} field="summary" content={props} />
      {arr(c.files).length > 0 && (
        <ul class="file-stats">{arr(c.files).map((raw, i) => {
          const f = obj(raw)
          return <li key={i}><code>{String(f.path ?? '')}</code>{' '}
            <span class="add">+{Number(f.additions ?? 0)}</span>{' '}
            <span class="del">−{Number(f.deletions ?? 0)}</span></li>
        })}</ul>
      )}
      {files.map((file, fi) => (
        <div class="diff-file" key={fi}>
          <h2 class="diff-path">{file.path || 'Diff'}</h2>
          <table class="diff">
            <thead class="visually-hidden">
              <tr><th>Old line</th><th>New line</th><th>Change</th><th>Comments</th></tr>
            </thead>
            <tbody>
              {file.lines.filter((l) => l.kind !== 'meta').map((l, i) => {
                const key = l.new !== undefined ? `line:${file.path}:${l.new}` : undefined
                const list = key ? props.comments.get(key) ?? [] : []
                return (
                  <tr key={i} class={`diff-${l.kind}`}>
                    <td class="ln">{l.old ?? ''}</td>
                    <td class="ln">{l.new ?? ''}</td>
                    <td class="code"><span class="sign">{l.kind === 'add' ? '+' : l.kind === 'del' ? '−' : ' '}</span>
                      {l.kind === 'hunk' ? l.text : highlight(l.text)}</td>
                    <td class="line-side">
                      {l.new !== undefined && (
                        <button type="button" class="line-button" onClick={() => props.onCommentOn({
                          position: { kind: 'line', path: file.path, line: l.new, side: 'new' },
                          label: `line ${l.new} of ${file.path}`
                        })}>
                          <span class="visually-hidden">Comment on line {l.new}</span>
                          <span aria-hidden="true">+</span>
                        </button>
                      )}
                      {list.length > 0 && props.renderComments(list)}
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      ))}
    </>
  )
}
