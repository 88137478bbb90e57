import fs from 'node:fs'
import { openDatabase } from './src/db/index.ts'
import { seedPassages, rng } from './bench/seed.ts'
const file = '/tmp/corpus.db'
let words: string[]
if (!fs.existsSync(file)) {
  const h = openDatabase(file)
  h.sqlite.exec(`INSERT INTO organizations VALUES ('c','o','2020-01-01T00:00:00.000Z'); INSERT INTO users VALUES ('u','c','e','n','h','owner','2020-01-01T00:00:00.000Z')`)
  words = seedPassages(h.sqlite, { customerId: 'c', user: { id: 'u' } }, 200000).words
  fs.writeFileSync('/tmp/corpus-words.json', JSON.stringify(words))
  h.close()
}
words = JSON.parse(fs.readFileSync('/tmp/corpus-words.json', 'utf8'))
const h = openDatabase(file)
const random = rng(99)
const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]
const qs = Array.from({ length: 12 }, (_, i) => i % 3 === 0 ? pick(words.slice(30, 3000)) : i % 3 === 1 ? pick(words.slice(100, 5000)).slice(0, 4).padEnd(3, 'a') : `${pick(words.slice(0, 200))} ${pick(words.slice(0, 200))}`)
const time = (label: string, sql: string, f: (q: string) => unknown[]) => {
  const st = h.sqlite.prepare(sql)
  let total = 0; const counts: number[] = []
  for (const q of qs) { const t0 = performance.now(); const r = st.all(...(f(q) as any[])); total += performance.now() - t0; counts.push(r.length) }
  console.log(label.padEnd(30), (total / qs.length).toFixed(1), 'ms avg', counts.slice(0, 6).join(','))
}
const phrase = (q: string) => '"' + q.replace(/"/g, '""') + '"'
time('count matches', `SELECT rowid FROM knowledge_passages_fts WHERE knowledge_passages_fts MATCH ?`, (q) => [phrase(q)])
time('fts rank limit 10', `SELECT rowid FROM knowledge_passages_fts WHERE knowledge_passages_fts MATCH ? ORDER BY rank LIMIT 10`, (q) => [phrase(q)])
time('fts bm25 limit 10', `SELECT rowid, bm25(knowledge_passages_fts) b FROM knowledge_passages_fts WHERE knowledge_passages_fts MATCH ? ORDER BY b LIMIT 10`, (q) => [phrase(q)])
time('fts unordered limit 10', `SELECT rowid FROM knowledge_passages_fts WHERE knowledge_passages_fts MATCH ? LIMIT 10`, (q) => [phrase(q)])
console.log(qs)
const readable = `d.customer_id = 'c' AND (d.scope = 'organization' OR (d.scope = 'workspace' AND d.workspace_id IN (SELECT value FROM json_each('[]'))) OR (d.scope = 'personal' AND d.owner_id = 'u'))`
for (const cap of [500, 1000, 2000]) {
  time(`capped ${cap}`, `SELECT * FROM (
    SELECT p.id, p.text, d.uploaded_at, bm25(knowledge_passages_fts) AS b FROM knowledge_passages_fts
    JOIN knowledge_passages p ON p.rowid = knowledge_passages_fts.rowid JOIN knowledge_documents d ON d.id = p.document_id
    WHERE knowledge_passages_fts MATCH ? AND ${readable} ORDER BY knowledge_passages_fts.rowid DESC LIMIT ${cap})
    ORDER BY b, uploaded_at DESC LIMIT 10`, (q) => [phrase(q)])
}
const st = h.sqlite.prepare(`EXPLAIN QUERY PLAN SELECT p.id, bm25(knowledge_passages_fts) AS b FROM knowledge_passages_fts
    JOIN knowledge_passages p ON p.rowid = knowledge_passages_fts.rowid JOIN knowledge_documents d ON d.id = p.document_id
    WHERE knowledge_passages_fts MATCH ? AND ${readable} ORDER BY knowledge_passages_fts.rowid DESC LIMIT 1000`)
console.log(st.all('"x"').map((r: any) => r.detail))
console.log(JSON.stringify(st.all('"x"').map((r: any) => r.detail)))
time('pure fts desc cap 1000', `SELECT rowid, bm25(knowledge_passages_fts) b FROM knowledge_passages_fts WHERE knowledge_passages_fts MATCH ? ORDER BY rowid DESC LIMIT 1000`, (q) => [phrase(q)])
time('pure fts desc cap 1000 no bm25', `SELECT rowid FROM knowledge_passages_fts WHERE knowledge_passages_fts MATCH ? ORDER BY rowid DESC LIMIT 1000`, (q) => [phrase(q)])
time('pure fts asc cap 1000', `SELECT rowid FROM knowledge_passages_fts WHERE knowledge_passages_fts MATCH ? LIMIT 1000`, (q) => [phrase(q)])
const time2 = (label: string, sql: string) => {
  const stmt = h.sqlite.prepare(sql)
  const ts: number[] = []
  for (let round = 0; round < 3; round++) for (const q of qs) { const t0 = performance.now(); stmt.all(phrase(q)); ts.push(performance.now() - t0) }
  ts.sort((a, b) => a - b)
  console.log(label.padEnd(30), 'p50', ts[Math.floor(ts.length / 2)].toFixed(1), 'p99', ts[Math.floor(ts.length * 0.99)].toFixed(1))
}
for (const cap of [100, 200, 300, 500]) {
  time2(`joined desc cap ${cap}`, `SELECT p.id, p.text, d.uploaded_at FROM knowledge_passages_fts
    JOIN knowledge_passages p ON p.rowid = knowledge_passages_fts.rowid JOIN knowledge_documents d ON d.id = p.document_id
    WHERE knowledge_passages_fts MATCH ? AND ${readable} ORDER BY knowledge_passages_fts.rowid DESC LIMIT ${cap}`)
}
