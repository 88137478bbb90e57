import { fileURLToPath } from 'node:url'

/**
 * What `new Worker()` runs for the module `./<name>` beside `from` (an `import.meta.url`). Compiled, the worker is
 * plain JS; from source (tsx, tap) it is TypeScript, and a worker thread does not inherit the parent's module
 * hooks: a small bootstrap registers tsx (a dev dependency) first. (src/ingest/run.ts writes its own, which
 * loads pdf.js before tsx.)
 */
export function workerEntry(from: string, name: string): { script: string | URL; eval: boolean } {
  const fromSource = fileURLToPath(from).endsWith('.ts')
  const url = new URL(`./${name}${fromSource ? '.ts' : '.js'}`, from)
  if (!fromSource) return { script: url, eval: false }
  const href = JSON.stringify(url.href)
  const script = `import('tsx/esm/api').then(({ register }) => { register(); return import(${href}) })`
  return { script, eval: true }
}
