import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** Walks up from this file to the folder holding package.json: works from src/ and from dist/src/. */
export function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url))
    dir = parent
  }
  return dir
}
