import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { errors, IdParams, SuccessMessage } from '../../schema/api/common.js'
import {
  ARTIFACT_TYPES, ARTIFACT_STATUSES, WorkspaceQuery, ListArtifactsQuery, CreateArtifactBody, UpdateArtifactBody,
  StatusBody, CommentBody, SupersedeBody, ArtifactResponse, ListArtifactsResponse, StatusResponse, CommentResponse,
  ChainResponse, SummariesResponse, MetaTypesResponse, ConversationParams, RunParams
} from '../../schema/api/artifacts.js'
import { requireWorkspaceContext } from '../../src/auth/plugin.js'
import { badRequest, conflict, forbidden, notFound } from '../../src/http/errors.js'
import { InvalidReference, ReviewRefused, type Scope } from '../../src/artifacts/store.js'
import type { Actor } from '../../src/artifacts/review.js'

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

  /** An API key is a machine to the review rules (src/artifacts/review.ts); a user session is a person. */
  const actorOf = (request: FastifyRequest): Actor => request.principal?.kind === 'apiKey' ? 'key' : 'person'

  /** Runs a store change, answering what the machine-review rules refuse. */
  function reviewed<T>(change: () => T): T {
    try {
      return change()
    } catch (err) {
      if (!(err instanceof ReviewRefused)) throw err
      if (err.code === 'HUMAN_REVIEW_REQUIRED') {
        throw forbidden('This artifact requests a human review: approve, reject or change its review policy with a ' +
          'user session (JWT)', 'HUMAN_REVIEW_REQUIRED')
      }
      throw conflict('A person has approved or rejected this artifact: an API key cannot change, supersede or ' +
        'delete it. Create a new artifact with parent_artifact_id set to this one, or ask a person.',
      'ARTIFACT_REVIEWED')
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
      querystring: WorkspaceQuery, body: UpdateArtifactBody,
      response: { 200: ArtifactResponse, ...errors(403, 404, 409) } }
  }, async (request) => {
    const b = request.body
    if (b.title === undefined && b.content === undefined && b.confidence === undefined &&
      b.review_policy === undefined) {
      throw badRequest('Nothing to update: send title, content, confidence or review_policy', 'VALIDATION_ERROR')
    }
    const scope = scopeOf(request)
    const artifact = reviewed(() => store.update(scope, request.params.id, b, actorOf(request)))
    if (!artifact) throw missing()
    return { success: true as const, data: artifact }
  })

  app.delete('/:id', {
    schema: { tags, summary: 'Delete one artifact permanently (its chain stays connected)', params: IdParams,
      querystring: WorkspaceQuery, response: { 200: SuccessMessage, ...errors(403, 404, 409) } }
  }, async (request) => {
    const scope = scopeOf(request)
    if (!reviewed(() => store.remove(scope, request.params.id, actorOf(request)))) throw missing()
    return { success: true as const, message: 'Artifact deleted' }
  })

  app.post('/:id/status', {
    schema: { tags, summary: 'Set the review status; the caller is recorded as reviewer', params: IdParams,
      querystring: WorkspaceQuery, body: StatusBody, response: { 200: StatusResponse, ...errors(403, 404, 409) } }
  }, async (request) => {
    const scope = scopeOf(request)
    const result = reviewed(() => store.setStatus(scope, request.params.id, request.body.status, actorOf(request)))
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
      querystring: WorkspaceQuery, body: SupersedeBody,
      response: { 201: ArtifactResponse, ...errors(403, 404, 409) } }
  }, async (request, reply) => {
    const scope = scopeOf(request)
    const artifact = reviewed(() => store.supersede(scope, request.params.id, request.body ?? {}, actorOf(request)))
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
