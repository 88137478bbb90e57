import { useEffect, useState } from 'preact/hooks'
import { describeError, isSignedOut } from '../api.js'
import { ErrorText, Link, typeText } from '../components.js'
import { watchWorkspace } from '../live.js'
import { navigate } from '../router.js'
import { useSession } from '../session.js'
import { at, Pager, pageOf, useAction, type Answer, TableWrap } from './developer-parts.js'
import { WorkflowEditor } from './workflows-editor.js'

type Workflow = Answer<'/api/v2/workflows'>['workflows'][number]
type Run = Answer<'/api/v2/workflow-runs/{runId}'>['run']
type Written = Answer<'/api/v2/artifacts/workflow/{runId}'>['data'][number]

const PAGE = 20
const RUNS_PAGE = 10
/** how often an open page asks again, while visible, when the event stream cannot be opened */
const REFRESH_MS = 3000
const STATUS_WORDS: Record<string, string> = { queued: 'Queued', running: 'Running', completed: 'Completed',
  failed: 'Failed' }
const STEP_WORDS: Record<string, string> = { llm: 'Language model', search_knowledge: 'Search knowledge',
  agent: 'Agent', post_message: 'Post a message', create_artifact: 'Create an artifact' }

function RunStatus(props: { status: string }) {
  return <span class={`run-status run-${props.status}`}>{STATUS_WORDS[props.status] ?? props.status}</span>
}

/**
 * The workflow pages: the list (`/workflows`), one workflow with its inputs form and runs, one run, and the editor
 * of a new workflow (`/workflows/new`) or of one's definition (`/workflows/<id>/edit`).
 */
export function Workflows(props: { path: string }) {
  const run = /^\/workflows\/([^/]+)\/runs\/([^/]+)$/.exec(props.path)
  if (run) return <RunPage workflowId={decodeURIComponent(run[1])} runId={decodeURIComponent(run[2])} key={run[2]} />
  if (props.path === '/workflows/new') return <WorkflowEditor key="new" />
  const edit = /^\/workflows\/([^/]+)\/edit$/.exec(props.path)
  if (edit) return <WorkflowEditor id={decodeURIComponent(edit[1])} key={edit[1]} />
  const one = /^\/workflows\/([^/]+)$/.exec(props.path)
  if (one) return <WorkflowPage id={decodeURIComponent(one[1])} key={one[1]} />
  return <WorkflowList />
}

function WorkflowList() {
  const { api, signedOut, workspace } = useSession()
  const [items, setItems] = useState<Workflow[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [page, setPage] = useState(1)
  useEffect(() => {
    api.call('/api/v2/workflows', 'get').then((r) => setItems(r.workflows), (err: unknown) => {
      if (isSignedOut(err)) signedOut()
      else setError(describeError(err))
    })
  }, [api])
  return (
    <section>
      <h1>Workflows</h1>
      <p class="lead">The workflows of {workspace.name}: open one to run it with its inputs and follow its runs.</p>
      <p><Link href="/workflows/new">New workflow</Link></p>
      <ErrorText error={error} />
      {items === null && !error && <p>Loading…</p>}
      {items !== null && items.length === 0 && (
        <p class="empty">No workflows in {workspace.name} yet. Press “New workflow” to define one here, or define it
          through the API (<code>POST /api/v2/workflows</code>, see <a href="/api/docs">the API reference</a>); it then
          appears here, ready to run.</p>
      )}
      {items !== null && items.length > 0 && (
        <>
          <ul class="artifact-list">
            {pageOf(items, page, PAGE).map((w) => (
              <li key={w.id}>
                <Link href={`/workflows/${w.id}`}>{w.name}</Link>
                <span class="meta">{w.steps.length} {w.steps.length === 1 ? 'step' : 'steps'}
                  {w.inputs.length > 0 && ` · inputs: ${w.inputs.map((i) => i.name).join(', ')}`}
                  {w.schedule && ` · runs on schedule ${w.schedule.cron}`} · changed {at(w.updated_at)}</span>
                {w.description && <span>{w.description}</span>}
              </li>
            ))}
          </ul>
          <Pager page={page} count={items.length} size={PAGE} noun="workflows" onPage={setPage} />
        </>
      )}
    </section>
  )
}

function inputText(value: unknown): string {
  if (value === undefined || value === null) return ''
  return typeof value === 'string' ? value : JSON.stringify(value)
}

function WorkflowPage(props: { id: string }) {
  const { api, signedOut, workspace, me } = useSession()
  const [workflow, setWorkflow] = useState<Workflow | null | undefined>(undefined)
  const [runs, setRuns] = useState<Run[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [values, setValues] = useState<Record<string, string>>({})
  const [page, setPage] = useState(1)
  const start = useAction(signedOut)

  useEffect(() => {
    let stopped = false
    api.call('/api/v2/workflows/{id}', 'get', { path: { id: props.id } }).then((r) => {
      if (stopped) return
      setWorkflow(r.workflow)
      setValues(Object.fromEntries(r.workflow.inputs.map((i) => [i.name, inputText(i.default)])))
    }, (err: unknown) => {
      if (stopped) return
      if (isSignedOut(err)) return signedOut()
      if (err instanceof Error && 'statusCode' in err && err.statusCode === 404) return setWorkflow(null)
      setError(describeError(err))
    })
    const loadRuns = async () => {
      try {
        const r = await api.call('/api/v2/workflows/{id}/runs', 'get',
          { path: { id: props.id }, query: { limit: 100 } })
        if (!stopped) setRuns(r.runs)
      } catch (err) {
        if (stopped) return
        if (isSignedOut(err)) return signedOut()
        if (!(err instanceof Error && 'statusCode' in err && err.statusCode === 404)) setError(describeError(err))
      }
    }
    void loadRuns()
    // runs change state as they go: the workspace event stream tells of each change
    const stop = watchWorkspace(workspace.id, { onChange: loadRuns, pollMs: REFRESH_MS,
      wants: (event, data) => event === 'workflow_run.updated' && data.workflow_id === props.id })
    return () => { stopped = true; stop() }
  }, [api, props.id, workspace.id])

  if (workflow === null) {
    return (
      <section>
        <h1>Workflow not found</h1>
        <p>No such workflow in {workspace.name}. <Link href="/workflows">See the workflows</Link>.</p>
      </section>
    )
  }
  if (workflow === undefined) return <section><ErrorText error={error} />{!error && <p>Loading…</p>}</section>

  // its creator and the workspace's owners and admins may change it (the API says so too)
  const mayEdit = workflow.created_by === me.user.id || workspace.role !== 'member'
  const submit = (event: Event) => {
    event.preventDefault()
    void start.run(async () => {
      // an empty field is left out, so that the workflow's default (or its required-input check) applies
      const inputs = Object.fromEntries(Object.entries(values).filter(([, v]) => v.trim() !== ''))
      const r = await api.call('/api/v2/workflows/{id}/execute', 'post',
        { path: { id: workflow.id }, body: { inputs } })
      navigate(`/workflows/${workflow.id}/runs/${r.run.id}`)
    })
  }
  return (
    <section>
      <p class="crumbs"><Link href="/workflows">Workflows</Link> / this workflow</p>
      <h1>{workflow.name}</h1>
      {workflow.description && <p>{workflow.description}</p>}
      {mayEdit && <p><Link href={`/workflows/${workflow.id}/edit`}>Edit workflow</Link></p>}
      <ol class="steps">
        {workflow.steps.map((s) =>
          <li key={s.id}><strong>{STEP_WORDS[s.type] ?? s.type}</strong> <code>{s.id}</code></li>)}
      </ol>
      {workflow.schedule && <p class="hint">Also runs on the schedule <code>{workflow.schedule.cron}</code>.</p>}
      <form class="panel form-grid" onSubmit={submit} aria-label={`Run ${workflow.name}`}>
        <h2>Run it</h2>
        {workflow.inputs.length === 0 && <p class="hint">This workflow takes no inputs.</p>}
        {workflow.inputs.map((i) => (
          <label key={i.name}>
            {i.name}{i.required ? ' (required)' : ''}
            <input type="text" required={!!i.required} value={values[i.name] ?? ''}
              onInput={(e) => setValues({ ...values, [i.name]: (e.target as HTMLInputElement).value })} />
          </label>
        ))}
        <ErrorText error={start.error} />
        <div><button type="submit" disabled={start.busy}>Run workflow</button></div>
      </form>
      <h2 id="runs-title">Runs</h2>
      <ErrorText error={error} />
      {runs !== null && runs.length === 0 && <p class="empty">Not run yet. Fill in its inputs above and press “Run
        workflow”.</p>}
      {runs !== null && runs.length > 0 && (
        <>
          <TableWrap label="Runs">
            <table class="grid" aria-labelledby="runs-title">
              <thead><tr><th scope="col">Run</th><th scope="col">Status</th><th scope="col">Started by</th>
                <th scope="col">Finished</th></tr></thead>
              <tbody>
                {pageOf(runs, page, RUNS_PAGE).map((r) => (
                  <tr key={r.id}>
                    <td><Link href={`/workflows/${workflow.id}/runs/${r.id}`}>{`Run of ${at(r.created_at)}`}</Link>
                    </td>
                    <td><RunStatus status={r.status} /></td>
                    <td>{r.trigger === 'schedule' ? 'the schedule' : 'a person or key'}</td>
                    <td>{at(r.finished_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
          <Pager page={page} count={runs.length} size={RUNS_PAGE} noun="runs" onPage={setPage}
            label="Pages of runs" />
        </>
      )}
    </section>
  )
}

function RunPage(props: { workflowId: string; runId: string }) {
  const { api, signedOut, workspace } = useSession()
  const [run, setRun] = useState<Run | null | undefined>(undefined)
  const [artifacts, setArtifacts] = useState<Written[]>([])
  const [error, setError] = useState<string | null>(null)

  useEffect(() => {
    let stopped = false
    const load = async () => {
      try {
        const r = (await api.call('/api/v2/workflow-runs/{runId}', 'get', { path: { runId: props.runId } })).run
        const written = await api.call('/api/v2/artifacts/workflow/{runId}', 'get', { path: { runId: props.runId } })
        if (stopped) return
        setRun(r)
        setArtifacts(written.data)
        setError(null)
      } catch (err) {
        if (stopped) return
        if (isSignedOut(err)) return signedOut()
        if (err instanceof Error && 'statusCode' in err && err.statusCode === 404) return setRun(null)
        setError(describeError(err))
      }
    }
    void load()
    const stop = watchWorkspace(workspace.id, { onChange: load, pollMs: REFRESH_MS,
      wants: (event, data) => (event === 'workflow_run.updated' && data.id === props.runId) ||
        event === 'artifact.created' })
    return () => { stopped = true; stop() }
  }, [api, props.runId, workspace.id])

  if (run === null) {
    return (
      <section>
        <h1>Run not found</h1>
        <p>No such run in {workspace.name}. <Link href="/workflows">See the workflows</Link>.</p>
      </section>
    )
  }
  if (run === undefined) return <section><ErrorText error={error} />{!error && <p>Loading…</p>}</section>
  const inputs = Object.entries(run.inputs)
  return (
    <section>
      <p class="crumbs"><Link href="/workflows">Workflows</Link> /{' '}
        <Link href={`/workflows/${run.workflow_id}`}>the workflow</Link> / this run</p>
      <h1>Run of {at(run.created_at)}</h1>
      <p role="status" aria-live="polite">Status: <RunStatus status={run.status} /></p>
      <dl class="facts">
        <div><dt>Started</dt><dd>{at(run.started_at)}</dd></div>
        <div><dt>Finished</dt><dd>{at(run.finished_at)}</dd></div>
        <div><dt>Trigger</dt><dd>{run.trigger === 'schedule' ? 'schedule' : 'on request'}</dd></div>
      </dl>
      {run.error && <p class="error">The run failed: {run.error}</p>}
      <h2>Inputs</h2>
      {inputs.length === 0 ? <p class="hint">None.</p> : (
        <dl class="facts">{inputs.map(([k, v]) => <div key={k}><dt>{k}</dt><dd>{inputText(v)}</dd></div>)}</dl>
      )}
      <h2>Steps</h2>
      {run.steps.length === 0 && <p class="hint">No step has started yet.</p>}
      <ol class="steps">
        {run.steps.map((s) => (
          <li key={s.id}>
            <strong>{STEP_WORDS[s.type] ?? s.type}</strong> <code>{s.id}</code> — <RunStatus status={s.status} />
            {s.error && <p class="error">{s.error}</p>}
            {s.output && <details><summary>Output</summary><pre>{s.output}</pre></details>}
          </li>
        ))}
      </ol>
      <h2>Artifacts written</h2>
      {artifacts.length === 0
        ? <p class="empty">{run.status === 'completed' || run.status === 'failed' ? 'This run wrote no artifacts.'
            : 'None yet: artifacts the run writes appear here.'}</p>
        : (
            <ul class="artifact-list">
              {artifacts.map((a) => (
                <li key={a.id}><Link href={`/artifacts/${a.id}`}>{a.title}</Link>
                  <span class="meta">{typeText(a.type)} · {at(a.created_at)}</span></li>
              ))}
            </ul>
          )}
    </section>
  )
}
