import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/**
 * The policy /api/docs is served under: Swagger UI loads only its own scripts, styles and the document
 * from this origin (its markup has no inline script; React sets inline styles).
 */
export const DOCS_CSP = [
  "default-src 'self'", "base-uri 'self'", "object-src 'none'", "frame-ancestors 'self'", "form-action 'self'",
  "img-src 'self' data:", "font-src 'self' data:", "script-src 'self'", "script-src-attr 'none'",
  "style-src 'self' 'unsafe-inline'", "connect-src 'self'"
].join('; ')

/**
 * Headers every response carries (`X-Request-Id`: the request's id; `X-Content-Type-Options: nosniff`), in one
 * hook, and `Cache-Control: no-store` on the routes whose answer holds a secret (`config.secretResponse`), error
 * answers included. Registered before credentials are checked, so that refusals carry them too.
 */
async function securityHeaders(app: FastifyInstance) {
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    reply.header('x-request-id', request.id)
    reply.header('x-content-type-options', 'nosniff')
    done()
  })
  const noStore = (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null,
    payload: unknown) => void) => {
    reply.header('cache-control', 'no-store')
    done(null, payload)
  }
  app.addHook('onRoute', (route) => {
    if (!route.config?.secretResponse) return
    route.onSend = [noStore, ...(route.onSend === undefined ? [] : [route.onSend].flat())] as typeof route.onSend
  })
}

export default fp(securityHeaders, { name: 'cairn-security-headers' })
