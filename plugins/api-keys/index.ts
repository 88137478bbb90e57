import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { CreateApiKeyBody, NewApiKeyResponse, ApiKeyResponse, ListApiKeysResponse } from '../../schema/api/api-keys.js'
import { errors, IdParams, SuccessMessage } from '../../schema/api/common.js'
import { createApiKeyStore } from './store.js'
import { scopeListProblem } from '../../src/auth/capabilities.js'
import { requirePrincipal } from '../../src/auth/plugin.js'
import { badRequest, conflict, notFound } from '../../src/http/errors.js'

/** Per-user API keys: create (value shown once), list, details, rotate, revoke. JWT only. */
const apiKeysPlugin: FastifyPluginAsyncTypebox = async (app) => {
  const store = createApiKeyStore(app.db)
  const jwtOnly = { auth: 'jwt' as const }
  /** a kept response is replayed only while the key in it still works (docs/api/errors.md#idempotency-key) */
  const newKey = {
    ...jwtOnly,
    secretResponse: (body: unknown, request: FastifyRequest) => {
      const data = (body as { data?: { id?: unknown; key?: unknown } } | undefined)?.data
      return typeof data?.id === 'string' && typeof data.key === 'string' &&
        store.isLive(requirePrincipal(request).userId, data.id, data.key)
    }
  }

  app.post('', {
    config: newKey,
    schema: {
      tags: ['api-keys'],
      summary: 'Create an API key; its value is returned only in this response',
      body: CreateApiKeyBody,
      response: { 201: NewApiKeyResponse, ...errors(403) }
    }
  }, async (request, reply) => {
    const p = requirePrincipal(request)
    const { name, scopes, workspaceId, expiresAt } = request.body
    const problem = scopeListProblem(scopes)
    if (problem) throw badRequest(problem, 'INVALID_SCOPES')
    if (expiresAt && Date.parse(expiresAt) <= Date.now()) {
      throw badRequest('expiresAt must be in the future', 'VALIDATION_ERROR')
    }
    if (workspaceId) app.workspaceFor(p, workspaceId)
    reply.code(201)
    return {
      success: true as const,
      data: store.create({
        userId: p.userId,
        customerId: p.customerId,
        name: name.trim() || name,
        scopes,
        workspaceId: workspaceId ?? null,
        expiresAt: expiresAt ? new Date(expiresAt).toISOString() : null
      })
    }
  })

  app.get('', {
    config: jwtOnly,
    schema: { tags: ['api-keys'], summary: 'The caller\'s API keys (values never shown)',
      response: { 200: ListApiKeysResponse, ...errors(403) } }
  }, async (request) => ({ success: true as const, data: store.list(requirePrincipal(request).userId) }))

  app.get('/:id', {
    config: jwtOnly,
    schema: { tags: ['api-keys'], summary: 'One of the caller\'s API keys', params: IdParams,
      response: { 200: ApiKeyResponse, ...errors(403, 404) } }
  }, async (request) => {
    const key = store.get(requirePrincipal(request).userId, request.params.id)
    if (!key) throw notFound('API key not found')
    return { success: true as const, data: key }
  })

  app.post('/:id/rotate', {
    config: newKey,
    schema: {
      tags: ['api-keys'],
      summary: 'Replace a key by a new one with the same settings; the old one stops working at once',
      params: IdParams,
      response: { 201: NewApiKeyResponse, ...errors(403, 404, 409) }
    }
  }, async (request, reply) => {
    const result = store.rotate(requirePrincipal(request).userId, request.params.id)
    if (!result) throw notFound('API key not found')
    if (result === 'revoked') throw conflict('A revoked key cannot be rotated', 'KEY_REVOKED')
    if (result === 'no-scopes') {
      throw conflict('The key holds no scope that can still be issued; create a new key', 'NO_ISSUABLE_SCOPES')
    }
    reply.code(201)
    return { success: true as const, data: result }
  })

  app.delete('/:id', {
    config: jwtOnly,
    schema: { tags: ['api-keys'], summary: 'Revoke a key', params: IdParams,
      response: { 200: SuccessMessage, ...errors(403, 404) } }
  }, async (request) => {
    if (!store.revoke(requirePrincipal(request).userId, request.params.id)) throw notFound('API key not found')
    return { success: true as const, message: 'API key revoked' }
  })
}

export default apiKeysPlugin
