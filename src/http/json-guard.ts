import sjson from 'secure-json-parse'
import type { FastifyInstance } from 'fastify'
import { HttpError } from './errors.js'

export const MAX_JSON_DEPTH = 32

/** Why a parsed JSON value is refused, or undefined: too deep, NUL characters, lone surrogates, infinite numbers. */
export function jsonProblem(value: unknown, depth = 0): string | undefined {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) return 'strings must not contain NUL characters'
    if (!value.isWellFormed()) return 'strings must be well-formed Unicode (no lone surrogates)'
    return undefined
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return 'numbers must be finite (1e400 is not)'
  if (value === null || typeof value !== 'object') return undefined
  if (depth >= MAX_JSON_DEPTH) return `JSON nests deeper than ${MAX_JSON_DEPTH} levels`
  for (const [k, v] of Object.entries(value)) {
    const problem = jsonProblem(k, depth + 1) ?? jsonProblem(v, depth + 1)
    if (problem) return problem
  }
  return undefined
}

/**
 * Replaces Fastify's JSON body parser with one that keeps its prototype-poisoning protection and also
 * refuses, with a clear 400, bodies that no route should ever store.
 */
export function installJsonGuard(app: FastifyInstance) {
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string
    if (text.length === 0) return done(null, undefined)
    let value: unknown
    try {
      value = sjson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' })
    } catch (err) {
      const poisoned = /prototype|constructor/i.test((err as Error).message)
      return done(new HttpError(400,
        poisoned ? 'The body tries to set __proto__ or constructor.prototype'
          : `Body is not valid JSON: ${(err as Error).message}`,
        poisoned ? 'FORBIDDEN_PROPERTY' : 'INVALID_JSON'), undefined)
    }
    const problem = jsonProblem(value)
    if (problem) return done(new HttpError(400, `Invalid JSON body: ${problem}`, 'INVALID_JSON'), undefined)
    done(null, value)
  })
}
