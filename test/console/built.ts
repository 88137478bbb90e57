import fs from 'node:fs'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { ROOT } from '../helper.js'

export const CONSOLE_DIR = path.join(ROOT, 'dist', 'console')
const SOURCES = ['console', 'clients/typescript/src', 'package.json']

function newest(p: string): number {
  const stat = fs.statSync(p, { throwIfNoEntry: false })
  if (!stat) return 0
  if (!stat.isDirectory()) return stat.mtimeMs
  let max = stat.mtimeMs
  for (const name of fs.readdirSync(p)) max = Math.max(max, newest(path.join(p, name)))
  return max
}

function fresh(): boolean {
  const page = fs.statSync(path.join(CONSOLE_DIR, 'index.html'), { throwIfNoEntry: false })
  return !!page && SOURCES.every((s) => newest(path.join(ROOT, s)) <= page.mtimeMs)
}

/**
 * dist/console as `npm start` would build it, built now when missing or older than its sources. Test files running
 * side by side build it once: the first takes a lock directory, the others wait for it and find it fresh.
 */
export async function consoleBuilt(): Promise<string> {
  const lock = path.join(ROOT, 'dist', '.console-build.lock')
  fs.mkdirSync(path.dirname(lock), { recursive: true })
  for (;;) {
    if (fresh()) return CONSOLE_DIR
    try {
      fs.mkdirSync(lock)
    } catch {
      // another test process builds it; a lock left by a killed run is taken over after two minutes
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())
      if (age > 120_000) fs.rmSync(lock, { recursive: true, force: true })
      await new Promise((resolve) => setTimeout(resolve, 200))
      continue
    }
    try {
      if (fresh()) return CONSOLE_DIR
      const r = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel',
        'error', '--config', path.join(ROOT, 'console/vite.config.ts')], { stdio: 'inherit' })
      if (r.status !== 0) throw new Error('the console did not build')
      return CONSOLE_DIR
    } finally {
      fs.rmSync(lock, { recursive: true, force: true })
    }
  }
}
