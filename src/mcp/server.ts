import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema, ListToolsRequestSchema, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema, McpError, ErrorCode, type CallToolResult, type JSONRPCMessage, type ServerNotification
} from '@modelcontextprotocol/sdk/types.js'
import type { Principal } from '../auth/plugin.js'
import { checkCapability } from '../auth/capabilities.js'
import { VERSION } from '../version.js'
import type { Dispatch, RouteAnswer } from './dispatch.js'
import { TOOLS, WAIT_FOR_REVIEW, WAIT_MAX_SECONDS, DECIDED_STATUSES, structuredOf, errorOf, outputSchemaOf,
  type RouteSchemas, type ToolDef } from './tools.js'
import type { ReviewWatch } from './review-watch.js'

type Json = Record<string, unknown>

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const RESOURCE_PAGE = 100
/** how often a waiting wait_for_review tells a client that gave a progress token that it is still waiting */
export const PROGRESS_INTERVAL_MS = 5000

/** What a tool handler can do towards its request: tell its progress, see it cancelled. */
interface RequestExtra {
  signal: AbortSignal
  _meta?: { progressToken?: string | number }
  sendNotification: (notification: ServerNotification) => Promise<void>
}

export interface McpContext {
  principal: Principal
  dispatch: Dispatch
  schemas: RouteSchemas
  watch: ReviewWatch
  /** aborted when the HTTP exchange ends */
  closed: AbortSignal
  /**
   * Who set the current status of an artifact the caller has just read through its route: `person`, `key`, or
   * null (never set). `wait_for_review` says whether a person decided.
   */
  statusSetBy?: (artifact: { id: string; workspace_id: string }) => string | null | undefined
}

/** Whether the credential may call the route a tool stands for (the capability table; users may call all). */
export function mayUse(principal: Principal, tool: Pick<ToolDef, 'route'>): boolean {
  return !principal.apiKey || checkCapability(tool.route.method, tool.route.url, principal.apiKey.scopes) === 'allowed'
}

const ok = (answer: RouteAnswer) => answer.statusCode >= 200 && answer.statusCode < 300

function toolResult(tool: ToolDef, answer: RouteAnswer, extra: Json = {}): CallToolResult {
  if (!ok(answer)) return errorOf(answer)
  const structured = { ...structuredOf(answer), ...extra }
  return { content: [{ type: 'text', text: `${tool.summary(structured)}\n\n${JSON.stringify(structured)}` }],
    structuredContent: structured }
}

const toolError = (statusCode: number, code: string, message: string) =>
  errorOf({ statusCode, body: { code, message, error: statusCode === 400 ? 'Bad Request' : '' }, headers: {} })

/**
 * Tells the client, under the progress token it gave, how many of the `total` seconds have passed: at once, then every
 * PROGRESS_INTERVAL_MS until stopped. Without a token, nothing is sent. Returns the stop function.
 */
function reportWaiting(extra: RequestExtra, total: number): () => void {
  const token = extra._meta?.progressToken
  if (token === undefined) return () => {}
  const started = Date.now()
  let last = -1
  const send = () => {
    // progress must grow with each notification
    const progress = Math.max(last + 0.001, Math.min(total, (Date.now() - started) / 1000))
    last = progress
    extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total,
      message: 'waiting for a review' } }).catch(() => { /* the client left: the wait ends with the exchange */ })
  }
  send()
  const timer = setInterval(send, PROGRESS_INTERVAL_MS)
  return () => clearInterval(timer)
}

/** Waits on change notices of the artifact, never on a loop of reads; each read goes through the route. */
async function waitForReview(tool: ToolDef, args: Json, ctx: McpContext, extra: RequestExtra): Promise<CallToolResult> {
  const timeout = args.timeoutSeconds ?? 30
  const signal = extra.signal
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1 || timeout > WAIT_MAX_SECONDS) {
    return toolError(400, 'VALIDATION_ERROR', `timeoutSeconds must be an integer from 1 to ${WAIT_MAX_SECONDS}`)
  }
  if (typeof args.id !== 'string' || !UUID.test(args.id)) return toolError(400, 'VALIDATION_ERROR', 'id must be a UUID')
  const id = args.id
  let changed = false
  let wake: (() => void) | undefined
  const unsubscribe = ctx.watch.watch(id, () => { changed = true; wake?.() })
  const deadline = Date.now() + timeout * 1000
  let stopReporting: (() => void) | undefined
  try {
    for (;;) {
      changed = false
      const answer = await ctx.dispatch(tool.call(args))
      if (!ok(answer)) return errorOf(answer)
      const status = (structuredOf(answer) as { status?: string }).status
      if (status && DECIDED_STATUSES.includes(status)) {
        // a status an API key set (a supersede, or a decision its policy leaves to machines) is no person's decision
        const setBy = ctx.statusSetBy?.(structuredOf(answer) as { id: string; workspace_id: string })
        return toolResult(tool, answer, { changed: true, decided_by_person: setBy === 'person' })
      }
      if (changed) continue // a change arrived while we read
      stopReporting ??= reportWaiting(extra, timeout)
      const woke = await new Promise<boolean>((resolve) => {
        const left = deadline - Date.now()
        const done = (value: boolean) => {
          clearTimeout(timer)
          signal.removeEventListener('abort', stop)
          ctx.closed.removeEventListener('abort', stop)
          wake = undefined
          resolve(value)
        }
        const stop = () => done(false)
        const timer = setTimeout(stop, Math.max(0, left))
        wake = () => done(true)
        signal.addEventListener('abort', stop)
        ctx.closed.addEventListener('abort', stop)
      })
      if (!woke) return toolResult(tool, answer, { changed: false, decided_by_person: false })
    }
  } finally {
    stopReporting?.()
    unsubscribe()
  }
}

function resourceUri(uri: string): { kind: 'artifacts' | 'documents'; id: string } | undefined {
  const m = /^cairn:\/\/(artifacts|documents)\/([^/?#]+)$/.exec(uri)
  return m ? { kind: m[1] as 'artifacts' | 'documents', id: decodeURIComponent(m[2]) } : undefined
}

const LOOSE_CALL_TOOL_REQUEST = CallToolRequestSchema.pick({ method: true }).loose()

/** Whether a value is of a JSON Schema type (`integer`: a whole number; numbers are finite in JSON). */
function isOfType(type: unknown, value: unknown): boolean {
  switch (type) {
    case 'string': return typeof value === 'string'
    case 'integer': return Number.isInteger(value)
    case 'number': return typeof value === 'number'
    case 'boolean': return typeof value === 'boolean'
    case 'array': return Array.isArray(value)
    case 'object': return typeof value === 'object' && value !== null && !Array.isArray(value)
    case 'null': return value === null
    default: return true
  }
}

/**
 * Why an argument is not of the type the tool's input schema gives it, or undefined: a tool error (400
 * VALIDATION_ERROR) as the route would answer, not a failure while its request is made. The route checks the rest
 * (bounds, formats, values); nothing is converted (a string is not a number).
 */
export function argumentProblem(schema: { properties: Record<string, Json> }, args: Json): string | undefined {
  for (const [name, value] of Object.entries(args)) {
    const property = schema.properties[name]
    if (!property || value === undefined) continue
    const members = Array.isArray(property.anyOf) ? property.anyOf as Json[] : [property]
    if (members.some((m) => m.type === undefined)) continue // a member of any type
    const types = [...new Set(members.flatMap((m) => [m.type].flat()))]
    if (!types.some((type) => isOfType(type, value))) return `arguments/${name} must be ${types.join(' or ')}`
  }
  return undefined
}

const PREFIXED = /^MCP error -?\d+: /

/**
 * The message as it goes out, without the "MCP error <code>: " that the SDK's McpError puts in front of every
 * message: clients put it in front again when they raise the error (and the code travels in `code` anyway).
 */
export function plainErrorMessage(message: JSONRPCMessage): JSONRPCMessage {
  if (!('error' in message) || typeof message.error?.message !== 'string') return message
  let text = message.error.message
  while (PREFIXED.test(text)) text = text.replace(PREFIXED, '')
  return text === message.error.message ? message : { ...message, error: { ...message.error, message: text } }
}

/** An MCP error for a route's failure; the HTTP status and code travel in `data`. */
function routeError(answer: RouteAnswer): McpError {
  const b = answer.body
  const code = answer.statusCode === 404 ? ErrorCode.InvalidParams : ErrorCode.InvalidRequest
  return new McpError(code, `HTTP ${answer.statusCode} ${String(b.code ?? '')}: ${String(b.message ?? '')}`,
    { statusCode: answer.statusCode, code: b.code, message: b.message })
}

/** A protocol server for one HTTP exchange, acting as its caller (stateless: nothing outlives the exchange). */
export function createMcpServer(ctx: McpContext): Server {
  const server = new Server(
    { name: 'cairn', title: 'Cairn', version: VERSION },
    {
      capabilities: { tools: {}, resources: {} },
      instructions: 'Cairn: search the knowledge base, write plans and other artifacts, and wait for a person to ' +
        'review them.'
    }
  )
  const usable = TOOLS.filter((tool) => mayUse(ctx.principal, tool))

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: usable.map((tool) => ({
      name: tool.name, title: tool.title, description: tool.description, inputSchema: tool.inputSchema(ctx.schemas),
      outputSchema: outputSchemaOf(tool, ctx.schemas) as { type: 'object' },
      annotations: {
        readOnlyHint: tool.route.method === 'GET',
        destructiveHint: false,
        idempotentHint: tool.route.method === 'GET' || tool.route.method === 'PATCH',
        openWorldHint: false
      }
    }))
  }))

  // registered with the method alone: the SDK's parse by the full schema threw a plain error (-32603, internal)
  // for malformed params; its tools/call check (run first) answers them -32602, invalid params, as the spec says
  server.setRequestHandler(LOOSE_CALL_TOOL_REQUEST, async (request, extra) => {
    const params = (request as { params?: { name?: unknown; arguments?: unknown } }).params
    const tool = TOOLS.find((t) => t.name === params?.name)
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${String(params?.name)}`)
    const args = params?.arguments ?? {}
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      throw new McpError(ErrorCode.InvalidParams, 'Tool arguments must be an object')
    }
    // a tool the credential may not use still goes to its route, which answers with its own 403
    if (mayUse(ctx.principal, tool)) {
      const problem = argumentProblem(tool.inputSchema(ctx.schemas), args as Json)
      if (problem) return toolError(400, 'VALIDATION_ERROR', problem)
    }
    if (tool.name === WAIT_FOR_REVIEW) return waitForReview(tool, args as Json, ctx, extra)
    return toolResult(tool, await ctx.dispatch(tool.call(args as Json)))
  })

  const artifactRead = { route: { method: 'GET' as const, url: '/api/v2/artifacts/:id' } }
  const documentRead = { route: { method: 'GET' as const, url: '/api/knowledge/document/:id' } }

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      ...(mayUse(ctx.principal, artifactRead)
        ? [{ uriTemplate: 'cairn://artifacts/{id}', name: 'artifact', title: 'Artifact', mimeType: 'application/json' }]
        : []),
      ...(mayUse(ctx.principal, documentRead)
        ? [{ uriTemplate: 'cairn://documents/{id}', name: 'document', title: 'Knowledge document',
            mimeType: 'text/plain' }] : [])
    ]
  }))

  // the cursor is the pair of offsets into the artifact and document lists
  server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    let offsets = { a: 0, d: 0 }
    if (request.params?.cursor) {
      try {
        offsets = JSON.parse(Buffer.from(request.params.cursor, 'base64url').toString()) as { a: number; d: number }
        if (![offsets.a, offsets.d].every((n) => Number.isInteger(n) && n >= -1 && n <= 1_000_000_000)) {
          throw new Error('bad offsets')
        }
      } catch {
        throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor')
      }
    }
    const resources: Array<{ uri: string; name: string; title?: string; mimeType: string }> = []
    const next = { a: -1, d: -1 }
    if (offsets.a >= 0 && mayUse(ctx.principal, { route: { method: 'GET', url: '/api/v2/artifacts' } })) {
      const answer = await ctx.dispatch({ method: 'GET', url: '/api/v2/artifacts',
        query: { limit: RESOURCE_PAGE, offset: offsets.a } })
      if (ok(answer)) {
        const rows = answer.body.data as Json[]
        for (const a of rows) resources.push({ uri: `cairn://artifacts/${String(a.id)}`,
          name: `artifact ${String(a.id)}`, title: String(a.title), mimeType: 'application/json' })
        if (rows.length === RESOURCE_PAGE) next.a = offsets.a + RESOURCE_PAGE
      }
    }
    if (offsets.d >= 0 && mayUse(ctx.principal, { route: { method: 'GET', url: '/api/knowledge/documents' } })) {
      const answer = await ctx.dispatch({ method: 'GET', url: '/api/knowledge/documents',
        query: { limit: RESOURCE_PAGE, offset: offsets.d } })
      if (ok(answer)) {
        const rows = answer.body.documents as Json[]
        for (const d of rows) resources.push({ uri: `cairn://documents/${String(d.id)}`,
          name: `document ${String(d.id)}`, title: String(d.fileName), mimeType: 'text/plain' })
        if (rows.length === RESOURCE_PAGE) next.d = offsets.d + RESOURCE_PAGE
      }
    }
    const more = next.a >= 0 || next.d >= 0
    return { resources, ...(more ? { nextCursor: Buffer.from(JSON.stringify(next)).toString('base64url') } : {}) }
  })

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri
    const target = resourceUri(uri)
    if (!target) throw new McpError(ErrorCode.InvalidParams, `Unknown resource: ${uri}`)
    const id = encodeURIComponent(target.id)
    if (target.kind === 'artifacts') {
      const answer = await ctx.dispatch({ method: 'GET', url: `/api/v2/artifacts/${id}` })
      if (!ok(answer)) throw routeError(answer)
      return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(answer.body.data) }] }
    }
    // the document's text: its passages, page by page
    const texts: string[] = []
    for (let offset = 0; ; offset += 1000) {
      const answer = await ctx.dispatch({ method: 'GET', url: `/api/knowledge/document/${id}`,
        query: { chunkOffset: offset, chunkLimit: 1000 } })
      if (!ok(answer)) throw routeError(answer)
      const chunks = answer.body.chunks as Array<{ text: string }>
      texts.push(...chunks.map((c) => c.text))
      if (chunks.length < 1000) break
    }
    return { contents: [{ uri, mimeType: 'text/plain', text: texts.join('\n\n') }] }
  })

  return server
}
