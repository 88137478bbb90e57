import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { randomUUID } from 'node:crypto'
import { Cron } from 'croner'
import { errors, SuccessMessage, Uuid } from '../../schema/api/common.js'
import { requirePrincipal, requireWorkspaceContext, type Principal } from '../../src/auth/plugin.js'
import { badRequest, notFound } from '../../src/http/errors.js'
import { nowIso } from '../../src/db/index.js'
import type { ToolName } from '../../src/ai/assistant.js'
import type { ArtifactType } from '../../schema/api/artifacts.js'
import { definitionProblems, fill, resolveInputs, type InputDef, type Step } from './definition.js'

interface WorkflowRow {
  id: string; customer_id: string; workspace_id: string; created_by: string; name: string; description: string
  inputs: string; steps: string; schedule_cron: string | null; schedule_inputs: string | null; created_at: string; updated_at: string
}
interface RunRow {
  id: string; workflow_id: string; workspace_id: string; customer_id: string; started_by: string; trigger: string; status: string
  inputs: string; outputs: string | null; steps: string; error: string | null; created_at: string; started_at: string | null; finished_at: string | null
}
interface StepState { id: string; type: string; status: 'running' | 'completed' | 'failed'; output?: string; error?: string; started_at: string; finished_at?: string }

const toWorkflow = (w: WorkflowRow) => ({
  id: w.id, name: w.name, description: w.description, workspace_id: w.workspace_id, inputs: JSON.parse(w.inputs) as InputDef[],
  steps: JSON.parse(w.steps) as Step[],
  schedule: w.schedule_cron ? { cron: w.schedule_cron, inputs: JSON.parse(w.schedule_inputs ?? '{}') as Record<string, unknown> } : null,
  created_by: w.created_by, created_at: w.created_at, updated_at: w.updated_at
})
const toRun = (r: RunRow) => ({
  id: r.id, workflow_id: r.workflow_id, status: r.status, trigger: r.trigger, inputs: JSON.parse(r.inputs) as Record<string, unknown>,
  outputs: r.outputs ? JSON.parse(r.outputs) as Record<string, string> : null, steps: JSON.parse(r.steps) as StepState[],
  error: r.error, created_at: r.created_at, started_at: r.started_at, finished_at: r.finished_at
})

const StepSchema = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), type: Type.String() }, { additionalProperties: true })
const DefinitionBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  inputs: Type.Optional(Type.Array(Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }), required: Type.Optional(Type.Boolean()), default: Type.Optional(Type.Unknown()) }), { maxItems: 50 })),
  steps: Type.Array(StepSchema, { minItems: 1, maxItems: 50 }),
  schedule: Type.Optional(Type.Union([Type.Null(), Type.Object({ cron: Type.String({ minLength: 1, maxLength: 100 }), inputs: Type.Optional(Type.Object({}, { additionalProperties: true })) })]))
})
const WorkflowSchema = Type.Object({}, { additionalProperties: true })
const RunSchema = Type.Object({}, { additionalProperties: true })
const WsQuery = Type.Object({ workspaceId: Type.Optional(Type.String()) })

/** Workflows of a workspace (SPEC.md, CONTRACT.md §9): definitions, runs on the job queue, cron schedules. */
const workflowsPlugin: FastifyPluginAsyncTypebox = async (app) => {
  const sqlite = app.sqlite
  const assistant = app.assistant
  const channels = app.channelStore
  const artifacts = app.artifactStore
  const tags = ['workflows']
  const one = sqlite.prepare(`SELECT * FROM workflows WHERE id = ? AND workspace_id = ? AND customer_id = ?`)
  const byId = sqlite.prepare(`SELECT * FROM workflows WHERE id = ?`)
  const list = sqlite.prepare(`SELECT * FROM workflows WHERE workspace_id = ? AND customer_id = ? ORDER BY created_at DESC, id DESC`)
  const scheduled = sqlite.prepare(`SELECT * FROM workflows WHERE schedule_cron IS NOT NULL`)
  const insertRun = sqlite.prepare(`INSERT INTO workflow_runs (id, workflow_id, workspace_id, customer_id, started_by, trigger, status, inputs, steps, created_at)
    VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, '[]', ?)`)
  const runById = sqlite.prepare(`SELECT * FROM workflow_runs WHERE id = ?`)
  const runsOf = sqlite.prepare(`SELECT * FROM workflow_runs WHERE workflow_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`)
  const userById = sqlite.prepare(`SELECT id, customer_id, org_role, email, name FROM users WHERE id = ?`)
  const agentById = sqlite.prepare(`SELECT * FROM agents WHERE id = ? AND customer_id = ?`)
  const crons = new Map<string, Cron>()

  function scopeOf(request: FastifyRequest) {
    const p = requirePrincipal(request)
    const ws = requireWorkspaceContext(request, (request.query as { workspaceId?: string } | undefined)?.workspaceId)
    return { p, workspaceId: ws.id }
  }

  /** Definition problems, including references to agents and channels the creator cannot use. */
  function validate(p: Principal, workspaceId: string, body: { inputs?: InputDef[]; steps: Array<Record<string, unknown>>; schedule?: { cron: string } | null }) {
    const problems = definitionProblems(body.inputs ?? [], body.steps, body.schedule?.cron)
    for (const s of body.steps) {
      if (s.type === 'agent' && typeof s.agentId === 'string' && !agentById.get(s.agentId, p.customerId)) problems.push(`step "${String(s.id)}": agent ${s.agentId} not found`)
      if (s.type === 'post_message' && typeof s.channelId === 'string') {
        const ch = channels.find(p, s.channelId)
        if (!ch || ch.workspaceId !== workspaceId) problems.push(`step "${String(s.id)}": channel ${s.channelId} not found in this workspace`)
      }
    }
    if (problems.length) throw badRequest(`Invalid workflow: ${problems.join('; ')}`, 'INVALID_WORKFLOW')
  }

  function schedule(w: WorkflowRow) {
    crons.get(w.id)?.stop()
    crons.delete(w.id)
    if (!w.schedule_cron) return
    crons.set(w.id, new Cron(w.schedule_cron, { protect: true }, () => {
      const current = byId.get(w.id) as WorkflowRow | undefined
      if (!current?.schedule_cron) return
      const { inputs, missing } = resolveInputs(JSON.parse(current.inputs), JSON.parse(current.schedule_inputs ?? '{}'))
      if (missing.length) { app.log.warn({ workflowId: w.id, missing }, 'scheduled run skipped: required inputs missing'); return }
      startRun(current, current.created_by, 'schedule', inputs)
    }))
  }

  function startRun(w: WorkflowRow, userId: string, trigger: 'api' | 'schedule', inputs: Record<string, unknown>) {
    const id = randomUUID()
    insertRun.run(id, w.id, w.workspace_id, w.customer_id, userId, trigger, JSON.stringify(inputs), nowIso())
    app.jobs.enqueue('workflow.run', { runId: id })
    return id
  }

  async function execute(step: Step, run: RunRow, wf: WorkflowRow, principal: Principal, inputs: Record<string, unknown>, outputs: Record<string, string>, signal: AbortSignal): Promise<string> {
    const reader = assistant.readerFor(principal, run.workspace_id)
    const t = (s: string) => fill(s, inputs, outputs)
    switch (step.type) {
      case 'llm':
        return (await assistant.modelFor(reader).complete([{ role: 'user', content: t(step.prompt) }], { signal })).content
      case 'search_knowledge':
        return (await assistant.searchKnowledge(reader, t(step.query), step.limit ?? 5)).map((h) => h.chunk.text).join('\n\n')
      case 'agent': {
        const agent = agentById.get(step.agentId, principal.customerId) as { id: string; system_prompt: string; tools: string } | undefined
        if (!agent) throw new Error(`agent ${step.agentId} no longer exists`)
        return (await assistant.converse({ principal, reader, message: t(step.message), agentId: agent.id, systemPrompt: agent.system_prompt, tools: JSON.parse(agent.tools) as ToolName[], signal })).reply
      }
      case 'post_message': {
        const ch = channels.find(principal, step.channelId)
        if (!ch) throw new Error(`channel ${step.channelId} is not available`)
        return channels.post(ch, { senderId: principal.userId, content: t(step.content) }).id
      }
      case 'create_artifact':
        return artifacts.create({ customerId: principal.customerId, workspaceId: run.workspace_id, userId: principal.userId }, {
          type: step.artifactType as ArtifactType, title: t(step.title), content: step.content ?? {}, workflow_id: wf.id, workflow_run_id: run.id
        }).id
    }
  }

  app.jobs.register('workflow.run', async (payload, ctx) => {
    const run = runById.get((payload as { runId: string }).runId) as RunRow | undefined
    if (!run || run.status === 'completed' || run.status === 'failed') return
    const save = (fields: Partial<Record<'status' | 'outputs' | 'steps' | 'error' | 'started_at' | 'finished_at', string | null>>) => {
      const keys = Object.keys(fields)
      sqlite.prepare(`UPDATE workflow_runs SET ${keys.map((k) => `${k} = @${k}`).join(', ')} WHERE id = @id`).run({ ...fields, id: run.id })
    }
    const startedAt = run.started_at ?? nowIso()
    save({ status: 'running', started_at: startedAt, steps: '[]' })
    const wf = byId.get(run.workflow_id) as WorkflowRow | undefined
    const user = userById.get(run.started_by) as { id: string; customer_id: string; org_role: Principal['orgRole']; email: string; name: string } | undefined
    if (!wf || !user) { save({ status: 'failed', error: 'The workflow or its user no longer exists', finished_at: nowIso() }); return }
    const principal: Principal = { kind: 'jwt', userId: user.id, customerId: user.customer_id, orgRole: user.org_role, email: user.email, name: user.name }
    const inputs = JSON.parse(run.inputs) as Record<string, unknown>
    const outputs: Record<string, string> = {}
    const states: StepState[] = []
    for (const step of JSON.parse(wf.steps) as Step[]) {
      const state: StepState = { id: step.id, type: step.type, status: 'running', started_at: nowIso() }
      states.push(state)
      save({ steps: JSON.stringify(states) })
      try {
        state.output = await execute(step, run, wf, principal, inputs, outputs, ctx.signal)
        outputs[step.id] = state.output
        state.status = 'completed'
        state.finished_at = nowIso()
      } catch (err) {
        if (ctx.signal.aborted) throw err
        state.status = 'failed'
        state.error = (err as Error).message
        state.finished_at = nowIso()
        save({ status: 'failed', steps: JSON.stringify(states), error: `Step "${step.id}" failed: ${state.error}`, finished_at: state.finished_at })
        return
      }
    }
    const finishedAt = nowIso()
    // the run's completion and its event (an outbox row) commit together
    sqlite.transaction(() => {
      save({ status: 'completed', steps: JSON.stringify(states), outputs: JSON.stringify(outputs), finished_at: finishedAt })
      // SPEC.md: the payload never carries the run's inputs or outputs
      app.events.emit(run.workspace_id, 'workflow.completed', {
        workspace_id: run.workspace_id, run_id: run.id, workflow_id: wf.id, workflow_name: wf.name, status: 'completed',
        started_at: startedAt, finished_at: finishedAt, duration_ms: Date.parse(finishedAt) - Date.parse(startedAt)
      })
    })()
  }, { maxAttempts: 2, concurrency: 2 })

  app.addHook('onReady', async () => { for (const w of scheduled.all() as WorkflowRow[]) schedule(w) })
  app.addHook('preClose', async () => { for (const c of crons.values()) c.stop(); crons.clear() })

  app.post('/workflows', {
    schema: { tags, summary: 'Define a workflow', querystring: WsQuery, body: DefinitionBody, response: { 201: Type.Object({ success: Type.Literal(true), workflow: WorkflowSchema }), ...errors(403) } }
  }, async (request, reply) => {
    const { p, workspaceId } = scopeOf(request)
    const b = request.body
    validate(p, workspaceId, b)
    const id = randomUUID()
    const now = nowIso()
    sqlite.prepare(`INSERT INTO workflows (id, customer_id, workspace_id, created_by, name, description, inputs, steps, schedule_cron, schedule_inputs, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(id, p.customerId, workspaceId, p.userId, b.name.trim(), b.description ?? '', JSON.stringify(b.inputs ?? []),
      JSON.stringify(b.steps), b.schedule?.cron ?? null, b.schedule ? JSON.stringify(b.schedule.inputs ?? {}) : null, now, now)
    const row = byId.get(id) as WorkflowRow
    schedule(row)
    reply.code(201)
    return { success: true as const, workflow: toWorkflow(row) }
  })

  app.get('/workflows', {
    schema: { tags, summary: 'Workflows of the workspace', querystring: WsQuery, response: { 200: Type.Object({ success: Type.Literal(true), workflows: Type.Array(WorkflowSchema) }), ...errors(403) } }
  }, async (request) => {
    const { p, workspaceId } = scopeOf(request)
    return { success: true as const, workflows: (list.all(workspaceId, p.customerId) as WorkflowRow[]).map(toWorkflow) }
  })

  const findOwn = (request: FastifyRequest, id: string) => {
    const { p, workspaceId } = scopeOf(request)
    const w = one.get(id, workspaceId, p.customerId) as WorkflowRow | undefined
    if (!w) throw notFound('Workflow not found')
    return { p, workspaceId, w }
  }
  const Params = Type.Object({ id: Uuid })

  app.get('/workflows/:id', {
    schema: { tags, summary: 'One workflow', params: Params, querystring: WsQuery, response: { 200: Type.Object({ success: Type.Literal(true), workflow: WorkflowSchema }), ...errors(403, 404) } }
  }, async (request) => ({ success: true as const, workflow: toWorkflow(findOwn(request, request.params.id).w) }))

  app.put('/workflows/:id', {
    schema: { tags, summary: 'Replace a workflow\'s definition', params: Params, querystring: WsQuery, body: DefinitionBody, response: { 200: Type.Object({ success: Type.Literal(true), workflow: WorkflowSchema }), ...errors(403, 404) } }
  }, async (request) => {
    const { p, workspaceId, w } = findOwn(request, request.params.id)
    const b = request.body
    validate(p, workspaceId, b)
    sqlite.prepare(`UPDATE workflows SET name = ?, description = ?, inputs = ?, steps = ?, schedule_cron = ?, schedule_inputs = ?, updated_at = ? WHERE id = ?`)
      .run(b.name.trim(), b.description ?? '', JSON.stringify(b.inputs ?? []), JSON.stringify(b.steps), b.schedule?.cron ?? null,
        b.schedule ? JSON.stringify(b.schedule.inputs ?? {}) : null, nowIso(), w.id)
    const row = byId.get(w.id) as WorkflowRow
    schedule(row)
    return { success: true as const, workflow: toWorkflow(row) }
  })

  app.delete('/workflows/:id', {
    schema: { tags, summary: 'Delete a workflow and its runs', params: Params, querystring: WsQuery, response: { 200: SuccessMessage, ...errors(403, 404) } }
  }, async (request) => {
    const { w } = findOwn(request, request.params.id)
    crons.get(w.id)?.stop()
    crons.delete(w.id)
    sqlite.prepare(`DELETE FROM workflows WHERE id = ?`).run(w.id)
    return { success: true as const, message: 'Workflow deleted' }
  })

  app.post('/workflows/:id/execute', {
    schema: {
      tags, summary: 'Run a workflow with input variables (202; the run goes on in the background)', params: Params, querystring: WsQuery,
      body: Type.Optional(Type.Object({ inputs: Type.Optional(Type.Object({}, { additionalProperties: true })) })),
      response: { 202: Type.Object({ success: Type.Literal(true), run: Type.Object({ id: Uuid, status: Type.String() }) }), ...errors(403, 404) }
    }
  }, async (request, reply) => {
    const { p, w } = findOwn(request, request.params.id)
    const { inputs, missing } = resolveInputs(JSON.parse(w.inputs), request.body?.inputs ?? {})
    if (missing.length) throw badRequest(`Missing required input(s): ${missing.join(', ')}`, 'MISSING_INPUT')
    const id = startRun(w, p.userId, 'api', inputs)
    reply.code(202)
    return { success: true as const, run: { id, status: 'queued' } }
  })

  app.get('/workflows/:id/runs', {
    schema: {
      tags, summary: 'Runs of a workflow, newest first', params: Params,
      querystring: Type.Object({ workspaceId: Type.Optional(Type.String()), limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }) }),
      response: { 200: Type.Object({ success: Type.Literal(true), runs: Type.Array(RunSchema) }), ...errors(403, 404) }
    }
  }, async (request) => {
    const { w } = findOwn(request, request.params.id)
    return { success: true as const, runs: (runsOf.all(w.id, request.query.limit) as RunRow[]).map(toRun) }
  })

  app.get('/workflow-runs/:runId', {
    schema: { tags, summary: 'One run with its steps', params: Type.Object({ runId: Uuid }), querystring: WsQuery, response: { 200: Type.Object({ success: Type.Literal(true), run: RunSchema }), ...errors(403, 404) } }
  }, async (request) => {
    const { p, workspaceId } = scopeOf(request)
    const run = runById.get(request.params.runId) as RunRow | undefined
    if (!run || run.workspace_id !== workspaceId || run.customer_id !== p.customerId) throw notFound('Run not found')
    return { success: true as const, run: toRun(run) }
  })
}

export default workflowsPlugin
