import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { ROOT, anchors, readPage } from './pages.js'

// Comments point to the repository's own docs/ pages: a reader of the repository alone can follow every reference.
const FOLDERS = ['src', 'plugins', 'schema', 'clients', 'console', 'scripts', 'bench', 'test', '.ci']
const CODE = /\.(?:ts|tsx|mts|mjs|js|py|sql|css|json|toml|sh)$|^run$|^Dockerfile$/
const FOREIGN = /\b(?:SPEC|CONTRACT)\.md\b|\bREADME ["“][^"”]+["”]/

function files(dir: string): string[] {
  const out: string[] = []
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name)
    if (entry.isDirectory()) {
      if (!['node_modules', 'dist', 'generated', '__pycache__', 'docs'].includes(entry.name)) out.push(...files(rel))
    } else if (CODE.test(entry.name)) out.push(rel)
  }
  return out
}

t.test('no code points to documents outside the repository or to sections of the old README', async (t) => {
  const found: string[] = []
  const all = [...FOLDERS.flatMap(files), 'Dockerfile', 'compose.yaml']
  t.ok(all.length > 200, `${all.length} files read`)
  for (const file of all) {
    fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n').forEach((line, i) => {
      const m = FOREIGN.exec(line)
      if (m) found.push(`${file}:${i + 1}: ${m[0]}`)
    })
  }
  t.same(found, [], 'every reference names a page of docs/')
})

t.test('every docs/ page and anchor a comment names exists', async (t) => {
  const broken: string[] = []
  let checked = 0
  for (const file of [...FOLDERS.flatMap(files), 'Dockerfile', 'compose.yaml']) {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8')
    for (const [, page, anchor] of text.matchAll(/\bdocs\/([\w/-]+\.md)(?:#([\w-]+))?/g)) {
      checked++
      const rel = path.join('docs', page)
      if (!fs.existsSync(path.join(ROOT, rel))) broken.push(`${file}: ${rel} does not exist`)
      else if (anchor && !anchors(readPage(rel)).has(anchor)) broken.push(`${file}: ${rel} has no #${anchor}`)
    }
  }
  t.ok(checked > 30, `${checked} references checked`)
  t.same(broken, [], 'each leads to its page and section')
})
