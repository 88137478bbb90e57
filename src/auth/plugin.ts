import fp from 'fastify-plugin'
import jwt from '@fastify/jwt'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { checkCapability, checkRole, scopesFor } from './capabilities.js'
import { createTableCache, type TableCache, type WatchedTables } from '../db/table-cache.js'
import { isWellFormedApiKey, sha256Hex, secretsEqual, API_KEY_PREFIX } from './keys.js'
import { forbidden, unauthorized, badRequest } from '../http/errors.js'
import { and, eq, isNull, sql } from 'drizzle-orm'
import { organizations, users, workspaceMembers, workspaces } from '../../schema/tables/accounts.js'
import { apiKeys } from '../../schema/tables/api-keys.js'
import { checkCsrf, createSessionStore, sessionCookieToken, type SessionStore } from './console-session.js'

export type OrgRole = 'owner' | 'admin' | 'member'
export type WorkspaceRole = 'owner' | 'admin' | 'member'

/** Who is calling. Shared by the requests of one caller (see db/table-cache.ts), hence read-only. */
export interface Principal {
  readonly kind: 'jwt' | 'apiKey' | 'serviceKey'
  readonly userId: string
  readonly customerId: string
  readonly orgRole: OrgRole
  readonly email: string
  readonly name: string
  readonly apiKey?: { readonly id: string; readonly scopes: readonly string[]; readonly workspaceId: string | null }
}

export interface WorkspaceContext {
  readonly id: string
  readonly role: WorkspaceRole
}

/**
 * How a route is protected: `public` (no credentials), `required` (any credential; API keys by the
 * capability table), `jwt` (a user session or the service key; API keys get 403).
 */
export type RouteAuth = 'public' | 'required' | 'jwt'

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth
    /** developer-log action name, e.g. `knowledge.search` */
    action?: string
  }
  interface FastifyRequest {
    /** who is calling; null on public routes called without credentials */
    principal: Principal | null
    /** the workspace named by the key binding or x-workspace-id header, membership checked */
    workspace: WorkspaceContext | null
  }
}

declare module '@fastify/jwt' {
  interface FastifyJWT {
    /** `sid`: the session (src/auth/console-session.ts); tokens made before sessions existed have none */
    payload: { sub: string; cid: string; sid?: string }
  }
}

/** A session token whose signature checked out: its claims, and when it expires (epoch ms). */
interface VerifiedToken {
  readonly sub: unknown; readonly cid: unknown; readonly sid: unknown; readonly expiresMs: number
}

/** The columns of a user a principal is made of. */
type Caller = Pick<typeof users.$inferSelect, 'id' | 'customerId' | 'orgRole' | 'email' | 'name'>

/**
 * The tables whose rows say who a caller is and where they belong: the auth cache empties on any change to
 * them. `api_keys.last_used_at`, written with every batch of the request log, does not matter.
 */
const AUTH_TABLES: WatchedTables = {
  organizations: undefined,
  users: undefined,
  workspaces: undefined,
  workspace_members: undefined,
  api_keys: ['id', 'user_id', 'customer_id', 'workspace_id', 'key_hash', 'scopes', 'expires_at', 'revoked_at']
}

async function authPlugin(app: FastifyInstance,
  opts: { jwtSecret: string; jwtTtlSeconds: number; serviceKey?: string }) {
  await app.register(jwt, {
    secret: opts.jwtSecret,
    sign: { algorithm: 'HS256', expiresIn: opts.jwtTtlSeconds },
    verify: { algorithms: ['HS256'] }
  })

  /**
   * Verified tokens by the exact Authorization header they came in (bounded; starts over when full), each until
   * its `exp`: a header seen before costs one map look-up instead of parsing it and an HMAC. A changed byte is
   * another key, parsed and verified afresh. API keys are never kept here (only their digests are kept).
   */
  const verifiedHeaders = new Map<string, VerifiedToken>()
  function verifyToken(header: string, token: string): VerifiedToken {
    verifiedHeaders.delete(header) // an expired entry: verified again, which says why it is refused
    const payload = app.jwt.verify<{ sub?: unknown; cid?: unknown; sid?: unknown; exp?: unknown }>(token)
    const entry = { sub: payload.sub, cid: payload.cid, sid: payload.sid,
      expiresMs: typeof payload.exp === 'number' ? payload.exp * 1000 : Infinity }
    if (verifiedHeaders.size >= 10_000) verifiedHeaders.clear()
    verifiedHeaders.set(header, entry)
    return entry
  }

  const sqlite = app.sqlite
  const db = app.db
  const p = sql.placeholder
  // Drizzle, prepared once: these run only when the auth cache misses (a new caller, or after a write to
  // its tables), so the object mapping costs nothing on the hot path
  const caller = { id: users.id, customerId: users.customerId, orgRole: users.orgRole, email: users.email,
    name: users.name }
  const userById = db.select(caller).from(users).where(and(eq(users.id, p('id')), isNull(users.removedAt))).prepare()
  const keyByHash = db.select({ ...caller, keyId: apiKeys.id, scopes: apiKeys.scopes, workspaceId: apiKeys.workspaceId,
    expiresAt: apiKeys.expiresAt, revokedAt: apiKeys.revokedAt })
    // a removed person's keys die with them, whether or not their revocation was written
    .from(apiKeys).innerJoin(users, eq(users.id, apiKeys.userId))
    .where(and(eq(apiKeys.keyHash, p('hash')), isNull(users.removedAt))).prepare()
  const firstOrganization = db.select({ id: organizations.id }).from(organizations)
    .orderBy(organizations.createdAt, organizations.id).limit(1)
  const serviceOwner = db.select(caller).from(users)
    .where(and(eq(users.customerId, sql`(${firstOrganization})`), eq(users.orgRole, 'owner')))
    .orderBy(users.createdAt).limit(1).prepare()
  const membership = db.select({ role: workspaceMembers.role }).from(workspaceMembers)
    .innerJoin(workspaces, eq(workspaces.id, workspaceMembers.workspaceId))
    .where(and(eq(workspaceMembers.workspaceId, p('workspaceId')), eq(workspaceMembers.userId, p('userId')),
      eq(workspaces.customerId, p('customerId')))).prepare()
  const memberWorkspaces = db.select({ id: workspaceMembers.workspaceId }).from(workspaceMembers)
    .innerJoin(workspaces, eq(workspaces.id, workspaceMembers.workspaceId))
    .where(and(eq(workspaceMembers.userId, p('userId')), eq(workspaces.customerId, p('customerId')))).prepare()

  // principals and memberships are served from memory; the cache empties itself on any change (see db/table-cache.ts)
  const cache = createTableCache(sqlite, { name: 'auth', tables: AUTH_TABLES })
  const sessions = createSessionStore(sqlite, db)

  /** Principals are shared by the requests of one caller: frozen, so no route can change another's. */
  function fromUser(kind: Principal['kind'], row: Caller | undefined): Principal | undefined {
    return row
      ? Object.freeze({ kind, userId: row.id, customerId: row.customerId, orgRole: row.orgRole, email: row.email,
          name: row.name }) : undefined
  }

  /** `expiresMs`: epoch ms, Infinity without an expiry; an unreadable date counts as expired */
  interface KnownKey { principal: Principal; expiresMs: number; revoked: boolean }

  function loadKey(hash: string): KnownKey | undefined {
    const row = keyByHash.get({ hash })
    if (!row) return undefined
    const apiKey = Object.freeze({ id: row.keyId, scopes: Object.freeze(JSON.parse(row.scopes) as string[]),
      workspaceId: row.workspaceId })
    const principal = Object.freeze({
      kind: 'apiKey' as const, userId: row.id, customerId: row.customerId, orgRole: row.orgRole, email: row.email,
      name: row.name, apiKey
    })
    const expiresMs = row.expiresAt === null ? Infinity : Date.parse(row.expiresAt)
    return { principal, expiresMs: Number.isNaN(expiresMs) ? -Infinity : expiresMs, revoked: row.revokedAt !== null }
  }

  function resolveApiKey(value: string): Principal {
    if (!isWellFormedApiKey(value)) throw unauthorized('Malformed API key')
    const hash = sha256Hex(value)
    // the digest alone is the cache key: hex has no ':', which every other key of this cache has
    const key = cache.get(hash, () => loadKey(hash))
    if (!key) throw unauthorized('Invalid API key')
    if (key.revoked) throw unauthorized('API key has been revoked')
    // compared as numbers: an ISO string made per request cost more than the rest of the key's check
    if (key.expiresMs <= Date.now()) throw unauthorized('API key has expired')
    return key.principal
  }

  function resolveJwt(header: string, token: string): Principal {
    let payload: VerifiedToken
    try {
      payload = verifyToken(header, token)
    } catch (err) {
      const code = (err as { code?: string }).code
      throw unauthorized(code === 'FAST_JWT_EXPIRED' ? 'Token has expired' : 'Invalid token')
    }
    return userOfToken(payload)
  }

  function userOfToken(payload: VerifiedToken): Principal {
    const sub = payload.sub
    const user = typeof sub === 'string'
      ? cache.get(`u:${sub}`, () => fromUser('jwt', userById.get({ id: sub }))) : undefined
    if (!user || user.customerId !== payload.cid) throw unauthorized('Invalid token')
    // a session that was ended (logout) or is unknown refuses its token, wherever it was copied
    if (payload.sid !== undefined && (typeof payload.sid !== 'string' || !sessions.isLive(payload.sid, user.userId))) {
      throw unauthorized('The session has ended: sign in again')
    }
    return user
  }

  function resolvePrincipal(request: FastifyRequest): Principal | null {
    const serviceKey = request.headers['x-service-key']
    if (typeof serviceKey === 'string') {
      if (!opts.serviceKey || !secretsEqual(serviceKey, opts.serviceKey)) throw unauthorized('Invalid service key')
      const owner = cache.get('s:', () => fromUser('serviceKey', serviceOwner.get()))
      if (!owner) throw unauthorized('No organization exists yet')
      return owner
    }
    const authorization = request.headers.authorization
    if (authorization !== undefined) {
      // the usual case first: a session token seen before, still valid (no slice, no pattern, no HMAC)
      const known = verifiedHeaders.get(authorization)
      if (known !== undefined && known.expiresMs > Date.now()) return userOfToken(known)
      const token = bearerToken(authorization)
      if (!token) throw unauthorized('Authorization header must be "Bearer <token>"')
      return token.startsWith(API_KEY_PREFIX) ? resolveApiKey(token) : resolveJwt(authorization, token)
    }
    const apiKey = request.headers['x-api-key']
    if (typeof apiKey === 'string') return resolveApiKey(apiKey.trim())
    // the console's cookie, only when no other credential came: a forged cross-site write is refused first
    const cookie = sessionCookieToken(request)
    if (cookie !== undefined) {
      checkCsrf(request, app.config.publicUrl)
      return resolveJwt(`cookie ${cookie}`, cookie)
    }
    return null
  }

  /** Membership of the principal's user in a workspace of its organization, or 403. */
  function workspaceFor(principal: Principal, workspaceId: string): WorkspaceContext {
    const context = cache.get(`m:${workspaceId}\0${principal.userId}\0${principal.customerId}`, () => {
      const row = membership.get({ workspaceId, userId: principal.userId, customerId: principal.customerId })
      return row && Object.freeze({ id: workspaceId, role: row.role })
    })
    if (!context) throw forbidden('You are not a member of this workspace', 'WORKSPACE_FORBIDDEN')
    return context
  }

  /** The workspaces of an organization the user belongs to (every knowledge read without a context asks). */
  function workspaceIdsOf(userId: string, customerId: string): readonly string[] {
    return cache.get(`w:${userId}\0${customerId}`,
      () => Object.freeze(memberWorkspaces.all({ userId, customerId }).map((r) => r.id)))!
  }

  app.decorate('workspaceFor', workspaceFor)
  app.decorate('workspaceIdsOf', workspaceIdsOf)
  app.decorate('principalOf', resolvePrincipal)
  app.decorate('authCache', cache)
  app.decorate('sessions', sessions)
  app.decorateRequest('principal', null)
  app.decorateRequest('workspace', null)

  function authenticate(request: FastifyRequest) {
    const config = request.routeOptions.config
    if (config?.url === undefined) return // 404: no route
    const mode = config.auth ?? 'required'
    if (mode === 'public') return
    const principal = resolvePrincipal(request)
    if (!principal) throw unauthorized()
    request.principal = principal

    if (principal.apiKey) {
      if (mode === 'jwt') {
        throw forbidden('This route requires a user session (JWT); API keys are not accepted', 'API_KEY_NOT_ALLOWED')
      }
      const decision = checkCapability(request.method, config.url, principal.apiKey.scopes)
      if (decision === 'not-in-table') throw forbidden('API keys cannot be used on this route', 'API_KEY_NOT_ALLOWED')
      if (decision === 'missing-scope') {
        throw forbidden(`This API key lacks a scope for this route: it needs one of ${
          scopesFor(request.method, config.url).join(', ')}`, 'INSUFFICIENT_SCOPE')
      }
    }

    const header = request.headers['x-workspace-id']
    const named = typeof header === 'string' && header !== '' ? header : undefined
    const bound = principal.apiKey?.workspaceId ?? undefined
    if (bound && named && named !== bound) {
      throw forbidden('This API key is bound to another workspace', 'WORKSPACE_FORBIDDEN')
    }
    const workspaceId = bound ?? named
    if (workspaceId) request.workspace = workspaceFor(principal, workspaceId)
    requireRole(request)
  }

  // a callback hook, not an async one: it runs on every request and needs no promise
  app.addHook('onRequest', (request, _reply, done) => {
    try {
      authenticate(request)
    } catch (err) {
      return done(err as Error)
    }
    done()
  })
}

declare module 'fastify' {
  interface FastifyInstance {
    /** users, keys and memberships kept in memory, emptied on every change to their tables */
    authCache: TableCache
    /** sign-in sessions: started by login and sign-up, ended by logout */
    sessions: SessionStore
    workspaceFor(principal: Principal, workspaceId: string): WorkspaceContext
    /** the ids of the user's workspaces in that organization, from memory (emptied with the auth cache) */
    workspaceIdsOf(userId: string, customerId: string): readonly string[]
    /**
     * the request's credential resolved again (throws 401 for one ended or revoked since): a long-lived answer
     * (the event stream) stops with its credential
     */
    principalOf(request: FastifyRequest): Principal | null
  }
}

/**
 * The workspace context of a request: key binding, else `x-workspace-id`, else the query parameter
 * given. Membership is checked (403). Undefined when none is named.
 */
export function workspaceContext(request: FastifyRequest, queryValue?: string): WorkspaceContext | undefined {
  if (request.workspace) {
    if (queryValue && queryValue !== request.workspace.id) {
      if (request.principal?.apiKey?.workspaceId) {
        throw forbidden('This API key is bound to another workspace', 'WORKSPACE_FORBIDDEN')
      }
      // a second workspace named beside the header is never ignored: naming one the caller is not in is a 403
      request.server.workspaceFor(request.principal!, queryValue)
    }
    return request.workspace
  }
  if (!queryValue) return undefined
  request.workspace = request.server.workspaceFor(request.principal!, queryValue)
  requireRole(request)
  return request.workspace
}

/**
 * The role half of authorization (src/auth/capabilities.ts), the same for a user session, an API key and the
 * service key: the route's role rule against the caller's current organization role and, once the workspace
 * context is known, their current role there. Runs as the request is authenticated, and again when a route sets
 * its workspace context from a query parameter.
 */
export function requireRole(request: FastifyRequest): void {
  const p = request.principal
  const url = request.routeOptions.config?.url
  if (!p || url === undefined) return
  const decision = checkRole(request.method, url, p.orgRole, request.workspace?.role)
  if (decision === 'needs-organization-admin') throw forbidden('Only organization owners and admins may do this')
  if (decision === 'needs-workspace-admin') throw forbidden('Only workspace owners and admins may do this')
}

/**
 * Like workspaceContext, but a request without any workspace context is a 400 naming what the route
 * accepts: `queryName` is its query parameter (`workspace_id` on artifacts, `workspaceId` elsewhere).
 */
export function requireWorkspaceContext(request: FastifyRequest, queryValue?: string,
  queryName: 'workspaceId' | 'workspace_id' = 'workspaceId'): WorkspaceContext {
  const ws = workspaceContext(request, queryValue)
  if (!ws) {
    throw badRequest(`Workspace context required: send the x-workspace-id header or the ${queryName} query parameter`,
      'WORKSPACE_REQUIRED')
  }
  return ws
}

/** The token of `Bearer <token>` (scheme in any case, surrounding spaces allowed), or undefined. */
export function bearerToken(header: string): string | undefined {
  // the usual form first, without the capturing expression below: it comes with nearly every request
  if (header.startsWith('Bearer ')) {
    const token = header.slice(7)
    if (token.length > 0 && !/\s/.test(token)) return token
  }
  return /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1]
}

/** Who a request counts as, for rate limits and Idempotency-Key: the API key, else the user, else the IP. */
export function callerKey(request: FastifyRequest): string {
  const p = request.principal
  if (p?.apiKey) return `key:${p.apiKey.id}`
  if (p) return `user:${p.userId}`
  return `ip:${request.ip}`
}

export function requirePrincipal(request: FastifyRequest): Principal {
  if (!request.principal) throw unauthorized()
  return request.principal
}

export default fp(authPlugin, { name: 'cairn-auth', dependencies: ['cairn-db'] })
