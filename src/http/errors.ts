import { STATUS_CODES } from 'node:http'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'

const DEFAULT_CODES: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE_ENTITY',
  429: 'RATE_LIMITED',
  500: 'INTERNAL_ERROR',
  503: 'SERVICE_UNAVAILABLE'
}

/**
 * Every `code` an error body can carry, with what it means (the OpenAPI `Error` schema and the README list
 * them; test/error-codes.test.ts checks the sources use no other).
 */
export const ERROR_CODE_DESCRIPTIONS: Record<string, string> = {
  BAD_REQUEST: 'A request the route cannot use (400)',
  VALIDATION_ERROR: 'The body, query or parameters do not match the schema, or a field breaks a rule (400)',
  INVALID_JSON: 'The body is not valid JSON, or not well-formed Unicode (400)',
  FORBIDDEN_PROPERTY: 'The JSON body has a `__proto__` or `constructor.prototype` key (400)',
  WORKSPACE_REQUIRED: 'The route needs a workspace context: `x-workspace-id` or `workspace_id` (400)',
  URL_NOT_ALLOWED: 'A webhook or audio URL points at a private address or is not http(s) (400)',
  UNKNOWN_EVENT: 'A webhook names an event that does not exist (400)',
  UNKNOWN_TOOL: 'An agent names a tool that does not exist (400)',
  INVALID_WORKFLOW: 'A workflow definition is inconsistent (400)',
  MISSING_INPUT: 'A workflow run lacks a required input (400)',
  INVALID_SCOPES: 'An API key scope list is empty, repeated, unknown or `admin` (400)',
  INVALID_REFERENCE: 'An artifact refers to something that does not exist in its workspace (400)',
  NO_FILE: 'An upload without a file part (400)',
  TOO_MANY_FILES: 'More files than the upload route takes (400)',
  MALFORMED_MULTIPART: 'A multipart body that cannot be parsed (400)',
  UNAUTHORIZED: 'No, malformed, unknown, revoked or expired credentials (401)',
  FORBIDDEN: 'Authenticated but not allowed (403)',
  WORKSPACE_FORBIDDEN: 'The caller is not a member of the named workspace, or the key is bound to another (403)',
  API_KEY_NOT_ALLOWED: 'API keys cannot be used on this route (403)',
  INSUFFICIENT_SCOPE: 'The API key lacks the scope this route needs (403)',
  SIGNUP_CLOSED: 'Sign-up is closed (403)',
  NOT_FOUND: 'No such resource or route, or another tenant\'s (404)',
  METHOD_NOT_ALLOWED: 'The method is not allowed here (405)',
  NOT_ACCEPTABLE: 'No acceptable representation (406)',
  CONFLICT: 'The request conflicts with the current state (409)',
  EMAIL_TAKEN: 'An account with this email exists (409)',
  INVALID_STATE: 'The resource is not in a state that allows this (409)',
  KEY_REVOKED: 'A revoked API key cannot be rotated (409)',
  NO_ISSUABLE_SCOPES: 'The key holds no scope that can still be issued (409)',
  IDEMPOTENCY_IN_FLIGHT: 'A request with this Idempotency-Key is still running (409)',
  PAYLOAD_TOO_LARGE: 'The body or a file is over its limit (413)',
  UNSUPPORTED_MEDIA_TYPE: 'The body\'s media type is not accepted, or a voice upload is not audio (415)',
  UNSUPPORTED_FILE_TYPE: 'A knowledge file type that cannot be indexed; `supportedFormats` lists those that can (415)',
  UNPROCESSABLE_ENTITY: 'The request is well-formed but cannot be processed (422)',
  IDEMPOTENCY_KEY_REUSED: 'The Idempotency-Key was used with a different request (422)',
  UNREADABLE_FILE: 'The file\'s text cannot be extracted (422; per file in batch uploads)',
  PROCESSING_FAILED: 'A file of a batch upload failed for another reason (per file in batch uploads)',
  RATE_LIMITED: 'Too many requests; see `Retry-After` (429)',
  INTERNAL_ERROR: 'An internal error; the request id helps find it in the log (500)',
  MODEL_UNAVAILABLE: 'The language model server failed or is unreachable (502)',
  SERVICE_UNAVAILABLE: 'The service is shutting down or unavailable (503)',
  ERROR: 'Any other status (for example 408)'
}

export const ERROR_CODES = Object.keys(ERROR_CODE_DESCRIPTIONS)

/** An error meant for the client: its status, machine code and message are sent as they are. */
export class HttpError extends Error {
  readonly statusCode: number
  readonly code: string
  readonly extra?: Record<string, unknown>
  /** written to the log with the error, never sent */
  logDetail?: Record<string, unknown>
  constructor(statusCode: number, message: string, code?: string, extra?: Record<string, unknown>) {
    super(message)
    this.statusCode = statusCode
    this.code = code ?? DEFAULT_CODES[statusCode] ?? 'ERROR'
    this.extra = extra
  }
}

export const badRequest = (message: string, code = 'BAD_REQUEST') => new HttpError(400, message, code)
export const unauthorized = (message = 'Authentication required') => new HttpError(401, message)
export const forbidden = (message = 'Forbidden', code = 'FORBIDDEN') => new HttpError(403, message, code)
export const notFound = (message = 'Not found') => new HttpError(404, message)
export const conflict = (message: string, code = 'CONFLICT') => new HttpError(409, message, code)

export interface ErrorBody {
  success: false
  statusCode: number
  error: string
  code: string
  message: string
  [extra: string]: unknown
}

export function errorBody(statusCode: number, message: string, code?: string): ErrorBody {
  return {
    success: false,
    statusCode,
    error: STATUS_CODES[statusCode] ?? 'Error',
    code: code ?? DEFAULT_CODES[statusCode] ?? 'ERROR',
    message
  }
}

/** Maps anything thrown in a request to the one error shape; 5xx never carry internal details. */
export function toErrorBody(err: FastifyError | HttpError | Error): ErrorBody {
  if (err instanceof HttpError) {
    return { ...errorBody(err.statusCode, err.message, err.code), ...err.extra }
  }
  const fe = err as FastifyError
  if (fe.validation) {
    return errorBody(400, fe.message, 'VALIDATION_ERROR')
  }
  const status = typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 600 ? fe.statusCode : 500
  if (status >= 500) return errorBody(status, 'Internal server error')
  // Fastify's own client errors (bad JSON, body too large, unsupported content type): keep the message,
  // use the generic code unless the error brings an upper-snake one of ours.
  const code = fe.code && /^[A-Z][A-Z0-9_]*$/.test(fe.code) && !fe.code.startsWith('FST_') ? fe.code : undefined
  return errorBody(status, fe.message, code)
}

export function errorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const body = { ...toErrorBody(err), requestId: request.id }
  if (body.statusCode >= 500) request.log.error({ err, ...(err as Partial<HttpError>).logDetail }, 'request failed')
  if (body.statusCode === 401) reply.header('www-authenticate', 'Bearer')
  reply.code(body.statusCode).type('application/json; charset=utf-8').send(body)
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply) {
  reply.code(404).send({ ...errorBody(404, `Route ${request.method} ${request.url.split('?')[0]} not found`), requestId: request.id })
}
