// TypeScript for the test processes (.taprc): each .ts file through esbuild, whitespace kept, with an inline
// source map. tap's own ts-node transpiled all of src/ with the TypeScript compiler again in every test file
// (~3 s of CPU each); tsx minifies whitespace, which left tap's line coverage a statement or two per file.
import module, { register } from 'node:module'
import { fileURLToPath } from 'node:url'

// Without coverage (`npm test`: tap's --disable-coverage), tap's processinfo loader has nothing to record, yet as a
// second set of module hooks it costs every module load of a test process another trip to the hooks thread (~0.4 s
// of CPU per test file). Its --import runs after this file (NODE_OPTIONS' --import comes before the command line's):
// its registration is passed over here. With coverage it registers as usual.
if (process.env._TAPJS_PROCESSINFO_COVERAGE_ === '0') {
  const registerHooks = module.register
  module.register = function (specifier, ...rest) {
    if (String(specifier).includes('/@tapjs/processinfo/')) return
    return registerHooks.call(this, specifier, ...rest)
  }
}

// tap's processinfo hook (for coverage) records every module a test process loads: it reads each one's source
// again, sends it to the main thread and keeps retrying source-map look-ups for it. Its exclusion pattern is tap's
// own plus node_modules, whose ~500 modules per process coverage never counts (set here, before the first hook
// starts the hooks thread, which copies the environment; tap's spawn resets the variable that .taprc could set).
// Without coverage (`npm test`: tap's --disable-coverage) nothing it records is read: every module is excluded.
process.env._TAPJS_PROCESSINFO_EXCLUDE_ = process.env._TAPJS_PROCESSINFO_COVERAGE_ === '0'
  ? String(/^/)
  : String(/(^(node|tapmock):|[\\/](\.tap|tap-snapshots|node_modules)[\\/])/)
register('./ts-hooks.mjs', import.meta.url)
// worker threads start from bundles of their modules (test/worker-bundles.mjs), but not for coverage, which counts
// each source file as loaded
if (process.env._TAPJS_PROCESSINFO_COVERAGE_ === '0') {
  const { workerBundle, WORKER_BUNDLE } = await import('./worker-bundles.mjs')
  globalThis[WORKER_BUNDLE] = workerBundle
}
// worker threads do not inherit module hooks: src/worker-entry.ts has them import this file first
globalThis[Symbol.for('cairn.test-loader')] = import.meta.url
// .taprc names this file relative to the project: child processes started elsewhere get its absolute path
process.env.NODE_OPTIONS = (process.env.NODE_OPTIONS ?? '')
  .replace('--import=./test/ts-loader.mjs', `--import=${fileURLToPath(import.meta.url)}`)
