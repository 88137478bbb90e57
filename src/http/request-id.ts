import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

/** A client's own request id is kept when it is a short token that is safe in logs and headers. */
export const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Fastify's `genReqId`: the caller's `x-request-id` when sane, else a fresh UUID. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id']
  return typeof given === 'string' && SANE_REQUEST_ID.test(given) ? given : randomUUID()
}
