import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import {
  ListUsersResponse, UserResponse, UpdateUserBody, CreateInvitationBody, CreateInvitationResponse,
  ListInvitationsResponse, AcceptInvitationBody, AcceptInvitationResponse, ChangePasswordBody,
  PasswordResetLinkResponse, ResetPasswordBody, ListMembersResponse, UpdateMemberBody, UpdateMemberResponse
} from '../../schema/api/teammates.js'
import { errors, IdParams, SuccessMessage } from '../../schema/api/common.js'
import { MemberParams, WorkspaceParams } from '../../schema/api/accounts.js'
import { createTeammateStore } from './teammates-store.js'
import { workspaceManager } from './roles.js'
import { hashPassword, verifyPassword } from '../../src/auth/passwords.js'
import { bearerToken, requirePrincipal, type Principal } from '../../src/auth/plugin.js'
import { checkCsrf, secureCookies, sessionCookie, sessionCookieToken } from '../../src/auth/console-session.js'
import { conflict, forbidden, notFound } from '../../src/http/errors.js'
import { writeTurn } from '../../src/db/write-intent.js'
import { createMailer } from '../../src/net/mailer.js'

const normalizeEmail = (email: string) => email.trim().toLowerCase()
const LINK_GONE = 'This link is unknown, used, revoked or expired'

/**
 * The people of an organization (see docs of the accounts API): who is in it, their roles, invitations that let a
 * person set their own password, password changes and admin-made reset links, and removal that ends a person's
 * sessions and keys at once.
 */
const teammates: FastifyPluginAsyncTypebox = async (app) => {
  const store = createTeammateStore(app.db)
  const mailer = createMailer(app.config.mail)
  app.addHook('onClose', async () => mailer.close())
  const { publicUrl, jwtTtlSeconds } = app.config

  function issueToken(userId: string, customerId: string) {
    const session = app.sessions.start(userId, jwtTtlSeconds)
    return app.jwt.sign({ sub: userId, cid: customerId, sid: session.id })
  }

  /** The session the request was signed in with (its token was verified by the auth hook), if it names one. */
  function sessionOf(request: FastifyRequest): string | undefined {
    const header = request.headers.authorization
    const token = (typeof header === 'string' ? bearerToken(header) : undefined) ?? sessionCookieToken(request)
    const sid = token ? (app.jwt.decode<{ sid?: unknown }>(token)?.sid) : undefined
    return typeof sid === 'string' ? sid : undefined
  }

  /** Sends a link by e-mail when SMTP is configured; a failure is logged and reported as not sent. */
  async function mailLink(request: FastifyRequest, to: string, subject: string, text: string) {
    if (!mailer.enabled) return false
    try {
      await mailer.send({ to, subject, text })
      return true
    } catch (err) {
      request.log.warn({ err: { message: (err as Error).message } }, 'e-mail not sent')
      return false
    }
  }

  const orgAdminOnly = async (request: FastifyRequest) => {
    const p = requirePrincipal(request)
    if (p.orgRole !== 'owner' && p.orgRole !== 'admin') {
      throw forbidden('Only organization owners and admins can manage the people of the organization')
    }
  }
  /** an admin manages admins and members; owners (and the owner role) are an owner's to change */
  function mayManage(caller: Principal, target: { orgRole: string }, newRole?: string) {
    if (caller.orgRole === 'owner') return
    if (target.orgRole === 'owner' || newRole === 'owner') {
      throw forbidden('Only an organization owner can change or remove an owner, or make one')
    }
  }
  const managerOf = (principal: Principal, workspaceId: string) => workspaceManager(app, principal, workspaceId)

  app.get('/users', {
    config: { auth: 'jwt' },
    schema: { tags: ['accounts'], summary: 'The people of the caller\'s organization',
      response: { 200: ListUsersResponse, ...errors(403) } }
  }, async (request) => ({ success: true as const, data: store.listUsers(requirePrincipal(request).customerId) }))

  app.patch('/users/:id', {
    config: { auth: 'jwt' },
    preValidation: orgAdminOnly,
    schema: { tags: ['accounts'], summary: 'Change a person\'s organization role or name (org owner/admin)',
      params: IdParams, body: UpdateUserBody, response: { 200: UserResponse, ...errors(403, 404, 409) } }
  }, async (request) => {
    const p = requirePrincipal(request)
    const target = store.userOf(p.customerId, request.params.id)
    if (!target) throw notFound('User not found')
    mayManage(p, target, request.body.role)
    const result = store.updateUser(p.customerId, request.params.id,
      { role: request.body.role, name: request.body.name?.trim() })
    if (result === 'not-found') throw notFound('User not found')
    if (result === 'last-owner') {
      throw conflict('The organization\'s last owner cannot be demoted: make another owner first')
    }
    return { success: true as const, data: result }
  })

  app.delete('/users/:id', {
    config: { auth: 'jwt' },
    preValidation: orgAdminOnly,
    schema: { tags: ['accounts'], summary: 'Remove a person: their sessions and API keys stop working at once',
      params: IdParams, response: { 200: SuccessMessage, ...errors(403, 404, 409) } }
  }, async (request) => {
    const p = requirePrincipal(request)
    const target = store.userOf(p.customerId, request.params.id)
    if (!target) throw notFound('User not found')
    mayManage(p, target)
    const result = store.removeUser(p.customerId, request.params.id)
    if (result === 'not-found') throw notFound('User not found')
    if (result === 'last-owner') throw conflict('The organization\'s last owner cannot be removed')
    return { success: true as const, message: 'User removed: their sessions and API keys no longer work' }
  })

  app.post('/invitations', {
    config: { auth: 'jwt', secretResponse: true },
    preValidation: orgAdminOnly,
    schema: { tags: ['accounts'], summary: 'Invite a person by e-mail; the link is in this answer only',
      body: CreateInvitationBody, response: { 201: CreateInvitationResponse, ...errors(403, 404, 409) } }
  }, async (request, reply) => {
    const p = requirePrincipal(request)
    const email = normalizeEmail(request.body.email)
    const invited = request.body.workspaces ?? []
    if (new Set(invited.map((w) => w.id)).size !== invited.length) {
      throw conflict('A workspace is named twice in the invitation')
    }
    const foreign = store.foreignWorkspaces(p.customerId, invited.map((w) => w.id))
    if (foreign.length > 0) throw notFound(`Workspace not found: ${foreign[0]}`)
    if (store.emailTaken(email)) throw conflict('An account with this email already exists', 'EMAIL_TAKEN')
    const { token, invitation } = store.invite(p.customerId, p.userId,
      { email, role: request.body.role ?? 'member', workspaces: invited })
    const url = `${publicUrl}/invite/${token}`
    const emailed = await mailLink(request, email, `${p.name} invited you to Cairn`,
      `${p.name} (${p.email}) invited you to join their organization on Cairn.\n\n` +
      `Open this link to choose your password and sign in (it works once, until ${invitation.expires_at}):\n${url}\n`)
    reply.code(201)
    return { success: true as const, data: { ...invitation, url, emailed } }
  })

  app.get('/invitations', {
    config: { auth: 'jwt' },
    preValidation: orgAdminOnly,
    schema: { tags: ['accounts'], summary: 'Pending invitations of the organization',
      response: { 200: ListInvitationsResponse, ...errors(403) } }
  }, async (request) => ({ success: true as const,
    data: store.pendingInvitations(requirePrincipal(request).customerId) }))

  app.delete('/invitations/:id', {
    config: { auth: 'jwt' },
    preValidation: orgAdminOnly,
    schema: { tags: ['accounts'], summary: 'Revoke a pending invitation: its link stops working',
      params: IdParams, response: { 200: SuccessMessage, ...errors(403, 404) } }
  }, async (request) => {
    if (!store.revokeInvitation(requirePrincipal(request).customerId, request.params.id)) {
      throw notFound('Invitation not found')
    }
    return { success: true as const, message: 'Invitation revoked' }
  })

  app.post('/invitations/accept', {
    config: { auth: 'public', secretResponse: true },
    schema: { tags: ['accounts'], summary: 'Join through an invitation link with a password of one\'s own',
      body: AcceptInvitationBody, response: { 201: AcceptInvitationResponse, ...errors(404, 409) } }
  }, async (request, reply) => {
    // a console sign-in: a cross-site page must not sign a browser in as someone else (rules of login)
    if (request.body.cookie) checkCsrf(request, publicUrl)
    const passwordHash = await hashPassword(request.body.password)
    await writeTurn(app.sqlite)
    const result = store.acceptInvitation(request.body.token, { passwordHash, name: request.body.name })
    if (result === 'not-found') throw notFound(LINK_GONE)
    if (result === 'email-taken') throw conflict('An account with this email already exists', 'EMAIL_TAKEN')
    reply.code(201)
    const token = issueToken(result.user.id, result.customerId)
    const joined = { user: result.user, customerId: result.customerId }
    if (request.body.cookie) {
      // the one session this call starts lives in the cookie only: no second token is handed out
      reply.header('set-cookie', sessionCookie(token, jwtTtlSeconds, secureCookies(request, publicUrl)))
      return { success: true as const, data: joined }
    }
    return { success: true as const, data: { token, ...joined } }
  })

  app.post('/auth/password', {
    config: { auth: 'jwt' },
    schema: { tags: ['accounts'], summary: 'Change one\'s own password; every other session ends',
      body: ChangePasswordBody, response: { 200: SuccessMessage, ...errors(403) } }
  }, async (request) => {
    const p = requirePrincipal(request)
    if (p.kind !== 'jwt') throw forbidden('Only a signed-in person can change their password')
    const user = store.userOf(p.customerId, p.userId)
    if (!user || !(await verifyPassword(request.body.currentPassword, user.passwordHash))) {
      throw forbidden('The current password is not right')
    }
    const passwordHash = await hashPassword(request.body.newPassword)
    await writeTurn(app.sqlite)
    store.setPassword(p.userId, passwordHash)
    store.endSessions(p.userId, sessionOf(request))
    return { success: true as const, message: 'Password changed: every other session has ended' }
  })

  app.post('/auth/logout-everywhere', {
    config: { auth: 'jwt' },
    schema: { tags: ['accounts'], summary: 'End every session of the caller, this one included',
      response: { 200: SuccessMessage, ...errors(403) } }
  }, async (request, reply) => {
    const p = requirePrincipal(request)
    if (p.kind !== 'jwt') throw forbidden('Only a signed-in person has sessions to end')
    reply.header('set-cookie', sessionCookie('', 0, secureCookies(request, publicUrl)))
    await writeTurn(app.sqlite)
    store.endSessions(p.userId)
    return { success: true as const, message: 'Signed out everywhere: every session of yours has ended' }
  })

  app.post('/users/:id/password-reset', {
    config: { auth: 'jwt', secretResponse: true },
    preValidation: orgAdminOnly,
    schema: { tags: ['accounts'], summary: 'A single-use link (24 h) with which a person sets a new password',
      params: IdParams, response: { 201: PasswordResetLinkResponse, ...errors(403, 404) } }
  }, async (request, reply) => {
    const p = requirePrincipal(request)
    const target = store.userOf(p.customerId, request.params.id)
    if (!target) throw notFound('User not found')
    mayManage(p, target)
    const { token, expiresAt } = store.createReset(target.id, p.userId)
    const url = `${publicUrl}/reset-password/${token}`
    const emailed = await mailLink(request, target.email, 'Set a new Cairn password',
      `${p.name} (${p.email}) made a link for you to set a new password on Cairn.\n\n` +
      `It works once, until ${expiresAt}:\n${url}\n`)
    reply.code(201)
    return { success: true as const, data: { url, expires_at: expiresAt, emailed } }
  })

  app.post('/auth/password-reset', {
    config: { auth: 'public' },
    schema: { tags: ['accounts'], summary: 'Set a new password with a reset link; every session of the person ends',
      body: ResetPasswordBody, response: { 200: SuccessMessage, ...errors(404) } }
  }, async (request) => {
    const passwordHash = await hashPassword(request.body.newPassword)
    await writeTurn(app.sqlite)
    if (store.resetPassword(request.body.token, passwordHash) === 'not-found') throw notFound(LINK_GONE)
    return { success: true as const, message: 'Password set: sign in with it' }
  })

  app.get('/workspaces/:id/members', {
    config: { auth: 'jwt' },
    schema: { tags: ['accounts'], summary: 'Members of a workspace (any member may list them)',
      params: WorkspaceParams, response: { 200: ListMembersResponse, ...errors(403) } }
  }, async (request) => {
    app.workspaceFor(requirePrincipal(request), request.params.id)
    return { success: true as const, data: store.workspaceMembers(request.params.id) }
  })

  app.patch('/workspaces/:id/members/:userId', {
    config: { auth: 'jwt' },
    preValidation: async (request: FastifyRequest) => {
      managerOf(requirePrincipal(request), (request.params as { id: string }).id)
    },
    schema: { tags: ['accounts'], summary: 'Change a member\'s workspace role (workspace owner/admin)',
      params: MemberParams, body: UpdateMemberBody, response: { 200: UpdateMemberResponse, ...errors(403, 404, 409) } }
  }, async (request) => {
    const ws = managerOf(requirePrincipal(request), request.params.id)
    const result = store.setWorkspaceRole(request.params.id, request.params.userId, request.body.role,
      ws.role === 'owner')
    if (result === 'not-found') throw notFound('Member not found')
    if (result === 'forbidden') throw forbidden('Only a workspace owner can change an owner\'s role, or make one')
    if (result === 'last-owner') {
      throw conflict('The workspace\'s last owner cannot be demoted: make another owner first')
    }
    return { success: true as const,
      data: { workspace_id: request.params.id, user_id: request.params.userId, role: request.body.role } }
  })
}

export default teammates
