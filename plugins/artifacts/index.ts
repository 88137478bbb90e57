import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { errors, IdParams, SuccessMessage } from '../../schema/api/common.js'
import {
  ARTIFACT_TYPES, ARTIFACT_STATUSES, WorkspaceQuery, ListArtifactsQuery, CreateArtifactBody, UpdateArtifactBody,
  StatusBody, CommentBody, SupersedeBody, ArtifactResponse, ListArtifactsResponse, StatusResponse, CommentResponse,
  ChainResponse, SummariesResponse, MetaTypesResponse, ConversationParams, RunParams
} from '../../schema/api/artifacts.js'
import { requireWorkspaceContext } from '../../src/auth/plugin.js'
import { badRequest, forbidden, notFound } from '../../src/http/errors.js'
import { InvalidReference, type Scope } from '../../src/artifacts/store.js'

const upperMap = (values: readonly string[]) => Object.fromEntries(values.map((v) => [v.toUpperCase(), v]))
const TYPES_META = { types: upperMap(ARTIFACT_TYPES), statuses: upperMap(ARTIFACT_STATUSES) }
const tags = ['artifacts']

/** Reviewable records of AI work: status, comments and version chains, per workspace. */
const artifactsPlugin: FastifyPluginAsyncTypebox = async (app) => {
  const store = app.artifactStore

  /** The workspace the request acts in: x-workspace-id or ?workspace_id (400 without, 403 for non-members). */
  function scopeOf(request: FastifyRequest): Scope {
    const ws = requireWorkspaceContext(request, (request.query as { workspace_id?: string } | undefined)?.workspace_id,
      'workspace_id')
    return { customerId: request.principal!.customerId, workspaceId: ws.id, userId: request.principal!.userId }
  }
  const missing = () => notFound('Artifact not found')

  /**
   * CONTRACT.md §3 machine reviews: an API key neither decides on an artifact that asks for a person's
   * review nor lifts that request (a person, with a JWT, does).
   */
  function guardHumanReview(request: FastifyRequest, scope: Scope, id: string,
    change: { status?: string; policy?: string }) {
    if (request.principal?.kind !== 'apiKey') return
    if (store.get(scope, id)?.review_policy !== 'request_review') return
    const decides = change.status === 'approved' || change.status === 'rejected'
    const lifts = change.policy !== undefined && change.policy !== 'request_review'
    if (decides || lifts) {
      throw forbidden('This artifact requests a human review: approve, reject or change its review policy with a ' +
        'user session (JWT)', 'HUMAN_REVIEW_REQUIRED')
    }
  }

  app.get('/meta/types', {
    config: { auth: 'public' },
    schema: { tags, summary: 'Artifact type and status values', response: { 200: MetaTypesResponse, ...errors() } }
  }, async () => ({ success: true as const, data: TYPES_META }))

  app.get('', {
    schema: {
      tags, summary: 'Artifacts of the workspace, newest first',
      querystring: ListArtifactsQuery,
      response: { 200: ListArtifactsResponse, ...errors(403) }
    }
  }, async (request) => {
    const q = request.query
    const { rows, count } = store.list(scopeOf(request), q)
    return { success: true as const, data: rows, meta: { count, limit: q.limit, offset: q.offset } }
  })

  app.get('/:id', {
    schema: { tags, summary: 'One artifact with its content, related artifacts and comments', params: IdParams,
      querystring: WorkspaceQuery, response: { 200: ArtifactResponse, ...errors(403, 404) } }
  }, async (request) => {
    const artifact = store.get(scopeOf(request), request.params.id)
    if (!artifact) throw missing()
    return { success: true as const, data: artifact }
  })

  app.post('', {
    schema: { tags, summary: 'Create an artifact (status draft)', querystring: WorkspaceQuery, body: CreateArtifactBody,
      response: { 201: ArtifactResponse, ...errors(403) } }
  }, async (request, reply) => {
    try {
      const artifact = store.create(scopeOf(request), request.body)
      reply.code(201)
      return { success: true as const, data: artifact }
    } catch (err) {
      if (err instanceof InvalidReference) throw badRequest(err.message, 'INVALID_REFERENCE')
      throw err
    }
  })

  app.patch('/:id', {
    schema: { tags, summary: 'Change title, content, confidence or review policy', params: IdParams,
      querystring: WorkspaceQuery, body: UpdateArtifactBody, response: { 200: ArtifactResponse, ...errors(403, 404) } }
  }, async (request) => {
    const b = request.body
    if (b.title === undefined && b.content === undefined && b.confidence === undefined &&
      b.review_policy === undefined) {
      throw badRequest('Nothing to update: send title, content, confidence or review_policy', 'VALIDATION_ERROR')
    }
    const scope = scopeOf(request)
    guardHumanReview(request, scope, request.params.id, { policy: b.review_policy })
    const artifact = store.update(scope, request.params.id, b)
    if (!artifact) throw missing()
    return { success: true as const, data: artifact }
  })

  app.delete('/:id', {
    schema: { tags, summary: 'Delete one artifact permanently (its chain stays connected)', params: IdParams,
      querystring: WorkspaceQuery, response: { 200: SuccessMessage, ...errors(403, 404) } }
  }, async (request) => {
    if (!store.remove(scopeOf(request), request.params.id)) throw missing()
    return { success: true as const, message: 'Artifact deleted' }
  })

  app.post('/:id/status', {
    schema: { tags, summary: 'Set the review status; the caller is recorded as reviewer', params: IdParams,
      querystring: WorkspaceQuery, body: StatusBody, response: { 200: StatusResponse, ...errors(403, 404) } }
  }, async (request) => {
    const scope = scopeOf(request)
    guardHumanReview(request, scope, request.params.id, { status: request.body.status })
    const result = store.setStatus(scope, request.params.id, request.body.status)
    if (!result) throw missing()
    return { success: true as const, data: result }
  })

  app.post('/:id/comments', {
    schema: { tags, summary: 'Comment on an artifact, optionally anchored by a position object', params: IdParams,
      querystring: WorkspaceQuery, body: CommentBody, response: { 201: CommentResponse, ...errors(403, 404) } }
  }, async (request, reply) => {
    const result = store.addComment(scopeOf(request), request.params.id, request.body.content, request.body.position)
    if (!result) throw missing()
    reply.code(201)
    return { success: true as const, data: result }
  })

  app.post('/:id/supersede', {
    schema: { tags, summary: 'Make a new draft version; the original becomes superseded', params: IdParams,
      querystring: WorkspaceQuery, body: SupersedeBody, response: { 201: ArtifactResponse, ...errors(403, 404) } }
  }, async (request, reply) => {
    const scope = scopeOf(request)
    guardHumanReview(request, scope, request.params.id, { policy: request.body?.review_policy })
    const artifact = store.supersede(scope, request.params.id, request.body ?? {})
    if (!artifact) throw missing()
    reply.code(201)
    return { success: true as const, data: artifact }
  })

  app.get('/:id/chain', {
    schema: { tags, summary: 'Every version connected to this one, oldest first', params: IdParams,
      querystring: WorkspaceQuery, response: { 200: ChainResponse, ...errors(403, 404) } }
  }, async (request) => {
    const chain = store.chain(scopeOf(request), request.params.id)
    if (!chain) throw missing()
    return { success: true as const, data: chain }
  })

  app.get('/conversation/:conversationId', {
    schema: { tags, summary: 'Artifact summaries of a conversation', params: ConversationParams,
      querystring: WorkspaceQuery, response: { 200: SummariesResponse, ...errors(403) } }
  },
  async (request) => ({ success: true as const,
    data: store.summariesBy(scopeOf(request), 'conversation', request.params.conversationId) }))

  app.get('/workflow/:runId', {
    schema: { tags, summary: 'Artifact summaries of a workflow run', params: RunParams, querystring: WorkspaceQuery,
      response: { 200: SummariesResponse, ...errors(403) } }
  },
  async (request) => ({ success: true as const,
    data: store.summariesBy(scopeOf(request), 'workflowRun', request.params.runId) }))
}

export default artifactsPlugin
