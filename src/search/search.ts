import type { FastifyInstance } from 'fastify'
import type { Principal } from '../auth/plugin.js'
import type { Reader } from '../knowledge/readers.js'
import { ftsPhrase } from '../knowledge/query.js'
import { readableChannelSql } from '../channels/store.js'
import type { artifacts } from '../../schema/tables/artifacts.js'
import type { voiceNotes } from '../../schema/tables/voice-notes.js'
import type { channelMessages, channels } from '../../schema/tables/assistant.js'
import type { SearchResult } from '../../schema/api/search.js'

interface Ranked { snippet: string; score: number }
type ArtifactHit = Pick<typeof artifacts.$inferSelect, 'id' | 'title'> & Ranked
type VoiceNoteHit = Pick<typeof voiceNotes.$inferSelect, 'id' | 'title'> & Ranked
type MessageHit = Pick<typeof channelMessages.$inferSelect, 'id'> & { title: typeof channels.$inferSelect['name'] }
  & Ranked
interface FtsParams { match: string; limit: number; customerId: string; userId: string; workspaceIds: string }

/**
 * One search over what the caller can read (CONTRACT.md §8): knowledge passages, artifacts of their
 * workspaces, their own voice-note transcripts, messages of channels they can read. Every kind is an
 * index look-up; each kind's scores are scaled to its best hit before the kinds are merged.
 */
export function createUnifiedSearch(app: FastifyInstance) {
  const assistant = app.assistant
  const sqlite = app.sqlite
  const snippet = (table: string, column: number) => `snippet(${table}, ${column}, '<mark>', '</mark>', '…', 24)`
  // FTS5 MATCH, bm25() and snippet(), and json_each: none of them has a Drizzle form
  const artifactHits = sqlite.prepare<FtsParams, ArtifactHit>(`SELECT a.id, a.title,
    ${snippet('artifacts_fts', -1)} AS snippet, -bm25(artifacts_fts) AS score
    FROM artifacts_fts CROSS JOIN artifacts a ON a.rowid = artifacts_fts.rowid
    WHERE artifacts_fts MATCH @match AND a.customer_id = @customerId AND a.workspace_id IN (SELECT value
      FROM json_each(@workspaceIds))
    ORDER BY bm25(artifacts_fts) LIMIT +@limit`)
  const voiceNoteHits = sqlite.prepare<FtsParams, VoiceNoteHit>(`SELECT v.id, v.title,
    ${snippet('voice_notes_fts', -1)} AS snippet, -bm25(voice_notes_fts) AS score
    FROM voice_notes_fts CROSS JOIN voice_notes v ON v.rowid = voice_notes_fts.rowid
    WHERE voice_notes_fts MATCH @match AND v.user_id = @userId AND v.deleted_at IS NULL
    ORDER BY bm25(voice_notes_fts) LIMIT +@limit`)
  const messageHits = sqlite.prepare<FtsParams, MessageHit>(`SELECT m.id, c.name AS title,
    ${snippet('channel_messages_fts', 0)} AS snippet, -bm25(channel_messages_fts) AS score
    FROM channel_messages_fts CROSS JOIN channel_messages m ON m.rowid = channel_messages_fts.rowid
    JOIN channels c ON c.id = m.channel_id
    WHERE channel_messages_fts MATCH @match AND c.customer_id = @customerId AND ${readableChannelSql('c')}
    ORDER BY bm25(channel_messages_fts) LIMIT +@limit`)

  return {
    async search(principal: Principal, reader: Reader, query: string, limit: number): Promise<SearchResult[]> {
      const results: SearchResult[] = []
      // each index scores on its own scale: scale every kind to its best hit (1) before merging
      const add = (kind: string, rows: Array<Omit<SearchResult, 'kind'>>) => {
        const best = Math.max(...rows.map((r) => r.score), 0)
        for (const r of rows) results.push({ kind, ...r, score: best > 0 ? r.score / best : 1 })
      }
      const seenDocs = new Set<string>()
      const knowledge: Array<Omit<SearchResult, 'kind'>> = []
      for (const hit of await assistant.searchKnowledge(reader, query, limit)) {
        if (seenDocs.has(hit.document.id)) continue
        seenDocs.add(hit.document.id)
        knowledge.push({ id: hit.document.id, title: hit.document.fileName, snippet: hit.snippet,
          score: hit.score ?? 1 })
      }
      add('knowledge', knowledge)
      // the other kinds are indexed by trigrams: 3+ characters
      if ([...query].length >= 3) {
        const params: FtsParams = { match: ftsPhrase(query), limit, customerId: principal.customerId,
          userId: principal.userId, workspaceIds: JSON.stringify(reader.workspaceIds) }
        add('artifact', artifactHits.all(params))
        add('voice_note', voiceNoteHits.all(params))
        add('message', messageHits.all(params))
      }
      results.sort((a, b) => b.score - a.score)
      return results.slice(0, limit).map((r) => ({ ...r, score: Math.round(r.score * 1e6) / 1e6 }))
    }
  }
}

export type UnifiedSearch = ReturnType<typeof createUnifiedSearch>
