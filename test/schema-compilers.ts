import fs from 'node:fs'
import path from 'node:path'
import { createHash, randomBytes } from 'node:crypto'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import AjvCompiler from '@fastify/ajv-compiler'
import SerializerSelector from '@fastify/fast-json-stringify-compiler'

/**
 * Fastify's own compilers for the apps of the tests (test/helper.ts), shared by every app of a test process and,
 * through a disk cache, by every test process: compiling each route's schemas (Ajv for requests,
 * fast-json-stringify for answers) costs ~0.5 s of CPU in each test file that builds an app. What is kept is each
 * compiler's standalone code, the very code its compile would make and run, keyed by the schema, the shared schemas,
 * the options and the compilers' versions; every validator and serializer, made now or read back, is that code run.
 */
const require = createRequire(import.meta.url)
const validatorRequire = createRequire(require.resolve('@fastify/ajv-compiler'))
const serializerRequire = createRequire(require.resolve('@fastify/fast-json-stringify-compiler'))
type StandaloneCode = (ajv: unknown, validate: unknown) => string
const standaloneCode = (validatorRequire('ajv/dist/standalone') as { default: StandaloneCode }).default
const AjvReference = Symbol.for('fastify.ajv-compiler.reference')

const VERSIONS = [
  [validatorRequire, ['@fastify/ajv-compiler/package.json', 'ajv/package.json', 'ajv-formats/package.json']],
  [serializerRequire, ['@fastify/fast-json-stringify-compiler/package.json', 'fast-json-stringify/package.json']]
].flatMap(([from, names]) => (names as string[]).map((name) => {
  return `${name} ${((from as NodeJS.Require)(name) as { version: string }).version}`
}))

const CACHE = path.join(fileURLToPath(new URL('..', import.meta.url)), 'node_modules', '.cache', 'cairn', 'schemas')

function keyOf(...parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify([VERSIONS, ...parts])).digest('hex').slice(0, 40)
}

/** Runs a compiler's standalone code (CommonJS), its `require` resolving from that compiler's package. */
function run(code: string, from: NodeJS.Require): unknown {
  const module = { exports: {} as unknown }
  new Function('require', 'module', 'exports', code)(from, module, module.exports)
  return module.exports
}

function read(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
}

/** written aside and renamed into place: test processes running side by side never read half a file */
function write(file: string, code: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`
  fs.writeFileSync(partial, code)
  fs.renameSync(partial, file)
}

type ValidatorFactory = ReturnType<typeof AjvCompiler>
type Validate = ((data: unknown, context?: object) => unknown) & { schemaEnv?: unknown; errors?: unknown }
interface ValidatorOptions { customOptions?: object; plugins?: unknown[]; onCreate?: unknown }
type Compiler = ((route: { schema: object }) => Validate) & Record<symbol, { ajv: unknown } | undefined>

function buildValidator(): ValidatorFactory {
  // one Ajv per set of shared schemas and options; Ajv caches by schema object
  const pool = AjvCompiler() as unknown as (externalSchemas: unknown, options: ValidatorOptions) => Compiler
  const made = new Map<string, WeakMap<object, Validate>>()
  return ((externalSchemas: unknown, options: ValidatorOptions = {}) => {
    // an Ajv plugin or hook is code the key cannot see: such options are compiled as Fastify would
    if (options.plugins?.length || options.onCreate) return pool(externalSchemas, options)
    const prefix = JSON.stringify([externalSchemas, options])
    let bySchema = made.get(prefix)
    if (!bySchema) made.set(prefix, bySchema = new WeakMap())
    const cache = bySchema
    const withSource = { ...options, customOptions: { ...options.customOptions, code: { source: true } } }
    return (route: { schema: object }) => {
      let validate = cache.get(route.schema)
      if (validate) return validate
      const file = path.join(CACHE, `validator-${keyOf(prefix, route.schema)}.cjs`)
      let code = read(file)
      if (code === undefined) {
        const compiler = pool(externalSchemas, withSource)
        code = standaloneCode(compiler[AjvReference]!.ajv, compiler(route))
        write(file, code)
      }
      validate = run(code, validatorRequire) as Validate
      // Fastify hands an Ajv function (it has a schemaEnv) the request as the parent of the value, so that a
      // coercion of the value itself (a string to an array) is kept: so does the standalone one, given the same
      validate.schemaEnv = true
      cache.set(route.schema, validate)
      return validate
    }
  }) as unknown as ValidatorFactory
}

type SerializerFactory = ReturnType<typeof SerializerSelector>

function buildSerializer(): SerializerFactory {
  const standalone = SerializerSelector()
  const made = new Map<string, WeakMap<object, unknown>>()
  return ((externalSchemas, options) => {
    const prefix = JSON.stringify([externalSchemas, options])
    let bySchema = made.get(prefix)
    if (!bySchema) made.set(prefix, bySchema = new WeakMap())
    const cache = bySchema
    const compile = standalone(externalSchemas, { ...options, mode: 'standalone' })
    // the route's status and content type are arguments too, but fast-json-stringify reads the schema alone
    return (route: Parameters<typeof compile>[0]) => {
      const schema = route.schema as object
      let serializer = cache.get(schema)
      if (serializer) return serializer
      const file = path.join(CACHE, `serializer-${keyOf(prefix, schema)}.cjs`)
      let code = read(file)
      if (code === undefined) write(file, code = compile(route) as unknown as string)
      cache.set(schema, serializer = run(code, serializerRequire))
      return serializer
    }
  }) as SerializerFactory
}

export const schemaController = {
  compilersFactory: { buildValidator: buildValidator(), buildSerializer: buildSerializer() }
}
