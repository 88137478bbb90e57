import Database from 'better-sqlite3'
import fs from 'node:fs'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import * as tables from '../schema/tables/index.js'
import { createKnowledgeStore } from '../src/knowledge/store.js'
import { createSearch } from '../src/knowledge/search.js'
import { rng } from '../bench/seed.js'
const sqlite = new Database('data/bench/search-1000000/cairn.db', { readonly: true })
const search = createSearch(sqlite, createKnowledgeStore(sqlite, drizzle(sqlite, { schema: tables })))
const orgs = sqlite.prepare("select customer_id c, owner_id u, count(*) n from knowledge_documents group by customer_id order by n desc").all() as any[]
const reader = { customerId: orgs[0].c, userId: orgs[0].u, workspaceIds: [] }
const v: string[] = JSON.parse(fs.readFileSync('data/bench/search-1000000/seeded.json', 'utf8')).vocabulary
const random = rng(5)
const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]
const qs = Array.from({ length: Number(process.argv[2] ?? 20) }, () => `How do I ${Array.from({ length: 3 + Math.floor(random() * 3) }, () => pick(v.slice(50, 4000))).join(' ')}?`)
const modes = (process.argv[3] ?? 'words').split(',')
const times: Record<string, number[]> = {}
let overlap = 0
for (const q of qs) {
  for (const mode of modes) {
    const t = performance.now()
    const hits = await search.search(reader, {}, q, 10, mode as any)
    ;(times[mode] ??= []).push(performance.now() - t)
  }
}
for (const [m, ts] of Object.entries(times)) { ts.sort((a, b) => a - b); console.log(m, 'p50', ts[Math.floor(ts.length / 2)].toFixed(1), 'p90', ts[Math.floor(ts.length * 0.9)].toFixed(1), 'max', ts[ts.length - 1].toFixed(1)) }
console.log(fs.readFileSync('/proc/loadavg', 'utf8'))
