import fp from 'fastify-plugin'
import { and, asc, eq, gt, isNull, or, sql } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { nowIso } from '../db/index.js'
import { boundLimit } from '../db/prepared.js'
import { workspaceEvents } from '../../schema/tables/workspace-events.js'

/** The workspace event stream's event names (docs/api/events.md); not webhook events. */
export const STREAM_EVENT_NAMES = [
  'artifact.created', 'artifact.updated', 'artifact.status_changed', 'artifact.commented', 'artifact.deleted',
  'document.indexed', 'voice_note.updated', 'message.created', 'workflow_run.updated'
] as const
export type StreamEventName = (typeof STREAM_EVENT_NAMES)[number]

/** One change, and who may receive it. */
export interface StreamChange {
  customerId: string
  /** null: every workspace of the organization (an organization-wide or personal resource) */
  workspaceId: string | null
  /** only this person (a personal resource) */
  userId?: string | null
  /** only those who may read this channel */
  channelId?: string | null
  name: StreamEventName
  /** the event's fields: `id` is the resource's; workspace_id and at are added */
  data: { id: string } & Record<string, unknown>
}

export interface StoredStreamEvent {
  id: number
  workspaceId: string | null
  userId: string | null
  channelId: string | null
  name: string
  data: string
  createdAt: string
}

export interface WorkspaceEventLog {
  /** records the change (in the caller's transaction when there is one); live streams wake once it has committed */
  publish(change: StreamChange): void
  /** the organization's events after `afterId` for `workspaceId` (and the organization-wide ones), oldest first */
  after(customerId: string, workspaceId: string, afterId: number, limit: number): StoredStreamEvent[]
  /** the last id given so far (0 before any) */
  lastId(): number
  /** whether the events after `afterId` are all still kept (false for an id never given, or one pruned away) */
  resumable(afterId: number): boolean
  /** calls `listener` after each commit of new events (and of other processes' events, looked for every second) */
  subscribe(listener: () => void): () => void
}

declare module 'fastify' {
  interface FastifyInstance {
    /** the workspace event stream's log (src/events/workspace-stream.ts) */
    workspaceEvents: WorkspaceEventLog
  }
}

/** how often a process with open streams looks for events written by another process */
const OTHER_PROCESS_LOOK_MS = 1000

async function workspaceEventsPlugin(app: FastifyInstance) {
  const db = app.db
  const insert = db.insert(workspaceEvents).values({
    customerId: sql.placeholder('customerId'), workspaceId: sql.placeholder('workspaceId'),
    userId: sql.placeholder('userId'), channelId: sql.placeholder('channelId'), name: sql.placeholder('name'),
    data: sql.placeholder('data'), createdAt: sql.placeholder('createdAt')
  }).prepare()
  const afterStatement = db.select({ id: workspaceEvents.id, workspaceId: workspaceEvents.workspaceId,
    userId: workspaceEvents.userId, channelId: workspaceEvents.channelId, name: workspaceEvents.name,
    data: workspaceEvents.data, createdAt: workspaceEvents.createdAt }).from(workspaceEvents)
    .where(and(eq(workspaceEvents.customerId, sql.placeholder('customerId')),
      gt(workspaceEvents.id, sql.placeholder('afterId')),
      or(eq(workspaceEvents.workspaceId, sql.placeholder('workspaceId')), isNull(workspaceEvents.workspaceId))))
    .orderBy(asc(workspaceEvents.id)).limit(boundLimit('limit')).prepare()
  // AUTOINCREMENT: ids are never given twice, and sqlite_sequence keeps the last one given even when its row is gone
  const lastGiven = app.sqlite.prepare(`SELECT seq FROM sqlite_sequence WHERE name = 'workspace_events'`).pluck()
  const oldestKept = app.sqlite.prepare('SELECT min(id) FROM workspace_events').pluck()

  const listeners = new Set<() => void>()
  let woken = false
  const wake = () => {
    if (woken) return
    woken = true
    // after the caller's transaction has committed (or rolled back: a listener then finds nothing new)
    setImmediate(() => {
      woken = false
      for (const listener of [...listeners]) listener()
    })
  }
  let seen = 0
  let looker: NodeJS.Timeout | undefined
  const lastId = () => (lastGiven.get() as number | undefined) ?? 0

  const log: WorkspaceEventLog = {
    publish(change) {
      const { id, ...rest } = change.data
      insert.run({ customerId: change.customerId, workspaceId: change.workspaceId, userId: change.userId ?? null,
        channelId: change.channelId ?? null, name: change.name, data: JSON.stringify({ id, ...rest }),
        createdAt: nowIso() })
      wake()
    },
    after: (customerId, workspaceId, afterId, limit) =>
      afterStatement.all({ customerId, workspaceId, afterId, limit }) as StoredStreamEvent[],
    lastId,
    resumable(afterId) {
      if (!Number.isSafeInteger(afterId) || afterId < 0) return false
      const last = lastId()
      if (afterId > last) return false
      if (afterId === last) return true
      const oldest = oldestKept.get() as number | null
      // everything after afterId up to the last given must still be there
      return oldest !== null && oldest <= afterId + 1
    },
    subscribe(listener) {
      listeners.add(listener)
      if (!looker) {
        seen = lastId()
        looker = setInterval(() => {
          const last = lastId()
          if (last !== seen) { seen = last; wake() }
        }, OTHER_PROCESS_LOOK_MS)
        looker.unref()
      }
      return () => {
        listeners.delete(listener)
        if (listeners.size === 0 && looker) { clearInterval(looker); looker = undefined }
      }
    }
  }
  app.decorate('workspaceEvents', log)

  app.addHook('onClose', async () => {
    if (looker) clearInterval(looker)
    listeners.clear()
  })
}

export default fp(workspaceEventsPlugin, { name: 'cairn-workspace-events', dependencies: ['cairn-db'] })

/** The stream's `document.indexed` of a document: its own workspace's members, the organization, or its owner. */
export function documentIndexed(doc: { id: string; customerId: string; workspaceId: string | null; ownerId: string;
  scope: string; fileName: string; fileType: string; category: string; chunkCount: number }): StreamChange {
  return {
    customerId: doc.customerId,
    workspaceId: doc.scope === 'workspace' ? doc.workspaceId : null,
    userId: doc.scope === 'personal' ? doc.ownerId : null,
    name: 'document.indexed',
    data: { id: doc.id, document: { id: doc.id, fileName: doc.fileName, fileType: doc.fileType,
      category: doc.category, scope: doc.scope, chunkCount: doc.chunkCount, status: 'indexed' } }
  }
}
