import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { badRequest } from './errors.js'

const INTEGER = /^[+-]?\d{1,15}$/

/**
 * Numeric query parameters are checked as text before the schema sees them: Ajv's type coercion turns
 * `Infinity`, `-Infinity` and `1e400` into infinite numbers that pass `integer` with its bounds unchecked
 * (and then reach SQLite as a 500). An integer parameter must be written as digits; a number must be finite.
 */
export function installFiniteQueryCheck(app: FastifyInstance) {
  app.addHook('onRoute', (route) => {
    const properties = (route.schema?.querystring as { properties?: Record<string,
      { type?: unknown }> } | undefined)?.properties
    if (!properties) return
    const numeric = Object.entries(properties).filter(([, s]) => s.type === 'integer' || s.type === 'number')
      .map(([name, s]) => ({ name, integer: s.type === 'integer' }))
    if (numeric.length === 0) return
    // a callback hook, not an async one: no promise per request
    const check = (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
      const query = request.query as Record<string, unknown>
      for (const { name, integer } of numeric) {
        const raw = query[name]
        if (raw === undefined) continue
        const text = String(Array.isArray(raw) ? raw[0] : raw).trim()
        const ok = integer ? INTEGER.test(text) : text !== '' && Number.isFinite(Number(text))
        if (!ok) {
          return done(badRequest(`querystring/${name} must be a finite ${integer ? 'integer' : 'number'}`,
            'VALIDATION_ERROR'))
        }
      }
      done()
    }
    route.preValidation = [...(route.preValidation === undefined ? [] : [route.preValidation].flat()),
      check] as typeof route.preValidation
  })
}
