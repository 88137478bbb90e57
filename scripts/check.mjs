// The type check, the linter and tap's build side by side (each mostly one core, for seconds), each one's output
// printed whole when it ends; exits non-zero when any failed. `npm run coverage` runs this before tap.
// With `--tests` (`npm test`; arguments after it go to tap): tap's build first, then the test suites beside the type
// check and the linter. The suites keep the two cores busy only ~80 % of their time (their processes wait on the
// browser, child processes and timers): the checks' ~45 s of CPU on a fresh clone fit mostly in those gaps instead
// of ~25 s of their own before the first test.
// `tap build` makes tap's Test class for the plugins of .taprc (`!@tapjs/typescript`). Left to tap's own first run
// after an install, it slows that run by about half.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
// the type check and the linter keep what they learned between runs (by content), in node_modules/.cache: a second
// `npm test` checks only what changed (a fresh clone does the whole work, ~45 s of CPU)
const cache = path.join('node_modules', '.cache', 'cairn')
const TAP = 'node_modules/tap/dist/esm/run.mjs'
const typecheck = { name: 'typecheck', args: ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--incremental',
  '--tsBuildInfoFile', path.join(cache, 'tsconfig.tsbuildinfo')] }
const lint = { name: 'lint', args: ['node_modules/eslint/bin/eslint.js', '--cache', '--cache-strategy', 'content',
  '--cache-location', path.join(cache, 'eslint') + path.sep, '.'] }
const tapBuild = { name: 'tap build', args: [TAP, 'build'] }

/** Runs a step; its output is printed whole when it ends, or as it comes with `live` (the tests' reporter). */
function run({ name, args, live = false }) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', live ? 'inherit' : 'pipe',
      live ? 'inherit' : 'pipe'] })
    const output = []
    let ended = false
    const end = (code, why) => {
      if (ended) return
      ended = true
      process.stdout.write(Buffer.concat(output))
      console.log(code === 0 ? `${name}: ok` : `${name}: failed (${why})`)
      resolve({ name, code })
    }
    child.stdout?.on('data', (chunk) => output.push(chunk))
    child.stderr?.on('data', (chunk) => output.push(chunk))
    // a step that could not start fails at once, as before
    child.on('error', (err) => { output.push(Buffer.from(String(err) + '\n')); end(1, 'did not start') })
    child.on('close', (code, signal) => end(code ?? 1, signal ?? `exit ${code}`))
  })
}

const at = process.argv.indexOf('--tests')
let results
if (at < 0) {
  results = await Promise.all([typecheck, lint, tapBuild].map(run))
} else {
  const built = await run(tapBuild)
  const tests = { name: 'tests', args: [TAP, '--disable-coverage', ...process.argv.slice(at + 1)], live: true }
  results = [built, ...await Promise.all([typecheck, lint, ...(built.code === 0 ? [tests] : [])].map(run))]
  // the checks' verdicts again at the end, where a failed one is not lost above the tests' output
  console.log(results.map((r) => `${r.name}: ${r.code === 0 ? 'ok' : 'failed'}`).join(', '))
}
process.exitCode = results.some((r) => r.code !== 0) ? 1 : 0
