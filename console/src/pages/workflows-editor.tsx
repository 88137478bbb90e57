import type { ComponentChildren } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { describeError, isSignedOut } from '../api.js'
import { ErrorText, Link } from '../components.js'
import { navigate } from '../router.js'
import { useSession } from '../session.js'
import type { Answer } from './developer-parts.js'

type Workflow = Answer<'/api/v2/workflows'>['workflows'][number]
type StepType = Workflow['steps'][number]['type']
type Agent = Answer<'/api/v2/agents'>['agents'][number]
type Channel = Answer<'/api/v2/channels'>['data'][number]

const STEP_TYPES: Array<[StepType, string]> = [
  ['llm', 'Language model'], ['search_knowledge', 'Search knowledge'], ['agent', 'Agent'],
  ['post_message', 'Post a message'], ['create_artifact', 'Create an artifact']
]
const ARTIFACT_TYPES = ['task_plan', 'implementation_plan', 'walkthrough', 'verification_proof', 'decision_record',
  'plan_mode', 'code_change', 'research_summary']
const IDENT = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/

type FieldKind = 'text' | 'textarea' | 'number' | 'json' | 'agent' | 'channel' | 'artifactType'
interface FieldDef { name: string; label: string; kind: FieldKind; required: boolean; hint?: string }
const TEMPLATE_HINT = 'May name {{inputs.<name>}} and {{steps.<id>.output}} of an earlier step.'

/** The fields of each step type, as the API defines them (docs/api/assistant.md#workflows). */
const STEP_FIELDS: Record<StepType, FieldDef[]> = {
  llm: [{ name: 'prompt', label: 'Prompt', kind: 'textarea', required: true, hint: TEMPLATE_HINT }],
  search_knowledge: [{ name: 'query', label: 'Query', kind: 'text', required: true, hint: TEMPLATE_HINT },
    { name: 'limit', label: 'Passages (1–20, optional)', kind: 'number', required: false }],
  agent: [{ name: 'agentId', label: 'Agent', kind: 'agent', required: true },
    { name: 'message', label: 'Message', kind: 'textarea', required: true, hint: TEMPLATE_HINT }],
  post_message: [{ name: 'channelId', label: 'Channel', kind: 'channel', required: true },
    { name: 'content', label: 'Message', kind: 'textarea', required: true, hint: TEMPLATE_HINT }],
  create_artifact: [{ name: 'artifactType', label: 'Artifact type', kind: 'artifactType', required: true },
    { name: 'title', label: 'Title', kind: 'text', required: true, hint: TEMPLATE_HINT },
    { name: 'content', label: 'Content (JSON object, optional)', kind: 'json', required: false,
      hint: 'The artifact\'s content, e.g. {"summary": "{{steps.find.output}}"}; its strings may hold templates.' }]
}

interface InputDraft { key: number; name: string; required: boolean; default: string }
interface StepDraft { key: number; id: string; type: StepType; values: Record<string, string> }
interface Draft { name: string; description: string; inputs: InputDraft[]; steps: StepDraft[]; cron: string
  /** the values a scheduled run is given, kept as the API has them (set through the API) */
  scheduleInputs: Record<string, unknown> }
/** problems by JSON pointer into the request body (`/name`, `/inputs/0/name`, `/steps/1/query`) */
type Problems = Record<string, string>

let nextKey = 1
const newStep = (n: number): StepDraft => ({ key: nextKey++, id: `step${n}`, type: 'llm', values: {} })
const newInput = (): InputDraft => ({ key: nextKey++, name: '', required: false, default: '' })

function draftOf(w: Workflow): Draft {
  return {
    name: w.name, description: w.description, cron: w.schedule?.cron ?? '', scheduleInputs: w.schedule?.inputs ?? {},
    inputs: w.inputs.map((i) => ({ key: nextKey++, name: i.name, required: !!i.required,
      default: i.default === undefined || i.default === null ? ''
        : typeof i.default === 'string' ? i.default : JSON.stringify(i.default) })),
    steps: w.steps.map((s) => {
      const values: Record<string, string> = {}
      for (const [k, v] of Object.entries(s)) {
        if (k === 'id' || k === 'type' || v === undefined) continue
        values[k] = typeof v === 'string' ? v : typeof v === 'number' ? String(v) : JSON.stringify(v, null, 2)
      }
      return { key: nextKey++, id: s.id, type: s.type, values }
    })
  }
}

/** A step given another type: what was typed into a field of the same name and kind is kept. */
function retyped(s: StepDraft, type: StepType): Partial<StepDraft> {
  const before = new Map(STEP_FIELDS[s.type].map((f) => [f.name, f.kind]))
  const values = Object.fromEntries(STEP_FIELDS[type].filter((f) => before.get(f.name) === f.kind)
    .map((f) => [f.name, s.values[f.name] ?? '']))
  return { type, values }
}

/** The request body of the draft, or the problems found before sending it. */
function bodyOf(d: Draft): { body?: Record<string, unknown>; problems: Problems } {
  const problems: Problems = {}
  if (!d.name.trim()) problems['/name'] = 'Give the workflow a name.'
  const names = new Set<string>()
  d.inputs.forEach((i, n) => {
    if (!IDENT.test(i.name)) {
      problems[`/inputs/${n}/name`] = 'An input name starts with a letter or _ and holds letters, digits, _ and -.'
    } else if (names.has(i.name)) problems[`/inputs/${n}/name`] = `The input “${i.name}” is declared twice.`
    names.add(i.name)
  })
  if (d.steps.length === 0) problems['/steps'] = 'A workflow needs at least one step: press “Add step”.'
  const ids = new Set<string>()
  const steps = d.steps.map((s, n) => {
    if (!IDENT.test(s.id)) {
      problems[`/steps/${n}/id`] = 'A step id starts with a letter or _ and holds letters, digits, _ and -.'
    } else if (ids.has(s.id)) problems[`/steps/${n}/id`] = `The id “${s.id}” is used by an earlier step.`
    ids.add(s.id)
    const step: Record<string, unknown> = { id: s.id, type: s.type }
    for (const f of STEP_FIELDS[s.type]) {
      const raw = s.values[f.name] ?? ''
      const where = `/steps/${n}/${f.name}`
      if (!raw.trim()) {
        if (f.required) problems[where] = `${f.label} is needed.`
        continue
      }
      if (f.kind === 'number') {
        const value = Number(raw)
        if (!Number.isInteger(value) || value < 1 || value > 20) problems[where] = 'A whole number from 1 to 20.'
        step[f.name] = value
      } else if (f.kind === 'json') {
        try {
          const value: unknown = JSON.parse(raw)
          if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object')
          step[f.name] = value
        } catch {
          problems[where] = 'Not a JSON object: write it as {"name": "value", …}.'
        }
      } else step[f.name] = raw
    }
    return step
  })
  const cron = d.cron.trim()
  if (cron) {
    // a scheduled run has nobody to ask: each required input needs a value from the schedule or a default
    const unfilled = d.inputs.filter((i) => i.required && i.default === '' && d.scheduleInputs[i.name] === undefined)
    if (unfilled.length) {
      problems['/schedule/cron'] = `A scheduled run has nobody to ask for ${unfilled.map((i) => `“${i.name}”`)
        .join(', ')}: give ${unfilled.length === 1 ? 'it' : 'them'} a default, or leave the schedule empty.`
    }
  }
  if (Object.keys(problems).length > 0) return { problems }
  const inputs = d.inputs.map((i) => ({ name: i.name, ...(i.required ? { required: true } : {}),
    ...(i.default !== '' ? { default: i.default } : {}) }))
  return { problems, body: { name: d.name.trim(), description: d.description, inputs, steps,
    schedule: cron ? { cron, inputs: d.scheduleInputs } : null } }
}

/** The API's refusal, by field: a workflow's problems carry their field; a schema error names it in its message. */
function problemsOfError(err: unknown): Problems | null {
  const body = (err as { body?: { problems?: Array<{ field: string; message: string }>; message?: string } })?.body
  // beside its field, a problem needs no "step 2 ("find"): query:" in front of it
  const plain = (m: string) => {
    const rest = m.replace(/^step (?:\d+(?: \("[^"]*"\))?|"[^"]*"): (?:[\w.[\]]+: (?=\{\{))?/, '')
      .replace(/^schedule\.cron: /, '')
    return rest.charAt(0).toUpperCase() + rest.slice(1)
  }
  if (body?.problems?.length) return Object.fromEntries(body.problems.map((p) => [p.field, plain(p.message)]))
  const m = /^body(\/\S*)\s+(.*)$/.exec(body?.message ?? '')
  if (m) return { [m[1] || '/']: m[2] }
  return null
}

/** The id of the element that shows a field (a problem's pointer, made an id). */
const fieldId = (pointer: string) => `wf${pointer.replace(/\//g, '-')}`

/** A new workflow (`existing` absent) or the definition of one, replaced as a whole when saved. */
export function WorkflowEditor(props: { id?: string }) {
  const { api, signedOut, workspace } = useSession()
  const [draft, setDraft] = useState<Draft | null>(props.id ? null : { name: '', description: '', inputs: [],
    steps: [newStep(1)], cron: '', scheduleInputs: {} })
  const [existing, setExisting] = useState<Workflow | null | undefined>(props.id ? undefined : null)
  const [problems, setProblems] = useState<Problems>({})
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [agents, setAgents] = useState<Agent[]>([])
  const [channels, setChannels] = useState<Channel[]>([])
  const focusFirst = useRef(false)

  useEffect(() => {
    const failed = (err: unknown) => {
      if (isSignedOut(err)) return signedOut()
      setError(describeError(err))
    }
    if (props.id) {
      api.call('/api/v2/workflows/{id}', 'get', { path: { id: props.id } }).then((r) => {
        setExisting(r.workflow)
        setDraft(draftOf(r.workflow))
      }, (err: unknown) => {
        if (err instanceof Error && 'statusCode' in err && err.statusCode === 404) return setExisting(null)
        failed(err)
      })
    }
    api.call('/api/v2/agents', 'get').then((r) => setAgents(r.agents), failed)
    api.call('/api/v2/channels', 'get').then((r) => setChannels(r.data), failed)
  }, [api, props.id])

  // after a refused save, the first field with a problem takes the focus
  useEffect(() => {
    if (!focusFirst.current) return
    focusFirst.current = false
    const first = document.querySelector<HTMLElement>('.editor [aria-invalid="true"], .editor .form-problems')
    first?.focus()
  })

  if (props.id && existing === null && !error) {
    return (
      <section>
        <h1>Workflow not found</h1>
        <p>No such workflow in {workspace.name}. <Link href="/workflows">See the workflows</Link>.</p>
      </section>
    )
  }
  if (!draft) return <section><ErrorText error={error} />{!error && <p>Loading…</p>}</section>

  const change = (next: Partial<Draft>) => setDraft({ ...draft, ...next })
  const setInput = (n: number, patch: Partial<InputDraft>) =>
    change({ inputs: draft.inputs.map((i, k) => k === n ? { ...i, ...patch } : i) })
  const setStep = (n: number, patch: Partial<StepDraft>) =>
    change({ steps: draft.steps.map((s, k) => k === n ? { ...s, ...patch } : s) })
  const moveStep = (n: number, by: number) => {
    const steps = [...draft.steps]
    const [s] = steps.splice(n, 1)
    steps.splice(n + by, 0, s)
    change({ steps })
  }

  const save = async (event: Event) => {
    event.preventDefault()
    setError(null)
    const { body, problems: found } = bodyOf(draft)
    setProblems(found)
    if (!body) {
      focusFirst.current = true
      return
    }
    setBusy(true)
    try {
      const saved = existing
        ? await api.call('/api/v2/workflows/{id}', 'put', { path: { id: existing.id }, body: body as never })
        : await api.call('/api/v2/workflows', 'post', { body: body as never })
      navigate(`/workflows/${saved.workflow.id}`)
    } catch (err) {
      if (isSignedOut(err)) return signedOut()
      const byField = problemsOfError(err)
      if (byField) {
        setProblems(byField)
        focusFirst.current = true
      } else setError(describeError(err))
    } finally {
      setBusy(false)
    }
  }

  // the problems no field on the form shows are listed above the Save button
  const shown = new Set(['/name', '/description', '/steps', '/schedule/cron',
    ...draft.inputs.flatMap((_i, n) => [`/inputs/${n}/name`, `/inputs/${n}/default`]),
    ...draft.steps.flatMap((s, n) => [`/steps/${n}/id`, `/steps/${n}/type`,
      ...STEP_FIELDS[s.type].map((f) => `/steps/${n}/${f.name}`)])])
  const elsewhere = Object.entries(problems).filter(([p]) => !shown.has(p)).map(([, m]) => m)

  const title = existing ? `Edit ${existing.name}` : 'New workflow'
  return (
    <section class="editor">
      <p class="crumbs"><Link href="/workflows">Workflows</Link> /{' '}
        {existing ? <><Link href={`/workflows/${existing.id}`}>{existing.name}</Link> / edit</> : 'new'}</p>
      <h1>{title}</h1>
      <p class="lead">{existing ? 'Saving replaces the whole definition; runs already made keep theirs.'
        : `A workflow of ${workspace.name}: named inputs asked for when it runs, then its steps, one after another.`}
      </p>
      <form class="form-grid" onSubmit={save} noValidate aria-label={title}>
        <Field pointer="/name" label="Name" problems={problems}>
          {(a) => <input type="text" {...a} maxLength={200} value={draft.name}
            onInput={(e) => change({ name: (e.target as HTMLInputElement).value })} />}
        </Field>
        <Field pointer="/description" label="Description (optional)" problems={problems}>
          {(a) => <textarea {...a} rows={2} maxLength={2000} value={draft.description}
            onInput={(e) => change({ description: (e.target as HTMLTextAreaElement).value })} />}
        </Field>

        <fieldset>
          <legend>Inputs</legend>
          {draft.inputs.length === 0 && <p class="hint">No inputs: the workflow runs without asking for anything.
            Add one to ask for a value, named in steps as {'{{inputs.<name>}}'}.</p>}
          {draft.inputs.map((i, n) => (
            <div class="editor-row" key={i.key} role="group" aria-label={`Input ${n + 1}`}>
              <Field pointer={`/inputs/${n}/name`} label={`Name of input ${n + 1}`} problems={problems}>
                {(a) => <input type="text" {...a} maxLength={64} value={i.name}
                  onInput={(e) => setInput(n, { name: (e.target as HTMLInputElement).value })} />}
              </Field>
              <Field pointer={`/inputs/${n}/default`} label={`Default of input ${n + 1} (optional)`}
                problems={problems}>
                {(a) => <input type="text" {...a} value={i.default}
                  onInput={(e) => setInput(n, { default: (e.target as HTMLInputElement).value })} />}
              </Field>
              <label class="check">
                <input type="checkbox" checked={i.required}
                  onChange={(e) => setInput(n, { required: (e.target as HTMLInputElement).checked })} />
                Required
              </label>
              <button type="button" onClick={() => change({ inputs: draft.inputs.filter((_x, k) => k !== n) })}>
                Remove input {n + 1}</button>
            </div>
          ))}
          <div><button type="button" onClick={() => change({ inputs: [...draft.inputs, newInput()] })}>Add input
          </button></div>
        </fieldset>

        <fieldset>
          <legend>Steps</legend>
          {problems['/steps'] && <p class="error" id={fieldId('/steps')} role="alert">{problems['/steps']}</p>}
          <ol class="editor-steps">
            {draft.steps.map((s, n) => (
              <li key={s.key}>
                <fieldset>
                  <legend>Step {n + 1}</legend>
                  <div class="editor-row">
                    <Field pointer={`/steps/${n}/id`} label={`Id of step ${n + 1}`} problems={problems}>
                      {(a) => <input type="text" {...a} maxLength={64} value={s.id}
                        onInput={(e) => setStep(n, { id: (e.target as HTMLInputElement).value })} />}
                    </Field>
                    <Field pointer={`/steps/${n}/type`} label={`Type of step ${n + 1}`} problems={problems}>
                      {(a) => (
                        <select {...a} value={s.type}
                          onChange={(e) => setStep(n, retyped(s, (e.target as HTMLSelectElement).value as StepType))}>
                          {STEP_TYPES.map(([t, words]) => <option key={t} value={t}>{words}</option>)}
                        </select>
                      )}
                    </Field>
                  </div>
                  {STEP_FIELDS[s.type].map((f) => (
                    <Field key={f.name} pointer={`/steps/${n}/${f.name}`} label={`${f.label} of step ${n + 1}`}
                      problems={problems} hint={f.hint}>
                      {(a) => <StepInput field={f} attrs={a} value={s.values[f.name] ?? ''} agents={agents}
                        channels={channels} onValue={(v) => setStep(n, { values: { ...s.values, [f.name]: v } })} />}
                    </Field>
                  ))}
                  <div class="actions">
                    <button type="button" disabled={n === 0} onClick={() => moveStep(n, -1)}>
                      Move step {n + 1} up</button>
                    <button type="button" disabled={n === draft.steps.length - 1} onClick={() => moveStep(n, 1)}>
                      Move step {n + 1} down</button>
                    <button type="button" onClick={() => change({ steps: draft.steps.filter((_x, k) => k !== n) })}>
                      Remove step {n + 1}</button>
                  </div>
                </fieldset>
              </li>
            ))}
          </ol>
          <div><button type="button" onClick={() => change({ steps: [...draft.steps,
            newStep(draft.steps.length + 1)] })}>Add step</button></div>
        </fieldset>

        <Field pointer="/schedule/cron" label="Schedule (cron, optional)" problems={problems}
          hint={'Also run it on a schedule, e.g. 0 9 * * 1 for Mondays at 09:00 (the server\'s time zone); ' +
            'leave it empty to run the workflow only by hand.'}>
          {(a) => <input type="text" {...a} maxLength={100} value={draft.cron} class="code"
            onInput={(e) => change({ cron: (e.target as HTMLInputElement).value })} />}
        </Field>

        {elsewhere.length > 0 && (
          <div class="form-problems error" role="alert" tabIndex={-1}>
            <p>The workflow was not saved:</p>
            <ul>{elsewhere.map((m) => <li key={m}>{m}</li>)}</ul>
          </div>
        )}
        <ErrorText error={error} />
        <div class="actions">
          <button type="submit" disabled={busy}>{existing ? 'Save workflow' : 'Create workflow'}</button>
          <Link href={existing ? `/workflows/${existing.id}` : '/workflows'}>Cancel</Link>
        </div>
      </form>
    </section>
  )
}

interface FieldAttrs { id: string; 'aria-invalid'?: 'true'; 'aria-describedby'?: string }

/** A labelled field with its hint, and its problem in words right below it. */
function Field(props: { pointer: string; label: string; problems: Problems; hint?: string
  children: (attrs: FieldAttrs) => ComponentChildren }) {
  const id = fieldId(props.pointer)
  const problem = props.problems[props.pointer]
  const described = [props.hint ? `${id}-hint` : '', problem ? `${id}-problem` : ''].filter(Boolean).join(' ')
  return (
    <div class="editor-field">
      <label for={id}>{props.label}</label>
      {props.children({ id, ...(problem ? { 'aria-invalid': 'true' as const } : {}),
        ...(described ? { 'aria-describedby': described } : {}) })}
      {props.hint && <p class="hint" id={`${id}-hint`}>{props.hint}</p>}
      {problem && <p class="error" id={`${id}-problem`}>{problem}</p>}
    </div>
  )
}

function StepInput(props: { field: FieldDef; attrs: FieldAttrs; value: string; agents: Agent[]; channels: Channel[]
  onValue(v: string): void }) {
  const { field, attrs, value } = props
  const onInput = (e: Event) => props.onValue((e.target as HTMLInputElement).value)
  switch (field.kind) {
    case 'textarea': return <textarea {...attrs} rows={3} value={value} onInput={onInput} />
    case 'json': return <textarea {...attrs} rows={4} class="code" value={value} onInput={onInput} />
    case 'number': return <input type="number" {...attrs} min={1} max={20} step={1} value={value} onInput={onInput} />
    case 'artifactType':
      return (
        <select {...attrs} value={value} onChange={onInput}>
          <option value="">Choose a type</option>
          {ARTIFACT_TYPES.map((t) => <option key={t} value={t}>{t.replace(/_/g, ' ')}</option>)}
        </select>
      )
    case 'agent':
      return (
        <select {...attrs} value={value} onChange={onInput}>
          <option value="">{props.agents.length ? 'Choose an agent' : 'No agents yet'}</option>
          {props.agents.map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
          {value && !props.agents.some((a) => a.id === value) && <option value={value}>{value}</option>}
        </select>
      )
    case 'channel':
      return (
        <select {...attrs} value={value} onChange={onInput}>
          <option value="">{props.channels.length ? 'Choose a channel' : 'No channels yet'}</option>
          {props.channels.map((c) => <option key={c.id} value={c.id}>#{c.name}</option>)}
          {value && !props.channels.some((c) => c.id === value) && <option value={value}>{value}</option>}
        </select>
      )
    default: return <input type="text" {...attrs} value={value} onInput={onInput} />
  }
}
