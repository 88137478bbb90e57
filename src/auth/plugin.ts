import fp from 'fastify-plugin'
import jwt from '@fastify/jwt'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { checkCapability } from './capabilities.js'
import { isWellFormedApiKey, sha256Hex, secretsEqual, API_KEY_PREFIX } from './keys.js'
import { forbidden, unauthorized, badRequest } from '../http/errors.js'

export type OrgRole = 'owner' | 'admin' | 'member'
export type WorkspaceRole = 'owner' | 'admin' | 'member'

export interface Principal {
  kind: 'jwt' | 'apiKey' | 'serviceKey'
  userId: string
  customerId: string
  orgRole: OrgRole
  email: string
  name: string
  apiKey?: { id: string; scopes: string[]; workspaceId: string | null }
}

export interface WorkspaceContext {
  id: string
  role: WorkspaceRole
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
    payload: { sub: string; cid: string }
  }
}

interface UserRow { id: string; customer_id: string; org_role: OrgRole; email: string; name: string }
interface KeyRow extends UserRow {
  key_id: string
  scopes: string
  workspace_id: string | null
  expires_at: string | null
  revoked_at: string | null
}

async function authPlugin(app: FastifyInstance, opts: { jwtSecret: string; jwtTtlSeconds: number; serviceKey?: string }) {
  await app.register(jwt, {
    secret: opts.jwtSecret,
    sign: { algorithm: 'HS256', expiresIn: opts.jwtTtlSeconds },
    // verified tokens are cached (bounded, never past their exp); the user is still looked up each request
    verify: { algorithms: ['HS256'], cache: 10_000 }
  })

  const sqlite = app.sqlite
  const userById = sqlite.prepare(`SELECT id, customer_id, org_role, email, name FROM users WHERE id = ?`)
  const keyByHash = sqlite.prepare(
    `SELECT k.id AS key_id, k.scopes, k.workspace_id, k.expires_at, k.revoked_at, u.id, u.customer_id, u.org_role, u.email, u.name
     FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = ?`
  )
  const serviceOwner = sqlite.prepare(
    `SELECT u.id, u.customer_id, u.org_role, u.email, u.name FROM users u
     WHERE u.customer_id = (SELECT id FROM organizations ORDER BY created_at, id LIMIT 1) AND u.org_role = 'owner'
     ORDER BY u.created_at LIMIT 1`
  )
  const membership = sqlite.prepare(
    `SELECT m.role FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id
     WHERE m.workspace_id = ? AND m.user_id = ? AND w.customer_id = ?`
  )

  function fromUser(kind: Principal['kind'], row: UserRow | undefined): Principal | null {
    return row ? { kind, userId: row.id, customerId: row.customer_id, orgRole: row.org_role, email: row.email, name: row.name } : null
  }

  function resolveApiKey(value: string): Principal {
    if (!isWellFormedApiKey(value)) throw unauthorized('Malformed API key')
    const row = keyByHash.get(sha256Hex(value)) as KeyRow | undefined
    if (!row) throw unauthorized('Invalid API key')
    if (row.revoked_at) throw unauthorized('API key has been revoked')
    if (row.expires_at && row.expires_at <= new Date().toISOString()) throw unauthorized('API key has expired')
    return {
      kind: 'apiKey',
      userId: row.id,
      customerId: row.customer_id,
      orgRole: row.org_role,
      email: row.email,
      name: row.name,
      apiKey: { id: row.key_id, scopes: JSON.parse(row.scopes) as string[], workspaceId: row.workspace_id }
    }
  }

  function resolveJwt(token: string): Principal {
    let payload: { sub?: unknown; cid?: unknown }
    try {
      payload = app.jwt.verify(token)
    } catch (err) {
      const code = (err as { code?: string }).code
      throw unauthorized(code === 'FAST_JWT_EXPIRED' ? 'Token has expired' : 'Invalid token')
    }
    const user = typeof payload.sub === 'string' ? (userById.get(payload.sub) as UserRow | undefined) : undefined
    if (!user || user.customer_id !== payload.cid) throw unauthorized('Invalid token')
    return fromUser('jwt', user)!
  }

  function resolvePrincipal(request: FastifyRequest): Principal | null {
    const serviceKey = request.headers['x-service-key']
    if (typeof serviceKey === 'string') {
      if (!opts.serviceKey || !secretsEqual(serviceKey, opts.serviceKey)) throw unauthorized('Invalid service key')
      const owner = fromUser('serviceKey', serviceOwner.get() as UserRow | undefined)
      if (!owner) throw unauthorized('No organization exists yet')
      return owner
    }
    const authorization = request.headers.authorization
    if (authorization !== undefined) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization)
      if (!m) throw unauthorized('Authorization header must be "Bearer <token>"')
      return m[1].startsWith(API_KEY_PREFIX) ? resolveApiKey(m[1]) : resolveJwt(m[1])
    }
    const apiKey = request.headers['x-api-key']
    if (typeof apiKey === 'string') return resolveApiKey(apiKey.trim())
    return null
  }

  /** Membership of the principal's user in a workspace of its organization, or 403. */
  function workspaceFor(principal: Principal, workspaceId: string): WorkspaceContext {
    const row = membership.get(workspaceId, principal.userId, principal.customerId) as { role: WorkspaceRole } | undefined
    if (!row) throw forbidden('You are not a member of this workspace', 'WORKSPACE_FORBIDDEN')
    return { id: workspaceId, role: row.role }
  }

  app.decorate('workspaceFor', workspaceFor)
  app.decorateRequest('principal', null)
  app.decorateRequest('workspace', null)

  app.addHook('onRequest', async (request) => {
    if (request.is404) return
    const mode = request.routeOptions.config.auth ?? 'required'
    if (mode === 'public') return
    const principal = resolvePrincipal(request)
    if (!principal) throw unauthorized()
    request.principal = principal

    if (principal.apiKey) {
      if (mode === 'jwt') throw forbidden('This route requires a user session (JWT); API keys are not accepted', 'API_KEY_NOT_ALLOWED')
      const decision = checkCapability(request.method, request.routeOptions.url ?? '', principal.apiKey.scopes)
      if (decision === 'not-in-table') throw forbidden('API keys cannot be used on this route', 'API_KEY_NOT_ALLOWED')
      if (decision === 'missing-scope') throw forbidden('API key lacks the capability for this route', 'INSUFFICIENT_SCOPE')
    }

    const header = request.headers['x-workspace-id']
    const named = typeof header === 'string' && header !== '' ? header : undefined
    const bound = principal.apiKey?.workspaceId ?? undefined
    if (bound && named && named !== bound) throw forbidden('This API key is bound to another workspace', 'WORKSPACE_FORBIDDEN')
    const workspaceId = bound ?? named
    if (workspaceId) request.workspace = workspaceFor(principal, workspaceId)
  })
}

declare module 'fastify' {
  interface FastifyInstance {
    workspaceFor(principal: Principal, workspaceId: string): WorkspaceContext
  }
}

/**
 * The workspace context of a request: key binding, else `x-workspace-id`, else the query parameter
 * given. Membership is checked (403). Undefined when none is named.
 */
export function workspaceContext(request: FastifyRequest, queryValue?: string): WorkspaceContext | undefined {
  if (request.workspace) {
    if (queryValue && queryValue !== request.workspace.id && request.principal?.apiKey?.workspaceId) {
      throw forbidden('This API key is bound to another workspace', 'WORKSPACE_FORBIDDEN')
    }
    return request.workspace
  }
  if (!queryValue) return undefined
  request.workspace = request.server.workspaceFor(request.principal!, queryValue)
  return request.workspace
}

/** Like workspaceContext, but a request without any workspace context is a 400. */
export function requireWorkspaceContext(request: FastifyRequest, queryValue?: string): WorkspaceContext {
  const ws = workspaceContext(request, queryValue)
  if (!ws) throw badRequest('Workspace context required: send the x-workspace-id header or the workspace_id query parameter', 'WORKSPACE_REQUIRED')
  return ws
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
