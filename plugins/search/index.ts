import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { errors } from '../../schema/api/common.js'
import { requirePrincipal } from '../../src/auth/plugin.js'
import { badRequest } from '../../src/http/errors.js'
import { ftsPhrase } from '../../src/knowledge/query.js'
import { readableChannelSql } from '../../src/channels/store.js'

const ResultSchema = Type.Object({ kind: Type.String(), id: Type.String(), title: Type.String(), snippet: Type.String(),
  score: Type.Number() })

/**
 * `POST /api/v2/search` (CONTRACT.md §8): one search over what the caller can read — knowledge passages,
 * artifacts of their workspaces, their own voice-note transcripts, messages of channels they can read.
 * Every kind is a trigram-index look-up.
 */
const searchPlugin: FastifyPluginAsyncTypebox = async (app) => {
  const assistant = app.assistant
  const sqlite = app.sqlite
  const snippet = (table: string, column: number) => `snippet(${table}, ${column}, '<mark>', '</mark>', '…', 24)`
  const artifacts = sqlite.prepare(`SELECT a.id, a.title, ${snippet('artifacts_fts', -1)} AS snippet,
    -bm25(artifacts_fts) AS score
    FROM artifacts_fts CROSS JOIN artifacts a ON a.rowid = artifacts_fts.rowid
    WHERE artifacts_fts MATCH @match AND a.customer_id = @customerId AND a.workspace_id IN (SELECT value
      FROM json_each(@workspaceIds))
    ORDER BY bm25(artifacts_fts) LIMIT @limit`)
  const voiceNotes = sqlite.prepare(`SELECT v.id, v.title, ${snippet('voice_notes_fts', -1)} AS snippet,
    -bm25(voice_notes_fts) AS score
    FROM voice_notes_fts CROSS JOIN voice_notes v ON v.rowid = voice_notes_fts.rowid
    WHERE voice_notes_fts MATCH @match AND v.user_id = @userId AND v.deleted_at IS NULL
    ORDER BY bm25(voice_notes_fts) LIMIT @limit`)
  const messages = sqlite.prepare(`SELECT m.id, c.name AS title, ${snippet('channel_messages_fts', 0)} AS snippet,
    -bm25(channel_messages_fts) AS score
    FROM channel_messages_fts CROSS JOIN channel_messages m ON m.rowid = channel_messages_fts.rowid
    JOIN channels c ON c.id = m.channel_id
    WHERE channel_messages_fts MATCH @match AND c.customer_id = @customerId AND ${readableChannelSql('c')}
    ORDER BY bm25(channel_messages_fts) LIMIT @limit`)

  app.post('', {
    config: { action: 'search.query' },
    schema: {
      tags: ['search'], summary: 'Search knowledge, artifacts, voice-note transcripts and channel messages at once',
      body: Type.Object({ query: Type.String({ minLength: 1, maxLength: 1000 }),
        limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }) }),
      response: { 200: Type.Object({ success: Type.Literal(true), query: Type.String(),
        results: Type.Array(ResultSchema), count: Type.Integer() }), ...errors(403) }
    }
  }, async (request) => {
    const p = requirePrincipal(request)
    const query = request.body.query.trim()
    if (!query) throw badRequest('query must not be blank', 'VALIDATION_ERROR')
    const limit = request.body.limit
    const reader = assistant.readerOf(request)
    type Result = { kind: string; id: string; title: string; snippet: string; score: number }
    const results: Result[] = []
    // each index scores on its own scale: scale every kind to its best hit (1) before merging
    const add = (rows: Result[]) => {
      const best = Math.max(...rows.map((r) => r.score), 0)
      for (const r of rows) results.push({ ...r, score: best > 0 ? r.score / best : 1 })
    }
    const seenDocs = new Set<string>()
    const knowledge: Result[] = []
    for (const hit of await assistant.searchKnowledge(reader, query, limit)) {
      if (seenDocs.has(hit.document.id)) continue
      seenDocs.add(hit.document.id)
      knowledge.push({ kind: 'knowledge', id: hit.document.id, title: hit.document.fileName, snippet: hit.snippet,
        score: hit.score ?? 1 })
    }
    add(knowledge)
    // the other kinds are indexed by trigrams: 3+ characters
    if ([...query].length >= 3) {
      const params = { match: ftsPhrase(query), limit, customerId: p.customerId, userId: p.userId,
        workspaceIds: JSON.stringify(reader.workspaceIds) }
      for (const [kind, stmt] of [['artifact', artifacts], ['voice_note', voiceNotes],
        ['message', messages]] as const) {
        add((stmt.all(params) as Array<Omit<Result, 'kind'>>).map((r) => ({ kind, ...r })))
      }
    }
    results.sort((a, b) => b.score - a.score)
    const top = results.slice(0, limit).map((r) => ({ ...r, score: Math.round(r.score * 1e6) / 1e6 }))
    return { success: true as const, query, results: top, count: top.length }
  })
}

export default searchPlugin
