import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { rng } from './seed.js'

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'node_modules')

/** Every Markdown file of at least 1 KB under node_modules (READMEs, changelogs, docs), sorted for a stable corpus. */
function markdownFiles(dir = root, out: string[] = []): string[] {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) markdownFiles(full, out)
    else if (entry.isFile() && /\.(md|markdown)$/i.test(entry.name) && fs.statSync(full).size >= 1024) out.push(full)
  }
  return out.sort()
}

/** the paragraphs (blank-line separated blocks) of every Markdown file of markdownFiles, in a stable order */
export function markdownParagraphs(): string[] {
  const paragraphs: string[] = []
  for (const file of markdownFiles()) {
    for (const p of fs.readFileSync(file, 'utf8').split(/\n\s*\n/)) if (p.trim().length > 0) paragraphs.push(p)
  }
  return paragraphs
}

/**
 * `bytes` of English-like Markdown made of real documentation: paragraphs (blank-line separated blocks)
 * of the READMEs and docs installed in node_modules, drawn at random with a fixed seed. Real words,
 * real code blocks and real Unicode (arrows, emoji, accented names), in natural proportions.
 */
export function realMarkdown(bytes: number, seed = 3): string {
  const paragraphs = markdownParagraphs()
  const random = rng(seed)
  const parts: string[] = []
  let size = 0
  while (size < bytes) {
    const p = paragraphs[Math.floor(random() * paragraphs.length)] + '\n\n'
    parts.push(p)
    size += Buffer.byteLength(p)
  }
  const text = parts.join('')
  // cut at a whole character under the byte budget
  return Buffer.from(text).subarray(0, bytes).toString('utf8').replace(/\uFFFD$/, '')
}
