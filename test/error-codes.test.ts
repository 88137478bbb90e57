import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ERROR_CODES } from '../src/http/errors.js'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : []
  })
}

/** Upper-snake string literals on lines that build an error answer (HttpError, the helpers, `code:`). */
function codesUsed(): Map<string, string> {
  const found = new Map<string, string>()
  const errorLine = /new HttpError\(|\b(badRequest|unauthorized|forbidden|notFound|conflict)\(|\bcode: '/
  for (const file of [...sources(path.join(root, 'src')), ...sources(path.join(root, 'plugins'))]) {
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
      if (!errorLine.test(line)) continue
      for (const [, code] of line.matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{5,})'/g)) {
        // Node's and libraries' own error codes compared against, not answered
        if (/^(FST_|SQLITE_|ERR_|FAST_JWT_|E[A-Z]+$)/.test(code)) continue
        found.set(code, path.relative(root, file))
      }
    }
  }
  return found
}

t.test('every error code in the sources is in the list of src/http/errors.ts', async (t) => {
  const used = codesUsed()
  t.ok(used.size > 20, 'the scan finds the codes')
  for (const [code, file] of used) t.ok(ERROR_CODES.includes(code), `${code} (${file}) is listed`)
})

t.test('the README lists every code', async (t) => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
  for (const code of ERROR_CODES) t.match(readme, `| \`${code}\` |`, `${code} is in the README`)
})
