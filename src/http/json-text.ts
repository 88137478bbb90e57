import type { FastifyReply } from 'fastify'

/**
 * Answers with JSON text made elsewhere (a page rendered by SQLite): Fastify sends a string payload of a JSON
 * content type as it is, without the route's serializer. The text must be what that serializer would write.
 */
export function sendJsonText(reply: FastifyReply, text: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(text)
}
