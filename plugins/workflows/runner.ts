import type { FastifyInstance } from 'fastify'
import type { Principal } from '../../src/auth/plugin.js'
import { nowIso, type Db } from '../../src/db/index.js'
import { writeTurn } from '../../src/db/write-intent.js'
import { toolsOf, type AgentStore } from '../../src/agents/store.js'
import type { StepState, WorkflowStep } from '../../schema/api/workflows.js'
import { definitionOf, type RunRow, type WorkflowRow, type WorkflowStore } from './store.js'
import { fillStep } from './definition.js'

export const RUN_JOB = 'workflow.run'

/**
 * The `workflow.run` job: runs the steps in order as the run's user (CONTRACT.md §9: who last saved the
 * definition or schedule, or who executed it), with that user's rights checked again at run time.
 */
export function registerWorkflowRunner(app: FastifyInstance, store: WorkflowStore, agents: AgentStore, db: Db) {
  const assistant = app.assistant
  const channels = app.channelStore
  const artifacts = app.artifactStore

  async function execute(raw: WorkflowStep, run: RunRow, wf: WorkflowRow, principal: Principal,
    inputs: Record<string, unknown>,
    outputs: Record<string, string>, signal: AbortSignal): Promise<string> {
    const reader = assistant.readerFor(principal, run.workspaceId)
    const step = fillStep(raw, inputs, outputs)
    switch (step.type) {
      case 'llm':
        return (await assistant.modelFor(reader).complete([{ role: 'user', content: step.prompt }], { signal })).content
      case 'search_knowledge':
        return (await assistant.searchKnowledge(reader, step.query,
          step.limit ?? 5)).map((h) => h.chunk.text).join('\n\n')
      case 'agent': {
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
    const save = (fields: Parameters<WorkflowStore['updateRun']>[1]) => store.updateRun(run.id, fields)
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
    const principal: Principal = { kind: 'jwt', userId: user.id, customerId: user.customerId, orgRole: user.orgRole,
      email: user.email, name: user.name }
    const inputs = JSON.parse(run.inputs) as Record<string, unknown>
    const outputs: Record<string, string> = {}
    const states: StepState[] = []
    for (const step of definitionOf(wf).steps) {
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
        await writeTurn(app.sqlite)
        save({ status: 'failed', steps: JSON.stringify(states), error: `Step "${step.id}" failed: ${state.error}`,
          finishedAt: state.finished_at })
        return
      }
      // after the step (a model's answer, a search): a write turn before the next write (src/db/write-intent.ts); a
      // stop that came meanwhile ends the run here, as during a step (it is taken up again after the restart)
      await writeTurn(app.sqlite)
      ctx.signal.throwIfAborted()
    }
    const finishedAt = nowIso()
    // the run's completion and its event's outbox row commit together
    db.transaction(() => {
      save({ status: 'completed', steps: JSON.stringify(states), outputs: JSON.stringify(outputs), finishedAt })
      // SPEC.md: the payload never carries the run's inputs or outputs
      app.events.emit(run.workspaceId, 'workflow.completed', {
        workspace_id: run.workspaceId, run_id: run.id, workflow_id: wf.id, workflow_name: wf.name, status: 'completed',
        started_at: startedAt, finished_at: finishedAt, duration_ms: Date.parse(finishedAt) - Date.parse(startedAt)
      })
    })
  }, { maxAttempts: 2, concurrency: 2 })
}
