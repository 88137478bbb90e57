import type { FastifyInstance } from 'fastify'

/** MB = 1024 × 1024 bytes, as everywhere in the docs (docs/api/errors.md#limits) */
const MB = 1024 * 1024

/** A JSON body of any route that sets no limit of its own (Fastify's default, stated here). */
export const DEFAULT_BODY_LIMIT = 1 * MB

/**
 * A body anyone may send without a credential (sign-up, login, accepting an invitation), or one that carries a
 * password: an email address, a password and a few names fit many times over. Such routes are reached before any
 * rate limit knows the caller, so their parse must stay small.
 */
export const CREDENTIAL_BODY_LIMIT = 8 * 1024

/** Whether a route's body schema names a password (setting or changing one). */
function carriesPassword(schema: unknown): boolean {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties
  return properties !== undefined && Object.keys(properties).some((name) => /password/i.test(name))
}

/**
 * Every request has a byte budget for its body, given to each route as it is registered: a route that states its
 * own `bodyLimit` keeps it (uploads, the tool server); public routes and routes that take a password get
 * CREDENTIAL_BODY_LIMIT; the rest DEFAULT_BODY_LIMIT (the server's). A body over its budget is a 413 before it is
 * read to the end (at once when its Content-Length says so). What a JSON body may hold besides bytes: json-guard.ts.
 */
export function installBodyBudgets(app: FastifyInstance) {
  app.addHook('onRoute', (route) => {
    if (route.bodyLimit !== undefined) return
    const methods = [route.method].flat()
    if (!methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH' || m === 'DELETE')) return
    if (route.config?.auth === 'public' || carriesPassword(route.schema?.body)) route.bodyLimit = CREDENTIAL_BODY_LIMIT
  })
}
