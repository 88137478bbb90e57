import Database from 'better-sqlite3'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import * as tables from '../schema/tables/index.js'
import { createKnowledgeStore } from '../src/knowledge/store.js'
import { createSearch } from '../src/knowledge/search.js'
const sqlite = new Database('data/bench/search-1000000/cairn.db', { readonly: true })
const search = createSearch(sqlite, createKnowledgeStore(sqlite, drizzle(sqlite, { schema: tables })))
const orgs = sqlite.prepare("select customer_id c, owner_id u, count(*) n from knowledge_documents group by customer_id order by n desc").all() as any[]
const reader = { customerId: orgs[0].c, userId: orgs[0].u, workspaceIds: [] }
for (const mode of (process.argv[3] ?? 'words').split(',')) for (let i = 0; i < 3; i++) {
  const t = performance.now()
  const hits = await search.search(reader, {}, process.argv[2], 10, mode as any)
  console.log(mode, (performance.now() - t).toFixed(1), 'ms', hits.slice(0, 3).map((h) => [h.score, h.snippet.slice(0, 80)]))
}
