import fs from 'node:fs'
import path from 'node:path'
import { projectRoot } from '../src/db/index.js'

/**
 * English sentences from the Markdown documentation in node_modules (READMEs, docs folders): real words in
 * real proportions, for the search benchmarks. Deterministic: files in sorted order, at most `maxBytes`.
 */
export function realSentences(maxBytes = 30 * 1024 * 1024): string[] {
  const root = path.join(projectRoot(), 'node_modules')
  const files: string[] = []
  const walk = (dir: string, depth: number) => {
    let entries: fs.Dirent[]
    try { entries = fs.readdirSync(dir, { withFileTypes: true }) } catch { return }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, e.name)
      if (e.isDirectory() && depth < 5 && e.name !== 'test' && e.name !== '.bin') walk(full, depth + 1)
      else if (e.isFile() && /\.md$/i.test(e.name)) files.push(full)
    }
  }
  walk(root, 0)
  const sentences: string[] = []
  let bytes = 0
  for (const f of files) {
    const text = fs.readFileSync(f, 'utf8')
      .replace(/```[\s\S]*?```/g, ' ').replace(/`[^`]*`/g, ' ').replace(/\]\([^)]*\)/g, ']').replace(/<[^>]+>/g, ' ').replace(/[#*_[\]|>]/g, ' ')
    for (const s of text.split(/(?<=[.!?])\s+|\n\s*\n/)) {
      const clean = s.replace(/\s+/g, ' ').trim()
      const letters = (clean.match(/[A-Za-z]/g) ?? []).length
      if (clean.length >= 30 && clean.length <= 400 && letters / clean.length > 0.7 && /^[A-Z]/.test(clean)) sentences.push(clean)
    }
    bytes += text.length
    if (bytes > maxBytes) break
  }
  return sentences
}
