// `npm start`: builds when the compiled output is missing or older than any source, then runs the server.
// `node scripts/start.mjs src/cli/backup <file>` runs another entry point the same way.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const [entryName = 'src/server', ...args] = process.argv.slice(2)
const entry = path.join(root, 'dist', `${entryName}.js`)
const serverEntry = path.join(root, 'dist', 'src', 'server.js')
const sources = ['src', 'plugins', 'schema', 'package.json', 'tsconfig.json', 'tsconfig.build.json']

function newest(p) {
  const stat = fs.statSync(p, { throwIfNoEntry: false })
  if (!stat) return 0
  if (!stat.isDirectory()) return stat.mtimeMs
  let max = stat.mtimeMs
  for (const name of fs.readdirSync(p)) max = Math.max(max, newest(path.join(p, name)))
  return max
}

const built = fs.statSync(serverEntry, { throwIfNoEntry: false })
if (!built || sources.some((s) => newest(path.join(root, s)) > built.mtimeMs)) {
  console.error('cairn: building…')
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' })
  if (r.status !== 0) process.exit(r.status ?? 1)
  fs.utimesSync(serverEntry, new Date(), new Date())
}
// the web console (console/, served at /): built by Vite when its page is missing or older than its sources or the
// client library it calls the API through
const consolePage = path.join(root, 'dist', 'console', 'index.html')
const consoleSources = ['console', path.join('clients', 'typescript', 'src'), 'package.json']
const consoleBuilt = fs.statSync(consolePage, { throwIfNoEntry: false })
if (entryName === 'src/server' &&
  (!consoleBuilt || consoleSources.some((s) => newest(path.join(root, s)) > consoleBuilt.mtimeMs))) {
  console.error('cairn: building the console…')
  const vite = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js')
  const r = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn', '--config',
    path.join(root, 'console', 'vite.config.ts')], { stdio: 'inherit' })
  if (r.status !== 0) process.exit(r.status ?? 1)
}
process.argv = [process.argv[0], entry, ...args]
await import(entry)
