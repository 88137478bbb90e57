import t from 'tap'
import { readPage } from './pages.js'

/** The variables `src/config.ts` reads (the keys of its environment schema), with their literal defaults. */
function configVariables(): Map<string, string | undefined> {
  const source = readPage('src/config.ts')
  const start = source.indexOf('const EnvSchema = Type.Object({')
  const end = source.indexOf('\n})', start)
  if (start < 0 || end < 0) throw new Error('no EnvSchema in src/config.ts')
  const out = new Map<string, string | undefined>()
  for (const line of source.slice(start, end).split('\n')) {
    const m = /^ {2}([A-Z][A-Z0-9_]*):(.*)$/.exec(line)
    if (!m) continue
    const literal = /default: ('[^']*'|-?[\d_.]+|true|false)\b/.exec(m[2])?.[1]
    out.set(m[1], literal?.replace(/^'|'$/g, '').replace(/_/g, ''))
  }
  return out
}

/** The configuration table of docs/self-hosting.md: variable → default cell. */
function documentedVariables(): Map<string, string> {
  const page = readPage('docs/self-hosting.md')
  const start = page.indexOf('\n## Configuration')
  const section = page.slice(start, page.indexOf('\n## ', start + 1))
  const out = new Map<string, string>()
  for (const [, name, cell] of section.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \| ([^|]*) \|/gm)) out.set(name, cell.trim())
  return out
}

t.test('every variable of src/config.ts is in the self-hosting table, and nothing else', async (t) => {
  const read = configVariables()
  const documented = documentedVariables()
  t.ok(read.size > 30, `${read.size} variables read`)
  t.same([...read.keys()].filter((v) => !documented.has(v)), [], 'read but not documented')
  t.same([...documented.keys()].filter((v) => !read.has(v)), [], 'documented but not read')
})

t.test('each literal default in the table is the default of src/config.ts', async (t) => {
  const documented = documentedVariables()
  for (const [name, value] of configVariables()) {
    if (value === undefined || !documented.has(name)) continue
    t.equal(documented.get(name)?.replace(/`/g, '').replace(/,(?=\d{3}\b)/g, ''), value, name)
  }
})
