// `npm run bench -- statements`: CPU µs per call of single statements (process.cpuUsage: a busy machine disturbs it
// less than wall time), old and new form interleaved in one process (rounds alternate, so drift hits both alike):
// a bare `LIMIT ?` against `LIMIT +?` (boundLimit), and the job queue's enqueue through Drizzle's prepared run(),
// preparedWrite and a hand-written better-sqlite3 statement.
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { and, desc, eq, inArray, lte, sql } from 'drizzle-orm'
import { openDatabase, nowIso } from '../src/db/index.js'
import { attachOutbox } from '../src/db/outbox-file.js'
import { boundLimit, preparedWrite } from '../src/db/prepared.js'
import { channelMessages, channels, jobs, organizations, users, workspaces } from '../schema/tables/index.js'
import { createOutboxStore, createOutboxWriter } from '../src/events/outbox.js'
import { table } from './lib.js'

const ROUNDS = Number(process.env.BENCH_STATEMENT_ROUNDS ?? 15)
const CALLS = Number(process.env.BENCH_STATEMENT_CALLS ?? 5000)

/** quartiles of CPU µs per call over the rounds, the cases interleaved round by round */
function interleaved(cases: Record<string, (i: number) => void>, opts: { between?: () => void
  /** each round in one transaction: the commit (a write to the log) would hide the statement's own cost */
  transaction?: (fn: () => void) => void } = {}) {
  const { between, transaction = (fn) => fn() } = opts
  const times: Record<string, number[]> = {}
  for (const fn of Object.values(cases)) for (let i = 0; i < 500; i++) fn(i) // warm-up
  between?.()
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, fn] of Object.entries(cases)) {
      let us = 0
      transaction(() => {
        const t0 = process.cpuUsage()
        for (let i = 0; i < CALLS; i++) fn(i)
        const t = process.cpuUsage(t0)
        us = t.user + t.system
      })
      ;(times[name] ??= []).push(us / CALLS)
      between?.()
    }
  }
  return Object.entries(times).map(([name, t]) => {
    t.sort((a, b) => a - b)
    const q = (f: number) => t[Math.min(t.length - 1, Math.floor(f * t.length))].toFixed(2)
    return { case: name, 'µs p25': q(0.25), 'µs median': q(0.5), 'µs p75': q(0.75) }
  })
}

export async function run() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-statements-'))
  const handle = openDatabase(path.join(dir, 'bench.db'), { checkpointer: false })
  const { db, sqlite } = handle
  try {
    const now = nowIso()
    db.insert(organizations).values({ id: 'o', name: 'o', createdAt: now }).run()
    db.insert(users).values({ id: 'u', customerId: 'o', email: 'u@example.com', name: 'u', passwordHash: 'x',
      orgRole: 'owner', createdAt: now }).run()
    db.insert(workspaces).values({ id: 'w', customerId: 'o', name: 'w', createdBy: 'u', createdAt: now }).run()
    db.insert(channels).values({ id: 'c', customerId: 'o', workspaceId: 'w', name: 'c', type: 'public',
      createdBy: 'u', createdAt: now }).run()
    sqlite.transaction(() => {
      const insert = sqlite.prepare(`INSERT INTO channel_messages (id, channel_id, workspace_id, sender_id, content,
        content_type, attachment_count, created_at) VALUES (?, 'c', 'w', 'u', 'hello', 'text', 0, ?)`)
      const jobInsert = sqlite.prepare(`INSERT INTO jobs (id, type, payload, status, attempts, max_attempts, run_at,
        created_at, updated_at) VALUES (?, 'other', 'null', 'queued', 0, 5, ?, ?, ?)`)
      for (let i = 0; i < 10_000; i++) {
        const at = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString()
        insert.run(randomUUID(), at)
        // not due: the idle queue's claim finds nothing after an index look-up
        jobInsert.run(randomUUID(), Date.now() + 86_400_000 + i, at, at)
      }
    })()
    const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ')
    console.log(`${ROUNDS} rounds × ${CALLS} calls per case, interleaved; load average ${load()}`)

    // the channel message page (src/channels/store.ts): 10 rows of 10,000
    const page = (limit: ReturnType<typeof boundLimit>) => db.select().from(channelMessages)
      .where(eq(channelMessages.channelId, sql.placeholder('channelId')))
      .orderBy(desc(channelMessages.createdAt), desc(channelMessages.rowid)).limit(limit).prepare()
    const pageBare = page(sql.placeholder('limit'))
    const pagePlus = page(boundLimit('limit'))
    console.log('\nchannel message page, 10 of 10,000 rows')
    table(interleaved({
      'LIMIT ? (before)': () => pageBare.all({ channelId: 'c', limit: 10 }),
      'LIMIT +? (boundLimit)': () => pagePlus.all({ channelId: 'c', limit: 10 })
    }))

    // the job queue's claim (src/jobs/queue.ts) of a type with nothing due, beside 10,000 queued jobs of another
    const p = sql.placeholder
    const claim = (limit: ReturnType<typeof boundLimit>) => db.update(jobs)
      .set({ status: 'running', attempts: sql`${jobs.attempts} + 1`, updatedAt: sql`${p('now')}` })
      .where(inArray(jobs.id, db.select({ id: jobs.id }).from(jobs)
        .where(and(eq(jobs.status, 'queued'), eq(jobs.type, p('type')), lte(jobs.runAt, p('runAt'))))
        .orderBy(jobs.runAt).limit(limit)))
      .returning({ id: jobs.id, type: jobs.type, payload: jobs.payload, attempts: jobs.attempts,
        maxAttempts: jobs.maxAttempts }).prepare()
    const claimBare = claim(p('limit'))
    const claimPlus = claim(boundLimit('limit'))
    console.log('\njob claim with nothing due (10,000 jobs queued for later)')
    table(interleaved({
      'LIMIT ? (before)': () => claimBare.all({ now, type: 'none', runAt: Date.now(), limit: 4 }),
      'LIMIT +? (boundLimit)': () => claimPlus.all({ now, type: 'none', runAt: Date.now(), limit: 4 })
    }))

    // the job queue's enqueue: one insert of 9 parameters
    const insertJob = db.insert(jobs).values({
      id: p('id'), type: p('type'), payload: p('payload'), status: 'queued', attempts: 0,
      maxAttempts: p('maxAttempts'), runAt: p('runAt'), createdAt: p('now'), updatedAt: p('now')
    })
    const viaDrizzle = insertJob.prepare()
    const viaPreparedWrite = preparedWrite(sqlite, insertJob)
    const raw = sqlite.prepare(`INSERT INTO jobs (id, type, payload, status, attempts, max_attempts, run_at,
      created_at, updated_at) VALUES (?, ?, ?, 'queued', 0, ?, ?, ?, ?)`)
    const values = () => ({ id: randomUUID(), type: 'bench', payload: JSON.stringify({ n: 1 }), maxAttempts: 5,
      runAt: Date.now(), now: new Date().toISOString() })
    const clear = sqlite.prepare(`DELETE FROM jobs WHERE type = 'bench'`)
    console.log('\njob enqueue: one insert, id and time made per call, a round in one transaction')
    table(interleaved({
      'Drizzle prepared run() (before)': () => viaDrizzle.run(values()),
      'preparedWrite (after)': () => viaPreparedWrite.run(values()),
      'hand-written statement': () => {
        const v = values()
        raw.run(v.id, v.type, v.payload, v.maxAttempts, v.runAt, v.now, v.now)
      }
    }, { between: () => clear.run(), transaction: (fn) => sqlite.transaction(fn)() }))

    // the webhook outbox (src/events/outbox.ts): the fan-out's read of pending messages, 256 rows of 3 tables (the
    // messages in the outbox file, attached as on the outbox thread's connection)
    attachOutbox(sqlite)
    sqlite.transaction(() => {
      const hook = sqlite.prepare(`INSERT INTO webhooks (id, customer_id, workspace_id, url, events, signing_secret,
        active, description, created_by, created_at, updated_at)
        VALUES (?, 'o', 'w', 'http://127.0.0.1:9/', '["message.created"]', 'whsec_x', 1, '', 'u', ?, ?)`)
      const event = sqlite.prepare(`INSERT INTO webhook_events (workspace_id, event, body, expanded, created_at)
        VALUES ('w', 'message.created', ?, 1, ?)`)
      const message = sqlite.prepare(`INSERT INTO webhook_messages (id, event_seq, webhook_id, state, attempts,
        created_at, updated_at) VALUES (?, ?, ?, 'pending', 0, ?, ?)`)
      for (let h = 0; h < 10; h++) hook.run(`h${h}`, now, now)
      for (let i = 0; i < 1000; i++) {
        const seq = Number(event.run(JSON.stringify({ event: 'message.created', timestamp: now, data: { i } }), now)
          .lastInsertRowid)
        for (let h = 0; h < 10; h++) message.run(randomUUID(), seq, `h${h}`, now, now)
      }
    })()
    const rawPending = sqlite.prepare(`SELECT m.seq, m.id, m.webhook_id, m.state, e.event, e.body,
      e.created_at AS timestamp, w.url, w.signing_secret, w.previous_signing_secret, w.previous_secret_expires_at,
      w.active FROM webhook_messages m JOIN webhook_events e ON e.seq = m.event_seq
      JOIN webhooks w ON w.id = m.webhook_id
      WHERE m.state = 'pending' AND m.seq > ? ORDER BY m.seq LIMIT +?`)
    const outbox = createOutboxStore(db, sqlite, { schedule: [], scheduleRetry: () => {}, onDeactivated: () => {} })
    console.log('\nwebhook outbox: pending messages, 256 rows per read (of 10,000)')
    table(interleaved({
      'raw statement, snake_case rows (before)': (i) => rawPending.all((i * 256) % 9000, 256),
      'Drizzle select, typed rows (after)': (i) => outbox.pendingAfter((i * 256) % 9000, 256)
    }))
    const rawEvent = sqlite.prepare(`INSERT INTO webhook_events (workspace_id, event, body, expanded, created_at)
      VALUES (?, ?, ?, ?, ?)`)
    const clearEvents = sqlite.prepare(`DELETE FROM webhook_events WHERE event = 'bench.event'`)
    const writer = createOutboxWriter(db, sqlite)
    console.log('\nwebhook outbox: the event row of an emit, a round in one transaction')
    table(interleaved({
      'raw statement (before)': () => {
        const timestamp = new Date().toISOString()
        rawEvent.run('w', 'bench.event', JSON.stringify({ event: 'bench.event', timestamp, data: {} }), 0, timestamp)
      },
      'preparedWrite (after)': () => writer.addEvent('w', 'bench.event', {})
    }, { between: () => clearEvents.run(), transaction: (fn) => sqlite.transaction(fn)() }))
    console.log(`load average after: ${load()}`)
  } finally {
    await handle.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
