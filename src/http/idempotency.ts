import fp from 'fastify-plugin'
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { and, eq, isNotNull, ne, notLike, or, sql } from 'drizzle-orm'
import { HttpError, badRequest } from './errors.js'
import { preparedWrite } from '../db/prepared.js'
import { idempotencyKeys } from '../../schema/tables/idempotency.js'
import { callerKey } from '../auth/plugin.js'
import { IDEMPOTENCY_TTL_MS as TTL_MS } from '../jobs/maintenance.js'

/** an in-flight record older than this belongs to a request that never finished (aborted, crashed) */
const STALE_IN_FLIGHT_MS = 5 * 60 * 1000

type StoredRow = Pick<typeof idempotencyKeys.$inferSelect,
  'fingerprint' | 'state' | 'statusCode' | 'contentType' | 'body' | 'createdAt'>

declare module 'fastify' {
  interface FastifyInstance {
    /** see idempotencyPlugin: a streamed body's content, once read, for its Idempotency-Key */
    idempotentContent: (request: FastifyRequest, reply: FastifyReply, digest: string) => Promise<boolean>
  }
  interface FastifyRequest {
    idempotency: { caller: string; key: string; cipherKey: Buffer; print: string; printKey: Buffer } | null
    /**
     * a streamed body (an upload) whose key was used before by a request of the same type and length: whether
     * it is the same request is known once its content is (see idempotentContent)
     */
    idempotencyPending: { stored: StoredRow; cipherKey: Buffer; print: string; printKey: Buffer } | null
  }
  interface FastifyContextConfig {
    /** false for routes whose answer cannot be replayed (event streams): the header is ignored there */
    idempotency?: boolean
    /**
     * The response carries a secret (a token, a key value, a signing secret): it is sent with
     * `Cache-Control: no-store`, and a function here tells whether the secret in a kept response is still
     * the live one; a replay of one that is not (revoked, rotated, deleted) is refused.
     */
    secretResponse?: true | ((body: unknown, request: FastifyRequest) => boolean)
  }
}

const parsed = (body: string): unknown => { try { return JSON.parse(body) } catch { return undefined } }

/** the `boundary` parameter of a multipart content type */
const BOUNDARY = /;\s*boundary=(?:"[^"]*"|[^;\s]*)/i

/**
 * What makes two requests "the same": method, path with query, and the body as received. Keyed, since a
 * plain hash of a body that holds a password could be guessed at offline.
 */
function fingerprint(request: FastifyRequest, secret: Buffer): string {
  const h = createHmac('sha256', secret).update(request.method).update('\0').update(request.url).update('\0')
  const body = request.body
  if (body === undefined || body === null) {
    // bodies not parsed before the handler (multipart streams) are told apart by media type and length here
    // (the boundary is left out, since a client retrying an upload makes a new one of the same length), and by
    // their content once the handler has read it (idempotentContent)
    const type = String(request.headers['content-type'] ?? '').replace(BOUNDARY, '')
    h.update(type).update('\0').update(String(request.headers['content-length'] ?? ''))
  } else if (typeof body === 'string' || Buffer.isBuffer(body)) {
    h.update(body)
  } else {
    h.update(JSON.stringify(body))
  }
  return h.digest('hex')
}

/** a streamed body's fingerprint, completed by a digest of its content: `<type and length>.<content>` */
const withContent = (print: string, printKey: Buffer, digest: string) =>
  `${print}.${createHmac('sha256', printKey).update('content\0').update(digest).digest('hex')}`

/**
 * Kept responses are secrets at rest (API key values, signing secrets): the row is found by an HMAC of
 * the Idempotency-Key, and the response is encrypted (AES-256-GCM) under a key derived from the
 * Idempotency-Key value, the caller and the server secret. The database alone reveals neither.
 */
function keysFor(serverSecret: Buffer, caller: string, idempotencyKey: string) {
  const lookup = createHmac('sha256', serverSecret).update(caller).update('\0').update(idempotencyKey).digest('hex')
  const material = Buffer.from(hkdfSync('sha256', Buffer.from(idempotencyKey), serverSecret,
    `cairn idempotency\0${caller}`, 64))
  return { lookup, cipherKey: material.subarray(0, 32), printKey: material.subarray(32) }
}

const SEALED = 'v1.'
function seal(key: Buffer, plain: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
  return SEALED + Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64')
}
function open(key: Buffer, sealed: string): string | undefined {
  if (!sealed.startsWith(SEALED)) return undefined
  const raw = Buffer.from(sealed.slice(SEALED.length), 'base64')
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12))
    decipher.setAuthTag(raw.subarray(12, 28))
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')
  } catch {
    return undefined
  }
}

/**
 * Idempotency-Key on POST (docs/api/errors.md#idempotency-key): the first response below 500 is kept for 24 h per
 * caller and key, and replayed for the same request; a different request gets 422, one still running 409.
 */
async function idempotencyPlugin(app: FastifyInstance, opts: { secret: string }) {
  const serverSecret = createHash('sha256').update('cairn idempotency\0').update(opts.secret).digest()
  const { db, sqlite } = app
  const t = idempotencyKeys
  const p = sql.placeholder
  // rows kept in clear by earlier versions: their keys cannot be matched any more, and they must not stay
  db.delete(t).where(or(ne(sql`length(${t.key})`, 64), and(isNotNull(t.body), notLike(t.body, `${SEALED}%`)))).run()
  const byKey = and(eq(t.caller, p('caller')), eq(t.key, p('key')))
  const find = db.select({ fingerprint: t.fingerprint, state: t.state, statusCode: t.statusCode,
    contentType: t.contentType, body: t.body, createdAt: t.createdAt }).from(t).where(byKey).prepare()
  const claim = preparedWrite(sqlite, db.insert(t).values({ caller: p('caller'), key: p('key'),
    fingerprint: p('fingerprint'), state: 'in_flight', createdAt: p('now') }))
  const remove = preparedWrite(sqlite, db.delete(t).where(byKey))
  const complete = preparedWrite(sqlite, db.update(t).set({ state: 'done', statusCode: sql`${p('statusCode')}`,
    contentType: sql`${p('contentType')}`, body: sql`${p('body')}` }).where(byKey))

  const begin = sqlite.transaction((caller: string, key: string, print: string): StoredRow | undefined => {
    const row = find.get({ caller, key })
    const now = Date.now()
    const expired = row && (Date.parse(row.createdAt) < now - TTL_MS ||
      (row.state === 'in_flight' && Date.parse(row.createdAt) < now - STALE_IN_FLIGHT_MS))
    if (row && !expired) return row
    if (row) remove.run({ caller, key })
    claim.run({ caller, key, fingerprint: print, now: new Date(now).toISOString() })
    return undefined
  }).immediate

  app.decorateRequest('idempotency', null)
  app.decorateRequest('idempotencyPending', null)
  const setPrint = preparedWrite(sqlite, db.update(t).set({ fingerprint: sql`${p('fingerprint')}` }).where(byKey))

  /** the kept response, as its replay */
  function replay(request: FastifyRequest, reply: FastifyReply, existing: StoredRow, cipherKey: Buffer) {
    const body = existing.body ? open(cipherKey, existing.body) : ''
    if (body === undefined) {
      throw new HttpError(422, 'Idempotency-Key was already used with a different request', 'IDEMPOTENCY_KEY_REUSED')
    }
    const secret = request.routeOptions.config.secretResponse
    if (typeof secret === 'function' && !secret(parsed(body), request)) {
      throw new HttpError(409,
        'The secret this request created has since been revoked, rotated or deleted; it is not shown again',
        'IDEMPOTENCY_SECRET_GONE')
    }
    reply.header('idempotency-replayed', 'true')
    if (existing.contentType) reply.type(existing.contentType)
    reply.code(existing.statusCode ?? 200)
    return reply.send(body)
  }

  /**
   * For a streamed body, once it has been read: `digest` stands for its content (files' hashes, fields). The
   * kept fingerprint gains it, and a request that waited on it is replayed when its content is the same, else
   * refused (422). Answers true when the reply has been sent (a replay).
   */
  app.decorate('idempotentContent', async (request: FastifyRequest, reply: FastifyReply, digest: string) => {
    const pending = request.idempotencyPending
    if (pending) {
      request.idempotencyPending = null
      if (pending.stored.fingerprint !== withContent(pending.print, pending.printKey, digest)) {
        throw new HttpError(422, 'Idempotency-Key was already used with a different request', 'IDEMPOTENCY_KEY_REUSED')
      }
      await replay(request, reply, pending.stored, pending.cipherKey)
      return true
    }
    const idem = request.idempotency
    if (idem) {
      setPrint.run({ fingerprint: withContent(idem.print, idem.printKey, digest), caller: idem.caller, key: idem.key })
    }
    return false
  })

  const preValidation = async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers['idempotency-key']
    if (header === undefined) return
    const key = Array.isArray(header) ? header[0] : header
    if (key.length < 1 || key.length > 255) {
      throw badRequest('Idempotency-Key must be 1 to 255 characters', 'VALIDATION_ERROR')
    }
    // a caller without credentials is known only by its address, which many share behind a proxy or a NAT: each
    // different request of theirs is a caller of its own, so one person's key never answers, holds up or refuses
    // (422) another's request; only the very same request (the same body, password included) is replayed
    const caller = request.principal ? callerKey(request)
      : `${callerKey(request)}\0${fingerprint(request, serverSecret)}`
    const keys = keysFor(serverSecret, caller, key)
    const print = fingerprint(request, keys.printKey)
    const existing = begin(caller, keys.lookup, print)
    if (!existing) {
      request.idempotency = { caller, key: keys.lookup, cipherKey: keys.cipherKey, print, printKey: keys.printKey }
      return
    }
    // a streamed body's kept fingerprint may carry its content's digest: that part is compared once it is read
    const [storedPrint, contentPrint] = existing.fingerprint.split('.')
    if (storedPrint !== print) {
      throw new HttpError(422, 'Idempotency-Key was already used with a different request', 'IDEMPOTENCY_KEY_REUSED')
    }
    if (existing.state === 'in_flight') {
      throw new HttpError(409, 'A request with this Idempotency-Key is still being processed', 'IDEMPOTENCY_IN_FLIGHT')
    }
    if (contentPrint !== undefined) {
      request.idempotencyPending = { stored: existing, cipherKey: keys.cipherKey, print, printKey: keys.printKey }
      return
    }
    return replay(request, reply, existing, keys.cipherKey)
  }

  const onSend = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const idem = request.idempotency
    if (!idem) return payload
    request.idempotency = null
    const storable = typeof payload === 'string' || Buffer.isBuffer(payload) || payload === null ||
      payload === undefined
    // a 429 is about the moment, not the request: the retry it asks for must run
    if (reply.statusCode >= 500 || reply.statusCode === 429 || !storable) {
      remove.run({ caller: idem.caller, key: idem.key })
    } else {
      const body = payload === null || payload === undefined ? '' : payload.toString()
      complete.run({ statusCode: reply.statusCode, contentType: String(reply.getHeader('content-type') ?? ''),
        body: seal(idem.cipherKey, body), caller: idem.caller, key: idem.key })
    }
    return payload
  }

  // a request that dies without a response must not hold its key for long
  const onResponse = async (request: FastifyRequest) => {
    if (request.idempotency) remove.run({ caller: request.idempotency.caller, key: request.idempotency.key })
  }

  // only POST routes carry the hooks (ahead of their own): other requests do not pay for them
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat()
    if (!methods.includes('POST') || route.config?.idempotency === false) return
    if (methods.length > 1) throw new Error(`Idempotency-Key needs POST routes of their own: ${route.url}`)
    const first = <T>(hook: T, existing: T | T[] | undefined): T[] => [hook,
      ...(existing === undefined ? [] : [existing].flat() as T[])]
    // before validation, so that a 400 of the schema is kept and replayed like any answer below 500
    route.preValidation = first(preValidation, route.preValidation as typeof preValidation | undefined)
    route.onSend = first(onSend, route.onSend as typeof onSend | undefined)
    route.onResponse = first(onResponse, route.onResponse as typeof onResponse | undefined)
  })
}

export default fp(idempotencyPlugin, { name: 'cairn-idempotency', dependencies: ['cairn-db', 'cairn-auth'] })
