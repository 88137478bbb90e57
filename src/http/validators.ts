import { createRequire } from 'node:module'
import type { FastifyServerOptions } from 'fastify'

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>
type ValidatorFactory = NonNullable<NonNullable<SchemaController['compilersFactory']>['buildValidator']>
type RouteCompiler = (route: { httpPart?: string }) => unknown
type Build = (externalSchemas: unknown, options?: { customOptions?: object }) => RouteCompiler

/** Fastify's own validator compiler (the very package and version it would load without a schemaController). */
function fastifysValidators(): ValidatorFactory {
  const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'))
  return (fromFastify('@fastify/ajv-compiler') as () => ValidatorFactory)()
}

/**
 * Type coercion for the parts of a request that arrive as text (querystring, params, headers), never for the body:
 * a JSON body has its own types, and Ajv's coercion turned the strings `"Infinity"` and `"1e400"` into infinite
 * numbers that passed `integer` with their bounds (a `limit` of at most 100 let 225 results through), and `5` or
 * `["x"]` into the string a field asks for. Two compilers of the same schemas, one without coercion for bodies.
 * Wraps the controller's own compilers (the tests' cached ones) or Fastify's.
 */
export function strictBodies(controller: SchemaController = {}): SchemaController {
  const build = (controller.compilersFactory?.buildValidator ?? fastifysValidators()) as unknown as Build
  const buildValidator = ((externalSchemas: unknown, options?: { customOptions?: object }) => {
    const coercing = build(externalSchemas, options)
    const strict = build(externalSchemas,
      { ...options, customOptions: { ...options?.customOptions, coerceTypes: false } })
    return (route: { httpPart?: string }) => (route.httpPart === 'body' ? strict : coercing)(route)
  }) as unknown as ValidatorFactory
  return { ...controller, compilersFactory: { ...controller.compilersFactory, buildValidator } }
}
