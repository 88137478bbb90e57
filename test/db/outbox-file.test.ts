import t from 'tap'
import Database from 'better-sqlite3'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import { migrate } from 'drizzle-orm/better-sqlite3/migrator'
import fs from 'node:fs'
import path from 'node:path'
import { openDatabase } from '../../src/db/index.js'
import { outboxFile } from '../../src/db/outbox-file.js'
import { ROOT, tempDir } from '../helper.js'

/** a cairn.db as the version before the outbox file left it: migrated up to 0024, outbox rows in its own tables */
function earlierVersion(dir: string) {
  const migrations = path.join(dir, 'migrations')
  fs.cpSync(path.join(ROOT, 'schema/migrations'), migrations, { recursive: true })
  const journalFile = path.join(migrations, 'meta/_journal.json')
  const journal = JSON.parse(fs.readFileSync(journalFile, 'utf8')) as { entries: Array<{ tag: string }> }
  // (and every migration after it: drizzle applies only those newer than the last one applied)
  journal.entries = journal.entries.slice(0, journal.entries.findIndex((e) => e.tag === '0025_webhook_outbox_file'))
  fs.writeFileSync(journalFile, JSON.stringify(journal))
  const file = path.join(dir, 'cairn.db')
  const sqlite = new Database(file)
  sqlite.pragma('journal_mode = WAL')
  migrate(drizzle(sqlite), { migrationsFolder: migrations })
  // rows without their organization, user and workspace: the foreign keys are not what this is about
  sqlite.pragma('foreign_keys = OFF')
  const now = '2026-11-20T10:00:00.000Z'
  sqlite.prepare(`INSERT INTO webhooks (id, customer_id, workspace_id, url, events, signing_secret, active,
    description, created_by, created_at, updated_at) VALUES ('hook-1', 'org', 'ws', 'http://127.0.0.1:9/', 
    '["message.created"]', 'enc1:x', 1, '', 'u', ?, ?)`).run(now, now)
  const event = sqlite.prepare(`INSERT INTO webhook_events (seq, workspace_id, event, body, expanded, created_at)
    VALUES (?, 'ws', ?, '{}', ?, ?)`)
  // expanded, a test ping, not expanded yet, a test ping after it
  for (const [seq, name, expanded] of [[1, 'message.created', 1], [2, 'test.ping', 1], [3, 'message.created', 0],
    [4, 'test.ping', 1]] as const) event.run(seq, name, expanded, now)
  const message = sqlite.prepare(`INSERT INTO webhook_messages (seq, id, event_seq, webhook_id, state, attempts,
    created_at, updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?)`)
  message.run(1, 'msg_1', 1, 'hook-1', 'delivered', now, now)
  message.run(2, 'msg_2', 2, 'hook-1', 'retrying', now, now)
  message.run(3, 'msg_3', 1, 'hook-gone', 'delivered', now, now)
  const delivery = sqlite.prepare(`INSERT INTO webhook_deliveries (id, webhook_id, message_id, attempt, event_type,
    status_code, success, latency_ms, request_body, response_body, created_at)
    VALUES (?, ?, ?, 1, 'message.created', 204, 1, 3, '{}', '', ?)`)
  delivery.run('d-1', 'hook-1', 'msg_1', now)
  delivery.run('d-2', 'hook-gone', 'msg_3', now)
  sqlite.close()
  return file
}

const rows = (db: Database.Database, sql: string) => db.prepare(sql).raw().all()

t.test('an upgrade moves the outbox rows into the outbox file (0600) and continues after the expanded events',
  async (t) => {
    const file = earlierVersion(tempDir(t))
    const handle = openDatabase(file, { checkpointer: false })
    t.teardown(() => handle.close())
    t.same(handle.outbox.moved, { messages: 3, deliveries: 2 })
    t.equal(handle.outbox.orphans, 2, 'the rows of a webhook cairn.db no longer has are removed')
    const outbox = handle.outbox.sqlite
    t.same(rows(outbox, 'SELECT seq, id, event_seq, webhook_id, state FROM webhook_messages ORDER BY seq'),
      [[1, 'msg_1', 1, 'hook-1', 'delivered'], [2, 'msg_2', 2, 'hook-1', 'pending']],
      'a message waiting for a retry that has no job queued is attempted again')
    t.same(rows(outbox, 'SELECT id, message_id FROM webhook_deliveries'), [['d-1', 'msg_1']])
    t.equal(outbox.prepare('SELECT expanded_through FROM outbox_state').pluck().get(), 2,
      'below the first event not expanded (test pings are never fanned out)')
    t.same(rows(handle.sqlite, `SELECT name FROM sqlite_master WHERE name LIKE 'moved_%' OR name LIKE 'webhook_m%'
      OR name LIKE 'webhook_d%'`), [], 'cairn.db keeps no outbox table')
    t.equal(fs.statSync(outboxFile(file)).mode & 0o777, 0o600)
    t.equal(outbox.pragma('journal_mode', { simple: true }), 'wal')
  })

t.test('a move cut short by a crash is made again from the start; a lost outbox file sends no old event again',
  async (t) => {
    const file = earlierVersion(tempDir(t))
    const first = openDatabase(file, { checkpointer: false })
    // as a backup copy has them (or a crash before the main file's moved tables were dropped), with an outbox file
    // that holds other rows
    first.sqlite.exec(`ATTACH DATABASE '${outboxFile(file)}' AS o;
      CREATE TABLE moved_webhook_messages AS SELECT * FROM o.webhook_messages;
      CREATE TABLE moved_webhook_deliveries AS SELECT * FROM o.webhook_deliveries;
      CREATE TABLE moved_outbox_state AS SELECT * FROM o.outbox_state; DETACH DATABASE o`)
    first.outbox.sqlite.prepare(`INSERT INTO webhook_messages (id, event_seq, webhook_id, state, attempts, created_at,
      updated_at) VALUES ('msg_stray', 3, 'hook-1', 'pending', 0, '', '')`).run()
    first.outbox.sqlite.prepare('UPDATE outbox_state SET expanded_through = 3').run()
    await first.close()

    const second = openDatabase(file, { checkpointer: false })
    t.same(second.outbox.moved, { messages: 2, deliveries: 1 })
    t.same(rows(second.outbox.sqlite, 'SELECT id FROM webhook_messages ORDER BY seq'), [['msg_1'], ['msg_2']],
      'the moved rows, once each; the outbox file\'s own are replaced')
    t.equal(second.outbox.sqlite.prepare('SELECT expanded_through FROM outbox_state').pluck().get(), 2,
      'how far it had expanded, from the moved state')
    await second.close()

    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(outboxFile(file) + suffix, { force: true })
    const third = openDatabase(file, { checkpointer: false })
    t.equal(third.outbox.moved, undefined)
    t.equal(third.outbox.sqlite.prepare('SELECT COUNT(*) FROM webhook_messages').pluck().get(), 0)
    t.equal(third.outbox.sqlite.prepare('SELECT expanded_through FROM outbox_state').pluck().get(), 4,
      'a new outbox file beside events takes them for sent')

    // an outbox file ahead of cairn.db (its commits kept when cairn.db's last ones were lost): the messages of
    // events cairn.db never had go, and the expansion goes on from cairn.db's last event
    third.outbox.sqlite.prepare(`INSERT INTO webhook_messages (id, event_seq, webhook_id, state, attempts, created_at,
      updated_at) VALUES ('msg_of_a_lost_event', 7, 'hook-1', 'pending', 0, '', '')`).run()
    third.outbox.sqlite.prepare('UPDATE outbox_state SET expanded_through = 7').run()
    await third.close()
    const fourth = openDatabase(file, { checkpointer: false })
    t.teardown(() => fourth.close())
    t.equal(fourth.outbox.ahead, 1)
    t.equal(fourth.outbox.sqlite.prepare('SELECT COUNT(*) FROM webhook_messages').pluck().get(), 0)
    t.equal(fourth.outbox.sqlite.prepare('SELECT expanded_through FROM outbox_state').pluck().get(), 4)
  })
