import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { requirePrincipal } from '../auth/plugin.js'
import { dispatcherFor } from './dispatch.js'
import { createReviewWatch, ARTIFACT_CHANGING_ROUTES, type ReviewWatch } from './review-watch.js'
import type { RouteSchemas } from './tools.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** artifact change notices that `wait_for_review` waits on */
    reviewWatch: ReviewWatch
  }
}

export const MCP_PATH = '/api/mcp'

// the protocol SDK (and the schema libraries it brings) loads at the first MCP request, not at every start:
// loading it costs a start ~0.2 s of CPU, for a route most instances never serve
let protocol: Promise<[typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
  typeof import('./server.js')]> | undefined
const loadProtocol = () => (protocol ??= Promise.all([import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
  import('./server.js')]))
/**
 * One protocol message: its parse holds the event loop, so the budget is a few MB, not the upload route's 50 MB
 * (which streams). add_document's text content is the only large part a message carries; a larger document goes
 * through POST /api/knowledge/upload. A body over it: 413, before it is read to the end.
 */
export const MCP_BODY_LIMIT = 8 * 1024 * 1024

/**
 * The tool server for coding assistants (docs/mcp.md), Streamable HTTP, stateless: every POST is
 * authenticated like any request and served by a protocol server made for that caller. Each tool calls
 * the route it stands for in-process, so the route's rules apply unchanged. Registered before the resource
 * plugins: it reads their route schemas (tool input schemas) as they are registered.
 */
async function mcpPlugin(app: FastifyInstance) {
  const watch = createReviewWatch()
  app.decorate('reviewWatch', watch)
  const notifyChange = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    if (reply.statusCode < 300) {
      const id = (request.params as { id?: string } | undefined)?.id
      if (id) watch.notify(id)
    }
    done()
  }

  const schemas = new Map<string, { body?: unknown; querystring?: unknown; params?: unknown }>()
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat()
    // only the routes that change an artifact carry the notice hook: other requests do not pay for it
    if (methods.some((m) => ARTIFACT_CHANGING_ROUTES.has(`${m} ${route.url}`))) {
      route.onResponse = [...(route.onResponse === undefined ? [] : [route.onResponse].flat()),
        notifyChange] as typeof route.onResponse
    }
    if (!route.schema) return
    for (const method of methods) schemas.set(`${method} ${route.url}`, route.schema)
  })

  // each tool call reaches its own route (with its own write turn, src/http/write-turn.ts): the envelope writes nothing
  const config = { idempotency: false, action: 'mcp', writes: false as const }
  app.post(MCP_PATH, { config, bodyLimit: MCP_BODY_LIMIT, schema: { hide: true } }, async (request, reply) => {
    const principal = requirePrincipal(request)
    // each tool call is logged by the route it reaches; the envelope itself is not an entry
    request.skipRequestLog = true
    const [{ StreamableHTTPServerTransport }, { createMcpServer, plainErrorMessage }] = await loadProtocol()
    const closed = new AbortController()
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined })
    const send = transport.send.bind(transport)
    transport.send = (message, options) => send(plainErrorMessage(message), options)
    const server = createMcpServer({ principal, dispatch: dispatcherFor(app, request), schemas: schemas as RouteSchemas,
      watch: app.reviewWatch, closed: closed.signal,
      statusSetBy: (a) => app.artifactStore.reviewRecord({ customerId: principal.customerId,
        workspaceId: a.workspace_id, userId: principal.userId }, a.id)?.statusSetBy })
    reply.raw.on('close', () => {
      closed.abort()
      void transport.close()
      void server.close()
    })
    await server.connect(transport)
    // the answer is written by the transport, past Fastify's reply: the headers every answer carries (request id,
    // security, CORS, rate limit), set by the hooks so far, go onto the raw response first
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) reply.raw.setHeader(name, value)
    }
    reply.hijack()
    await transport.handleRequest(request.raw, reply.raw, request.body)
  })

  // stateless: no server-initiated stream and no session to end (the transport's answer for both: 405)
  const notAllowed = async (request: { skipRequestLog: boolean }, reply: import('fastify').FastifyReply) => {
    request.skipRequestLog = true
    reply.code(405).header('allow', 'POST').send({ jsonrpc: '2.0',
      error: { code: -32000, message: 'Method not allowed: this server is stateless; use POST' }, id: null })
  }
  app.get(MCP_PATH, { config, schema: { hide: true } }, (request, reply) => notAllowed(request, reply))
  app.delete(MCP_PATH, { config, schema: { hide: true } }, (request, reply) => notAllowed(request, reply))
}

export default fp(mcpPlugin, { name: 'cairn-mcp', dependencies: ['cairn-auth'] })
