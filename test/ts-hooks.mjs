import { createHash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { mkdir, rename, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const TS = /\.[cm]?ts$/
const RELATIVE_JS = /^\.{1,2}\/.*\.[cm]?js$/

// the sources import each other with .js suffixes (NodeNext): a missing .js that has a .ts twin is the .ts.
// From a .ts file the .ts twin is tried first: a failed resolution (an error built, the file system asked) for each
// of the ~130 project modules of a test file cost more than the twin's look-up.
export async function resolve(specifier, context, nextResolve) {
  if (RELATIVE_JS.test(specifier) && context.parentURL && TS.test(context.parentURL)) {
    try {
      return await nextResolve(specifier.replace(/js$/, 'ts'), context)
    } catch {
      // no .ts twin: a .js file, or nothing (the plain resolution below reports it)
    }
  }
  try {
    return await nextResolve(specifier, context)
  } catch (err) {
    if (err?.code !== 'ERR_MODULE_NOT_FOUND' || !/^\.{1,2}\/|^file:/.test(specifier) ||
      !/\.[cm]?js$/.test(specifier)) throw err
    return nextResolve(specifier.replace(/js$/, 'ts'), context)
  }
}

// tap runs tests with --enable-source-maps: Node then reads and parses the .map file of every dependency module
// that names one (drizzle-orm, fastify's, tap's own: ~250 files, in every test process), for stack traces into
// their compiled code only. Their comment is dropped; the project's own inline maps stay (coverage, stack traces).
const MAP_COMMENT = /\n\/\/# sourceMappingURL=[^\n]*\s*$/

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !TS.test(new URL(url).pathname)) {
    // a dependency's ES module (its format known from the resolution): read here at once; Node's own load reads
    // each file with fs/promises (an open, a stat, reads and a close, each a trip through the thread pool)
    if (BUNDLED.test(url)) return { format: 'module', source: await bundled(fileURLToPath(url)), shortCircuit: true }
    if (context.format === 'module' && url.includes('/node_modules/')) {
      const text = readFileSync(new URL(url), 'utf8')
      return { format: 'module', source: text.replace(MAP_COMMENT, '\n'), shortCircuit: true }
    }
    const result = await nextLoad(url, context)
    if (result.format !== 'module' || !result.source || !url.includes('/node_modules/')) return result
    const text = typeof result.source === 'string' ? result.source : Buffer.from(result.source).toString('utf8')
    return MAP_COMMENT.test(text) ? { ...result, source: text.replace(MAP_COMMENT, '\n') } : result
  }
  const file = fileURLToPath(url)
  return { format: 'module', source: await transformed(file, readFileSync(file, 'utf8')), shortCircuit: true }
}

// esbuild's output for each source, kept by content: every test process loads the same ~130 modules of src/ and
// test/, each one a round trip to an esbuild process of its own (started in each test process, ~0.2 s of CPU)
const ESBUILD_VERSION = createRequire(import.meta.url)('esbuild/package.json').version
const CACHE = fileURLToPath(new URL('../node_modules/.cache/cairn/ts/', import.meta.url))
const OPTIONS = { loader: 'ts', format: 'esm', target: `node${process.versions.node}`, sourcemap: 'inline' }
let esbuild

// TypeBox's ES build is ~200 small modules, each a round trip between the importing thread and this one: its entry is
// served as one module, those same files bundled by esbuild (kept by the package's version); src/ imports nothing else
// of it
const BUNDLED = /\/node_modules\/@sinclair\/typebox\/build\/esm\/index\.mjs$/

async function bundled(entry) {
  const manifest = path.join(path.dirname(entry), '..', '..', 'package.json')
  const key = createHash('sha256').update(JSON.stringify([ESBUILD_VERSION, entry, readFileSync(manifest, 'utf8')]))
    .digest('hex')
  return cachedAs(key, async () => {
    esbuild ??= await import('esbuild')
    const built = await esbuild.build({ entryPoints: [entry], bundle: true, format: 'esm', platform: 'node',
      target: OPTIONS.target, write: false, logLevel: 'silent' })
    return built.outputFiles[0].text
  })
}

async function transformed(file, source) {
  const key = createHash('sha256').update(JSON.stringify([ESBUILD_VERSION, OPTIONS, file, source])).digest('hex')
  return cachedAs(key, async () => {
    esbuild ??= await import('esbuild')
    return (await esbuild.transform(source, { ...OPTIONS, sourcefile: file })).code
  })
}

/** the code kept under `key`, else made by `make` and kept */
async function cachedAs(key, make) {
  const cached = path.join(CACHE, `${key.slice(0, 40)}.js`)
  try {
    return readFileSync(cached, 'utf8')
  } catch (err) {
    if (err?.code !== 'ENOENT') throw err
  }
  const code = await make()
  // written aside and renamed into place: test processes running side by side never read half a file
  const partial = `${cached}.${process.pid}.${randomBytes(4).toString('hex')}`
  await mkdir(CACHE, { recursive: true })
  await writeFile(partial, code)
  await rename(partial, cached)
  return code
}
