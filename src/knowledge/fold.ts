/**
 * Case folding exactly as the trigram index folds (FTS5 `trigram case_sensitive 0`): one code point to one, by
 * SQLite's own Unicode table, which is older than JavaScript's and differs from `toLowerCase` for about 450
 * classes (Georgian Mtavruli, Cherokee, `İ`, `ſ`, `µ`, `ς`: FTS5 folds `ſ` to `s`, JavaScript keeps it; JavaScript
 * lower-cases Mtavruli, FTS5 keeps it). A substring match checked with it in JavaScript is the index's match.
 * No server-side imports: the index worker loads this.
 */
import Database from 'better-sqlite3'

/**
 * Whether `s` is ASCII only: its UTF-8 length is its length in UTF-16 units exactly then (any other character,
 * a lone surrogate too, takes 2 or more bytes). ~20 times faster than a `/\P{ASCII}/u` test on a passage of 1 KB.
 */
export const isAscii = (s: string) => Buffer.byteLength(s, 'utf8') === s.length

let table: { fold: Map<string, string>; differs: RegExp } | undefined

/**
 * The index's folding of every character JavaScript considers cased (lower or upper case differs from it), read
 * once per thread from SQLite itself: each such character thrice in a row of an in-memory trigram index, whose
 * one token is then its folding thrice. The characters whose folding differs from `toLowerCase` make `differs`.
 */
function foldTable() {
  if (table) return table
  const chars: string[] = []
  for (let cp = 0x80; cp <= 0x1ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue
    const c = String.fromCodePoint(cp)
    if (c.toLowerCase() !== c || c.toUpperCase() !== c) chars.push(c)
  }
  const db = new Database(':memory:')
  try {
    db.exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'trigram case_sensitive 0');
      CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')`)
    const insert = db.prepare('INSERT INTO t (rowid, x) VALUES (?, ?)')
    db.transaction(() => chars.forEach((c, i) => insert.run(i + 1, c + c + c)))()
    const fold = new Map<string, string>()
    for (const { doc, term } of db.prepare('SELECT doc, term FROM v').iterate() as Iterable<{ doc: number;
      term: string }>) {
      fold.set(chars[doc - 1], [...term][0])
    }
    const differs = [...fold].filter(([c, f]) => f !== c.toLowerCase()).map(([c]) => c)
    // a character JavaScript lower-cases by context (final sigma) differs too
    differs.push('Σ')
    table = { fold, differs: new RegExp(`[${differs.map(escapeClass).join('')}]`, 'u') }
    return table
  } finally {
    db.close()
  }
}

const escapeClass = (c: string) => /[\\\]^-]/.test(c) ? `\\${c}` : c

/** `s` folded as the trigram index folds it (ASCII: lower case) */
export function indexFold(s: string): string {
  if (isAscii(s)) return s.toLowerCase()
  const { fold, differs } = foldTable()
  if (!differs.test(s)) return s.toLowerCase()
  let out = ''
  for (const c of s) out += c.charCodeAt(0) < 0x80 ? c.toLowerCase() : fold.get(c) ?? c
  return out
}
