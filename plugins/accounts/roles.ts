import type { FastifyInstance } from 'fastify'
import type { Principal, WorkspaceContext } from '../../src/auth/plugin.js'
import { forbidden } from '../../src/http/errors.js'

/** The caller's role in the workspace named in the path: 403 for a non-member, or for a member who is not an admin. */
export function workspaceManager(app: FastifyInstance, principal: Principal, workspaceId: string): WorkspaceContext {
  const ws = app.workspaceFor(principal, workspaceId)
  if (ws.role !== 'owner' && ws.role !== 'admin') {
    throw forbidden('Only workspace owners and admins can manage members')
  }
  return ws
}
