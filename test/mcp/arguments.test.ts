import t from 'tap'
import { build, signup, createKey } from '../helper.js'

interface RpcAnswer {
  result?: { isError?: boolean; structuredContent?: Record<string, unknown> }
  error?: { code: number; message: string }
}

t.test('a tool argument of the wrong type is a tool error, malformed params are invalid params', async (t) => {
  const app = await build(t)
  const u = await signup(app)
  const key = await createKey(app, u, ['knowledge:read', 'knowledge:write', 'artifacts:read', 'artifacts:write',
    'write'])
  const headers = { authorization: `Bearer ${key.key}`, 'x-workspace-id': u.workspaceId,
    accept: 'application/json, text/event-stream' }
  const rpc = async (params: unknown): Promise<RpcAnswer> => {
    const res = await app.inject({ method: 'POST', url: '/api/mcp', headers,
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params } })
    t.equal(res.statusCode, 200)
    const data = /^data: (.*)$/m.exec(res.body)
    return JSON.parse(data ? data[1] : res.body) as RpcAnswer
  }

  const wrong: Array<[string, Record<string, unknown>, string]> = [
    ['search_knowledge', { query: 5 }, 'arguments/query must be string'],
    ['search_knowledge', { query: ['x'] }, 'arguments/query must be string'],
    ['search_knowledge', { query: 'x', limit: 'Infinity', mode: 'substring' }, 'arguments/limit must be integer'],
    ['search_knowledge', { query: 'x', limit: '1e400' }, 'arguments/limit must be integer'],
    ['search_knowledge', { query: 'x', limit: 2.5 }, 'arguments/limit must be integer'],
    ['get_document', { id: { toString: 1 } }, 'arguments/id must be string'],
    ['get_document', { id: '00000000-0000-4000-8000-000000000000', chunkOffset: 'Infinity' },
      'arguments/chunkOffset must be integer'],
    ['add_document', { fileName: 'a.md', content: { valueOf: 1, toString: 1 } }, 'arguments/content must be string'],
    ['add_document', { fileName: 'a.md', content: 'x', tags: 'ops' }, 'arguments/tags must be array'],
    ['list_artifacts', { limit: { toString: 1 } }, 'arguments/limit must be integer'],
    ['create_artifact', { type: 'task_plan', title: 'x', confidence: 0.5 }, 'arguments/confidence must be object'],
    ['wait_for_review', { id: 5 }, 'arguments/id must be string'],
    ['wait_for_review', { id: '00000000-0000-4000-8000-000000000000', timeoutSeconds: '5' },
      'arguments/timeoutSeconds must be integer'],
    ['log_activity', { action: 'x', metadata: 'text' }, 'arguments/metadata must be object']
  ]
  for (const [name, args, message] of wrong) {
    const answer = await rpc({ name, arguments: args })
    t.notOk(answer.error, `${name} ${JSON.stringify(args)}: no protocol error`)
    t.equal(answer.result?.isError, true, `${name}: a tool error`)
    t.match(answer.result?.structuredContent, { statusCode: 400, code: 'VALIDATION_ERROR', message })
  }

  for (const params of [{ name: 'search_knowledge', arguments: 'query' }, { name: 'search_knowledge', arguments: [1] },
    { name: 5, arguments: {} }, { arguments: {} }]) {
    const answer = await rpc(params)
    t.equal(answer.error?.code, -32602, `${JSON.stringify(params)}: invalid params, not an internal error`)
  }

  // a key that may not use the tool still hears its route's 403, whatever the arguments
  const reader = await createKey(app, u, ['knowledge:read'])
  const refused = await app.inject({ method: 'POST', url: '/api/mcp',
    headers: { ...headers, authorization: `Bearer ${reader.key}` },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call',
      params: { name: 'create_artifact', arguments: { type: 5 } } } })
  t.match(refused.body, /"code":"INSUFFICIENT_SCOPE"/)

  // right types still reach the route, which checks the values
  const found = await rpc({ name: 'search_knowledge', arguments: { query: 'x', limit: 5, mode: 'substring' } })
  t.equal(found.result?.isError, undefined)
  const bounded = await rpc({ name: 'search_knowledge', arguments: { query: 'x', limit: 500 } })
  t.match(bounded.result?.structuredContent, { statusCode: 400, message: 'body/limit must be <= 100' })
})
