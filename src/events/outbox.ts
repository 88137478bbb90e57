import { randomBytes } from 'node:crypto'
import type Database from 'better-sqlite3'
import type { DeliveryAttempt } from './delivery.js'

/** A message with what an attempt needs: its event's body and its webhook's address and secrets. */
export interface MessageRow {
  seq: number
  id: string
  webhook_id: string
  state: 'pending' | 'retrying' | 'delivered' | 'failed'
  event: string
  body: string
  timestamp: string
  url: string
  signing_secret: string
  previous_signing_secret: string | null
  previous_secret_expires_at: string | null
  active: number
}

/**
 * first: the fan-out's attempt; retry: the n-th automatic retry; redeliver: asked for by the API (one attempt,
 * never retried); test: `POST …/test` (one attempt).
 */
export type AttemptKind = 'first' | 'retry' | 'redeliver' | 'test'

export interface Outcome { row: MessageRow; attempt: DeliveryAttempt; kind: AttemptKind; retry: number }

export const newMessageId = () => `msg_${randomBytes(16).toString('hex')}`

/** The secrets that sign: the current one, and the one it replaced until that expires. */
export function signingSecrets(row: Pick<MessageRow,
  'signing_secret' | 'previous_signing_secret' | 'previous_secret_expires_at'>, now = Date.now()) {
  return row.previous_signing_secret && row.previous_secret_expires_at &&
    Date.parse(row.previous_secret_expires_at) > now
    ? [row.signing_secret, row.previous_signing_secret]
    : [row.signing_secret]
}

const FAILING_LIMIT_MS = 5 * 86_400_000

const MESSAGE_COLUMNS =
  `m.seq, m.id, m.webhook_id, m.state, e.event, e.body, e.created_at AS timestamp, w.url, w.signing_secret,
  w.previous_signing_secret, w.previous_secret_expires_at, w.active
  FROM webhook_messages m JOIN webhook_events e ON e.seq = m.event_seq JOIN webhooks w ON w.id = m.webhook_id`

/**
 * The outbox and its messages in SQL: events written by the request's transaction, expanded in batches into
 * one message per subscribed webhook, and attempts recorded in batches.
 */
export function createOutboxStore(sqlite: Database.Database, opts: {
  schedule: readonly number[]
  /** queues the retry of a message (a job), inside the transaction that records the failed attempt */
  scheduleRetry(seq: number, retry: number, runAt: number): void
  onDeactivated(webhookId: string): void
}) {
  const subscribers = sqlite.prepare(`SELECT COUNT(*) FROM webhooks w WHERE w.workspace_id = ? AND w.active = 1
    AND EXISTS (SELECT 1 FROM json_each(w.events) e WHERE e.value = ?)`).pluck()
  const insertEvent = sqlite.prepare(`INSERT INTO webhook_events (workspace_id, event, body, expanded, created_at)
    VALUES (?, ?, ?, ?, ?)`)
  const outboxBatch = sqlite.prepare(`SELECT seq FROM webhook_events WHERE expanded = 0 ORDER BY seq LIMIT +?`).pluck()
  const expandUpTo = sqlite.prepare(`INSERT INTO webhook_messages (id, event_seq, webhook_id, state, attempts,
    created_at, updated_at)
    SELECT 'msg_' || lower(hex(randomblob(16))), e.seq, w.id, 'pending', 0, @now, @now
    FROM webhook_events e JOIN webhooks w ON w.workspace_id = e.workspace_id AND w.active = 1
    WHERE e.expanded = 0 AND e.seq <= @last AND EXISTS (SELECT 1 FROM json_each(w.events) j WHERE j.value = e.event)
    ORDER BY e.seq`)
  const markExpanded = sqlite.prepare(`UPDATE webhook_events SET expanded = 1 WHERE expanded = 0 AND seq <= ?`)
  const insertMessage = sqlite.prepare(`INSERT INTO webhook_messages (id, event_seq, webhook_id, state, attempts,
    created_at, updated_at)
    VALUES (?, ?, ?, 'pending', 0, ?, ?)`)
  // `LIMIT +?`, not `LIMIT ?`: SQLite recompiles a statement whose LIMIT is a bare parameter at every binding
  const pendingAfter = sqlite.prepare(`SELECT ${MESSAGE_COLUMNS} WHERE m.state = 'pending' AND m.seq > ? ORDER BY m.seq
    LIMIT +?`)
  const bySeq = sqlite.prepare(`SELECT ${MESSAGE_COLUMNS} WHERE m.seq = ?`)
  const deliveryMessage = sqlite.prepare(`SELECT m.seq FROM webhook_deliveries d
    JOIN webhook_messages m ON m.id = d.message_id
    WHERE d.id = ? AND d.webhook_id = ?`).pluck()
  const countAttempt = sqlite.prepare(`UPDATE webhook_messages
    SET attempts = attempts + 1, state = COALESCE(?, state), updated_at = ?
    WHERE seq = ? RETURNING attempts`).pluck()
  const setState = sqlite.prepare(`UPDATE webhook_messages SET state = ?, updated_at = ? WHERE seq = ?`)
  const insertDelivery = sqlite.prepare(`INSERT INTO webhook_deliveries (id, webhook_id, message_id, attempt,
    next_attempt_at, event_type,
    status_code, success, latency_ms, request_body, response_body, error, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  const succeeded = sqlite.prepare(`UPDATE webhooks SET failing_since = NULL WHERE id = ?
    AND failing_since IS NOT NULL`)
  const deactivate = sqlite.prepare(`UPDATE webhooks SET active = 0, updated_at = ? WHERE id = ? AND active = 1
    AND failing_since <= ?`)
  const failing = sqlite.prepare(`UPDATE webhooks SET failing_since = ? WHERE id = ? AND failing_since IS NULL`)

  const expand = sqlite.transaction((batch: number) => {
    const seqs = outboxBatch.all(batch) as number[]
    if (seqs.length === 0) return { events: 0, messages: 0 }
    const last = seqs[seqs.length - 1]
    const messages = expandUpTo.run({ now: new Date().toISOString(), last }).changes
    markExpanded.run(last)
    return { events: seqs.length, messages }
  })

  const record = sqlite.transaction((outcomes: Outcome[]) => {
    const nowMs = Date.now()
    const now = new Date(nowMs).toISOString()
    for (const { row, attempt, kind, retry } of outcomes) {
      let active = row.active === 1
      if (attempt.success) succeeded.run(row.webhook_id)
      else {
        if (deactivate.run(now, row.webhook_id, new Date(nowMs - FAILING_LIMIT_MS).toISOString()).changes > 0) {
          active = false
          opts.onDeactivated(row.webhook_id)
        }
        failing.run(now, row.webhook_id)
      }
      let state: MessageRow['state'] | null
      let nextAt: number | undefined
      if (attempt.success) state = 'delivered'
      else if (kind === 'redeliver') state = null
      else if ((kind === 'first' || kind === 'retry') && active && retry < opts.schedule.length) {
        state = 'retrying'
        nextAt = nowMs + Math.round(opts.schedule[retry] * 1000)
      } else state = 'failed'
      // the webhook (and its messages) was deleted while the attempt was in flight: nothing to record against
      const number = countAttempt.get(state, now, row.seq) as number | undefined
      if (number === undefined) continue
      if (nextAt !== undefined) opts.scheduleRetry(row.seq, retry + 1, nextAt)
      insertDelivery.run(attempt.id, row.webhook_id, row.id, number,
        nextAt === undefined ? null : new Date(nextAt).toISOString(), attempt.eventType,
        attempt.statusCode, attempt.success ? 1 : 0, attempt.latencyMs, JSON.stringify(attempt.request),
        attempt.responseBody, attempt.error ?? null, now)
    }
  })

  return {
    /** webhooks of the workspace subscribed to the event now */
    subscribers: (workspaceId: string, event: string) => subscribers.get(workspaceId, event) as number,
    /** the outbox row; the caller's transaction holds it with the change that caused the event */
    addEvent(workspaceId: string, event: string, data: object, expanded = false) {
      const timestamp = new Date().toISOString()
      const body = JSON.stringify({ event, timestamp, data })
      return { seq: Number(insertEvent.run(workspaceId, event, body, expanded ? 1 : 0, timestamp).lastInsertRowid),
        body, timestamp }
    },
    /** a message of one event for one webhook (test pings, jobs of an earlier version) */
    addMessage(eventSeq: number, webhookId: string) {
      const now = new Date().toISOString()
      return Number(insertMessage.run(newMessageId(), eventSeq, webhookId, now, now).lastInsertRowid)
    },
    /** expands up to `batch` outbox events into messages */
    expand: (batch: number) => expand(batch),
    pendingAfter: (seq: number, limit: number) => pendingAfter.all(seq, limit) as MessageRow[],
    message: (seq: number) => bySeq.get(seq) as MessageRow | undefined,
    /** the message of one of the webhook's recorded deliveries */
    deliveryMessage: (deliveryId: string, webhookId: string) => deliveryMessage.get(deliveryId,
      webhookId) as number | undefined,
    fail: (seq: number) => setState.run('failed', new Date().toISOString(), seq),
    record: (outcomes: Outcome[]) => record(outcomes)
  }
}

export type OutboxStore = ReturnType<typeof createOutboxStore>
