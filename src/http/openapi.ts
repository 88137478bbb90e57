import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { DOCS_CSP } from './security-headers.js'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { OPERATIONS, TAGS } from './openapi-operations.js'
import { ERROR_CODES } from './errors.js'
import { VERSION } from '../version.js'

type Json = Record<string, unknown>

/** What the shared error answers mean; a route's own schema may say more. */
const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: schema validation (`VALIDATION_ERROR`), malformed JSON or a rule of this route',
  401: 'No, malformed, unknown, revoked or expired credentials',
  403: 'Authenticated but not allowed: role, API key capability, or a workspace the caller is not a member of',
  404: 'Not found, or another tenant\'s resource (indistinguishable)',
  409: 'Conflict with the current state, or a request with this Idempotency-Key is still running',
  413: 'Body or file over its size limit',
  415: 'Unsupported media type or file type',
  422: 'Idempotency-Key reused with a different request, or a file that cannot be read',
  429: 'Rate limit exceeded',
  500: 'Internal error (the body never carries details)',
  502: 'The language model server failed or is unreachable',
  503: 'The service is shutting down or its database is unavailable'
}

const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'

/** The headers a client sends (parameters) and receives (response headers), declared once. */
const PARAMETERS: Record<string, Json> = {
  WorkspaceId: {
    // a plain string: generators type `format: uuid` headers as UUID objects their HTTP libraries cannot send
    name: 'x-workspace-id', in: 'header', required: false, schema: { type: 'string', pattern: UUID_PATTERN },
    description: 'The workspace context of the request (ignored for an API key bound to a workspace). Membership is ' +
      'checked: 403 otherwise.'
  },
  IdempotencyKey: {
    name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 },
    description: 'Makes a POST safe to retry: the first answer below 500 is kept 24 h and replayed for the same ' +
      'request; another request with the key: 422; still running: 409.'
  },
  RequestId: {
    name: 'x-request-id', in: 'header', required: false,
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
    description: 'A request id of your own (letters, digits, `._:-`, at most 128); otherwise one is generated. ' +
      'Returned in `x-request-id` and in error bodies.'
  }
}

const HEADERS: Record<string, Json> = {
  RequestId: { description: 'The request id (yours if sane, else generated): quote it when reporting a problem',
    schema: { type: 'string' } },
  IdempotencyReplayed: { description: '`true` when this answer is a replay of the first answer to the same ' +
    'Idempotency-Key', schema: { type: 'string', enum: ['true'] } },
  RetryAfter: { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
  RateLimitLimit: { description: 'Requests allowed per minute for this route group and caller',
    schema: { type: 'integer' } },
  RateLimitRemaining: { description: 'Requests left in the current window', schema: { type: 'integer' } },
  RateLimitReset: { description: 'Seconds until the window resets', schema: { type: 'integer' } },
  WwwAuthenticate: { description: 'The authentication scheme: `Bearer`', schema: { type: 'string' } }
}

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` })
const paramRef = (name: string) => ({ $ref: `#/components/parameters/${name}` })

const binary = { type: 'string', format: 'binary' }
const FileField = { ...binary, description: 'The file' }
const UploadFields = {
  scope: { type: 'string', enum: ['personal', 'workspace', 'organization'],
    description: 'Who may read the document. Without it: `workspace` when a workspace is given (an API key bound ' +
      'to a workspace, `workspaceId`, or the workspace context), else `organization`. A workspace-bound key may ' +
      'add only to its workspace or to personal documents (`organization`: 403 `WORKSPACE_FORBIDDEN`).' },
  workspaceId: { type: 'string', format: 'uuid',
    description: 'The workspace of a `workspace` document (else the workspace context)' },
  category: { type: 'string', maxLength: 100, default: 'general' },
  tags: { type: 'string', description: 'A JSON array of strings, e.g. `["policy","2024"]`' },
  chunkSize: { type: 'integer', default: 1000, description: 'Characters per passage' },
  chunkOverlap: { type: 'integer',
    description: 'Characters shared by neighbouring passages (default 200, or a fifth of chunkSize)' }
}

/** Request bodies that are not JSON: Swagger UI shows a file picker, generated clients take FormData. */
const MULTIPART: Record<string, Json> = {
  'POST /api/knowledge/upload': { type: 'object', required: ['file'],
    properties: { file: FileField, ...UploadFields } },
  'POST /api/knowledge/upload/batch': {
    type: 'object', required: ['files'],
    properties: { files: { type: 'array', items: binary, maxItems: 10,
      description: 'Up to 10 files, at most 50 MB each' }, ...UploadFields }
  },
  'POST /api/v2/voice-notes/audio': { type: 'object', required: ['file'],
    properties: { file: { ...binary,
      description: 'An audio file (audio/* or a known audio extension), at most 100 MB' } } }
}

/** Success answers that are not JSON, with their real media types. */
const MEDIA: Record<string, { status: number; content: Json }> = {
  'GET /api/v2/voice-notes/audio/:id': {
    status: 200,
    content: { 'audio/*': { schema: binary } }
  },
  'GET /api/knowledge/document/:id/download': {
    status: 200,
    content: { 'application/octet-stream': { schema: binary }, 'text/plain': { schema: { type: 'string' } } }
  },
  'GET /api/v2/events/stream': {
    status: 200,
    content: {
      'text/event-stream': {
        schema: { type: 'string', description: 'Server-Sent Events: `id:`, `event:` and one `data:` JSON line each' },
        example: 'id: 41\nevent: artifact.status_changed\ndata: {"id":"…","type":"task_plan","title":"…",' +
          '"status":"approved","reviewed_by":"…","workspace_id":"…","at":"2026-01-01T00:00:00.000Z"}\n\n'
      }
    }
  },
  'POST /api/v2/chat/stream': {
    status: 200,
    content: {
      'text/event-stream': {
        schema: { type: 'string', description: 'Server-Sent Events: `id:`, `event:` and one `data:` JSON line each' },
        example: 'id: 1\nevent: ready\ndata: {}\n\nid: 2\nevent: text_delta\ndata: {"content":"Hello"}\n\nid: ' +
          '3\nevent: done\ndata: {"conversationId":"…","reply":"Hello","model":"…"}\n\n'
      }
    }
  }
}

export interface RouteFacts {
  public: boolean
  rateLimited: boolean
  idempotent: boolean
  takesInput: boolean
  hasBody: boolean
}

/** What the shared machinery (auth, rate limit, idempotency, body parsing) adds to a route's answers. */
export function routeFacts(method: string, route: Pick<RouteOptions, 'config' | 'schema'>, key: string): RouteFacts {
  const config = (route.config ?? {}) as { auth?: string; rateLimit?: unknown; idempotency?: boolean }
  const schema = (route.schema ?? {}) as Json
  const hasBody = !!schema.body || key in MULTIPART
  return {
    public: config.auth === 'public',
    rateLimited: config.rateLimit !== false,
    idempotent: method === 'POST' && config.idempotency !== false,
    takesInput: hasBody || !!schema.querystring || !!schema.params,
    hasBody
  }
}

/** `/a/:id` as OpenAPI writes it, `/a/{id}` */
const openApiPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')

/** Properties that have a default need not be sent: not required, whatever the TypeBox object says. */
function relaxDefaults(schema: unknown): unknown {
  const s = schema as Json | undefined
  if (!s || s.type !== 'object' || !Array.isArray(s.required) || typeof s.properties !== 'object') return schema
  const props = s.properties as Record<string, Json>
  const required = (s.required as string[]).filter((name) => props[name]?.default === undefined)
  const out: Json = { ...s, required }
  if (required.length === 0) delete out.required
  return out
}

/**
 * OpenAPI 3.0 lets a `discriminator` select only `$ref`'d schemas; the workflow step union keeps it for Ajv
 * (clear errors) but is inline, so the document drops the keyword and keeps the `oneOf`.
 */
function dropInlineDiscriminators(node: unknown): void {
  if (!node || typeof node !== 'object') return
  if (Array.isArray(node)) { for (const n of node) dropInlineDiscriminators(n); return }
  const o = node as Json
  if (o.discriminator && Array.isArray(o.oneOf) && (o.oneOf as Json[]).some((b) => !b.$ref)) delete o.discriminator
  for (const v of Object.values(o)) dropInlineDiscriminators(v)
}

export function openApiKey(method: string, url: string) {
  return `${method} ${url}`
}

/**
 * The OpenAPI document, from one table (openapi-operations.ts) and the routes' own properties: the
 * route files keep their schemas; operation ids, tags, descriptions, error answers, headers and
 * security are added here for every route at once.
 */
async function openApi(app: FastifyInstance, opts: { publicUrl: string }) {
  const facts = new Map<string, RouteFacts>()

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Cairn API', version: VERSION,
        description: 'Self-hosted workspace platform for AI-assisted work. Every error answers with the `Error` ' +
          'shape; every response carries `x-request-id`.',
        license: { name: 'MIT', url: 'https://opensource.org/licenses/MIT' }
      },
      servers: [{ url: opts.publicUrl }],
      tags: TAGS,
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer',
            description: 'A JWT from /api/v2/auth/login, or an API key (cairn_...)' },
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An API key (cairn_...)' }
        }
      },
      security: [{ bearer: [] }, { apiKey: [] }]
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) || `def-${i}` },
    transform({ schema, url, route }) {
      const methods = [route.method].flat().filter((m) => m !== 'HEAD')
      const method = methods[0]
      const key = openApiKey(method, url)
      const doc = OPERATIONS[key]
      const f = routeFacts(method, route, key)
      facts.set(openApiKey(method, openApiPath(url)), f)
      const s = { ...(schema ?? {}) } as Json
      if (s.hide) return { schema: s as typeof schema, url }
      s.operationId = doc?.id ??
        `${method.toLowerCase()}${openApiPath(url).replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())}`
      s.tags = [doc?.tag ?? 'other']
      if (doc) s.description = doc.description
      if (!s.summary && doc) s.summary = doc.description.split('. ')[0].replace(/\.$/, '')
      if (f.public) s.security = []
      if (s.querystring) s.querystring = relaxDefaults(s.querystring)
      if (s.body) s.body = relaxDefaults(s.body)
      if (MULTIPART[key]) {
        delete s.consumes
        s.body = { content: { 'multipart/form-data': { schema: MULTIPART[key] } } }
      }

      const response: Json = { ...((s.response as Json | undefined) ?? {}) }
      const media = MEDIA[key]
      if (media) response[media.status] = { description: doc?.returns ?? 'Success', content: media.content }
      for (const [status, entry] of Object.entries(response)) {
        const code = Number(status)
        if (code < 400 && entry && typeof entry === 'object' && !(entry as Json).description) {
          response[status] = { ...(entry as Json), 'x-response-description': doc?.returns ?? 'Success' }
        }
      }
      // `errors()` declares 401 everywhere; a public route refuses no credentials (login's 401 is its own)
      if (f.public && key !== 'POST /api/v2/auth/login') delete response[401]
      const statuses = new Set<number>([500, 503])
      if (f.takesInput || f.idempotent) statuses.add(400)
      if (!f.public) { statuses.add(401); statuses.add(403) }
      if (f.rateLimited) statuses.add(429)
      if (f.idempotent) { statuses.add(409); statuses.add(422) }
      if (f.hasBody) { statuses.add(413); statuses.add(415) }
      for (const code of statuses) if (!(code in response)) response[code] = { $ref: 'Error' }
      s.response = response
      return { schema: s as typeof schema, url }
    },
    transformObject(documentObject) {
      if (!('openapiObject' in documentObject)) return documentObject.swaggerObject
      const openapiObject = documentObject.openapiObject
      const doc = openapiObject as Json & { paths: Record<string, Record<string, Json>>; components: Json }
      dropInlineDiscriminators(doc.paths)
      doc.components.parameters = PARAMETERS
      doc.components.headers = HEADERS
      const schemas = doc.components.schemas as Record<string, Json>
      const error = schemas.Error
      if (error) {
        const props = error.properties as Record<string, Json>
        props.code = { ...props.code, enum: [...ERROR_CODES].sort(),
          description: 'A machine code, one of the list; docs/api/errors.md explains each' }
        props.requestId = { type: 'string', description: 'The request id, as in the x-request-id header' }
        error.description = 'Every error answer'
      }
      for (const [path, item] of Object.entries(doc.paths)) {
        for (const [method, operation] of Object.entries(item)) {
          const f = facts.get(openApiKey(method.toUpperCase(), path))
          if (!f) continue
          const params = [...((operation.parameters as Json[] | undefined) ?? [])]
          params.push(paramRef('RequestId'))
          if (!f.public) params.push(paramRef('WorkspaceId'))
          if (f.idempotent) params.push(paramRef('IdempotencyKey'))
          operation.parameters = params
          // @fastify/swagger keeps only the body and answers of a callback: each event's delivery named here
          for (const [event, urls] of Object.entries((operation.callbacks as Record<string, Json> | undefined) ?? {})) {
            for (const delivery of Object.values(urls as Record<string, Record<string, Json>>)) {
              for (const callback of Object.values(delivery)) {
                callback.summary = `The ${event} event, delivered to the webhook's URL`
              }
            }
          }
          for (const [status, res] of Object.entries(operation.responses as Record<string, Json>)) {
            const code = Number(status)
            if (code >= 400 && (!res.description || res.description === 'Default Response')) {
              res.description = ERROR_DESCRIPTIONS[code] ?? 'Error'
            }
            const headers: Record<string, Json> = { 'x-request-id': headerRef('RequestId'),
              ...((res.headers as Record<string, Json> | undefined) ?? {}) }
            if (f.rateLimited) {
              headers['x-ratelimit-limit'] = headerRef('RateLimitLimit')
              headers['x-ratelimit-remaining'] = headerRef('RateLimitRemaining')
              headers['x-ratelimit-reset'] = headerRef('RateLimitReset')
            }
            if (code === 429) headers['retry-after'] = headerRef('RetryAfter')
            if (code === 401) headers['www-authenticate'] = headerRef('WwwAuthenticate')
            if (f.idempotent && code < 400) headers['idempotency-replayed'] = headerRef('IdempotencyReplayed')
            res.headers = headers
          }
        }
      }
      return doc as typeof openapiObject
    }
  })
  await app.register(swaggerUi, { routePrefix: '/api/docs', staticCSP: DOCS_CSP })
}

export default fp(openApi, { name: 'cairn-openapi' })
