// Worker threads under the tests, each from one bundle. A worker thread does not inherit its process's module hooks:
// from TypeScript sources it registered the tests' loader again (test/ts-loader.mjs: a hooks thread of its own, to
// which each of its ~50 project modules and their packages' few hundred made a round trip), ~0.3-0.5 s of CPU per
// worker; one test file starts up to 30 of them (an app starts its search, index, trigram and delivery workers as it
// needs them). Here a worker's module is bundled by esbuild with everything it imports but the native packages, kept
// in node_modules/.cache (checked by the content of each project file in it, and the lockfile), and started without
// hooks: ~0.1 s of CPU. src/worker-entry.ts asks for a bundle through the global that test/ts-loader.mjs sets; with
// coverage (`npm run coverage`) none is set and workers load each source file through the hooks, for coverage.
import { execFileSync } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'cairn', 'workers')
const LOADER = new URL('./ts-loader.mjs', import.meta.url).href
/** changes with this file, the installed packages and Node: a bundle made with another version of any is made again */
const VERSION = createHash('sha256').update(fs.readFileSync(fileURLToPath(import.meta.url)))
  .update(fs.readFileSync(path.join(ROOT, 'package-lock.json')))
  .update(createRequire(import.meta.url)('esbuild/package.json').version).update(process.versions.node)
  .digest('hex').slice(0, 16)

/** where src/worker-entry.ts finds workerBundle */
export const WORKER_BUNDLE = Symbol.for('cairn.test-worker-bundle')

/** each worker module's bundle, found current once per thread (sources do not change while tests run) */
const current = new Map()

function digest(file) {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex')
}

/**
 * The file URL of a bundle of the worker module at `href`: the one kept if every file in it is unchanged, else a new
 * one, made by a child process (a worker starts synchronously, and esbuild's plugins, one of which keeps each
 * module's own import.meta.url, run only in its asynchronous API).
 */
export function workerBundle(href) {
  const known = current.get(href)
  if (known) return known
  const entry = fileURLToPath(href)
  const manifestFile = path.join(CACHE, `${createHash('sha256').update(entry).digest('hex').slice(0, 24)}.json`)
  let manifest
  try {
    manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'))
  } catch {
    // none yet, or unreadable: made below
  }
  const fresh = manifest?.version === VERSION && fs.existsSync(path.join(CACHE, manifest.bundle)) &&
    Object.entries(manifest.inputs).every(([file, sum]) => {
      try {
        return digest(path.join(ROOT, file)) === sum
      } catch {
        return false
      }
    })
  if (!fresh) {
    execFileSync(process.execPath, [fileURLToPath(import.meta.url), entry, manifestFile],
      { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, NODE_OPTIONS: '' } })
    manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'))
  }
  const url = pathToFileURL(path.join(CACHE, manifest.bundle)).href
  current.set(href, url)
  return url
}

/** written aside and renamed into place: processes reading the cache side by side never see half a file */
function writeAtomically(file, text) {
  const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`
  fs.writeFileSync(partial, text)
  fs.renameSync(partial, file)
}

async function build(entry, manifestFile) {
  const esbuild = await import('esbuild')
  // a module's import.meta.url stays its own file's, not the bundle's: src/ finds files beside itself with it
  const ownUrl = {
    name: 'own-import-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
        const source = fs.readFileSync(args.path, 'utf8')
        if (!source.includes('import.meta.url')) return undefined
        return { contents: source.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
          loader: /\.[cm]?ts$/.test(args.path) ? 'ts' : 'js' }
      })
    }
  }
  const built = await esbuild.build({
    entryPoints: [entry], bundle: true, format: 'esm', platform: 'node', target: `node${process.versions.node}`,
    // no source map: Node parses a bundle's whole map as the worker loads it (--enable-source-maps), a third of the
    // worker's start; a stack trace names the bundle, whose comments name each source file
    // packages bundled too: a worker importing drizzle-orm's ~200 modules one by one spent most of its start there;
    // the native ones stay imports
    external: ['better-sqlite3', 'sqlite-vec'], write: false, metafile: true, logLevel: 'silent', plugins: [ownUrl],
    // a bundled worker that starts a worker or a process of its own (the index worker's trigram worker) finds these
    // as the test process does
    banner: { js: [
      // for the CommonJS packages in the bundle, which require Node's modules
      "import { createRequire as __createRequire } from 'node:module'",
      'const require = __createRequire(import.meta.url)',
      `import { workerBundle as __workerBundle, WORKER_BUNDLE as __WORKER_BUNDLE }
        from ${JSON.stringify(import.meta.url)}`,
      `globalThis[Symbol.for('cairn.test-loader')] = ${JSON.stringify(LOADER)}`,
      'globalThis[__WORKER_BUNDLE] = __workerBundle'
    ].join('\n') }
  })
  // the project's files by content; the packages' by the lockfile (VERSION)
  const inputs = {}
  for (const file of Object.keys(built.metafile.inputs)) {
    if (!file.startsWith('node_modules/')) inputs[file] = digest(path.join(ROOT, file))
  }
  const bundle = `${path.basename(manifestFile, '.json')}-${createHash('sha256').update(JSON.stringify(inputs))
    .digest('hex').slice(0, 16)}.mjs`
  fs.mkdirSync(CACHE, { recursive: true })
  writeAtomically(path.join(CACHE, bundle), built.outputFiles[0].text)
  writeAtomically(manifestFile, JSON.stringify({ version: VERSION, bundle, inputs }))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.chdir(ROOT)
  await build(process.argv[2], process.argv[3])
}
