import sjson from 'secure-json-parse'
import type { FastifyInstance } from 'fastify'
import { HttpError } from './errors.js'

export const MAX_JSON_DEPTH = 32
/**
 * What one JSON body may hold, whatever its size in bytes: parsing costs per key and per value (a body of
 * 90,000 distinct keys in under a megabyte took a good part of a second), and no route stores more than these.
 */
export const MAX_JSON_KEYS = 20_000
export const MAX_JSON_VALUES = 200_000

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_OBJECT = 0x7b
const OPEN_ARRAY = 0x5b
const CLOSE_OBJECT = 0x7d
const CLOSE_ARRAY = 0x5d
const COLON = 0x3a
const COMMA = 0x2c

const tooMany = (what: 'keys' | 'values') => ({ status: 413 as const,
  message: `more than ${what === 'keys' ? MAX_JSON_KEYS : MAX_JSON_VALUES} ${what}` })

/**
 * Why the JSON text is refused before it is parsed, or undefined: it nests deeper than MAX_JSON_DEPTH, or holds
 * more than MAX_JSON_KEYS keys or MAX_JSON_VALUES values. One pass that stops at the first excess; the contents of
 * strings are skipped with indexOf, so its cost follows the number of tokens, not the bytes. Malformed text is
 * left to the parser, which says what is wrong with it.
 */
export function jsonShapeProblem(text: string): { status: 400 | 413; message: string } | undefined {
  let depth = 0
  let keys = 0
  // array elements and object members: a comma adds one to its container, each container holds at least one
  let values = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      let end = text.indexOf('"', i + 1)
      for (;;) {
        if (end === -1) return undefined
        let slashes = 0
        while (text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes++
        if (slashes % 2 === 0) break
        end = text.indexOf('"', end + 1)
      }
      i = end
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > MAX_JSON_DEPTH) return { status: 400, message: `JSON nests deeper than ${MAX_JSON_DEPTH} levels` }
      if (++values > MAX_JSON_VALUES) return tooMany('values')
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--
    } else if (c === COLON) {
      if (++keys > MAX_JSON_KEYS) return tooMany('keys')
    } else if (c === COMMA) {
      if (++values > MAX_JSON_VALUES) return tooMany('values')
    }
  }
  return undefined
}

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
 * refuses, with a clear 400 or 413, bodies that no route should ever store or that cost too much to parse.
 */
export function installJsonGuard(app: FastifyInstance) {
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string
    if (text.length === 0) return done(null, undefined)
    // counted before parsing: a body over a limit costs one scan, not a parse and a walk
    const shape = jsonShapeProblem(text)
    if (shape) {
      const large = shape.status === 413
      return done(new HttpError(shape.status,
        `${large ? 'JSON body too large' : 'Invalid JSON body'}: ${shape.message}`,
        large ? 'PAYLOAD_TOO_LARGE' : 'INVALID_JSON'), undefined)
    }
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
