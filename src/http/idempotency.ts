import fp from 'fastify-plugin'
import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { HttpError, badRequest } from './errors.js'
import { callerKey } from '../auth/plugin.js'
import { IDEMPOTENCY_TTL_MS as TTL_MS } from '../jobs/maintenance.js'

/** an in-flight record older than this belongs to a request that never finished (aborted, crashed) */
const STALE_IN_FLIGHT_MS = 5 * 60 * 1000

interface StoredRow {
  fingerprint: string
  state: 'in_flight' | 'done'
  status_code: number | null
  content_type: string | null
  body: string | null
  created_at: string
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: { caller: string; key: string } | null
  }
  interface FastifyContextConfig {
    /** false for routes whose answer cannot be replayed (event streams): the header is ignored there */
    idempotency?: boolean
  }
}

/** the `boundary` parameter of a multipart content type */
const BOUNDARY = /;\s*boundary=(?:"[^"]*"|[^;\s]*)/i

/** What makes two requests "the same": method, path with query, and the body as received. */
function fingerprint(request: FastifyRequest): string {
  const h = createHash('sha256').update(request.method).update('\0').update(request.url).update('\0')
  const body = request.body
  if (body === undefined || body === null) {
    // bodies not parsed before the handler (multipart streams) are told apart by media type and length; the
    // boundary is left out, since a client retrying an upload makes a new one (of the same length)
    const type = String(request.headers['content-type'] ?? '').replace(BOUNDARY, '')
    h.update(type).update('\0').update(String(request.headers['content-length'] ?? ''))
  } else if (typeof body === 'string' || Buffer.isBuffer(body)) {
    h.update(body)
  } else {
    h.update(JSON.stringify(body))
  }
  return h.digest('hex')
}

/**
 * Idempotency-Key on POST (CONTRACT.md §4): the first response below 500 is kept for 24 h per caller
 * and key, and replayed for the same request; a different request gets 422, one still running 409.
 */
async function idempotencyPlugin(app: FastifyInstance) {
  const sqlite = app.sqlite
  const find = sqlite.prepare(
    `SELECT fingerprint, state, status_code, content_type, body, created_at FROM idempotency_keys WHERE caller = ? AND key = ?`
  )
  const claim = sqlite.prepare(
    `INSERT INTO idempotency_keys (caller, key, fingerprint, state, created_at) VALUES (?, ?, ?, 'in_flight', ?)`
  )
  const remove = sqlite.prepare(`DELETE FROM idempotency_keys WHERE caller = ? AND key = ?`)
  const complete = sqlite.prepare(
    `UPDATE idempotency_keys SET state = 'done', status_code = ?, content_type = ?, body = ? WHERE caller = ? AND key = ?`
  )

  const begin = sqlite.transaction((caller: string, key: string, print: string): StoredRow | undefined => {
    const row = find.get(caller, key) as StoredRow | undefined
    const now = Date.now()
    const expired = row && (Date.parse(row.created_at) < now - TTL_MS ||
      (row.state === 'in_flight' && Date.parse(row.created_at) < now - STALE_IN_FLIGHT_MS))
    if (row && !expired) return row
    if (row) remove.run(caller, key)
    claim.run(caller, key, print, new Date(now).toISOString())
    return undefined
  }).immediate

  app.decorateRequest('idempotency', null)

  const preHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers['idempotency-key']
    if (header === undefined) return
    const key = Array.isArray(header) ? header[0] : header
    if (key.length < 1 || key.length > 255) throw badRequest('Idempotency-Key must be 1 to 255 characters', 'VALIDATION_ERROR')
    const caller = callerKey(request)
    const print = fingerprint(request)
    const existing = begin(caller, key, print)
    if (!existing) {
      request.idempotency = { caller, key }
      return
    }
    if (existing.fingerprint !== print) {
      throw new HttpError(422, 'Idempotency-Key was already used with a different request', 'IDEMPOTENCY_KEY_REUSED')
    }
    if (existing.state === 'in_flight') {
      throw new HttpError(409, 'A request with this Idempotency-Key is still being processed', 'IDEMPOTENCY_IN_FLIGHT')
    }
    reply.header('idempotency-replayed', 'true')
    if (existing.content_type) reply.type(existing.content_type)
    reply.code(existing.status_code ?? 200)
    return reply.send(existing.body ?? '')
  }

  const onSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const idem = request.idempotency
    if (!idem) return payload
    request.idempotency = null
    const storable = typeof payload === 'string' || Buffer.isBuffer(payload) || payload === null || payload === undefined
    if (reply.statusCode >= 500 || !storable) {
      remove.run(idem.caller, idem.key)
    } else {
      const body = payload === null || payload === undefined ? '' : payload.toString()
      complete.run(reply.statusCode, String(reply.getHeader('content-type') ?? ''), body, idem.caller, idem.key)
    }
    return payload
  }

  // a request that dies without a response must not hold its key for long
  const onResponse = async (request: FastifyRequest) => {
    if (request.idempotency) remove.run(request.idempotency.caller, request.idempotency.key)
  }

  // only POST routes carry the hooks (ahead of their own): other requests do not pay for them
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat()
    if (!methods.includes('POST') || route.config?.idempotency === false) return
    if (methods.length > 1) throw new Error(`Idempotency-Key needs POST routes of their own: ${route.url}`)
    const first = <T>(hook: T, existing: T | T[] | undefined): T[] => [hook, ...(existing === undefined ? [] : [existing].flat() as T[])]
    route.preHandler = first(preHandler, route.preHandler as typeof preHandler | undefined)
    route.onSend = first(onSend, route.onSend as typeof onSend | undefined)
    route.onResponse = first(onResponse, route.onResponse as typeof onResponse | undefined)
  })
}

export default fp(idempotencyPlugin, { name: 'cairn-idempotency', dependencies: ['cairn-db', 'cairn-auth'] })
