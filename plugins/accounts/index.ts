import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import {
  SignupBody, SignupResponse, LoginBody, LoginResponse, MeResponse, CreateUserBody, CreateUserResponse,
  CreateWorkspaceBody, CreateWorkspaceResponse, ListWorkspacesResponse, AddMemberBody, AddMemberResponse,
  WorkspaceParams, MemberParams
} from '../../schema/api/accounts.js'
import { errors, SuccessMessage } from '../../schema/api/common.js'
import { createAccountStore } from './store.js'
import { workspaceManager } from './roles.js'
import { hashPassword, verifyPassword, dummyPasswordHash } from '../../src/auth/passwords.js'
import { requirePrincipal, type Principal } from '../../src/auth/plugin.js'
import { badRequest, conflict, forbidden, HttpError, notFound, unauthorized } from '../../src/http/errors.js'
import { createLoginThrottle, sqliteThrottleStore } from '../../src/auth/login-throttle.js'
import { keptSecret } from '../../src/kept-secret.js'
import { writeTurn } from '../../src/db/write-intent.js'
import { checkCsrf, secureCookies, sessionCookie, sessionCookieToken } from '../../src/auth/console-session.js'
import { bearerToken as bearerOf } from '../../src/auth/plugin.js'

const normalizeEmail = (email: string) => email.trim().toLowerCase()

/** Sign-up, login, the caller's profile, users of an organization, workspaces and their members. */
const accounts: FastifyPluginAsyncTypebox = async (app) => {
  const store = createAccountStore(app.db)
  const { signup, jwtTtlSeconds } = app.config

  const throttle = createLoginThrottle({
    store: sqliteThrottleStore(app.sqlite, keptSecret(app.config.dataDir, 'login-throttle-key'))
  })
  /** a new session and its token (src/auth/console-session.ts): logout ends it */
  const issueToken = (userId: string, customerId: string) =>
    app.jwt.sign({ sub: userId, cid: customerId, sid: app.sessions.start(userId, jwtTtlSeconds).id })

  const managerOf = (principal: Principal, workspaceId: string) => workspaceManager(app, principal, workspaceId)

  app.post('/auth/signup', {
    config: { auth: 'public', secretResponse: true },
    schema: {
      tags: ['accounts'],
      summary: 'Create an organization, its owner and a first workspace',
      body: SignupBody,
      response: { 201: SignupResponse, ...errors(403, 409) }
    }
  }, async (request, reply) => {
    const email = normalizeEmail(request.body.email)
    const name = request.body.name?.trim() || email.split('@')[0]
    const passwordHash = await hashPassword(request.body.password)
    // (the request's write turn came before the hash: another, src/db/write-intent.ts)
    await writeTurn(app.sqlite)
    let created
    try {
      created = store.createOrganization({
        email, passwordHash, name,
        organizationName: request.body.organizationName?.trim() || `${name}'s organization`
      }, signup === 'first-user')
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
        throw conflict('An account with this email already exists', 'EMAIL_TAKEN')
      }
      throw err
    }
    if (!created) {
      throw forbidden('Sign-up is closed: ask an administrator of your organization for an account', 'SIGNUP_CLOSED')
    }
    reply.code(201)
    return {
      success: true as const,
      data: {
        token: issueToken(created.userId, created.customerId),
        user: { id: created.userId, email, name },
        customerId: created.customerId,
        workspaceId: created.workspaceId
      }
    }
  })

  app.post('/auth/login', {
    config: { auth: 'public', secretResponse: true },
    schema: {
      tags: ['accounts'],
      summary: 'Exchange email and password for a JWT',
      body: LoginBody,
      response: { 200: LoginResponse, ...errors() }
    }
  }, async (request, reply) => {
    // a cookie sign-in is a console request: a cross-site page must not sign a browser in as someone else
    if (request.body.cookie) checkCsrf(request, app.config.publicUrl)
    const email = normalizeEmail(request.body.email)
    const waitMs = throttle.retryAfterMs(email, request.ip)
    if (waitMs > 0) {
      const seconds = Math.ceil(waitMs / 1000)
      reply.header('retry-after', String(seconds))
      throw new HttpError(429, `Too many failed logins for this account: try again in ${seconds} s`, 'LOGIN_THROTTLED')
    }
    const user = store.userByEmail(email)
    const ok = await verifyPassword(request.body.password, user?.passwordHash ?? await dummyPasswordHash())
    await writeTurn(app.sqlite)
    if (!user || !ok) {
      // (the counters are a database write: a failure to write them must not turn this 401 into a 500)
      try { throttle.failed(email, request.ip) } catch (err) { request.log.warn({ err }, 'login throttle not updated') }
      throw unauthorized('Invalid email or password')
    }
    try { throttle.succeeded(email, request.ip) } catch (err) { request.log.warn({ err }, 'login throttle not reset') }
    const token = issueToken(user.id, user.customerId)
    const expiresAt = new Date(Date.now() + jwtTtlSeconds * 1000).toISOString()
    if (request.body.cookie) {
      reply.header('set-cookie', sessionCookie(token, jwtTtlSeconds, secureCookies(request, app.config.publicUrl)))
      return { success: true as const, data: { expiresAt } }
    }
    return { success: true as const, data: { token, expiresAt } }
  })

  app.post('/auth/logout', {
    config: { auth: 'jwt' },
    schema: { tags: ['accounts'], summary: 'End this session: its token (or cookie) stops working at once',
      response: { 200: SuccessMessage, ...errors(400, 403) } }
  }, async (request, reply) => {
    // the credential the request was signed in with: the Authorization header, else the console's cookie
    const authorization = request.headers.authorization
    const token = authorization !== undefined ? bearerOf(authorization) : sessionCookieToken(request)
    const sid = token === undefined || request.principal?.kind !== 'jwt'
      ? undefined : app.jwt.decode<{ sid?: unknown }>(token)?.sid
    reply.header('set-cookie', sessionCookie('', 0, secureCookies(request, app.config.publicUrl)))
    if (typeof sid !== 'string') {
      throw badRequest('This credential names no session to end: the service key, or a token made before ' +
        'sessions existed (it stops working when it expires)')
    }
    await writeTurn(app.sqlite)
    app.sessions.end(sid)
    return { success: true as const, message: 'Signed out: this session\'s token no longer works' }
  })

  app.get('/auth/me', {
    config: { auth: 'jwt' },
    schema: { tags: ['accounts'], summary: 'The caller, their organization and workspaces',
      response: { 200: MeResponse, ...errors(403) } }
  }, (request) => {
    // not async: a value returned at once is sent at once, with no promise to settle first (clients poll this)
    const p = requirePrincipal(request)
    return {
      success: true as const,
      data: {
        user: { id: p.userId, email: p.email, name: p.name },
        customerId: p.customerId,
        orgRole: p.orgRole,
        // kept with the caller's credentials: emptied whenever a workspace or membership changes
        workspaces: app.authCache.get(`w:${p.userId}`, () => store.workspacesOf(p.userId))!
      }
    }
  })

  // authorization before validation: a caller without the role learns nothing about the body's shape
  const orgAdminOnly = async (request: FastifyRequest) => {
    const p = requirePrincipal(request)
    if (p.orgRole !== 'owner' && p.orgRole !== 'admin') {
      throw forbidden('Only organization owners and admins can add users')
    }
  }
  // the member routes' only role check (it runs before validation)
  const workspaceManagerOnly = async (request: FastifyRequest) => {
    managerOf(requirePrincipal(request), (request.params as { id: string }).id)
  }

  app.post('/users', {
    config: { auth: 'jwt' },
    preValidation: orgAdminOnly,
    schema: {
      tags: ['accounts'],
      summary: 'Add a user to the caller\'s organization (org owner/admin)',
      body: CreateUserBody,
      response: { 201: CreateUserResponse, ...errors(403, 409) }
    }
  }, async (request, reply) => {
    const p = requirePrincipal(request)
    const email = normalizeEmail(request.body.email)
    const passwordHash = await hashPassword(request.body.password)
    await writeTurn(app.sqlite)
    try {
      const user = store.createUser(p.customerId, {
        email, passwordHash, name: request.body.name?.trim() || email.split('@')[0], role: request.body.role ?? 'member'
      })
      reply.code(201)
      return { success: true as const, data: user }
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
        throw conflict('An account with this email already exists', 'EMAIL_TAKEN')
      }
      throw err
    }
  })

  app.post('/workspaces', {
    config: { auth: 'jwt' },
    schema: { tags: ['accounts'], summary: 'Create a workspace (caller becomes owner)', body: CreateWorkspaceBody,
      response: { 201: CreateWorkspaceResponse, ...errors(403) } }
  }, async (request, reply) => {
    const p = requirePrincipal(request)
    reply.code(201)
    return { success: true as const, data: store.createWorkspace(p.customerId, p.userId, request.body.name.trim()) }
  })

  app.get('/workspaces', {
    config: { auth: 'jwt' },
    schema: { tags: ['accounts'], summary: 'Workspaces the caller belongs to',
      response: { 200: ListWorkspacesResponse, ...errors(403) } }
  }, async (request) => {
    return { success: true as const, data: store.workspacesOf(requirePrincipal(request).userId) }
  })

  app.post('/workspaces/:id/members', {
    config: { auth: 'jwt' },
    preValidation: workspaceManagerOnly,
    schema: {
      tags: ['accounts'],
      summary: 'Add a member of the organization to a workspace, or change their role',
      params: WorkspaceParams,
      body: AddMemberBody,
      response: { 201: AddMemberResponse, ...errors(403, 404, 409) }
    }
  }, async (request, reply) => {
    const result = store.setMember(request.principal!.customerId, request.params.id, request.body.userId,
      request.body.role)
    if (result === 'not-found') throw notFound('User not found')
    if (result === 'owner') throw conflict('The workspace owner\'s role cannot be changed')
    reply.code(201)
    return { success: true as const,
      data: { workspace_id: request.params.id, user_id: request.body.userId, role: request.body.role } }
  })

  app.delete('/workspaces/:id/members/:userId', {
    config: { auth: 'jwt' },
    preValidation: workspaceManagerOnly,
    schema: {
      tags: ['accounts'],
      summary: 'Remove a member from a workspace',
      params: MemberParams,
      response: { 200: SuccessMessage, ...errors(403, 404, 409) }
    }
  }, async (request) => {
    const result = store.removeMember(request.params.id, request.params.userId)
    if (result === 'not-found') throw notFound('Member not found')
    if (result === 'owner') throw conflict('The workspace owner cannot be removed')
    return { success: true as const, message: 'Member removed' }
  })
}

export default accounts
