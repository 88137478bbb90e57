// `npm test`'s first step: the type check, the linter and tap's build side by side (each mostly one core, for
// seconds), each one's output printed whole when it ends; exits non-zero when any failed.
// `tap build` makes tap's Test class for the plugins of .taprc (`!@tapjs/typescript`). Left to tap's own first run
// after an install, it slows that run by about half; built here, beside the type check, it costs ~5 s of CPU and no
// wall time.
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
// the type check and the linter keep what they learned between runs (by content), in node_modules/.cache: a second
// `npm test` checks only what changed (a fresh clone does the whole work, ~45 s of CPU)
const cache = path.join('node_modules', '.cache', 'cairn')
const checks = [
  { name: 'typecheck', args: ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--incremental',
    '--tsBuildInfoFile', path.join(cache, 'tsconfig.tsbuildinfo')] },
  { name: 'lint', args: ['node_modules/eslint/bin/eslint.js', '--cache', '--cache-strategy', 'content',
    '--cache-location', path.join(cache, 'eslint') + path.sep, '.'] },
  { name: 'tap build', args: ['node_modules/tap/dist/esm/run.mjs', 'build'] }
]

const results = await Promise.all(checks.map(({ name, args }) => new Promise((resolve) => {
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  const output = []
  child.stdout.on('data', (chunk) => output.push(chunk))
  child.stderr.on('data', (chunk) => output.push(chunk))
  child.on('error', (err) => { output.push(Buffer.from(String(err) + '\n')); resolve({ name, code: 1, output }) })
  child.on('close', (code, signal) => {
    process.stdout.write(Buffer.concat(output))
    console.log(code === 0 ? `${name}: ok` : `${name}: failed (${signal ?? `exit ${code}`})`)
    resolve({ name, code: code ?? 1, output })
  })
})))
process.exitCode = results.some((r) => r.code !== 0) ? 1 : 0
