/**
 * The capability table of SPEC.md "Authentication", read with CONTRACT.md §3: the one place that says
 * which per-user API key scopes open which route. A route not listed here answers 403 to an API key.
 */
export const ISSUABLE_SCOPES = ['read', 'write', 'execute', 'knowledge:read', 'knowledge:write', 'artifacts:read',
  'artifacts:write'] as const
export type Scope = (typeof ISSUABLE_SCOPES)[number]

const READ: Scope[] = ['read']
const WRITE: Scope[] = ['write']
const EXECUTE: Scope[] = ['execute']
const KNOWLEDGE_READ: Scope[] = ['read', 'knowledge:read']
const KNOWLEDGE_WRITE: Scope[] = ['write', 'knowledge:write']
// Cairn's extension (CONTRACT.md §3): the SPEC.md scopes do not open artifact routes
const ARTIFACTS_READ: Scope[] = ['artifacts:read']
const ARTIFACTS_WRITE: Scope[] = ['artifacts:write']
/** the tool server itself: any key may connect; each tool is then checked against its own route */
const ANY: Scope[] = [...ISSUABLE_SCOPES]

/** `METHOD route-url` → any one of these scopes allows it. HEAD is looked up as GET. */
export const CAPABILITY_TABLE: Readonly<Record<string, readonly Scope[]>> = {
  'GET /api/v2/developer/api-keys/:id/usage': READ,
  'GET /api/v2/developer/webhooks': READ,
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

export type CapabilityDecision = 'allowed' | 'missing-scope' | 'not-in-table'

export function checkCapability(method: string, routeUrl: string, scopes: readonly string[]): CapabilityDecision {
  const m = method === 'HEAD' ? 'GET' : method
  const needed = CAPABILITY_TABLE[`${m} ${routeUrl}`]
  if (!needed) return 'not-in-table'
  return needed.some((s) => scopes.includes(s)) ? 'allowed' : 'missing-scope'
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
