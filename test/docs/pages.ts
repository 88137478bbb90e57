import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository's root (not from test/helper.ts: these tests need no app) */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The documentation a reader of the repository follows: the README, the project's own pages, docs/, the clients'. */
export function docPages(): string[] {
  const pages = ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md']
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(rel)
      else if (entry.name.endsWith('.md')) pages.push(rel)
    }
  }
  walk('docs')
  // the client packages' own READMEs, shipped in their tarballs
  for (const entry of fs.readdirSync(path.join(ROOT, 'clients'), { withFileTypes: true })) {
    const readme = path.join('clients', entry.name, 'README.md')
    if (entry.isDirectory() && fs.existsSync(path.join(ROOT, readme))) pages.push(readme)
  }
  return pages
}

export function readPage(rel: string): string {
  return fs.readFileSync(path.join(ROOT, rel), 'utf8')
}

/** The page without its fenced code blocks (their lines blanked, so line numbers stay). */
export function prose(text: string): string {
  let fenced = false
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced
      return ''
    }
    return fenced ? '' : line
  }).join('\n')
}

/** The first fenced block of `lang` after the heading `heading` (exact heading text, any level). */
export function codeBlockAfter(text: string, heading: string, lang: string): string {
  const lines = text.split('\n')
  const at = lines.findIndex((l) => /^#{1,6} /.test(l) && l.replace(/^#+ /, '').trim() === heading)
  if (at < 0) throw new Error(`no heading "${heading}"`)
  const open = lines.findIndex((l, i) => i > at && l.trim() === '```' + lang)
  if (open < 0) throw new Error(`no \`\`\`${lang} block after "${heading}"`)
  const close = lines.findIndex((l, i) => i > open && l.trim() === '```')
  return lines.slice(open + 1, close).join('\n') + '\n'
}

/** GitHub's anchor of a heading: its text without markup, lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/\*+/g, '')
  return text.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-')
}

/** Every anchor a page offers: its headings' slugs (repeats numbered as GitHub does). */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const line of prose(text).split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (!m) continue
    const base = slug(m[1])
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}
