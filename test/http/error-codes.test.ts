import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { ERROR_CODES, isErrorCode } from '../../src/http/error-codes.js'
import { toErrorBody, HttpError } from '../../src/http/errors.js'

const root = path.resolve(import.meta.dirname, '../..')
const sources = (dir: string): string[] => fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) =>
  e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [])

// codes of other systems the source compares against, never sends (HPE_: Node's HTTP parser)
// (EAI_: getaddrinfo's codes on a connection's error, src/db/postgres.ts)
const FOREIGN = /^(SQLITE|FST|FAST_JWT|ERR|CAIRN|HPE|EAI)_/

t.test('every error code in the source is in the one union', async (t) => {
  const unknown = new Map<string, string>()
  for (const file of [...sources('src'), ...sources('plugins')]) {
    const text = fs.readFileSync(path.join(root, file), 'utf8')
    for (const [, code] of text.matchAll(/'([A-Z][A-Z0-9]+(?:_[A-Z0-9]+)+)'/g)) {
      if (!FOREIGN.test(code) && !isErrorCode(code)) unknown.set(code, file)
    }
  }
  t.same(Object.fromEntries(unknown), {}, 'codes missing from src/http/error-codes.ts')
  t.equal(new Set(ERROR_CODES).size, ERROR_CODES.length, 'no code listed twice')
})

t.test('the generic code of each status is in the union', async (t) => {
  for (const status of [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 429, 500, 503]) {
    const code = toErrorBody(new HttpError(status, 'x')).code
    t.ok(isErrorCode(code), `${status} → ${code}`)
  }
})

t.test('docs/api/errors.md lists every code', async (t) => {
  const page = fs.readFileSync(path.join(root, 'docs/api/errors.md'), 'utf8')
  for (const code of ERROR_CODES) t.match(page, `| \`${code}\` |`, `${code} is in docs/api/errors.md`)
})
