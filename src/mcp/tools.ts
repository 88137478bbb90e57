import { randomBytes } from 'node:crypto'
import type { RouteCall, RouteAnswer } from './dispatch.js'

type Json = Record<string, unknown>
type JsonSchema = { type: 'object'; properties: Record<string, Json>; required?: string[];
  additionalProperties?: boolean }

/** A registered route's schemas (read by the plugin at registration), by `METHOD url`. */
export type RouteSchemas = ReadonlyMap<string, { body?: unknown; querystring?: unknown; params?: unknown;
  response?: Record<string, unknown> }>

/**
 * One tool of the tool server (docs/mcp.md#tools): the route it stands for, its input schema and how its arguments
 * become a call.
 */
export interface ToolDef {
  name: string
  title: string
  description: string
  /** the route whose capability, rules and schema the tool takes */
  route: { method: RouteCall['method']; url: string }
  inputSchema(schemas: RouteSchemas): JsonSchema
  /** fields the tool adds to the route's answer (wait_for_review's `changed`) */
  extraOutput?: Record<string, Json>
  call(args: Json): RouteCall
  /** a one-line rendering of a successful answer */
  summary(structured: Json): string
}

/** A JSON copy of a TypeBox schema (its symbol keys dropped), or undefined. */
function plain(schema: unknown): JsonSchema | undefined {
  if (!schema || typeof schema !== 'object') return undefined
  return JSON.parse(JSON.stringify(schema)) as JsonSchema
}

/**
 * Properties `names` of the route's params, querystring and body schemas, in that order of precedence.
 * A property with a default is optional to the tool (the route fills it in).
 */
function fromRoute(schemas: RouteSchemas, route: ToolDef['route'], names: string[]): JsonSchema {
  const s = schemas.get(`${route.method} ${route.url}`)
  const sources = [plain(s?.params), plain(s?.querystring),
    plain(s?.body)].filter((x): x is JsonSchema => x !== undefined)
  const properties: Record<string, Json> = {}
  const required: string[] = []
  for (const name of names) {
    const source = sources.find((x) => x.properties?.[name] !== undefined)
    if (!source) continue
    const property = source.properties[name]
    properties[name] = property
    if (source.required?.includes(name) && property.default === undefined) required.push(name)
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}) }
}

/** The structured content of a tool that failed: the route's error (see errorOf). */
const TOOL_ERROR_OUTPUT: JsonSchema = {
  type: 'object',
  properties: {
    statusCode: { type: 'integer' }, code: { type: 'string' }, error: { type: 'string' }, message: { type: 'string' },
    retryAfter: { type: 'number' }
  },
  required: ['statusCode', 'code', 'message']
}

/**
 * What a tool's `structuredContent` holds, from the route's success answer as structuredOf shapes it: its `data`
 * object, else the answer without `success`; or, when the tool failed, the route's error. MCP clients check results
 * against it (the error included), so both are its branches.
 */
export function outputSchemaOf(tool: Pick<ToolDef, 'route' | 'extraOutput'>, schemas: RouteSchemas): Json {
  const response = schemas.get(`${tool.route.method} ${tool.route.url}`)?.response ?? {}
  const success = plain(response['200'] ?? response['201'] ?? response['202'])
  let shape: JsonSchema = { type: 'object', properties: {} }
  if (success?.properties) {
    const data = success.properties.data as JsonSchema | undefined
    if (data?.type === 'object' && data.properties) shape = data
    else {
      const { success: _success, ...properties } = success.properties
      shape = { type: 'object', properties,
        ...(success.required ? { required: success.required.filter((n) => n !== 'success') } : {}) }
    }
  }
  if (tool.extraOutput) {
    shape = { ...shape, properties: { ...shape.properties, ...tool.extraOutput },
      required: [...shape.required ?? [], ...Object.keys(tool.extraOutput)] }
  }
  return { type: 'object', anyOf: [shape, TOOL_ERROR_OUTPUT] }
}

const only = (args: Json,
  names: string[]) => Object.fromEntries(names.filter((n) => args[n] !== undefined).map((n) => [n, args[n]]))
const idOf = (args: Json) => encodeURIComponent(typeof args.id === 'string' ? args.id : String(args.id ?? ''))

const ARTIFACTS = '/api/v2/artifacts'
const artifactLine = (a: Json) => `${String(a.title)} [${String(a.type)}] ${String(a.status)} (${String(a.id)})`
const listLine = (s: Json) => {
  const items = Array.isArray(s.data) ? s.data as Json[] : []
  return [`${items.length} item(s)`, ...items.slice(0, 20).map(artifactLine)].join('\n')
}

function bodyTool(name: string, title: string, description: string, method: RouteCall['method'], url: string,
  fields: string[],
  summary: ToolDef['summary'], withId = false): ToolDef {
  const route = { method, url }
  const names = withId ? ['id', ...fields] : fields
  return {
    name, title, description, route,
    inputSchema: (schemas) => fromRoute(schemas, route, names),
    call: (args) => ({ method, url: withId ? url.replace(':id', idOf(args)) : url, payload: only(args, fields) }),
    summary
  }
}

function getTool(name: string, title: string, description: string, url: string, query: string[],
  summary: ToolDef['summary']): ToolDef {
  const route = { method: 'GET' as const, url }
  const withId = url.includes(':id')
  return {
    name, title, description, route,
    inputSchema: (schemas) => fromRoute(schemas, route, withId ? ['id', ...query] : query),
    call: (args) => ({ method: 'GET', url: url.replace(':id', idOf(args)), query: only(args, query) }),
    summary
  }
}

/** A multipart body with one text file and the upload form fields. */
function uploadBody(args: Json) {
  const boundary = '----cairn-mcp-' + randomBytes(8).toString('hex')
  const parts: Buffer[] = []
  const field = (name: string, value: string) =>
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`))
  if (typeof args.category === 'string') field('category', args.category)
  if (Array.isArray(args.tags)) field('tags', JSON.stringify(args.tags))
  if (typeof args.scope === 'string') field('scope', args.scope)
  const fileName = String(args.fileName ?? '').replace(/["\r\n]/g, '_')
  parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\n` +
    'Content-Type: text/plain; charset=utf-8\r\n\r\n'))
  parts.push(Buffer.from(String(args.content ?? ''), 'utf8'))
  parts.push(Buffer.from(`\r\n--${boundary}--\r\n`))
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
}

export const WAIT_FOR_REVIEW = 'wait_for_review'
/** wait_for_review's longest wait: under the 60 s that MCP clients (the official SDKs) give a request by default */
export const WAIT_MAX_SECONDS = 50
export const DECIDED_STATUSES = ['approved', 'rejected', 'superseded']

export const TOOLS: ToolDef[] = [
  bodyTool('search_knowledge', 'Search the knowledge base',
    'Search the passages of the documents the caller can read. Returns matching passages with their documents.',
    'POST', '/api/knowledge/search', ['query', 'limit', 'mode', 'scope', 'category', 'tags'],
    (s) => {
      const results = Array.isArray(s.results) ? s.results as Json[] : []
      return [`${results.length} passage(s) for "${String(s.query)}"`, ...results.slice(0, 10).map((r) => {
        const doc = r.document as Json | undefined
        const chunk = r.chunk as Json | undefined
        // where the passage is: its file, then the headings above it ("guide.md › Setup › Proxies")
        const where = [String(doc?.fileName), ...Array.isArray(chunk?.headingPath) ? chunk.headingPath.map(String) : []]
        return `- ${where.join(' › ')} (${String(doc?.id)}): ` + String(r.snippet ?? chunk?.text ?? '').slice(0, 200)
      })].join('\n')
    }),
  getTool('get_document', 'Read a knowledge document',
    'A knowledge document with its passages (chunkOffset/chunkLimit page through them).',
    '/api/knowledge/document/:id', ['chunkOffset', 'chunkLimit'],
    (s) => `${String((s.document as Json)?.fileName)}: ${Array.isArray(s.chunks) ? s.chunks.length : 0} passage(s)`),
  {
    name: 'add_document', title: 'Add a text document to the knowledge base',
    description: 'Upload text content as a document (fileName must have a supported text extension such as .md or ' +
      '.txt). Without scope it goes to the workspace (of a workspace-bound key, or the x-workspace-id header), else ' +
      'to the organization; a workspace-bound key may add only to its workspace or to personal documents. A message ' +
      'to this server is at most 8 MB: upload larger files through POST /api/knowledge/upload.',
    route: { method: 'POST', url: '/api/knowledge/upload' },
    inputSchema: () => ({
      type: 'object',
      properties: {
        fileName: { type: 'string', minLength: 1, maxLength: 255,
          description: 'file name with its extension, e.g. notes.md' },
        content: { type: 'string', description: 'the text of the document' },
        category: { type: 'string', minLength: 1, maxLength: 100 },
        tags: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 100 }, maxItems: 50 },
        scope: { type: 'string', enum: ['organization', 'workspace', 'personal'],
          description: 'who may read it; default: the workspace when there is one, else the organization' }
      },
      required: ['fileName', 'content']
    }),
    call: (args) => ({ method: 'POST', url: '/api/knowledge/upload', ...uploadBody(args) }),
    summary: (s) => String(s.message ?? 'uploaded')
  },
  getTool('list_artifacts', 'List artifacts', 'Artifacts of the workspace, newest first, with optional filters.',
    ARTIFACTS, ['type', 'status', 'workflow_id', 'conversation_id', 'limit', 'offset'], listLine),
  getTool('get_artifact', 'Get an artifact', 'One artifact with its content, related artifacts and comments.',
    `${ARTIFACTS}/:id`, [], artifactLine),
  getTool('get_artifact_chain', 'Get the versions of an artifact',
    'Every version connected to this artifact, oldest first.',
    `${ARTIFACTS}/:id/chain`, [], listLine),
  bodyTool('create_artifact', 'Create an artifact',
    'Write a plan, walkthrough, proof or other record of AI work (status draft). review_policy request_review asks a ' +
      'person to decide.',
    'POST', ARTIFACTS,
    ['type', 'title', 'content', 'subtype', 'confidence', 'review_policy', 'conversation_id', 'workflow_id',
      'workflow_run_id', 'related_artifacts'],
    artifactLine),
  bodyTool('update_artifact', 'Update an artifact',
    'Change title, content, confidence or review policy. Once a person has approved or rejected a request_review ' +
      'artifact, an API key cannot change it (ARTIFACT_REVIEWED): create a new artifact with parent_artifact_id.',
    'PATCH', `${ARTIFACTS}/:id`, ['title', 'content', 'confidence', 'review_policy'], artifactLine, true),
  bodyTool('supersede_artifact', 'Make a new version of an artifact',
    'A new draft version follows the artifact, which becomes superseded. Not for an artifact a person has ' +
      'approved or rejected (ARTIFACT_REVIEWED): create a new artifact with parent_artifact_id instead.',
    'POST', `${ARTIFACTS}/:id/supersede`, ['title', 'content', 'confidence'], artifactLine, true),
  bodyTool('comment_on_artifact', 'Comment on an artifact', 'Add a comment, optionally anchored by a position object.',
    'POST', `${ARTIFACTS}/:id/comments`, ['content', 'position'],
    (s) => `${Array.isArray(s.comments) ? s.comments.length : 0} comment(s) on ${String(s.title)}`, true),
  bodyTool('set_artifact_status', 'Set the status of an artifact',
    'Move an artifact to draft, pending_review, approved, rejected or superseded. An API key cannot approve or ' +
      'reject an artifact whose review_policy is request_review, nor change the status of one a person has decided on.',
    'POST', `${ARTIFACTS}/:id/status`, ['status'], artifactLine, true),
  {
    name: WAIT_FOR_REVIEW, title: 'Wait for the review of an artifact',
    description: 'Wait until the artifact is approved, rejected or superseded (changed: true), or until ' +
      'timeoutSeconds pass (changed: false). Returns the artifact; decided_by_person says whether a person (not an ' +
      'API key) set that status.',
    route: { method: 'GET', url: `${ARTIFACTS}/:id` },
    inputSchema: (schemas) => {
      const base = fromRoute(schemas, { method: 'GET', url: `${ARTIFACTS}/:id` }, ['id'])
      return { ...base, properties: { ...base.properties,
        timeoutSeconds: { type: 'integer', minimum: 1, maximum: WAIT_MAX_SECONDS, default: 30,
          description: `at most ${WAIT_MAX_SECONDS}: below the 60 s request timeout of common MCP clients` } } }
    },
    extraOutput: {
      changed: { type: 'boolean', description: 'false when the time ran out before a decision' },
      decided_by_person: { type: 'boolean' }
    },
    call: (args) => ({ method: 'GET', url: `${ARTIFACTS}/${idOf(args)}` }),
    summary: (s) => {
      const what = !s.changed ? 'no decision yet'
        : s.decided_by_person ? 'decided by a person' : 'changed by an API key, not a person\'s decision'
      return `${what}: ${artifactLine(s)}`
    }
  },
  bodyTool('log_activity', 'Record an activity', 'Write an entry to the developer log.', 'POST', '/api/v2/activity/log',
    ['action', 'category', 'metadata'],
    (s) => `logged ${String(s.action)}`)
]

/** The route's answer as a tool's structured content: its `data` object, else the body without `success`. */
export function structuredOf(answer: RouteAnswer): Json {
  const { success: _success, ...rest } = answer.body
  const data = rest.data
  if (data !== null && typeof data === 'object' && !Array.isArray(data)) return data as Json
  return rest
}

/** A route's error as tool-error content: status, code and message of the error shape (docs/api/errors.md). */
export function errorOf(answer: RouteAnswer) {
  const b = answer.body
  const retryAfter = answer.headers['retry-after']
  const structured: Json = {
    statusCode: answer.statusCode,
    code: typeof b.code === 'string' ? b.code : 'ERROR',
    error: typeof b.error === 'string' ? b.error : '',
    message: typeof b.message === 'string' ? b.message : 'Request failed',
    ...(retryAfter === undefined ? {} : { retryAfter: Number(retryAfter) })
  }
  return {
    isError: true,
    content: [{ type: 'text' as const,
      text: `HTTP ${answer.statusCode} ${String(structured.code)}: ${String(structured.message)}` }],
    structuredContent: structured
  }
}
