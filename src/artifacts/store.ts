import { randomUUID } from 'node:crypto'
import { and, count, desc, eq, inArray, or, sql, type SQL } from 'drizzle-orm'
import type Database from 'better-sqlite3'
import type { Db } from '../db/index.js'
import { nowIso } from '../db/index.js'
import { artifacts, artifactComments, artifactTombstones, artifactCounts } from '../../schema/tables/artifacts.js'
import type { StreamChange } from '../events/workspace-stream.js'
import { reviewRefusal, reviewedSha256, type Actor, type ReviewChange, type ReviewRefusal } from './review.js'
import type {
  CreateArtifactBody, UpdateArtifactBody, ListArtifactsQuery, ArtifactStatus, ReviewPolicy
} from '../../schema/api/artifacts.js'

type Row = typeof artifacts.$inferSelect
type CommentRow = typeof artifactComments.$inferSelect
/** a chain entry, in the response's snake_case */
type ChainRow = Pick<Row, 'id' | 'title' | 'type' | 'status'>
  & { parent_artifact_id: Row['parentArtifactId']; created_at: Row['createdAt'] }

/** Who acts and where: every query is confined to this workspace of this organization. */
export interface Scope {
  customerId: string
  workspaceId: string
  userId: string
}

export function toArtifact(row: Row) {
  return {
    id: row.id,
    workspace_id: row.workspaceId,
    customer_id: row.customerId,
    type: row.type,
    subtype: row.subtype,
    title: row.title,
    content: JSON.parse(row.content) as Record<string, unknown>,
    status: row.status,
    workflow_id: row.workflowId,
    workflow_run_id: row.workflowRunId,
    conversation_id: row.conversationId,
    message_id: row.messageId,
    parent_artifact_id: row.parentArtifactId,
    confidence_score: row.confidenceScore,
    review_policy: row.reviewPolicy,
    reviewed_by: row.reviewedBy,
    created_by: row.createdBy,
    created_at: row.createdAt,
    updated_at: row.updatedAt
  }
}

function toComment(row: CommentRow) {
  return {
    id: row.id,
    user_id: row.userId,
    content: row.content,
    ...(row.position === null ? {} : { position: JSON.parse(row.position) as Record<string, unknown> }),
    created_at: row.createdAt
  }
}

const summary = (row: Row) => ({
  id: row.id, type: row.type, subtype: row.subtype, title: row.title,
  status: row.status, created_at: row.createdAt, updated_at: row.updatedAt
})

/** A change the machine-review rules refuse (src/artifacts/review.ts); the route answers it. */
export class ReviewRefused extends Error {
  constructor(readonly code: ReviewRefusal) {
    super(code)
  }
}

/** A reference (parent or related artifact) that is not a live artifact of the workspace. */
export class InvalidReference extends Error {
  constructor(readonly field: string, readonly ids: string[]) {
    super(`${field} must name artifacts of this workspace; not found: ${ids.join(', ')}`)
  }
}

// Every artifact linked to the start through parent links, both ways and through branches; deleted
// versions (tombstones) still connect their neighbours. Each step is an indexed look-up (primary keys
// and the parent indexes); UNION stops at artifacts already reached. CROSS JOIN keeps SQLite from
// scanning the workspace: the chain's ids drive primary-key look-ups.
export const CHAIN_SQL = `
    WITH RECURSIVE chain(id) AS (
      SELECT @id
      UNION
      SELECT a.parent_artifact_id FROM artifacts a JOIN chain c ON a.id = c.id WHERE a.parent_artifact_id IS NOT NULL
      UNION
      SELECT t.parent_artifact_id FROM artifact_tombstones t JOIN chain c ON t.id = c.id
        WHERE t.parent_artifact_id IS NOT NULL
      UNION
      SELECT a.id FROM artifacts a JOIN chain c ON a.parent_artifact_id = c.id
      UNION
      SELECT t.id FROM artifact_tombstones t JOIN chain c ON t.parent_artifact_id = c.id
    )
    SELECT a.id, a.title, a.type, a.status, a.parent_artifact_id, a.created_at
    FROM chain CROSS JOIN artifacts a ON a.id = chain.id
    WHERE a.workspace_id = @workspaceId AND a.customer_id = @customerId
    ORDER BY a.created_at, a.id`

export function createArtifactStore(db: Db, sqlite: Database.Database,
  publish: (change: StreamChange) => void = () => {}) {
  /** a change for the workspace event stream, in the change's transaction */
  const announce = (row: Pick<Row, 'id' | 'customerId' | 'workspaceId' | 'type' | 'title' | 'status'>,
    name: StreamChange['name'], extra: Record<string, unknown> = {}) =>
    publish({ customerId: row.customerId, workspaceId: row.workspaceId, name,
      data: { id: row.id, type: row.type, title: row.title, status: row.status, ...extra } })
  const inWorkspace = (s: Scope, id: string) =>
    and(eq(artifacts.id, id), eq(artifacts.workspaceId, s.workspaceId), eq(artifacts.customerId, s.customerId))

  const p = sql.placeholder
  const one = db.select().from(artifacts).where(and(eq(artifacts.id, p('id')),
    eq(artifacts.workspaceId, p('workspaceId')), eq(artifacts.customerId, p('customerId')))).prepare()
  const find = (s: Scope, id: string) => one.get({ id, workspaceId: s.workspaceId, customerId: s.customerId })

  const comments = db.select().from(artifactComments).where(eq(artifactComments.artifactId, p('artifactId')))
    .orderBy(artifactComments.createdAt, artifactComments.id).prepare()
  const commentsOf = (artifactId: string) => comments.all({ artifactId }).map(toComment)

  const detail = (row: Row, withComments: boolean) => ({
    ...toArtifact(row),
    related_artifacts: JSON.parse(row.relatedArtifacts) as string[],
    ...(withComments ? { comments: commentsOf(row.id) } : {})
  })

  function checkReferences(s: Scope, field: string, ids: string[]) {
    if (ids.length === 0) return
    const found = new Set(db.select({ id: artifacts.id }).from(artifacts)
      .where(and(eq(artifacts.workspaceId, s.workspaceId), inArray(artifacts.id, ids))).all().map((r) => r.id))
    const missing = ids.filter((id) => !found.has(id))
    if (missing.length > 0) throw new InvalidReference(field, missing)
  }

  /**
   * Runs `write` on the artifact inside one immediate transaction, after the machine-review rules allowed `actor`
   * to make `change` (ReviewRefused otherwise): the check and the write see the same row. Undefined when the
   * artifact is missing or foreign.
   */
  function guarded<T>(s: Scope, id: string, actor: Actor, change: ReviewChange, write: (row: Row) => T): T | undefined {
    return db.transaction(() => {
      const row = find(s, id)
      if (!row) return undefined
      const refusal = reviewRefusal(actor, row, change)
      if (refusal) throw new ReviewRefused(refusal)
      return write(row)
    }, { behavior: 'immediate' })
  }

  // a recursive CTE: Drizzle's query builder has no WITH RECURSIVE
  const chainStatement = sqlite.prepare<{ id: string; workspaceId: string; customerId: string }, ChainRow>(CHAIN_SQL)

  return {
    list(s: Scope, q: ListArtifactsQuery) {
      const filters: SQL[] = [eq(artifacts.workspaceId, s.workspaceId), eq(artifacts.customerId, s.customerId)]
      if (q.type) filters.push(eq(artifacts.type, q.type))
      if (q.status) filters.push(eq(artifacts.status, q.status))
      if (q.workflow_id) filters.push(eq(artifacts.workflowId, q.workflow_id))
      if (q.workflow_run_id) filters.push(eq(artifacts.workflowRunId, q.workflow_run_id))
      if (q.conversation_id) filters.push(eq(artifacts.conversationId, q.conversation_id))
      if (q.message_id) filters.push(eq(artifacts.messageId, q.message_id))
      if (q.review_policy) filters.push(eq(artifacts.reviewPolicy, q.review_policy))
      // what awaits a person: both terms are led by the status index's columns
      if (q.awaiting === 'person') {
        filters.push(or(eq(artifacts.status, 'pending_review'),
          and(eq(artifacts.status, 'draft'), eq(artifacts.reviewPolicy, 'request_review')))!)
      }
      const where = and(...filters)
      const rows = db.select().from(artifacts).where(where)
        .orderBy(desc(artifacts.createdAt), desc(artifacts.id)).limit(q.limit).offset(q.offset).all()
      // without filters the total is the trigger-kept counter; with filters, a count over the filter's index
      const total = filters.length === 2
        ? db.select({ n: artifactCounts.count }).from(artifactCounts).where(eq(artifactCounts.workspaceId,
          s.workspaceId)).get()?.n ?? 0
        : db.select({ n: count() }).from(artifacts).where(where).get()!.n
      return { rows: rows.map(toArtifact), count: total }
    },

    get(s: Scope, id: string) {
      const row = find(s, id)
      return row && detail(row, true)
    },

    /** Throws InvalidReference for a parent or related id outside the workspace. */
    create(s: Scope, body: CreateArtifactBody) {
      const related = [...new Set(body.related_artifacts ?? [])]
      return db.transaction(() => {
        if (body.parent_artifact_id) checkReferences(s, 'parent_artifact_id', [body.parent_artifact_id])
        checkReferences(s, 'related_artifacts', related)
        const now = nowIso()
        const row: Row = {
          id: randomUUID(),
          customerId: s.customerId,
          workspaceId: s.workspaceId,
          type: body.type,
          subtype: body.subtype ?? null,
          title: body.title,
          content: JSON.stringify(body.content ?? {}),
          status: 'draft',
          workflowId: body.workflow_id ?? null,
          workflowRunId: body.workflow_run_id ?? null,
          conversationId: body.conversation_id ?? null,
          messageId: body.message_id ?? null,
          parentArtifactId: body.parent_artifact_id ?? null,
          relatedArtifacts: JSON.stringify(related),
          confidenceScore: body.confidence?.score ?? null,
          reviewPolicy: body.review_policy ?? 'agent_decides',
          reviewedBy: null,
          revision: 1,
          statusSetBy: null,
          reviewedRevision: null,
          reviewedSha256: null,
          createdBy: s.userId,
          createdAt: now,
          updatedAt: now
        }
        db.insert(artifacts).values(row).run()
        announce(row, 'artifact.created')
        return detail(row, false)
      }, { behavior: 'immediate' })
    },

    /** Throws ReviewRefused when the machine-review rules refuse `actor` this change. */
    update(s: Scope, id: string, patch: UpdateArtifactBody, actor: Actor = 'person') {
      const edits = patch.title !== undefined || patch.content !== undefined || patch.confidence !== undefined
      return guarded(s, id, actor, { edits, policy: patch.review_policy }, (current) => {
        const set: Partial<Row> = { updatedAt: nowIso() }
        if (patch.title !== undefined) set.title = patch.title
        if (patch.content !== undefined) set.content = JSON.stringify(patch.content)
        if (patch.confidence !== undefined) set.confidenceScore = patch.confidence.score
        if (patch.review_policy !== undefined) set.reviewPolicy = patch.review_policy
        if (edits) set.revision = current.revision + 1
        const row = db.update(artifacts).set(set).where(eq(artifacts.id, id)).returning().get()!
        announce(row, 'artifact.updated')
        return detail(row, false)
      })
    },

    /**
     * Deletes one artifact (its comments with it); a tombstone keeps its chain connected. Throws ReviewRefused
     * when the machine-review rules refuse `actor` the deletion.
     */
    remove(s: Scope, id: string, actor: Actor = 'person') {
      return guarded(s, id, actor, { deletes: true }, (row) => {
        db.insert(artifactTombstones).values({ id: row.id, workspaceId: s.workspaceId,
          parentArtifactId: row.parentArtifactId, deletedAt: nowIso() }).run()
        db.delete(artifacts).where(eq(artifacts.id, row.id)).run()
        announce(row, 'artifact.deleted')
        return true
      }) ?? false
    },

    /**
     * Sets the status, recording the caller as reviewer and whether a person or a key set it; an approval or a
     * rejection also records the revision and the fingerprint of the title and content it was made on. Throws
     * ReviewRefused when the machine-review rules refuse `actor` this status.
     */
    setStatus(s: Scope, id: string, status: ArtifactStatus, actor: Actor = 'person') {
      return guarded(s, id, actor, { status }, (current) => {
        const decision = status === 'approved' || status === 'rejected'
        const row = db.update(artifacts).set({ status, reviewedBy: s.userId, statusSetBy: actor, updatedAt: nowIso(),
          ...(decision ? { reviewedRevision: current.revision,
            reviewedSha256: reviewedSha256(current.title, current.content) } : {}) })
          .where(eq(artifacts.id, id)).returning().get()!
        announce(row, 'artifact.status_changed', { reviewed_by: row.reviewedBy })
        return {
          id: row.id, type: row.type, title: row.title, status: row.status, reviewed_by: row.reviewedBy,
          updated_at: row.updatedAt
        }
      })
    },

    /** What the review rules and `wait_for_review` read: who set the status, and what a decision was made on. */
    reviewRecord(s: Scope, id: string) {
      const row = find(s, id)
      return row && { status: row.status, reviewPolicy: row.reviewPolicy, statusSetBy: row.statusSetBy,
        revision: row.revision, reviewedRevision: row.reviewedRevision, reviewedSha256: row.reviewedSha256 }
    },

    addComment(s: Scope, id: string, content: string, position: Record<string, unknown> | undefined) {
      return db.transaction((tx) => {
        const now = nowIso()
        const row = tx.update(artifacts).set({ updatedAt: now }).where(inWorkspace(s, id)).returning().get()
        if (!row) return undefined
        const comment = { id: randomUUID(), artifactId: id, userId: s.userId, content,
          position: position === undefined ? null : JSON.stringify(position), createdAt: now }
        tx.insert(artifactComments).values(comment).run()
        announce(row, 'artifact.commented', { comment: toComment(comment) })
        return { id: row.id, type: row.type, title: row.title, comments: commentsOf(id), updated_at: row.updatedAt }
      }, { behavior: 'immediate' })
    },

    /**
     * The original becomes superseded and a new draft version follows it, in one transaction. Throws
     * ReviewRefused when the machine-review rules refuse `actor` this.
     */
    supersede(s: Scope, id: string,
      body: { title?: string; content?: Record<string, unknown>; confidence?: { score: number };
        review_policy?: ReviewPolicy }, actor: Actor = 'person') {
      return guarded(s, id, actor, { supersedes: true, policy: body.review_policy }, (original) => {
        const now = nowIso()
        db.update(artifacts).set({ status: 'superseded', statusSetBy: actor, updatedAt: now })
          .where(eq(artifacts.id, id)).run()
        announce({ ...original, status: 'superseded' }, 'artifact.status_changed', { reviewed_by: original.reviewedBy })
        const row: Row = {
          ...original,
          id: randomUUID(),
          title: body.title ?? original.title,
          content: body.content === undefined ? original.content : JSON.stringify(body.content),
          confidenceScore: body.confidence === undefined ? original.confidenceScore : body.confidence.score,
          reviewPolicy: body.review_policy ?? original.reviewPolicy,
          status: 'draft',
          workflowRunId: null,
          conversationId: null,
          messageId: null,
          parentArtifactId: original.id,
          relatedArtifacts: '[]',
          reviewedBy: null,
          revision: 1,
          statusSetBy: null,
          reviewedRevision: null,
          reviewedSha256: null,
          createdBy: s.userId,
          createdAt: now,
          updatedAt: now
        }
        db.insert(artifacts).values(row).run()
        announce(row, 'artifact.created')
        return detail(row, false)
      })
    },

    chain(s: Scope, id: string) {
      if (!find(s, id)) return undefined
      return chainStatement.all({ id, workspaceId: s.workspaceId, customerId: s.customerId })
    },

    /** Summaries of the artifacts of one conversation or one workflow run, newest first. */
    summariesBy(s: Scope, link: 'conversation' | 'workflowRun', id: string) {
      const column = link === 'conversation' ? artifacts.conversationId : artifacts.workflowRunId
      return db.select().from(artifacts)
        .where(and(eq(artifacts.workspaceId, s.workspaceId), eq(artifacts.customerId, s.customerId), eq(column, id)))
        .orderBy(desc(artifacts.createdAt), desc(artifacts.id)).all().map(summary)
    }
  }
}

export type ArtifactStore = ReturnType<typeof createArtifactStore>
