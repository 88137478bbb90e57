import Database from 'better-sqlite3'
import fs from 'node:fs'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import { createKnowledgeStore } from './dist/src/knowledge/store.js'
import { substringFinder } from './dist/src/knowledge/substring.js'
import { pairMatch } from './dist/src/knowledge/pairs.js'
const sqlite = new Database('data/bench/search-1000000/cairn.db', { readonly: true })
const store = createKnowledgeStore(sqlite, drizzle(sqlite))
const find = substringFinder(sqlite, store)
const doc = sqlite.prepare(`SELECT d.customer_id, d.owner_id FROM knowledge_documents d JOIN users u ON u.id = d.owner_id WHERE u.email = 'big@example.test' LIMIT 1`).get()
const reader = { customerId: doc.customer_id, userId: doc.owner_id, workspaceIds: [] }
const seeded = JSON.parse(fs.readFileSync('data/bench/search-1000000/seeded.json', 'utf8'))
let s = 9; const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647
const pick = (xs) => xs[Math.floor(rnd() * xs.length)]
const phraseOf = (n) => { const w = pick(seeded.phrases).split(' '); const at = Math.floor(rnd() * (w.length - n)); return w.slice(at, at + n).join(' ') }
for (const n of [3, 2]) for (let i = 0; i < 15; i++) {
  const q = phraseOf(n); const t0 = performance.now(); const r = find(reader, {}, q, 200); console.log(n, JSON.stringify(q), pairMatch(q), r.length, (performance.now() - t0).toFixed(1))
}
