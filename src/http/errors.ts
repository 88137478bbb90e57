import { STATUS_CODES } from 'node:http'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { isDiskFull } from '../db/disk-full.js'

const DEFAULT_CODES: Record<number, ErrorCode> = {
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
  503: 'SERVICE_UNAVAILABLE',
  507: 'INSUFFICIENT_STORAGE'
}

import type { ErrorCode } from './error-codes.js'
export { ERROR_CODE_DESCRIPTIONS, ERROR_CODES, type ErrorCode } from './error-codes.js'

/** An error meant for the client: its status, machine code and message are sent as they are. */
export class HttpError extends Error {
  readonly statusCode: number
  readonly code: ErrorCode
  readonly extra?: Record<string, unknown>
  /** written to the log with the error, never sent */
  logDetail?: Record<string, unknown>
  constructor(statusCode: number, message: string, code?: ErrorCode, extra?: Record<string, unknown>) {
    super(message)
    this.statusCode = statusCode
    this.code = code ?? DEFAULT_CODES[statusCode] ?? 'ERROR'
    this.extra = extra
  }
}

export const badRequest = (message: string, code: ErrorCode = 'BAD_REQUEST') => new HttpError(400, message, code)
export const unauthorized = (message = 'Authentication required') => new HttpError(401, message)
export const forbidden = (message = 'Forbidden', code: ErrorCode = 'FORBIDDEN') => new HttpError(403, message, code)
export const notFound = (message = 'Not found') => new HttpError(404, message)
export const conflict = (message: string, code: ErrorCode = 'CONFLICT') => new HttpError(409, message, code)

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
  // a full disk is a state of the server, not a fault: the write was refused, and the client may try again later
  if (isDiskFull(err)) {
    return errorBody(507, 'The server is out of storage space: try again once space is freed', 'INSUFFICIENT_STORAGE')
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
  // a full disk: one line per refused request, not a stack each
  if (body.statusCode === 507) request.log.warn({ error: err.message }, 'disk full: request refused')
  else if (body.statusCode >= 500) {
    request.log.error({ err, ...(err as Partial<HttpError>).logDetail }, 'request failed')
  }
  if (body.statusCode === 401) reply.header('www-authenticate', 'Bearer')
  reply.code(body.statusCode).type('application/json; charset=utf-8').send(body)
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply) {
  reply.code(404).send({ ...errorBody(404, `Route ${request.method} ${request.url.split('?')[0]} not found`),
    requestId: request.id })
}

/**
 * A parser error from a broken multipart body (bad boundary, cut-off part) is the client's: 400. Our own
 * HTTP errors and system errors (a full disk) pass through unchanged.
 */
export function malformedOr(err: unknown): unknown {
  const e = err as { statusCode?: number; code?: string }
  if (err instanceof HttpError || (e.statusCode && e.statusCode < 500) || /^E[A-Z]+$/.test(e.code ?? '')) return err
  return badRequest(`Malformed multipart body: ${(err as Error).message}`, 'MALFORMED_MULTIPART')
}
