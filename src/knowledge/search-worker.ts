// A search worker: its own read-only connection, the same search code. The event loop of the server never
// waits on an FTS5 walk, however large the corpus or odd the query.
import { parentPort, workerData } from 'node:worker_threads'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import * as sqliteVec from 'sqlite-vec'
import * as tables from '../../schema/tables/index.js'
import { createKnowledgeStore } from './store.js'
import { createSearch, EmbeddingsNotConfiguredError, type SearchBudget, type SearchHit, type SearchMode,
  type SearchWarning } from './search.js'
import type { SearchSettingsOverrides } from './search-settings.js'
import type { Plan } from './planner.js'
import { embeddingClient, vectorSource, EmbeddingError, type EmbeddingConfig } from './embeddings.js'
import type { DocFilters, Reader } from './readers.js'
import { openSearchConnection } from './trigram-file.js'
import { createKindSearch, type KindHit, type KindsRequest } from '../search/kinds.js'

/** what a search asks: passages, or unified search's (hybrid passages, then the other kinds) */
export type SearchWork = { kind: 'passages'; reader: Reader; filters: DocFilters; query: string; limit: number;
  mode: SearchMode } | ({ kind: 'unified'; reader: Reader } & KindsRequest)
/** a search, with its time budget (ms) */
export type SearchRequest = { id: number; budgetMs: number } & SearchWork
export interface SearchReply { id: number; /** the search began */ started?: boolean; hits?: SearchHit[];
  kinds?: KindHit[]; partial?: boolean; warnings?: SearchWarning[]; /** the path it took (planner.ts) */ plan?: Plan;
  error?: { kind: string; message: string } }

const { file, embeddings, cacheMb, settings, stop } = workerData as { file: string;
  cacheMb?: number; settings?: SearchSettingsOverrides;
  embeddings?: Required<Pick<EmbeddingConfig, 'baseUrl' | 'model'>> & EmbeddingConfig;
  /** set to 1 by the pool: the running search stops and answers what it has */ stop: Int32Array }
const sqlite = openSearchConnection(file)
// a page cache of its own (SQLite's default is 2 MB): the pages every search reads (FTS5 structure, doclist
// indexes, the newest segments, b-tree interiors) stay in the worker's memory, which the kernel does not reclaim
// as it reclaims file cache a few seconds unused (bench/search.ts: a third fewer page reads per question)
// (split between the main file and the trigram file: each attached file has a cache of its own)
if (cacheMb !== undefined) {
  for (const schema of ['main', 'trigrams']) sqlite.pragma(`${schema}.cache_size = -${cacheMb * 512}`)
}
let semantic
if (embeddings) {
  sqliteVec.load(sqlite)
  semantic = vectorSource(sqlite, embeddingClient(embeddings.baseUrl, embeddings.apiKey, embeddings.model))
}
const search = createSearch(sqlite, createKnowledgeStore(sqlite, drizzle(sqlite, { schema: tables })),
  { semantic, settings })

void search.warm().catch(() => undefined) // only a head start: a filter not read yet is read when needed

const kinds = createKindSearch(sqlite)

// one search at a time (the pool sends the next once this one answered)
parentPort!.on('message', (r: SearchRequest) => {
  const deadline = performance.now() + r.budgetMs
  const budget: SearchBudget = { cut: false,
    expired: () => performance.now() > deadline || Atomics.load(stop, 0) === 1 }
  const reply = (m: Omit<SearchReply, 'id'>) => parentPort!.postMessage({ id: r.id, ...m } satisfies SearchReply)
  reply({ started: true })
  const work = r.kind === 'passages'
    ? search.run(r.reader, r.filters, r.query, r.limit, r.mode, undefined, budget)
    : search.run(r.reader, {}, r.query, r.limit, 'hybrid', undefined, budget).then(({ hits, warnings }) => {
        // the other kinds are indexed by trigrams: 3+ characters
        const other = [...r.query].length >= 3 ? kinds.search(r, budget.expired) : { hits: [], partial: false }
        if (other.partial) budget.cut = true
        return { hits, kinds: other.hits, warnings }
      })
  work.then(
    (found) => reply({ ...found, partial: budget.cut }),
    (err: Error) => reply({
      error: { kind: err instanceof EmbeddingsNotConfiguredError ? 'not-configured'
        : err instanceof EmbeddingError ? 'embedding' : 'other', message: err.message }
    }))
})
