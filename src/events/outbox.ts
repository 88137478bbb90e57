import { randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import { and, eq, gt, inArray, isNull, lt, lte, notExists, sql } from 'drizzle-orm'
import type { Db } from '../db/index.js'
import type { OutboxDb } from '../db/outbox-file.js'
import { boundLimit, fixedLimit, preparedWrite } from '../db/prepared.js'
import { webhookEvents, webhooks } from '../../schema/tables/webhooks.js'
import { outboxState, webhookDeliveries, webhookMessages } from '../../schema/outbox/tables.js'
import type { DeliveryAttempt } from './delivery.js'

type Webhook = typeof webhooks.$inferSelect
type WebhookEvent = typeof webhookEvents.$inferSelect
type WebhookMessage = typeof webhookMessages.$inferSelect

/** A message with what an attempt needs: its event's body and its webhook's address and secrets. */
export type OutboxMessage = Pick<WebhookMessage, 'seq' | 'id' | 'webhookId' | 'state'>
  & Pick<WebhookEvent, 'event' | 'body'> & { timestamp: WebhookEvent['createdAt'] }
  & Pick<Webhook, 'url' | 'signingSecret' | 'previousSigningSecret' | 'previousSecretExpiresAt' | 'active'
    | 'customerId'>

/**
 * first: the fan-out's attempt; retry: the n-th automatic retry; redeliver: asked for by the API (one attempt,
 * never retried); test: `POST …/test` (one attempt).
 */
export type AttemptKind = 'first' | 'retry' | 'redeliver' | 'test'

export interface Outcome { row: OutboxMessage; attempt: DeliveryAttempt; kind: AttemptKind; retry: number }

/**
 * Message and delivery ids begin with the time they are made (ms): their unique indexes then grow at their end,
 * where one page takes a whole batch, instead of one page written anywhere in the index per row.
 */
const msHex = (ms: number) => ms.toString(16).padStart(12, '0').slice(-12)

// The random digits of both ids come from `randomUUID` (version 4: 122 random bits, from a pool of entropy filled
// 128 UUIDs at a time: ~0.1 µs) rather than `randomBytes` (a call into the generator each time: ~2.3 µs, ten times
// per event fanned out to ten webhooks).

/** `msg_` and 32 hex digits: 12 of the time (ms), 20 random */
export const newMessageId = (now = Date.now()) => {
  const u = randomUUID()
  return `msg_${msHex(now)}${u.slice(0, 8)}${u.slice(9, 13)}${u.slice(24, 32)}`
}

/** A UUID of version 7 (RFC 9562): 48 bits of the time (ms), then random bits. */
export function newDeliveryId(now = Date.now()): string {
  // a version 4 UUID's 12 random bits after its version digit, then its variant and 62 random bits
  const u = randomUUID()
  const t = msHex(now)
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-7${u.slice(15, 18)}-${u.slice(19)}`
}

/** The secrets that sign: the current one, and the one it replaced until that expires. */
type Secrets = Pick<Webhook, 'signingSecret' | 'previousSigningSecret' | 'previousSecretExpiresAt'>
export function signingSecrets(row: Secrets, now = Date.now()) {
  return row.previousSigningSecret && row.previousSecretExpiresAt && Date.parse(row.previousSecretExpiresAt) > now
    ? [row.signingSecret, row.previousSigningSecret]
    : [row.signingSecret]
}

const FAILING_LIMIT_MS = 5 * 86_400_000
/** each retry's delay is lengthened by up to this fraction, at random: receivers that failed together are not
 * retried together */
export const RETRY_JITTER = 0.1
/** what a delivery record says of a 410 answer */
export const GONE_ERROR = 'the receiver answered 410 Gone: the webhook is disabled and its messages are not retried'

/** why the service switched a webhook off (schema/tables/webhooks.ts) */
export type DisabledReason = 'gone' | 'failing'

/**
 * The wait before the retry that follows attempt `retry` (0: the first attempt) of the schedule (seconds), in ms:
 * the schedule's step, or longer when the receiver asked for it (`Retry-After` on a 429 or 503), though never past
 * the schedule's longest step; then up to RETRY_JITTER more at random.
 */
export function retryDelayMs(schedule: readonly number[], retry: number, retryAfterMs?: number,
  random: () => number = Math.random): number {
  const step = schedule[retry] * 1000
  const longest = Math.max(...schedule) * 1000
  const wait = retryAfterMs === undefined ? step : Math.max(step, Math.min(retryAfterMs, longest))
  return Math.round(wait * (1 + RETRY_JITTER * random()))
}
/** rows deleted per statement by retention (an hour of deliveries at 500/s is 1.8 million rows) */
const RETAIN_CHUNK = 2000

/** runs of a `webhook.retry` job (one attempt each) before it is marked failed: a thread that died, mostly */
export const RETRY_MAX_ATTEMPTS = 3

/**
 * How many events the next expansion takes so that it makes about `messages` messages, given the last one's
 * fan-out (`lastMessages` from `lastEvents`): at least 1, at most `max`.
 */
export function eventsPerExpansion(lastEvents: number, lastMessages: number, messages: number, max: number): number {
  return Math.min(max, Math.max(1, Math.floor((messages * lastEvents) / Math.max(1, lastMessages))))
}

/**
 * The request thread's side of the outbox: an event written by the request's transaction (one row, when a webhook
 * subscribes). The rest is the outbox thread's (createOutboxStore), the reads of the outbox file aside
 * (createOutboxReader).
 */
export function createOutboxWriter(db: Db, sqlite: Database.Database) {
  const p = sql.placeholder
  // json_each over the webhook's event list: Drizzle has no table-valued functions
  const subscribers = sqlite.prepare<[string, string], number>(`SELECT COUNT(*) FROM webhooks w
    WHERE w.workspace_id = ? AND w.active = 1
    AND EXISTS (SELECT 1 FROM json_each(w.events) e WHERE e.value = ?)`).pluck()
  const insertEvent = preparedWrite(sqlite, db.insert(webhookEvents).values({ workspaceId: p('workspaceId'),
    event: p('event'), body: p('body'), expanded: p('expanded'), createdAt: p('createdAt') }))
  return {
    /** webhooks of the workspace subscribed to the event now */
    subscribers: (workspaceId: string, event: string) => subscribers.get(workspaceId, event) ?? 0,
    /**
     * the outbox row; the caller's transaction holds it with the change that caused the event. `expanded`: not to
     * be fanned out (its one message is made by the outbox thread: test pings, jobs of an earlier version)
     */
    addEvent(workspaceId: string, event: string, data: object, expanded = false) {
      const timestamp = new Date().toISOString()
      const body = JSON.stringify({ event, timestamp, data })
      return { seq: Number(insertEvent.run({ workspaceId, event, body, expanded, createdAt: timestamp })
        .lastInsertRowid), body, timestamp }
    }
  }
}

/** The request thread's reads of the outbox file (its own connection: nothing it runs takes that file's lock). */
export function createOutboxReader(db: OutboxDb) {
  const p = sql.placeholder
  const deliveryMessage = db.select({ seq: webhookMessages.seq, id: webhookMessages.id }).from(webhookDeliveries)
    .innerJoin(webhookMessages, eq(webhookMessages.id, webhookDeliveries.messageId))
    .where(and(eq(webhookDeliveries.id, p('deliveryId')), eq(webhookDeliveries.webhookId, p('webhookId')))).prepare()
  const expandedThrough = db.select({ seq: outboxState.expandedThrough }).from(outboxState).prepare()
  // a literal, for the partial index on it (see createOutboxStore)
  const pending = db.select({ one: sql`1` }).from(webhookMessages).where(sql`${webhookMessages.state} = 'pending'`)
    .limit(1).prepare()
  const older = db.select({ one: sql`1` }).from(webhookDeliveries).where(lt(webhookDeliveries.createdAt, p('cutoff')))
    .limit(1).prepare()
  return {
    /** the message of one of the webhook's recorded deliveries */
    deliveryMessage: (deliveryId: string, webhookId: string) => deliveryMessage.get({ deliveryId, webhookId }),
    /** the last outbox event (seq) expanded */
    expandedThrough: () => expandedThrough.get()?.seq ?? 0,
    /** whether a message waits for its first attempt */
    anyPending: () => pending.get() !== undefined,
    /** whether a delivery record is older than `cutoff` */
    anyOlder: (cutoff: string) => older.get({ cutoff }) !== undefined
  }
}

/**
 * How a transaction of the outbox thread that writes cairn.db (a recording with a failed attempt) makes way for
 * the server's writes, which wait for its end (a write that finds it holding SQLite's lock waits for its commit,
 * src/db/write-intent.ts). `waits` is asked before each attempt and before the commit. With `rollBack`, once it
 * answers true the transaction is rolled back, which costs next to nothing, where a commit writes every page it
 * changed: the waiting write goes on at once and the work is done again afterwards. Without, the transaction ends
 * and commits what it has done, at least one attempt (the thread's turn when the server's writes keep coming).
 */
export interface StepAside {
  waits(): boolean
  rollBack: boolean
}

const ROLLED_BACK = Symbol('rolled back')

/** true when the loop should end here (after `done` items); throws ROLLED_BACK to roll the transaction back */
function stepsAside(aside: StepAside | undefined, done: number): boolean {
  if (!aside?.waits()) return false
  if (aside.rollBack) throw ROLLED_BACK
  return done > 0
}

/** rolls the transaction back (throws ROLLED_BACK) if a write of the server waits, given `rollBack` */
function beforeCommit(aside: StepAside | undefined) {
  if (aside?.rollBack && aside.waits()) throw ROLLED_BACK
}

/** the transaction's result, or undefined when it was rolled back to make way */
function rolledBack<T>(transaction: () => T): T | undefined {
  try {
    return transaction()
  } catch (err) {
    if (err === ROLLED_BACK) return undefined
    throw err
  }
}

/**
 * The outbox thread's side (outbox-worker.ts), on a connection of cairn.db with the outbox file attached: events
 * expanded in batches into one message per subscribed webhook, pending messages read with what their attempts
 * need, and attempts recorded in batches. What it writes is in the outbox file, but for a failed attempt (a retry
 * job, the webhook's failing state) and retention of outbox events: only those transactions take cairn.db's write
 * lock (`touchesMain`). Conditions a partial index is defined by (`state = 'pending'`) are written as SQL literals:
 * Drizzle's eq() binds its value, and SQLite cannot use a partial index for a bound value without recompiling the
 * statement at every call.
 */
export function createOutboxStore(db: Db, sqlite: Database.Database, opts: {
  schedule: readonly number[]
  /** queues the retry of a message (a job), inside the transaction that records the failed attempt */
  scheduleRetry(seq: number, messageId: string, retry: number, runAt: number, org: string): void
  /** told after the commit of a recording that set the webhook inactive */
  onDeactivated(webhookId: string, reason: DisabledReason): void
  /** jitter's source (tests) */
  random?: () => number
}) {
  const p = sql.placeholder
  const toFanOut = sql`${webhookEvents.expanded} = 0`
  const expandedThrough = db.select({ seq: outboxState.expandedThrough }).from(outboxState).prepare()
  const outboxBatch = db.select({ seq: webhookEvents.seq }).from(webhookEvents)
    .where(and(gt(webhookEvents.seq, p('after')), toFanOut)).orderBy(webhookEvents.seq).limit(boundLimit('limit'))
    .prepare()
  // INSERT … SELECT with json_each and randomblob(): one statement for the whole batch, which Drizzle cannot build
  const expandUpTo = sqlite.prepare<{ now: string; ms: string; after: number; last: number }>(`INSERT INTO
    webhook_messages (id, event_seq, webhook_id, state, attempts, created_at, updated_at)
    SELECT 'msg_' || @ms || lower(hex(randomblob(10))), e.seq, w.id, 'pending', 0, @now, @now
    FROM webhook_events e JOIN webhooks w ON w.workspace_id = e.workspace_id AND w.active = 1
    WHERE e.seq > @after AND e.seq <= @last AND e.expanded = 0
    AND EXISTS (SELECT 1 FROM json_each(w.events) j WHERE j.value = e.event)
    ORDER BY e.seq`)
  const markExpanded = preparedWrite(sqlite, db.update(outboxState).set({ expandedThrough: sql`${p('last')}` }))
  const insertMessage = preparedWrite(sqlite, db.insert(webhookMessages).values({ id: p('id'),
    eventSeq: p('eventSeq'), webhookId: p('webhookId'), state: 'pending', attempts: 0, createdAt: p('now'),
    updatedAt: p('now') }))
  const messageOf = db.select({ seq: webhookMessages.seq }).from(webhookMessages)
    .where(and(eq(webhookMessages.eventSeq, p('eventSeq')), eq(webhookMessages.webhookId, p('webhookId'))))
    .limit(fixedLimit(1))
    .prepare()
  const failingSince = db.select({ since: webhooks.failingSince }).from(webhooks).where(eq(webhooks.id, p('id')))
    .prepare()
  // a deleted webhook's rows (cairn.db's cascade cannot reach this file): only once it is gone from cairn.db
  const hookGone = sql`NOT EXISTS (SELECT 1 FROM ${webhooks} WHERE ${webhooks.id} = ${p('id')})`
  const purgeMessages = preparedWrite(sqlite, db.delete(webhookMessages)
    .where(and(eq(webhookMessages.webhookId, p('id')), hookGone)))
  const purgeDeliveries = preparedWrite(sqlite, db.delete(webhookDeliveries)
    .where(and(eq(webhookDeliveries.webhookId, p('id')), hookGone)))
  // retention, RETAIN_CHUNK rows a statement (its own transaction): delivery records past the cutoff; outbox events
  // past it that are expanded (or never fanned out) and that no message waits on, their messages first (a crash
  // between the two leaves events that go next time). A LIMIT in a subquery: SQLite's DELETE takes none of its own.
  const oldDeliveries = sqlite.prepare<{ cutoff: string }>(`DELETE FROM webhook_deliveries WHERE rowid IN
    (SELECT rowid FROM webhook_deliveries WHERE created_at < @cutoff LIMIT ${RETAIN_CHUNK})`)
  const oldEvents = db.select({ seq: webhookEvents.seq }).from(webhookEvents).where(and(
    lt(webhookEvents.createdAt, p('cutoff')),
    sql`(${webhookEvents.expanded} = 1 OR ${webhookEvents.seq} <= (SELECT ${outboxState.expandedThrough}
      FROM ${outboxState}))`,
    notExists(db.select({ one: sql`1` }).from(webhookMessages).where(and(
      eq(webhookMessages.eventSeq, webhookEvents.seq), inArray(webhookMessages.state, ['pending', 'retrying']))))))
    .limit(RETAIN_CHUNK).prepare()
  // the chunk's seqs as one JSON array (json_each): RETAIN_CHUNK of their messages a statement (an event has one
  // per webhook of its workspace: 2,000 events to 100 webhooks are 200,000 rows), other work let in between. So a
  // message may start waiting meanwhile (a redelivery that failed, a message added): it stays, and so does its event
  const messagesOf = sqlite.prepare<[string]>(`DELETE FROM webhook_messages WHERE seq IN (SELECT seq
    FROM webhook_messages WHERE event_seq IN (SELECT value FROM json_each(?)) AND state NOT IN ('pending', 'retrying')
    LIMIT ${RETAIN_CHUNK})`)
  const eventsIn = sqlite.prepare<[string]>(`DELETE FROM webhook_events WHERE seq IN (SELECT value FROM json_each(?))
    AND NOT EXISTS (SELECT 1 FROM webhook_messages m WHERE m.event_seq = webhook_events.seq)`)
  const messages = () => db.select({
    seq: webhookMessages.seq, id: webhookMessages.id, webhookId: webhookMessages.webhookId,
    state: webhookMessages.state, event: webhookEvents.event, body: webhookEvents.body,
    timestamp: webhookEvents.createdAt, url: webhooks.url, signingSecret: webhooks.signingSecret,
    previousSigningSecret: webhooks.previousSigningSecret, previousSecretExpiresAt: webhooks.previousSecretExpiresAt,
    active: webhooks.active, customerId: webhooks.customerId
  }).from(webhookMessages)
    .innerJoin(webhookEvents, eq(webhookEvents.seq, webhookMessages.eventSeq))
    // the event's own workspace, as the expansion joined them: never another workspace's event, whatever a seq names
    .innerJoin(webhooks, and(eq(webhooks.id, webhookMessages.webhookId),
      eq(webhooks.workspaceId, webhookEvents.workspaceId)))
  const pendingAfter = messages()
    .where(and(sql`${webhookMessages.state} = 'pending'`, gt(webhookMessages.seq, p('after')),
      sql`${webhooks.customerId} NOT IN (SELECT value FROM json_each(${p('skip')}))`))
    .orderBy(webhookMessages.seq).limit(boundLimit('limit')).prepare()
  const bySeq = messages().where(eq(webhookMessages.seq, p('seq'))).prepare()
  const countAttempt = db.update(webhookMessages).set({ attempts: sql`${webhookMessages.attempts} + 1`,
    state: sql`COALESCE(${p('state')}, ${webhookMessages.state})`, updatedAt: sql`${p('now')}` })
    .where(eq(webhookMessages.seq, p('seq'))).returning({ attempts: webhookMessages.attempts }).prepare()
  const setState = preparedWrite(sqlite, db.update(webhookMessages)
    .set({ state: sql`${p('state')}`, updatedAt: sql`${p('now')}` }).where(eq(webhookMessages.seq, p('seq'))))
  const insertDelivery = preparedWrite(sqlite, db.insert(webhookDeliveries).values({ id: p('id'),
    webhookId: p('webhookId'), messageId: p('messageId'), attempt: p('attempt'), nextAttemptAt: p('nextAttemptAt'),
    eventType: p('eventType'), statusCode: p('statusCode'), success: p('success'), latencyMs: p('latencyMs'),
    requestBody: p('requestBody'), responseBody: p('responseBody'), error: p('error'), createdAt: p('now') }))
  const succeeded = preparedWrite(sqlite, db.update(webhooks).set({ failingSince: null })
    .where(eq(webhooks.id, p('id'))))
  const deactivate = preparedWrite(sqlite, db.update(webhooks).set({ active: false, disabledReason: 'failing',
    updatedAt: sql`${p('now')}` })
    .where(and(eq(webhooks.id, p('id')), eq(webhooks.active, true), lte(webhooks.failingSince, p('limit')))))
  const gone = preparedWrite(sqlite, db.update(webhooks).set({ active: false, disabledReason: 'gone',
    updatedAt: sql`${p('now')}` }).where(and(eq(webhooks.id, p('id')), eq(webhooks.active, true))))
  const failing = preparedWrite(sqlite, db.update(webhooks).set({ failingSince: sql`${p('now')}` })
    .where(and(eq(webhooks.id, p('id')), isNull(webhooks.failingSince))))

  // reads cairn.db (events, webhooks) and writes the outbox file only: no write of the server waits for it
  const expand = sqlite.transaction((batch: number) => {
    let after = expandedThrough.get()?.seq ?? 0
    const seqs = outboxBatch.all({ after, limit: batch })
    const ms = Date.now()
    const at = { now: new Date(ms).toISOString(), ms: msHex(ms) }
    let messages = 0
    for (const { seq: last } of seqs) {
      messages += expandUpTo.run({ ...at, after, last }).changes
      after = last
    }
    if (seqs.length > 0) markExpanded.run({ last: after })
    return { events: seqs.length, messages, more: seqs.length === batch }
  })

  const record = sqlite.transaction((recording: Recording, aside: StepAside | undefined,
    deactivated: Array<[string, DisabledReason]>) => {
    const { outcomes, wasFailing } = recording
    /** webhooks this transaction set failing: a success after the failure clears it again */
    const failedHere = new Set<string>()
    const nowMs = Date.now()
    const now = new Date(nowMs).toISOString()
    let recorded = 0
    for (const { row, attempt, kind, retry } of outcomes) {
      if (stepsAside(aside, recorded)) break
      recorded++
      let active = row.active
      // 410 Gone: the receiver wants no more deliveries (Standard Webhooks); the webhook is switched off
      const isGone = attempt.statusCode === 410
      if (attempt.success) {
        if (wasFailing.has(row.webhookId) || failedHere.has(row.webhookId)) succeeded.run({ id: row.webhookId })
      } else {
        if (isGone) {
          active = false
          if (gone.run({ now, id: row.webhookId }).changes > 0) deactivated.push([row.webhookId, 'gone'])
        } else if (deactivate.run({ now, id: row.webhookId, limit: new Date(nowMs - FAILING_LIMIT_MS).toISOString() })
          .changes > 0) {
          active = false
          deactivated.push([row.webhookId, 'failing'])
        }
        failing.run({ now, id: row.webhookId })
        failedHere.add(row.webhookId)
      }
      let state: OutboxMessage['state'] | null
      let nextAt: number | undefined
      if (attempt.success) state = 'delivered'
      else if (kind === 'redeliver') state = null
      else if ((kind === 'first' || kind === 'retry') && active && retry < opts.schedule.length) {
        state = 'retrying'
        nextAt = nowMs + retryDelayMs(opts.schedule, retry, attempt.retryAfterMs, opts.random)
      } else state = 'failed'
      // the webhook (and its messages) was deleted while the attempt was in flight: nothing to record against
      const number = countAttempt.get({ state, now, seq: row.seq })?.attempts
      if (number === undefined) continue
      if (nextAt !== undefined) opts.scheduleRetry(row.seq, row.id, retry + 1, nextAt, row.customerId)
      insertDelivery.run({ id: attempt.id, webhookId: row.webhookId, messageId: row.id, attempt: number,
        nextAttemptAt: nextAt === undefined ? null : new Date(nextAt).toISOString(), eventType: attempt.eventType,
        statusCode: attempt.statusCode, success: attempt.success, latencyMs: attempt.latencyMs,
        requestBody: JSON.stringify(attempt.request), responseBody: attempt.responseBody,
        error: isGone ? GONE_ERROR : attempt.error ?? null,
        now })
    }
    beforeCommit(aside)
    return recorded
  })

  return {
    /** expands up to `batch` outbox events into messages, in one transaction, the oldest first; `more`: events may
     * be left */
    expand: (batch: number): { events: number; messages: number; more: boolean } => expand(batch),
    /** removes the messages and deliveries of a webhook deleted from cairn.db; how many rows */
    purge: (id: string) => sqlite.transaction(() =>
      purgeMessages.run({ id }).changes + purgeDeliveries.run({ id }).changes)(),
    /**
     * Retention, one chunk a step (the caller lets other work in between): delivery records older than `cutoff`,
     * then the outbox events older than it that no message waits on, with their messages. `inMain` runs each
     * deletion of events (cairn.db's write lock). Adds what it removed to `removed`.
     */
    * retain(cutoff: string, inMain: (write: () => number) => number,
      removed: Record<'deliveries' | 'messages' | 'events', number>): Generator<void> {
      for (let n = RETAIN_CHUNK; n === RETAIN_CHUNK; yield) {
        n = oldDeliveries.run({ cutoff }).changes
        removed.deliveries += n
      }
      for (let n = RETAIN_CHUNK; n === RETAIN_CHUNK; yield) {
        const seqs = oldEvents.all({ cutoff }).map((r) => r.seq)
        n = seqs.length
        if (n === 0) break
        const list = JSON.stringify(seqs)
        for (let m = RETAIN_CHUNK; m === RETAIN_CHUNK; ) {
          m = messagesOf.run(list).changes
          removed.messages += m
          if (m === RETAIN_CHUNK) yield
        }
        removed.events += inMain(() => eventsIn.run(list).changes)
      }
    },
    /** whether the event has a message for the webhook */
    hasMessage: (eventSeq: number, webhookId: string) => messageOf.get({ eventSeq, webhookId }) !== undefined,
    /** a message of one event for one webhook (test pings, jobs of an earlier version): its seq */
    addMessage: (eventSeq: number, webhookId: string) => Number(insertMessage.run({ id: newMessageId(), eventSeq,
      webhookId, now: new Date().toISOString() }).lastInsertRowid),
    /** pending messages after `seq`, in order, but none of the organizations in `skip` */
    pendingAfter: (seq: number, limit: number, skip: readonly string[] = []): OutboxMessage[] =>
      pendingAfter.all({ after: seq, limit, skip: JSON.stringify(skip) }),
    message: (seq: number): OutboxMessage | undefined => bySeq.get({ seq }),
    fail: (seq: number) => setState.run({ state: 'failed', now: new Date().toISOString(), seq }),
    /**
     * What recording these outcomes needs, read before its transaction: the webhooks they succeeded for that were
     * failing (their failing state is cleared), and whether it writes cairn.db: for a failed attempt (the webhook's
     * failing state, a retry job) or such a success. Only this thread sets a failing state (the server may clear
     * one: the write then finds nothing to clear). Its transaction's first access to cairn.db is then a write: it
     * never reads there first and meets another connection's commit when it writes.
     */
    recording(outcomes: Outcome[]): Recording {
      const wasFailing = new Set<string>()
      const seen = new Set<string>()
      let touchesMain = false
      for (const { row, attempt } of outcomes) {
        if (!attempt.success) touchesMain = true
        else if (!seen.has(row.webhookId)) {
          seen.add(row.webhookId)
          if (failingSince.get({ id: row.webhookId })?.since != null) wasFailing.add(row.webhookId)
        }
      }
      return { outcomes, wasFailing, touchesMain: touchesMain || wasFailing.size > 0 }
    },
    /**
     * records finished attempts in one transaction, in order: all of them, or (given `aside`) the first ones, and
     * returns how many were recorded; undefined when it rolled back (see StepAside).
     */
    record(recording: Recording, aside?: StepAside): number | undefined {
      // told once committed: a rolled-back recording deactivates nothing (and is made again)
      const deactivated: Array<[string, DisabledReason]> = []
      const recorded = rolledBack(() => record(recording, aside, deactivated))
      if (recorded !== undefined) for (const [id, reason] of deactivated) opts.onDeactivated(id, reason)
      return recorded
    }
  }
}

export type OutboxStore = ReturnType<typeof createOutboxStore>

/** outcomes to record, with what was read for them beforehand (OutboxStore.recording) */
export interface Recording { outcomes: Outcome[]; wasFailing: Set<string>; touchesMain: boolean }
