import t from 'tap'
import { CAPABILITY_TABLE, ISSUABLE_SCOPES, checkCapability, scopeListProblem,
  issuableOnly } from '../../src/auth/capabilities.js'

// the scope table of docs/api/auth.md#api-keys-and-scopes, row by row
const rows: Array<[string, string, string[]]> = [
  ['GET', '/api/v2/developer/api-keys/:id/usage', ['read']],
  ['GET', '/api/v2/developer/webhooks', ['read']],
  ['GET', '/api/v2/developer/webhooks/events', ['read']],
  ['GET', '/api/v2/developer/webhooks/:id/deliveries', ['read']],
  ['GET', '/api/v2/developer/logs', ['read']],
  ['POST', '/api/v2/developer/webhooks', ['write']],
  ['PUT', '/api/v2/developer/webhooks/:id', ['write']],
  ['DELETE', '/api/v2/developer/webhooks/:id', ['write']],
  ['POST', '/api/v2/developer/webhooks/:id/deliveries/:deliveryId/redeliver', ['write']],
  ['POST', '/api/v2/developer/webhooks/:id/rotate-secret', ['write']],
  ['DELETE', '/api/knowledge-graph/documents/:id', ['write']],
  ['POST', '/api/v2/activity/log', ['write']],
  ['POST', '/api/v2/developer/webhooks/:id/test', ['execute']],
  ['GET', '/api/knowledge-graph/documents/:id', ['read', 'knowledge:read']],
  ['POST', '/api/v2/search', ['read', 'knowledge:read']],
  ['GET', '/api/knowledge/documents', ['read', 'knowledge:read']],
  ['GET', '/api/knowledge/document/:id', ['read', 'knowledge:read']],
  ['GET', '/api/knowledge/document/:id/download', ['read', 'knowledge:read']],
  ['GET', '/api/knowledge/documents/:id/status', ['read', 'knowledge:read']],
  ['GET', '/api/knowledge/stats', ['read', 'knowledge:read']],
  ['POST', '/api/knowledge/search', ['read', 'knowledge:read']],
  ['POST', '/api/knowledge/upload', ['write', 'knowledge:write']],
  ['POST', '/api/knowledge/upload/batch', ['write', 'knowledge:write']],
  // artifacts have their own scopes; read/write do not open them
  ['GET', '/api/v2/artifacts', ['artifacts:read']],
  ['GET', '/api/v2/artifacts/:id', ['artifacts:read']],
  ['GET', '/api/v2/artifacts/:id/chain', ['artifacts:read']],
  ['GET', '/api/v2/artifacts/conversation/:conversationId', ['artifacts:read']],
  ['GET', '/api/v2/artifacts/workflow/:runId', ['artifacts:read']],
  ['POST', '/api/v2/artifacts', ['artifacts:write']],
  ['PATCH', '/api/v2/artifacts/:id', ['artifacts:write']],
  ['DELETE', '/api/v2/artifacts/:id', ['artifacts:write']],
  ['POST', '/api/v2/artifacts/:id/status', ['artifacts:write']],
  ['POST', '/api/v2/artifacts/:id/comments', ['artifacts:write']],
  ['POST', '/api/v2/artifacts/:id/supersede', ['artifacts:write']],
  // the workspace event stream: a key with artifacts:read receives the artifact events only
  ['GET', '/api/v2/events/stream', ['artifacts:read']],
  // any key reaches the tool server; each tool is checked against its own route
  ['POST', '/api/mcp', [...ISSUABLE_SCOPES]],
  ['GET', '/api/mcp', [...ISSUABLE_SCOPES]],
  ['DELETE', '/api/mcp', [...ISSUABLE_SCOPES]]
]

t.test('each row allows exactly its scopes', async (t) => {
  t.equal(Object.keys(CAPABILITY_TABLE).length, rows.length, 'no row more, no row less')
  for (const [method, url, allowed] of rows) {
    for (const scope of ISSUABLE_SCOPES) {
      const expected = allowed.includes(scope) ? 'allowed' : 'missing-scope'
      t.equal(checkCapability(method, url, [scope]), expected, `${method} ${url} with ${scope}`)
    }
    t.equal(checkCapability(method, url, []), 'missing-scope')
    if (method === 'GET') t.equal(checkCapability('HEAD', url, allowed), 'allowed', `HEAD ${url}`)
  }
})

t.test('routes outside the table', async (t) => {
  for (const [method, url] of [
    ['GET', '/api/v2/api-keys'], ['POST', '/api/v2/api-keys'], ['DELETE', '/api/v2/api-keys/:id'],
    ['DELETE', '/api/knowledge/document/:id'], ['GET', '/api/v2/artifacts/meta/types'], ['POST', '/api/v2/voice-notes'],
    ['POST', '/api/v2/chat'], ['PUT', '/api/v2/developer/logs'], ['POST', '/api/v2/developer/api-keys/:id/usage']
  ]) {
    t.equal(checkCapability(method, url, [...ISSUABLE_SCOPES, 'admin']), 'not-in-table', `${method} ${url}`)
  }
})

t.test('execute is needed for the webhook test; write alone is not enough', async (t) => {
  t.equal(checkCapability('POST', '/api/v2/developer/webhooks/:id/test', ['write']), 'missing-scope')
  t.equal(checkCapability('POST', '/api/v2/developer/webhooks/:id/test', ['write', 'execute']), 'allowed')
})

t.test('admin labels give nothing', async (t) => {
  for (const [method, url] of rows) t.equal(checkCapability(method, url, ['admin']), 'missing-scope')
})

t.test('scope list rules', async (t) => {
  t.equal(scopeListProblem(['read']), undefined)
  t.equal(scopeListProblem([...ISSUABLE_SCOPES]), undefined)
  t.match(scopeListProblem([]), /empty/)
  t.match(scopeListProblem(['read', 'read']), /duplicate/)
  t.match(scopeListProblem(['admin']), /unsupported/)
  t.match(scopeListProblem(['READ']), /unsupported/)
  t.same(issuableOnly(['read', 'admin', 'read', 'execute']), ['read', 'execute'])
})
