// The house plan (docs/architecture.md), checked on the source text: where code may import from, what a route
// group's index.ts may hold, and the data-access rules a reviewer would otherwise have to remember.
import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { ROOT } from '../helper.js'

function tsFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name)
    if (e.isDirectory()) return tsFiles(rel)
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [rel] : []
  })
}

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8')

/** the project-relative paths a file imports (static, dynamic and type imports; packages left out) */
function importsOf(file: string, text = read(file)): string[] {
  const specifiers = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)]
    .map((m) => m[1]).filter((s) => s.startsWith('.'))
  return specifiers.map((s) => path.normalize(path.join(path.dirname(file), s)))
}

const src = tsFiles('src')
const plugins = tsFiles('plugins')
const groupOf = (file: string) => file.split(path.sep)[1]

t.test('the import check sees the imports it must see', async (t) => {
  t.same(importsOf('src/x/y.ts', `import a from '../../plugins/chat/index.js'\nimport type { B } from './b.js'\n` +
    `const c = await import('../c.js')\nimport './side-effect.js'\nimport fp from 'fastify-plugin'`),
  ['plugins/chat/index.js', 'src/x/b.js', 'src/c.js', 'src/x/side-effect.js'])
})

t.test('nothing in src/ imports from plugins/, except src/app.ts, which registers them', async (t) => {
  t.ok(src.length > 20)
  for (const file of src) {
    if (file === path.join('src', 'app.ts')) continue
    const bad = importsOf(file).filter((i) => i.startsWith(`plugins${path.sep}`))
    t.same(bad, [], file)
  }
})

t.test('no route group imports another group\'s files', async (t) => {
  for (const file of plugins) {
    const bad = importsOf(file).filter((i) => i.startsWith(`plugins${path.sep}`) &&
      groupOf(i) !== groupOf(file))
    t.same(bad, [], file)
  }
})

t.test('plugins/<group>/index.ts holds routes: no SQL, no statements, no inline schemas', async (t) => {
  const indexes = plugins.filter((f) => path.basename(f) === 'index.ts')
  t.ok(indexes.length >= 10)
  for (const file of indexes) {
    const text = read(file)
    t.notMatch(text, /\.prepare\s*[(<]/, `${file}: statements belong in a store`)
    t.notMatch(text, /\bdb\s*\.\s*(select|insert|update|delete|run|get|all)\s*\(/, `${file}: queries belong in a store`)
    t.notMatch(text, /`\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\s/i, `${file}: SQL belongs in a store`)
    t.notMatch(text, /\bType\.[A-Z]\w*\(/, `${file}: request and response schemas belong in schema/api/`)
  }
})

t.test('a placeholder LIMIT or OFFSET goes through boundLimit (a bare LIMIT ? is recompiled at every call)',
  async (t) => {
    for (const file of [...src, ...plugins]) {
      if (file === path.join('src', 'db', 'prepared.ts')) continue
      const text = read(file)
      t.notMatch(text, /\.(limit|offset)\(\s*(sql\.placeholder|p|placeholder)\(/, file)
      // raw statements: LIMIT +? (or a literal), never a bare parameter
      t.notMatch(text, /\b(LIMIT|OFFSET)\s+([?@:]|\$(?!\{))/, file)
    }
  })

t.test('no hand-written row interface: rows are typed from schema/tables', async (t) => {
  for (const file of [...src, ...plugins]) {
    t.notMatch(read(file), /^\s*(export\s+)?interface\s+\w*Row\b/m, file)
  }
})
