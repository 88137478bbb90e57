import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { ROOT, docPages, readPage, prose, anchors } from './pages.js'

// every relative link and anchor of the README and docs/ leads somewhere
t.test('relative links and anchors resolve', async (t) => {
  const pages = docPages()
  t.ok(pages.includes('docs/self-hosting.md') && pages.length > 10, 'the pages are found')
  const broken: string[] = []
  let checked = 0
  for (const page of pages) {
    const text = prose(readPage(page)).replace(/`[^`\n]*`/g, '')
    for (const [, target] of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // http:, https:, mailto:
      checked++
      const [file, anchor] = target.split('#') as [string, string | undefined]
      const resolved = file === '' ? page : path.join(path.dirname(page), decodeURIComponent(file))
      if (!fs.existsSync(path.join(ROOT, resolved))) {
        broken.push(`${page}: ${target} (no ${resolved})`)
        continue
      }
      if (anchor === undefined) continue
      if (!resolved.endsWith('.md')) {
        broken.push(`${page}: ${target} (an anchor into a file that is not Markdown)`)
        continue
      }
      if (!anchors(readPage(resolved)).has(anchor)) broken.push(`${page}: ${target} (no heading #${anchor})`)
    }
  }
  t.ok(checked > 50, `${checked} links checked`)
  t.same(broken, [], 'no broken link')
})

t.test('the README stays short and links every page of docs/', async (t) => {
  const readme = readPage('README.md')
  t.ok(readme.split('\n').length <= 200, `README.md has ${readme.split('\n').length} lines`)
  const linked = new Set<string>()
  const reach = (page: string): void => {
    if (linked.has(page)) return
    linked.add(page)
    for (const [, target] of prose(readPage(page)).matchAll(/\]\(([^)#\s]+\.md)(?:#[^)]*)?\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue
      const next = path.join(path.dirname(page), target)
      if (fs.existsSync(path.join(ROOT, next))) reach(next)
    }
  }
  reach('README.md')
  const unreachable = docPages().filter((p) => !linked.has(p))
  t.same(unreachable, [], 'every page can be reached from the README')
})
