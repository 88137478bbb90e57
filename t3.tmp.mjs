import Database from 'better-sqlite3'
import fs from 'node:fs'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import { createKnowledgeStore } from './dist/src/knowledge/store.js'
import { substringFinder } from './dist/src/knowledge/substring.js'
const sqlite = new Database('data/bench/search-1000000/cairn.db', { readonly: true })
const store = createKnowledgeStore(sqlite, drizzle(sqlite))
const withPairs = substringFinder(sqlite, store)
const without = substringFinder(sqlite, store, { pairs: false })
const doc = sqlite.prepare(`SELECT d.customer_id, d.owner_id FROM knowledge_documents d JOIN users u ON u.id = d.owner_id WHERE u.email = 'big@example.test' LIMIT 1`).get()
const reader = { customerId: doc.customer_id, userId: doc.owner_id, workspaceIds: [] }
const seeded = JSON.parse(fs.readFileSync('data/bench/search-1000000/seeded.json', 'utf8'))
let s = +(process.argv[2] || 9); const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647
const pick = (xs) => xs[Math.floor(rnd() * xs.length)]
const phraseOf = (n) => { const w = pick(seeded.phrases).split(' '); const at = Math.floor(rnd() * (w.length - n)); return w.slice(at, at + n).join(' ') }
const pct = (xs, p) => { const a = [...xs].sort((x, y) => x - y); return a[Math.min(a.length - 1, Math.floor(p / 100 * a.length))].toFixed(1) }
for (const n of [2, 3]) {
  const qs = Array.from({ length: 40 }, () => phraseOf(n))
  const res = { pairs: [], old: [] }
  for (const q of qs) {
    let t0 = performance.now(); const a = withPairs(reader, {}, q, 200); const ta = performance.now() - t0
    t0 = performance.now(); const b = without(reader, {}, q, 200); const tb = performance.now() - t0
    res.pairs.push(ta); res.old.push(tb)
    if (a.length !== b.length) console.log('MISMATCH', q, a.length, b.length)
    if (ta > 30 || tb > 30) console.log(n, JSON.stringify(q), 'pairs', ta.toFixed(1), 'old', tb.toFixed(1), a.length)
  }
  console.log(n, 'pairs p50/p99', pct(res.pairs, 50), pct(res.pairs, 99), 'old', pct(res.old, 50), pct(res.old, 99))
}
