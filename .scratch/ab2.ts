import Database from 'better-sqlite3'
import fs from 'node:fs'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import * as tables from '../schema/tables/index.js'
import { createKnowledgeStore } from '../src/knowledge/store.js'
import { createSearch } from '../src/knowledge/search.js'
import { rng } from '../bench/seed.js'
const sqlite = new Database('data/bench/search-1000000/cairn.db', { readonly: true })
const store = createKnowledgeStore(sqlite, drizzle(sqlite, { schema: tables }))
const fast = createSearch(sqlite, store, undefined, undefined, JSON.parse(process.env.TUNE ?? '{}'))
const exact = fast
const orgs = sqlite.prepare("select customer_id c, owner_id u, count(*) n from knowledge_documents group by customer_id order by n desc").all() as any[]
const reader = { customerId: orgs[0].c, userId: orgs[0].u, workspaceIds: [] }
const v: string[] = JSON.parse(fs.readFileSync('data/bench/search-1000000/seeded.json', 'utf8')).vocabulary
const random = rng(9)
const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]
const qs = Array.from({ length: Number(process.argv[2] ?? 20) }, () => `How do I ${Array.from({ length: 3 + Math.floor(random() * 3) }, () => pick(v.slice(50, 4000))).join(' ')}?`)
const mode = (process.argv[3] ?? 'words') as any
const tf: number[] = [], te: number[] = []
let o10 = 0, top1 = 0, ndcg = 0
for (const q of qs) {
  let t = performance.now(); const a = await fast.search(reader, {}, q, 10, mode); tf.push(performance.now() - t)
  t = performance.now(); const b = await exact.search(reader, {}, q, 10, mode); te.push(performance.now() - t)
  const ids = new Set(b.map((h) => h.chunk.id))
  o10 += a.filter((h) => ids.has(h.chunk.id)).length / Math.max(1, b.length)
  top1 += a[0]?.chunk.id === b[0]?.chunk.id ? 1 : 0
}
const p = (xs: number[], q: number) => { const s = [...xs].sort((x, y) => x - y); return s[Math.floor(q * s.length)].toFixed(1) }
console.log(mode, 'fast p50', p(tf, 0.5), 'p90', p(tf, 0.9), '| exact p50', p(te, 0.5), 'p90', p(te, 0.9), '| overlap@10', (o10 / qs.length).toFixed(2), 'same top1', top1, '/', qs.length)
console.log(fs.readFileSync('/proc/loadavg', 'utf8'))
