import type Database from 'better-sqlite3'
import { and, eq, inArray, max, sql } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import type { FastifyBaseLogger } from 'fastify'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import * as sqliteVec from 'sqlite-vec'
import type { JobQueue } from '../jobs/queue.js'
import { jobs as jobsTable } from '../../schema/tables/jobs.js'
import { knowledgePassages } from '../../schema/tables/knowledge.js'
import { readerTokens, type DocFilters, type Reader } from './readers.js'
import type { SemanticSource } from './search.js'

export interface EmbeddingConfig { baseUrl?: string; apiKey?: string; model?: string }

/** The embedding server failed or answered something unusable. */
/**
 * The embedding server failed. `message` is what a caller is told (search answers say it); `detail` — the server's
 * address and the cause — goes only to the log: a 5xx answer never names internal hosts.
 */
export class EmbeddingError extends Error {
  constructor(message: string, readonly detail?: string) { super(message) }
}

/** An OpenAI-compatible `/v1/embeddings` client (Ollama, llama.cpp server, vLLM, LM Studio, OpenAI). */
export function embeddingClient(baseUrl: string, apiKey: string | undefined, model: string) {
  const url = `${baseUrl.replace(/\/+$/, '')}/embeddings`
  return {
    model,
    async embed(input: string[], signal?: AbortSignal): Promise<Float32Array[]> {
      let res: Response
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
          body: JSON.stringify({ model, input }),
          signal: AbortSignal.any([AbortSignal.timeout(60_000), ...(signal ? [signal] : [])])
        })
      } catch (err) {
        throw new EmbeddingError('The embedding server cannot be reached',
          `${baseUrl}: ${err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : err}`)
      }
      if (!res.ok) throw new EmbeddingError(`The embedding server answered ${res.status}`)
      const body = await res.json().catch(() => undefined) as { data?: Array<{ index?: number;
        embedding?: number[] }> } | undefined
      const data = body?.data
      if (!Array.isArray(data) || data.length !== input.length) {
        throw new EmbeddingError('The embedding server answered without one embedding per input')
      }
      const sorted = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
      const vectors = sorted.map((d) => Float32Array.from(d.embedding ?? []))
      if (vectors.some((v) => v.length === 0 || v.length !== vectors[0].length)) {
        throw new EmbeddingError('The embedding server answered vectors of differing sizes')
      }
      return vectors
    }
  }
}

/**
 * The state of the embeddings: one row of knowledge_embedding_state. That table, knowledge_vector_deletes (filled by
 * a trigger) and the passages' readers view live in a custom migration (0012), next to the triggers that use them,
 * and knowledge_vectors is a sqlite-vec virtual table made at run time: the statements on them are raw SQL.
 */
type State = { model: string; dimensions: number | null; embedded_upto: number }

/** Nearest passages by vector, on any connection with sqlite-vec loaded (the search workers' read-only ones). */
export function vectorSource(sqlite: Database.Database, client: ReturnType<typeof embeddingClient>): SemanticSource {
  const hasVectors = () => !!sqlite.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'knowledge_vectors'`).get()
  const dimensions = sqlite.prepare<[], Pick<State, 'dimensions'>>(
    `SELECT dimensions FROM knowledge_embedding_state WHERE id = 1`)
  return {
    async nearest(reader: Reader, filters: DocFilters, query: string, k: number, signal?: AbortSignal) {
      const tokens = readerTokens(reader, filters.scope)
      if (tokens.length === 0) return []
      // the query is embedded before the vectors are looked at: an embedding server that cannot be reached is told
      // (EmbeddingError), also before it embedded any passage
      const [vector] = await client.embed([query], signal)
      if (!hasVectors() || vector.length !== dimensions.get()?.dimensions) return []
      // filters other than scope apply after the search: look a little further
      const wanted = filters.category || filters.tags?.length ? Math.min(k * 4, 4096) : k
      const rows = sqlite.prepare<unknown[], { rowid: number; distance: number }>(`SELECT rowid, distance
        FROM knowledge_vectors WHERE embedding MATCH ? AND k = ?
        AND readers IN (${tokens.map(() => '?').join(',')})`).all(vector, wanted, ...tokens)
      return rows.sort((a, b) => a.distance - b.distance).map((r) => ({ rowid: Number(r.rowid),
        similarity: 1 - r.distance }))
    }
  }
}

export interface EmbeddingsOptions {
  /** passages per request to the embedding server */
  batchSize?: number
  /** how often new passages are looked for, in ms */
  pollMs?: number
}

/**
 * Passage embeddings kept in a sqlite-vec table (`knowledge_vectors`, rowid = passage rowid, partitioned by
 * the passage's readers token so a nearest-neighbour search covers only what its caller may read).
 * A background job embeds passages in rowid order from `embedded_upto` (back-fill and new passages alike,
 * restart-safe, retried with backoff), removes the vectors of deleted passages, and starts over when the
 * model changes. Uploads never wait for it.
 */
export function createEmbeddings(sqlite: Database.Database, jobs: JobQueue, log: FastifyBaseLogger,
  config: Required<Pick<EmbeddingConfig, 'baseUrl' | 'model'>> & EmbeddingConfig,
  options: EmbeddingsOptions = {}) {
  sqliteVec.load(sqlite)
  const client = embeddingClient(config.baseUrl, config.apiKey, config.model)
  const batchSize = options.batchSize ?? 32
  // Drizzle over the same connection, for the statements on tables of schema/tables
  const db = drizzle(sqlite)
  const state = sqlite.prepare<[], State>(`SELECT model, dimensions, embedded_upto FROM knowledge_embedding_state
    WHERE id = 1`)
  const hasVectors = () => !!sqlite.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'knowledge_vectors'`).get()

  // a new model (or none before): every passage is embedded again
  const reset = sqlite.transaction((dimensions: number | null) => {
    sqlite.exec(`DROP TABLE IF EXISTS knowledge_vectors`)
    if (dimensions) {
      sqlite.exec(`CREATE VIRTUAL TABLE knowledge_vectors USING vec0(readers text partition key,
        embedding float[${dimensions}] distance_metric=cosine)`)
    }
    sqlite.prepare(`INSERT INTO knowledge_embedding_state (id, model, dimensions, embedded_upto) VALUES (1, ?, ?, 0)
      ON CONFLICT (id) DO UPDATE
        SET model = excluded.model, dimensions = excluded.dimensions, embedded_upto = 0`).run(config.model, dimensions)
    sqlite.exec(`DELETE FROM knowledge_vector_deletes`)
  })
  const current = state.get()
  if (!current || current.model !== config.model) {
    if (current) {
      log.info({ from: current.model, to: config.model },
        'embedding model changed: every passage will be embedded again')
    }
    reset(null)
  }

  const pendingBatch = sqlite.prepare<[number, number], { rowid: number; text: string; token: string | null }>(
    `SELECT p.rowid, p.text, r.token FROM knowledge_passages p
    JOIN knowledge_passage_readers r ON r.document_id = p.document_id
    WHERE p.rowid > ? ORDER BY p.rowid LIMIT +?`)
  const maxRowid = db.select({ n: sql<number>`COALESCE(${max(knowledgePassages.rowid)}, 0)` })
    .from(knowledgePassages).prepare()
  const deletes = sqlite.prepare<[], { rowid: number }>(
    `SELECT passage_rowid AS rowid FROM knowledge_vector_deletes LIMIT 500`)
  const forgetDelete = sqlite.prepare<[number]>(`DELETE FROM knowledge_vector_deletes WHERE passage_rowid = ?`)
  const advance = sqlite.prepare<[number]>(`UPDATE knowledge_embedding_state SET embedded_upto = ? WHERE id = 1`)
  const jobWaiting = db.select({ one: sql`1` }).from(jobsTable).where(and(eq(jobsTable.type, 'knowledge.embed'),
    inArray(jobsTable.status, ['queued', 'running']))).prepare()

  const removeDeleted = sqlite.transaction((rowids: number[]) => {
    const del = hasVectors() ? sqlite.prepare(`DELETE FROM knowledge_vectors WHERE rowid = ?`) : undefined
    for (const r of rowids) { del?.run(BigInt(r)); forgetDelete.run(r) }
  })
  const store = sqlite.transaction((rows: Array<{ rowid: number;
    token: string | null }>, vectors: Float32Array[], upto: number) => {
    const insert = sqlite.prepare(`INSERT INTO knowledge_vectors (rowid, readers, embedding) VALUES (?, ?, ?)`)
    const del = sqlite.prepare(`DELETE FROM knowledge_vectors WHERE rowid = ?`)
    rows.forEach((r, i) => {
      // a rowid reused after a delete: the old vector goes first
      del.run(BigInt(r.rowid))
      if (r.token) insert.run(BigInt(r.rowid), r.token, vectors[i])
    })
    advance.run(upto)
  })

  /** Work left: vectors to remove, or passages above the mark (which comes down if top rowids were deleted). */
  function pending(): boolean {
    const s = state.get()!
    const top = maxRowid.get()!.n
    let upto = s.embedded_upto
    if (top < upto) { advance.run(top); upto = top }
    return top > upto || !!deletes.get()
  }

  jobs.register('knowledge.embed', async (_payload, ctx) => {
    for (;;) {
      if (ctx.signal.aborted) throw new Error('interrupted by shutdown')
      const gone = deletes.all().map((r) => r.rowid)
      if (gone.length > 0) { removeDeleted(gone); await yieldToLoop(); continue }
      const s = state.get()!
      const rows = pendingBatch.all(s.embedded_upto, batchSize)
      if (rows.length === 0) return
      const vectors = await client.embed(rows.map((r) => r.text), ctx.signal)
      if (s.dimensions !== vectors[0].length || !hasVectors()) {
        if (s.dimensions) {
          log.warn({ from: s.dimensions, to: vectors[0].length },
            'embedding dimensions changed: every passage will be embedded again')
        }
        reset(vectors[0].length)
        continue
      }
      store(rows, vectors, rows[rows.length - 1].rowid)
      await yieldToLoop()
    }
  }, { maxAttempts: 1000, backoffMs: 1000 })

  /** Queues the job when there is work and none is queued or running: at start (back-fill) and every poll. */
  function kick() {
    try {
      if (!jobWaiting.get() && pending()) jobs.enqueue('knowledge.embed', {})
    } catch (err) {
      log.warn({ err }, 'embedding poll failed')
    }
  }
  let timer: NodeJS.Timeout | undefined
  const source = vectorSource(sqlite, client)
  return {
    source,
    client,
    kick,
    start() { kick(); timer = setInterval(kick, options.pollMs ?? 2000); timer.unref() },
    stop() { if (timer) clearInterval(timer) }
  }
}

export type Embeddings = ReturnType<typeof createEmbeddings>
