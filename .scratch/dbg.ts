import Database from 'better-sqlite3'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import * as tables from '../schema/tables/index.js'
import { createKnowledgeStore } from '../src/knowledge/store.js'
import { createSearch } from '../src/knowledge/search.js'
import { createSearch as createOld } from './old-search.js'
const sqlite = new Database('data/bench/search-1000000/cairn.db', { readonly: true })
const store = createKnowledgeStore(sqlite, drizzle(sqlite, { schema: tables }))
const orgs = sqlite.prepare("select customer_id c, owner_id u, count(*) n from knowledge_documents group by customer_id order by n desc").all() as any[]
const reader = { customerId: orgs[1].c, userId: orgs[1].u, workspaceIds: [] }
const q = 'How do I encapsulation transforms cwd?'
for (const s of [createSearch(sqlite, store), createOld(sqlite, store)]) {
  const hits = await s.search(reader, {}, q, 5, 'words')
  console.log(hits.map((h) => [h.chunk.id.slice(0, 8), h.score]))
}
