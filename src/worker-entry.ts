import { fileURLToPath } from 'node:url'

/** set by the test processes' TypeScript loader (test/ts-loader.mjs) to its URL */
const TEST_LOADER = Symbol.for('cairn.test-loader')
/** set under `npm test` (test/worker-bundles.mjs): a worker module's URL -> the URL of a bundle of it */
const TEST_WORKER_BUNDLE = Symbol.for('cairn.test-worker-bundle')

/**
 * JavaScript source of an expression that registers TypeScript's module hooks in the thread or process that runs it
 * (a promise): the tests' own loader under the tests, else tsx.
 */
export function typeScriptHooks(): string {
  const testLoader = (globalThis as Record<symbol, unknown>)[TEST_LOADER]
  return typeof testLoader === 'string' ? `import(${JSON.stringify(testLoader)})`
    : "import('tsx/esm/api').then(({ register }) => register())"
}

/**
 * What `new Worker()` runs for the module `./<name>` beside `from` (an `import.meta.url`). Compiled, the worker is
 * plain JS; from source (tsx, tap) it is TypeScript, and a worker thread does not inherit the parent's module
 * hooks: a small bootstrap registers them first, the tests' own loader under the tests (its transforms cached on
 * disk), else tsx (a dev dependency). Under `npm test` the worker starts from one bundle of its module and its imports
 * instead (test/worker-bundles.mjs), without hooks. (src/ingest/run.ts writes its own, which loads pdf.js before tsx.)
 */
export function workerEntry(from: string, name: string): { script: string | URL; eval: boolean } {
  const fromSource = fileURLToPath(from).endsWith('.ts')
  const url = new URL(`./${name}${fromSource ? '.ts' : '.js'}`, from)
  if (!fromSource) return { script: url, eval: false }
  const bundle = (globalThis as Record<symbol, unknown>)[TEST_WORKER_BUNDLE]
  if (typeof bundle === 'function') {
    // made or checked as a worker starts, not as its module is imported: most test processes start few kinds. Run as
    // an import from an evaluated script: a worker started from a file runs NODE_OPTIONS' --import (the tests' loader)
    return { get script() { return `import(${JSON.stringify(bundle(url.href))})` }, eval: true }
  }
  const href = JSON.stringify(url.href)
  return { script: `${typeScriptHooks()}.then(() => import(${href}))`, eval: true }
}
