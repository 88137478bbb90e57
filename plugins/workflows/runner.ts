import type { FastifyInstance } from 'fastify'
import type { Principal } from '../../src/auth/plugin.js'
import { HttpError } from '../../src/http/errors.js'
import { nowIso, type Db } from '../../src/db/index.js'
import { writeTurn } from '../../src/db/write-intent.js'
import { toolsOf, type AgentStore } from '../../src/agents/store.js'
import type { StepState, WorkflowStep } from '../../schema/api/workflows.js'
import { definitionOf, type RunDefinition, type RunRow, type WorkflowRow, type WorkflowStore } from './store.js'
import { fillStep } from './definition.js'

export const RUN_JOB = 'workflow.run'
/** finished scheduled runs kept per workflow, the newest first: as many as its run list shows at most */
export const SCHEDULED_RUNS_KEPT = 100

/** 413 QUOTA_EXCEEDED: the organization's runs in flight alone fill its runs quota */
export function runsQuotaExceeded(limit: number, used: number) {
  return new HttpError(413, `Your organization has ${used} workflow runs queued or running, as many as it may keep ` +
    `(${limit}): wait for some to finish before starting another`, 'QUOTA_EXCEEDED', { quota: 'runs', limit, used })
}

/**
 * Creates runs: the definition is fixed here, when the run is created (POST /{id}/execute, a schedule's tick), so
 * the run executes what its user authorized, whatever is saved while it waits in the queue.
 *
 * The organization's runs quota (config.quotas.runs, docs/api/assistant.md#workflows): past it, its oldest finished
 * runs go, in the same transaction; a run is refused (413, nothing written) only when the runs queued or running
 * alone reach it.
 */
export function createRunStarter(app: FastifyInstance, store: WorkflowStore, db: Db) {
  const quota = app.config.quotas.runs
  return function startRun(w: WorkflowRow, userId: string, trigger: RunRow['trigger'],
    inputs: Record<string, unknown>): string {
    const { steps } = definitionOf(w)
    return db.transaction(() => {
      if (quota > 0) {
        const flying = store.runsInFlight(w.customerId)
        if (flying >= quota) throw runsQuotaExceeded(quota, flying)
      }
      const id = store.createRun(w, userId, trigger, inputs, { steps })
      app.jobs.enqueue(RUN_JOB, { runId: id })
      // a schedule (one a second at most) would otherwise add 86,400 runs a day that nobody prunes
      if (trigger === 'schedule') store.pruneScheduled(w.id, SCHEDULED_RUNS_KEPT)
      if (quota > 0) store.pruneFinished(w.customerId, store.runCount(w.customerId) - quota)
      return id
    })
  }
}

/** The definition a run executes; undefined for a run queued before definitions were fixed, edited since. */
function definitionOfRun(run: RunRow, wf: WorkflowRow): RunDefinition | undefined {
  if (run.definition) return JSON.parse(run.definition) as RunDefinition
  if (wf.updatedAt > run.createdAt) return undefined
  return { steps: definitionOf(wf).steps }
}

/**
 * The `workflow.run` job: runs the steps fixed when the run was created, in order, as the run's user
 * (docs/api/assistant.md#workflows: who last saved the definition or schedule, or who executed it), with that
 * user's rights checked again when it starts and at every step.
 */
export function registerWorkflowRunner(app: FastifyInstance, store: WorkflowStore, agents: AgentStore, db: Db) {
  const assistant = app.assistant
  const channels = app.channelStore
  const artifacts = app.artifactStore
  // what the artifact route takes: its content travels in a request body within the server's body limit (Fastify
  // states its default here too)
  const limits = { contentBytes: app.initialConfig.bodyLimit ?? 1024 * 1024 }

  async function execute(raw: WorkflowStep, run: RunRow, wf: WorkflowRow, principal: Principal,
    inputs: Record<string, unknown>,
    outputs: Record<string, string>, signal: AbortSignal): Promise<string> {
    const reader = assistant.readerFor(principal, run.workspaceId)
    const step = fillStep(raw, inputs, outputs, limits)
    switch (step.type) {
      case 'llm':
        return (await assistant.modelFor(reader).complete([{ role: 'user', content: step.prompt }], { signal })).content
      case 'search_knowledge':
        return (await assistant.searchKnowledge(reader, step.query,
          step.limit ?? 5)).map((h) => h.chunk.text).join('\n\n')
      case 'agent': {
        // an agent cannot be changed, only deleted (then the step fails)
        const agent = agents.find(principal.customerId, step.agentId)
        if (!agent) throw new Error(`agent ${step.agentId} no longer exists`)
        return (await assistant.converse({
          principal, reader, message: step.message, agentId: agent.id, systemPrompt: agent.systemPrompt,
          tools: toolsOf(agent), signal
        })).reply
      }
      case 'post_message': {
        const ch = channels.find(principal, step.channelId)
        if (!ch || ch.workspaceId !== run.workspaceId) throw new Error(`channel ${step.channelId} is not available`)
        return channels.post(ch, { senderId: principal.userId, content: step.content }).id
      }
      case 'create_artifact':
        return artifacts.create({ customerId: principal.customerId, workspaceId: run.workspaceId,
          userId: principal.userId }, {
          type: step.artifactType, title: step.title, content: step.content ?? {}, workflow_id: wf.id,
          workflow_run_id: run.id
        }).id
    }
  }

  app.jobs.register(RUN_JOB, async (payload, ctx) => {
    const run = store.runById(payload.runId)
    if (!run || run.status === 'completed' || run.status === 'failed') return
    const save = (fields: Parameters<WorkflowStore['updateRun']>[1]) => {
      store.updateRun(run.id, fields)
      // the workspace event stream: which run and its status only (its inputs and outputs are its starter's)
      if (fields.status) {
        app.workspaceEvents.publish({ customerId: run.customerId, workspaceId: run.workspaceId,
          name: 'workflow_run.updated', data: { id: run.id, workflow_id: run.workflowId, status: fields.status } })
      }
    }
    try {
      await runSteps(run, save, ctx.signal)
    } catch (err) {
      // the last attempt: the run is failed rather than left queued or running for good (a schedule waits for it)
      if (!ctx.signal.aborted && ctx.attempt >= ctx.maxAttempts) {
        save({ status: 'failed', error: 'The run stopped unexpectedly', finishedAt: nowIso() })
      }
      throw err
    }
  }, { maxAttempts: 2, concurrency: 2 })

  async function runSteps(run: RunRow, save: (fields: Parameters<WorkflowStore['updateRun']>[1]) => void,
    signal: AbortSignal) {
    const startedAt = run.startedAt ?? nowIso()
    save({ status: 'running', startedAt, steps: '[]' })
    const wf = store.byId(run.workflowId)
    // the run's user, only while still in the workflow's organization and workspace: never more rights than theirs
    const user = store.actor(run.startedBy, run.workspaceId)
    if (!wf || !user || user.customerId !== wf.customerId) {
      save({ status: 'failed',
        error: 'The workflow no longer exists, or its user is no longer a member of the workspace',
        finishedAt: nowIso() })
      return
    }
    const definition = definitionOfRun(run, wf)
    if (!definition) {
      save({ status: 'failed', error: 'The workflow was changed after this run was queued; execute it again',
        finishedAt: nowIso() })
      return
    }
    const principal: Principal = { kind: 'jwt', userId: user.id, customerId: user.customerId, orgRole: user.orgRole,
      email: user.email, name: user.name }
    const inputs = JSON.parse(run.inputs) as Record<string, unknown>
    const outputs: Record<string, string> = {}
    const states: StepState[] = []
    for (const step of definition.steps) {
      const state: StepState = { id: step.id, type: step.type, status: 'running', started_at: nowIso() }
      states.push(state)
      save({ steps: JSON.stringify(states) })
      try {
        state.output = await execute(step, run, wf, principal, inputs, outputs, signal)
        outputs[step.id] = state.output
        state.status = 'completed'
        state.finished_at = nowIso()
      } catch (err) {
        if (signal.aborted) throw err
        state.status = 'failed'
        state.error = (err as Error).message
        state.finished_at = nowIso()
        await writeTurn(app.sqlite)
        save({ status: 'failed', steps: JSON.stringify(states), error: `Step "${step.id}" failed: ${state.error}`,
          finishedAt: state.finished_at })
        return
      }
      // after the step (a model's answer, a search): a write turn before the next write (src/db/write-intent.ts); a
      // stop that came meanwhile ends the run here, as during a step (it is taken up again after the restart)
      await writeTurn(app.sqlite)
      signal.throwIfAborted()
    }
    const finishedAt = nowIso()
    // the run's completion and its event's outbox row commit together
    db.transaction(() => {
      save({ status: 'completed', steps: JSON.stringify(states), outputs: JSON.stringify(outputs), finishedAt })
      // the payload never carries the run's inputs or outputs
      app.events.emit(run.workspaceId, 'workflow.completed', {
        workspace_id: run.workspaceId, run_id: run.id, workflow_id: wf.id, workflow_name: wf.name, status: 'completed',
        started_at: startedAt, finished_at: finishedAt, duration_ms: Date.parse(finishedAt) - Date.parse(startedAt)
      })
    })
  }
}
