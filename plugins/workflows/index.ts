import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { errors, SuccessMessage } from '../../schema/api/common.js'
import {
  ExecuteBody, ExecuteResponse, RunListResponse, RunParams, RunResponse, RunsQuery, WorkflowDefinitionBody,
  WorkflowListResponse,
  WorkflowParams, WorkflowQuery, WorkflowResponse
} from '../../schema/api/workflows.js'
import { requirePrincipal, requireWorkspaceContext, type Principal } from '../../src/auth/plugin.js'
import { badRequest, forbidden, HttpError, notFound } from '../../src/http/errors.js'
import { definitionProblems, resolveInputs } from './definition.js'
import { createWorkflowStore, definitionOf, toRun, toWorkflow } from './store.js'
import { createRunStarter, registerWorkflowRunner } from './runner.js'
import { createWorkflowScheduler } from './scheduler.js'

/** Workflows of a workspace (docs/api/assistant.md#workflows): definitions, runs on the job queue, cron schedules. */
const workflowsPlugin: FastifyPluginAsyncTypebox = async (app) => {
  const store = createWorkflowStore(app.db)
  const agents = app.agentStore
  const channels = app.channelStore
  registerWorkflowRunner(app, store, agents, app.db)
  const startRun = createRunStarter(app, store, app.db)
  const scheduler = createWorkflowScheduler(app, store, startRun)
  const tags = ['workflows']

  function scopeOf(request: FastifyRequest) {
    const p = requirePrincipal(request)
    const ws = requireWorkspaceContext(request, (request.query as { workspaceId?: string } | undefined)?.workspaceId)
    return { p, ws }
  }
  function findOwn(request: FastifyRequest, id: string) {
    const { p, ws } = scopeOf(request)
    const w = store.find(p, ws.id, id)
    if (!w) throw notFound('Workflow not found')
    return { p, ws, w }
  }
  /** changing, scheduling or deleting needs the creator or a workspace owner/admin */
  function mayChange(request: FastifyRequest, id: string) {
    const found = findOwn(request, id)
    if (found.w.createdBy !== found.p.userId && found.ws.role === 'member') {
      throw forbidden('Only the workflow\'s creator or a workspace owner/admin may change or delete it',
        'WORKFLOW_FORBIDDEN')
    }
    return found
  }

  /** Definition problems, including references to agents and channels the saving user cannot use. */
  function validate(p: Principal, workspaceId: string, body: WorkflowDefinitionBody) {
    const problems = definitionProblems(body.inputs ?? [], body.steps, body.schedule?.cron)
    for (const [n, s] of body.steps.entries()) {
      if (s.type === 'agent' && !agents.find(p.customerId, s.agentId)) {
        problems.push({ field: `/steps/${n}/agentId`, message: `step "${s.id}": agent ${s.agentId} not found` })
      }
      if (s.type === 'post_message') {
        const ch = channels.find(p, s.channelId)
        if (!ch || ch.workspaceId !== workspaceId) {
          problems.push({ field: `/steps/${n}/channelId`,
            message: `step "${s.id}": channel ${s.channelId} not found in this workspace` })
        }
      }
    }
    if (problems.length) {
      // each problem with its field too, so that a form shows it beside what caused it
      throw new HttpError(400, `Invalid workflow: ${problems.map((x) => x.message).join('; ')}`, 'INVALID_WORKFLOW',
        { problems })
    }
  }

  app.post('/workflows', {
    schema: { tags, summary: 'Define a workflow', querystring: WorkflowQuery, body: WorkflowDefinitionBody,
      response: { 201: WorkflowResponse, ...errors(403) } }
  }, async (request, reply) => {
    const { p, ws } = scopeOf(request)
    validate(p, ws.id, request.body)
    const row = store.create(p, ws.id, request.body)
    scheduler.schedule(row)
    reply.code(201)
    return { success: true as const, workflow: toWorkflow(row) }
  })

  app.get('/workflows', {
    schema: { tags, summary: 'Workflows of the workspace', querystring: WorkflowQuery,
      response: { 200: WorkflowListResponse, ...errors(403) } }
  }, async (request) => {
    const { p, ws } = scopeOf(request)
    return { success: true as const, workflows: store.list(p.customerId, ws.id).map(toWorkflow) }
  })

  app.get('/workflows/:id', {
    schema: { tags, summary: 'One workflow', params: WorkflowParams, querystring: WorkflowQuery,
      response: { 200: WorkflowResponse, ...errors(403, 404) } }
  }, async (request) => ({ success: true as const, workflow: toWorkflow(findOwn(request, request.params.id).w) }))

  app.put('/workflows/:id', {
    schema: {
      tags,
      summary: 'Replace a workflow\'s definition (its creator or a workspace owner/admin; scheduled runs then act ' +
          'as the saver)',
      params: WorkflowParams, querystring: WorkflowQuery, body: WorkflowDefinitionBody,
      response: { 200: WorkflowResponse, ...errors(403, 404) }
    }
  }, async (request) => {
    const { p, ws, w } = mayChange(request, request.params.id)
    validate(p, ws.id, request.body)
    const row = store.replace(w.id, p.userId, request.body)
    if (!row) throw notFound('Workflow not found')
    scheduler.schedule(row)
    return { success: true as const, workflow: toWorkflow(row) }
  })

  app.delete('/workflows/:id', {
    schema: {
      tags, summary: 'Delete a workflow and its runs (its creator or a workspace owner/admin)', params: WorkflowParams,
      querystring: WorkflowQuery,
      response: { 200: SuccessMessage, ...errors(403, 404) }
    }
  }, async (request) => {
    const { w } = mayChange(request, request.params.id)
    scheduler.unschedule(w.id)
    store.remove(w.id)
    return { success: true as const, message: 'Workflow deleted' }
  })

  app.post('/workflows/:id/execute', {
    schema: {
      tags, summary: 'Run a workflow with input variables, as the caller (202; the run goes on in the background)',
      params: WorkflowParams,
      querystring: WorkflowQuery, body: ExecuteBody, response: { 202: ExecuteResponse, ...errors(403, 404, 413) }
    }
  }, async (request, reply) => {
    const { p, w } = findOwn(request, request.params.id)
    const { inputs, missing } = resolveInputs(definitionOf(w).inputs, request.body?.inputs ?? {})
    if (missing.length) throw badRequest(`Missing required input(s): ${missing.join(', ')}`, 'MISSING_INPUT')
    const id = startRun(w, p.userId, 'api', inputs)
    reply.code(202)
    return { success: true as const, run: { id, status: 'queued' } }
  })

  app.get('/workflows/:id/runs', {
    schema: { tags, summary: 'Runs of a workflow, newest first', params: WorkflowParams, querystring: RunsQuery,
      response: { 200: RunListResponse, ...errors(403, 404) } }
  }, async (request) => {
    const { p, w } = findOwn(request, request.params.id)
    return { success: true as const, runs: store.runsOf(w.id, request.query.limit).map((r) => toRun(r, p.userId)) }
  })

  app.get('/workflow-runs/:runId', {
    schema: { tags, summary: 'One run with its steps', params: RunParams, querystring: WorkflowQuery,
      response: { 200: RunResponse, ...errors(403, 404) } }
  }, async (request) => {
    const { p, ws } = scopeOf(request)
    const run = store.runById(request.params.runId)
    if (!run || run.workspaceId !== ws.id || run.customerId !== p.customerId) throw notFound('Run not found')
    return { success: true as const, run: toRun(run, p.userId) }
  })
}

export default workflowsPlugin
