import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { afterWriteTurn } from '../db/write-intent.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false on a route of a writing method that only reads (a search): it does not wait for a write turn */
    writes?: false
  }
}

/** the methods of routes that write */
const WRITING = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/**
 * A request to a route that writes waits, before its handler, for a writer on another thread (the index worker,
 * the webhook outbox thread) to release SQLite's write lock, with the event loop free meanwhile
 * (src/db/write-intent.ts, writeTurn): other requests are answered while it waits, instead of the whole process
 * waiting inside its first write. The wait is the first `preValidation` hook: after credentials, rate limits and
 * the body (a request they refuse does not wait, and the handler's writes follow soon after), before the
 * idempotency key is stored (a write); a route's own role checks and an idempotent replay come after it (they wait
 * too, though they write nothing). A handler that awaits something long before it writes (an upload's
 * extraction, a password hash, a model's answer) takes its own turn again right before; elsewhere, if the other
 * thread has taken the lock again by then, a write waits for its commit blocking, as before. Only those routes
 * carry the hook: reads do not pay for it, nor do the routes of those methods that only read (`config.writes:
 * false`: searches, whose wait would also make the index worker yield).
 */
async function writeTurnPlugin(app: FastifyInstance) {
  const sqlite = app.sqlite
  const turn = (_request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) =>
    afterWriteTurn(sqlite, done)
  app.addHook('onRoute', (route) => {
    if (route.config?.writes === false || ![route.method].flat().some((m) => WRITING.has(m))) return
    route.preValidation = [turn, ...(route.preValidation === undefined ? [] : [route.preValidation].flat())] as
      typeof route.preValidation
  })
}

export default fp(writeTurnPlugin, { name: 'cairn-write-turn', dependencies: ['cairn-db', 'cairn-idempotency'] })
