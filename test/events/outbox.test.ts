import t, { type Test } from 'tap'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import type { FastifyInstance } from 'fastify'
import { createOutboxStore, createOutboxWriter, eventsPerExpansion, newDeliveryId, newMessageId, type Outcome }
  from '../../src/events/outbox.js'
import { openThreadWriter } from '../../src/db/connection.js'
import { attachOutbox } from '../../src/db/outbox-file.js'
import * as tables from '../../schema/tables/index.js'
import { build, signup } from '../helper.js'

/** a connection as the outbox thread's: cairn.db with the outbox file attached */
function threadConnection(t: Test, app: FastifyInstance) {
  const sqlite = openThreadWriter(app.sqlite.name)
  attachOutbox(sqlite)
  t.teardown(() => sqlite.close())
  return { sqlite, db: drizzle(sqlite, { schema: tables }) }
}

/** commits to cairn.db by other connections than the app's, as the app's connection counts them */
const mainCommits = (app: FastifyInstance) => app.sqlite.pragma('data_version', { simple: true }) as number

t.test('an expansion takes the events that make about the messages asked for, at the last fan-out', async (t) => {
  t.equal(eventsPerExpansion(1, 16, 64, 200), 4, 'the first guess: 16 webhooks an event')
  t.equal(eventsPerExpansion(4, 40, 64, 200), 6, '10 webhooks an event: 6 events, 60 messages')
  t.equal(eventsPerExpansion(6, 600, 64, 200), 1, 'never fewer than one event, however many webhooks')
  t.equal(eventsPerExpansion(6, 6, 64, 200), 64, 'one webhook an event')
  t.equal(eventsPerExpansion(50, 0, 64, 200), 200, 'events nobody subscribes to any more: up to the most')
})

t.test('message and delivery ids: the time first (ms), then random digits; a delivery id is a version 7 UUID',
  async (t) => {
    const at = Date.UTC(2026, 10, 23, 20, 15, 0, 123)
    const messages = Array.from({ length: 2000 }, () => newMessageId(at))
    const deliveries = Array.from({ length: 2000 }, () => newDeliveryId(at))
    for (const id of messages) t.match(id, /^msg_[0-9a-f]{32}$/)
    for (const id of deliveries) t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    t.equal(new Set(messages).size, messages.length, 'no message id twice')
    t.equal(new Set(deliveries).size, deliveries.length, 'no delivery id twice')
    const time = at.toString(16).padStart(12, '0')
    t.ok(messages.every((id) => id.slice(4, 16) === time))
    t.ok(deliveries.every((id) => id.replace(/-/g, '').slice(0, 12) === time))
    // the random digits are spread: every hex digit turns up in each random position of a delivery id
    for (const at of [15, 21, 35]) t.equal(new Set(deliveries.map((id) => id[at])).size, 16, `position ${at}`)
    t.ok(newDeliveryId(at + 1) > newDeliveryId(at), 'later ids sort after')
  })

t.test('an expansion writes the outbox file alone; a recording that writes cairn.db makes way for a waiting write',
  async (t) => {
    const app = await build(t, { config: { allowPrivateUrls: true } })
    const u = await signup(app)
    for (let i = 0; i < 2; i++) {
      t.equal((await app.inject({ method: 'POST', url: '/api/v2/developer/webhooks',
        headers: { ...u.auth, 'x-workspace-id': u.workspaceId },
        payload: { url: `http://127.0.0.1:9/h${i}`, events: ['message.created'] } })).statusCode, 201)
    }
    const writer = createOutboxWriter(app.db, app.sqlite)
    for (const i of [1, 2, 3]) app.sqlite.transaction(() => writer.addEvent(u.workspaceId, 'message.created', { i }))()
    const thread = threadConnection(t, app)
    const store = createOutboxStore(thread.db, thread.sqlite, { schedule: [], scheduleRetry: () => {},
      onDeactivated: () => {} })
    const messageCount = () => app.outboxSqlite.prepare(`SELECT COUNT(*) FROM webhook_messages`).pluck().get()
    /** a server's write that comes after `n` questions */
    const waitsAfter = (n: number, rollBack: boolean) => ({ waits: () => n-- <= 0, rollBack })
    const commits = mainCommits(app)
    t.same(store.expand(2), { events: 2, messages: 4, more: true }, 'two events, two webhooks each')
    t.equal(messageCount(), 4)
    t.same(store.expand(2), { events: 1, messages: 2, more: false }, 'the rest')
    t.same(store.expand(10), { events: 0, messages: 0, more: false })
    t.equal(app.outboxSqlite.prepare('SELECT expanded_through FROM outbox_state').pluck().get(),
      app.sqlite.prepare('SELECT max(seq) FROM webhook_events').pluck().get(), 'the outbox file says how far')
    t.equal(mainCommits(app), commits, 'cairn.db was not written')
    const rows = store.pendingAfter(0, 10)
    t.same(rows.map((r) => JSON.parse(r.body).data.i), [1, 1, 2, 2, 3, 3], 'messages in the events\' order')
    t.equal(rows.length, 6)
    const outcome = (row: (typeof rows)[number]) => ({ row, kind: 'first' as const, retry: 0,
      attempt: { id: newDeliveryId(), eventType: row.event, statusCode: 204, success: true, latencyMs: 1,
        request: { event: row.event, timestamp: row.timestamp, body_sha256: '', body_bytes: 0, truncated: false,
          body_preview: '' }, responseBody: '', sentAt: 0 } })
    const delivered = () => app.outboxSqlite.prepare(`SELECT COUNT(*) FROM webhook_deliveries`).pluck().get()
    const states = () => app.outboxSqlite.prepare(`SELECT state || ':' || attempts FROM webhook_messages
      ORDER BY seq`).pluck().all()
    const recording = (outcomes: Outcome[]) => store.recording(outcomes)
    t.equal(recording(rows.map(outcome)).touchesMain, false, 'successes of webhooks that were not failing')
    t.equal(store.record(recording(rows.map(outcome)), waitsAfter(3, true)), undefined, 'a write waits: rolled back')
    t.equal(store.record(recording(rows.map(outcome)), waitsAfter(6, true)), undefined, 'before the commit too')
    t.equal(delivered(), 0, 'no delivery of the rolled-back recordings')
    t.same(states(), Array(6).fill('pending:0'), 'and no message counted or changed')
    t.equal(store.record(recording(rows.map(outcome)), waitsAfter(0, false)), 1,
      'without rolling back: one attempt, then it stops')
    t.equal(delivered(), 1)
    t.equal(store.record(recording(rows.slice(1, 3).map(outcome)), waitsAfter(7, true)), 2)
    t.equal(store.record(recording(rows.slice(3).map(outcome))), 3, 'without a step aside: all of them')
    t.equal(delivered(), 6)
    t.same(store.pendingAfter(0, 10), [], 'every message delivered')
    t.equal(mainCommits(app), commits, 'still nothing written to cairn.db')
    // a failure writes cairn.db (the webhook's failing state): that recording takes its lock
    writer.addEvent(u.workspaceId, 'message.created', { i: 4 })
    store.expand(10)
    const [failed] = store.pendingAfter(0, 10).map(outcome)
    failed.attempt.success = false
    failed.attempt.statusCode = 500
    t.equal(recording([failed]).touchesMain, true, 'a failed attempt writes cairn.db')
    t.equal(store.record(recording([failed])), 1)
    t.not(mainCommits(app), commits, 'the failing state is in cairn.db')
    t.same(states().slice(-2), ['failed:1', 'pending:0'], 'failed (no retry: an empty schedule), the other pending')
  })

t.test('a webhook set inactive by a recording is told once, after the commit, not for a rolled-back one',
  async (t) => {
    const app = await build(t, { config: { allowPrivateUrls: true } })
    const u = await signup(app)
    const hook = (await app.inject({ method: 'POST', url: '/api/v2/developer/webhooks',
      headers: { ...u.auth, 'x-workspace-id': u.workspaceId },
      payload: { url: 'http://127.0.0.1:9/h', events: ['message.created'] } })).json().data.id as string
    // failing for six days: the next failed attempt sets it inactive
    app.sqlite.prepare('UPDATE webhooks SET failing_since = ? WHERE id = ?')
      .run(new Date(Date.now() - 6 * 86_400_000).toISOString(), hook)
    const writer = createOutboxWriter(app.db, app.sqlite)
    app.sqlite.transaction(() => writer.addEvent(u.workspaceId, 'message.created', { i: 1 }))()
    const told: string[] = []
    const thread = threadConnection(t, app)
    const store = createOutboxStore(thread.db, thread.sqlite, { schedule: [60], scheduleRetry: () => {},
      onDeactivated: (id) => told.push(id) })
    t.ok(store.expand(10))
    const [row] = store.pendingAfter(0, 10)
    const failed = { row, kind: 'first' as const, retry: 0,
      attempt: { id: newDeliveryId(), eventType: row.event, statusCode: 500, success: false, latencyMs: 1,
        request: { event: row.event, timestamp: row.timestamp, body_sha256: '', body_bytes: 0, truncated: false,
          body_preview: '' }, responseBody: '', sentAt: 0 } }
    const active = () => app.sqlite.prepare('SELECT active FROM webhooks WHERE id = ?').pluck().get(hook)
    let asked = 0
    t.equal(store.record(store.recording([failed]), { waits: () => asked++ > 0, rollBack: true }), undefined,
      'rolled back')
    t.equal(active(), 1, 'still active')
    t.same(told, [], 'nothing told')
    t.equal(store.record(store.recording([failed]), { waits: () => false, rollBack: true }), 1)
    t.equal(active(), 0, 'inactive once committed')
    t.same(told, [hook], 'told once')

    // a failure, then a success of the same webhook in one recording: no longer failing
    app.sqlite.prepare('UPDATE webhooks SET active = 1, failing_since = NULL WHERE id = ?').run(hook)
    const succeeded = { ...failed, attempt: { ...failed.attempt, id: newDeliveryId(), statusCode: 204,
      success: true } }
    const again = { ...failed, attempt: { ...failed.attempt, id: newDeliveryId() } }
    t.equal(store.record(store.recording([again, succeeded])), 2)
    t.equal(app.sqlite.prepare('SELECT failing_since FROM webhooks WHERE id = ?').pluck().get(hook), null,
      'the success after the failure cleared its failing state')
  })

t.test('retention removes an old event\'s messages 2,000 rows a statement, the thread\'s other work let in between',
  async (t) => {
    const app = await build(t)
    const u = await signup(app)
    const old = '2000-01-01T00:00:00.000Z'
    const event = Number(app.sqlite.prepare(`INSERT INTO webhook_events (workspace_id, event, body, expanded,
      created_at) VALUES (?, 'message.created', '{}', 1, ?)`).run(u.workspaceId, old).lastInsertRowid)
    const message = app.outboxSqlite.prepare(`INSERT INTO webhook_messages (id, event_seq, webhook_id, state,
      created_at, updated_at) VALUES (?, ?, ?, 'delivered', ?, ?)`)
    // one per webhook of its workspace: 4,500 webhooks
    app.outboxSqlite.transaction(() => {
      for (let i = 0; i < 4500; i++) message.run(newMessageId(), event, `hook-${i}`, old, old)
    })()
    const thread = threadConnection(t, app)
    const store = createOutboxStore(thread.db, thread.sqlite, { schedule: [], scheduleRetry: () => {},
      onDeactivated: () => {} })
    const removed = { deliveries: 0, messages: 0, events: 0 }
    const left = () => app.outboxSqlite.prepare('SELECT COUNT(*) FROM webhook_messages WHERE event_seq = ?').pluck()
      .get(event)
    const events = app.sqlite.prepare('SELECT COUNT(*) FROM webhook_events WHERE seq = ?').pluck()
    const between: number[] = []
    for (const _ of store.retain(new Date().toISOString(), (write) => write(), removed)) {
      // after the first 2,000, a redelivery of one of the rest fails: its message waits for a retry
      if (between.length === 1) {
        app.outboxSqlite.prepare(`UPDATE webhook_messages SET state = 'retrying' WHERE seq = (SELECT max(seq)
          FROM webhook_messages WHERE event_seq = ?)`).run(event)
      }
      between.push(left() as number)
    }
    t.same(between, [4500, 2500, 500, 1], 'a turn after the deliveries\' step, after each 2,000 messages, after ' +
      'the events')
    t.same(removed, { deliveries: 0, messages: 4499, events: 0 },
      'the message that started waiting stays, and its event')
    t.equal(events.get(event), 1)
    app.outboxSqlite.prepare(`UPDATE webhook_messages SET state = 'delivered' WHERE event_seq = ?`).run(event)
    for (const _ of store.retain(new Date().toISOString(), (write) => write(), removed)) { /* next step */ }
    t.same(removed, { deliveries: 0, messages: 4500, events: 1 }, 'delivered since: the next retention takes both')
    t.equal(events.get(event), 0)
  })
