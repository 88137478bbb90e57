/**
 * Authorization, in one place: the capability table (docs/api/auth.md#api-keys-and-scopes: which
 * API key scopes open which route; a route not listed answers 403 to an API key), and the role table below (what
 * every credential's person must be). A key's request needs both: its scope, and its user's current role.
 */
export const ISSUABLE_SCOPES = ['read', 'write', 'execute', 'knowledge:read', 'knowledge:write', 'artifacts:read',
  'artifacts:write'] as const
export type Scope = (typeof ISSUABLE_SCOPES)[number]

const READ: Scope[] = ['read']
const WRITE: Scope[] = ['write']
const EXECUTE: Scope[] = ['execute']
const KNOWLEDGE_READ: Scope[] = ['read', 'knowledge:read']
const KNOWLEDGE_WRITE: Scope[] = ['write', 'knowledge:write']
// artifacts have scopes of their own: read and write do not open artifact routes
const ARTIFACTS_READ: Scope[] = ['artifacts:read']
const ARTIFACTS_WRITE: Scope[] = ['artifacts:write']
/** the tool server itself: any key may connect; each tool is then checked against its own route */
const ANY: Scope[] = [...ISSUABLE_SCOPES]

/** `METHOD route-url` → any one of these scopes allows it. HEAD is looked up as GET. */
export const CAPABILITY_TABLE: Readonly<Record<string, readonly Scope[]>> = {
  'GET /api/v2/developer/api-keys/:id/usage': READ,
  'GET /api/v2/developer/webhooks': READ,
  'GET /api/v2/developer/webhooks/events': READ,
  'GET /api/v2/developer/webhooks/:id/deliveries': READ,
  'GET /api/v2/developer/logs': READ,

  'POST /api/v2/developer/webhooks': WRITE,
  'PUT /api/v2/developer/webhooks/:id': WRITE,
  'DELETE /api/v2/developer/webhooks/:id': WRITE,
  'POST /api/v2/developer/webhooks/:id/deliveries/:deliveryId/redeliver': WRITE,
  'POST /api/v2/developer/webhooks/:id/rotate-secret': WRITE,
  'DELETE /api/knowledge-graph/documents/:id': WRITE,
  'POST /api/v2/activity/log': WRITE,

  'POST /api/v2/developer/webhooks/:id/test': EXECUTE,

  'GET /api/knowledge-graph/documents/:id': KNOWLEDGE_READ,
  'POST /api/v2/search': KNOWLEDGE_READ,
  'GET /api/knowledge/documents': KNOWLEDGE_READ,
  'GET /api/knowledge/document/:id': KNOWLEDGE_READ,
  'GET /api/knowledge/document/:id/download': KNOWLEDGE_READ,
  'GET /api/knowledge/documents/:id/status': KNOWLEDGE_READ,
  'GET /api/knowledge/stats': KNOWLEDGE_READ,
  'POST /api/knowledge/search': KNOWLEDGE_READ,

  'POST /api/knowledge/upload': KNOWLEDGE_WRITE,
  'POST /api/knowledge/upload/batch': KNOWLEDGE_WRITE,

  'GET /api/v2/artifacts': ARTIFACTS_READ,
  'GET /api/v2/artifacts/:id': ARTIFACTS_READ,
  'GET /api/v2/artifacts/:id/chain': ARTIFACTS_READ,
  'GET /api/v2/artifacts/conversation/:conversationId': ARTIFACTS_READ,
  'GET /api/v2/artifacts/workflow/:runId': ARTIFACTS_READ,
  // an API key hears of artifacts only (plugins/events)
  'GET /api/v2/events/stream': ARTIFACTS_READ,

  'POST /api/v2/artifacts': ARTIFACTS_WRITE,
  'PATCH /api/v2/artifacts/:id': ARTIFACTS_WRITE,
  'DELETE /api/v2/artifacts/:id': ARTIFACTS_WRITE,
  'POST /api/v2/artifacts/:id/status': ARTIFACTS_WRITE,
  'POST /api/v2/artifacts/:id/comments': ARTIFACTS_WRITE,
  'POST /api/v2/artifacts/:id/supersede': ARTIFACTS_WRITE,

  'POST /api/mcp': ANY,
  'GET /api/mcp': ANY,
  'DELETE /api/mcp': ANY
}

/**
 * What a route asks of the person behind any credential — a user session, an API key or the service key — as
 * their role now (read per request, so a demotion takes effect at once): a key never does more than its user.
 * `workspace-admin`: owner or admin of the request's workspace context; `organization-admin`: owner or admin of
 * the organization. Routes not listed here need no role beyond membership, or decide per resource (a workflow's
 * creator; the workspace named in the path of the member routes, which accept no API key).
 */
export type RoleRule = 'workspace-admin' | 'organization-admin'

export const ROLE_TABLE: Readonly<Record<string, RoleRule>> = {
  'POST /api/v2/developer/webhooks': 'workspace-admin',
  'PUT /api/v2/developer/webhooks/:id': 'workspace-admin',
  'DELETE /api/v2/developer/webhooks/:id': 'workspace-admin',
  'POST /api/v2/developer/webhooks/:id/test': 'workspace-admin',
  'POST /api/v2/developer/webhooks/:id/deliveries/:deliveryId/redeliver': 'workspace-admin',
  'POST /api/v2/developer/webhooks/:id/rotate-secret': 'workspace-admin',
  'POST /api/v2/users': 'organization-admin',
  'PATCH /api/v2/users/:id': 'organization-admin',
  'DELETE /api/v2/users/:id': 'organization-admin',
  'POST /api/v2/users/:id/password-reset': 'organization-admin',
  'POST /api/v2/invitations': 'organization-admin',
  'GET /api/v2/invitations': 'organization-admin',
  'DELETE /api/v2/invitations/:id': 'organization-admin'
}

export type CapabilityDecision = 'allowed' | 'missing-scope' | 'not-in-table'

/** The scopes any one of which opens a route to an API key (empty: no key may use it). */
export function scopesFor(method: string, routeUrl: string): readonly Scope[] {
  return CAPABILITY_TABLE[`${method === 'HEAD' ? 'GET' : method} ${routeUrl}`] ?? []
}
export type RoleDecision = 'allowed' | 'needs-organization-admin' | 'needs-workspace-admin'

const ADMIN_ROLES: readonly string[] = ['owner', 'admin']

/** The role rule of a route, or undefined. HEAD is looked up as GET. */
export function roleRuleOf(method: string, routeUrl: string): RoleRule | undefined {
  return ROLE_TABLE[`${method === 'HEAD' ? 'GET' : method} ${routeUrl}`]
}

/**
 * The role half of every authorization decision, the same for every kind of credential. `workspaceRole`: the
 * caller's current role in the request's workspace once it is known (undefined: the workspace rule waits for it).
 */
export function checkRole(method: string, routeUrl: string, orgRole: string, workspaceRole?: string): RoleDecision {
  const rule = roleRuleOf(method, routeUrl)
  if (rule === 'organization-admin' && !ADMIN_ROLES.includes(orgRole)) return 'needs-organization-admin'
  if (rule === 'workspace-admin' && workspaceRole !== undefined && !ADMIN_ROLES.includes(workspaceRole)) {
    return 'needs-workspace-admin'
  }
  return 'allowed'
}

export function checkCapability(method: string, routeUrl: string, scopes: readonly string[]): CapabilityDecision {
  const m = method === 'HEAD' ? 'GET' : method
  const needed = CAPABILITY_TABLE[`${m} ${routeUrl}`]
  if (!needed) return 'not-in-table'
  return needed.some((s) => scopes.includes(s)) ? 'allowed' : 'missing-scope'
}

/**
 * Whether a caller may read what a route shows: a person may (their role and the route's own rules decide), a key
 * only when one of its scopes opens that route. For answers that gather several kinds of rows (the unified search):
 * a key never sees there what it could not read through the route of that kind.
 */
export function mayReadThrough(apiKeyScopes: readonly string[] | undefined, method: string, routeUrl: string): boolean {
  return apiKeyScopes === undefined || checkCapability(method, routeUrl, apiKeyScopes) === 'allowed'
}

/** Why a scope list cannot be issued, or undefined when it can. */
export function scopeListProblem(scopes: readonly string[]): string | undefined {
  if (scopes.length === 0) return 'scopes must not be empty'
  if (new Set(scopes).size !== scopes.length) return 'scopes must not contain duplicates'
  const bad = scopes.filter((s) => !(ISSUABLE_SCOPES as readonly string[]).includes(s))
  if (bad.length > 0) return `unsupported scope(s): ${bad.join(', ')}; allowed: ${ISSUABLE_SCOPES.join(', ')}`
  return undefined
}

export function issuableOnly(scopes: readonly string[]): Scope[] {
  return [...new Set(scopes)].filter((s): s is Scope => (ISSUABLE_SCOPES as readonly string[]).includes(s))
}
