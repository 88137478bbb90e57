import { fileURLToPath } from 'node:url'

/** set by the test processes' TypeScript loader (test/ts-loader.mjs) to its URL */
const TEST_LOADER = Symbol.for('cairn.test-loader')

/**
 * What `new Worker()` runs for the module `./<name>` beside `from` (an `import.meta.url`). Compiled, the worker is
 * plain JS; from source (tsx, tap) it is TypeScript, and a worker thread does not inherit the parent's module
 * hooks: a small bootstrap registers them first, the tests' own loader under the tests (its transforms cached on
 * disk), else tsx (a dev dependency). (src/ingest/run.ts writes its own, which loads pdf.js before tsx.)
 */
/**
 * JavaScript source of an expression that registers TypeScript's module hooks in the thread or process that runs it
 * (a promise): the tests' own loader under the tests, else tsx.
 */
export function typeScriptHooks(): string {
  const testLoader = (globalThis as Record<symbol, unknown>)[TEST_LOADER]
  return typeof testLoader === 'string' ? `import(${JSON.stringify(testLoader)})`
    : "import('tsx/esm/api').then(({ register }) => register())"
}

export function workerEntry(from: string, name: string): { script: string | URL; eval: boolean } {
  const fromSource = fileURLToPath(from).endsWith('.ts')
  const url = new URL(`./${name}${fromSource ? '.ts' : '.js'}`, from)
  if (!fromSource) return { script: url, eval: false }
  const href = JSON.stringify(url.href)
  return { script: `${typeScriptHooks()}.then(() => import(${href}))`, eval: true }
}
