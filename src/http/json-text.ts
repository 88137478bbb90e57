import type { FastifyReply } from 'fastify'

/**
 * Answers with JSON made elsewhere (a page rendered by SQLite), as text or as its UTF-8 bytes (a kept answer:
 * no encoding per request): Fastify sends such a payload of a JSON content type as it is, without the route's
 * serializer. It must be what that serializer would write.
 */
export function sendJsonText(reply: FastifyReply, json: string | Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json)
}
