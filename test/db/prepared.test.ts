import t from 'tap'
import path from 'node:path'
import { and, desc, eq, sql } from 'drizzle-orm'
import { openDatabase } from '../../src/db/index.js'
import { boundLimit, fixedLimit, preparedWrite } from '../../src/db/prepared.js'
import { jobs } from '../../schema/tables/jobs.js'
import { tempDir } from '../helper.js'

t.test('boundLimit renders LIMIT and OFFSET as +? and binds them like a placeholder', async (t) => {
  const handle = openDatabase(path.join(tempDir(t), 'db.sqlite'), { checkpointer: false })
  t.teardown(() => handle.close())
  const { db } = handle
  for (let i = 0; i < 5; i++) {
    db.insert(jobs).values({ id: `j${i}`, type: 't', payload: 'null', status: 'queued', maxAttempts: 1, runAt: i,
      createdAt: 'x', updatedAt: 'x' }).run()
  }
  const page = db.select({ id: jobs.id }).from(jobs).where(eq(jobs.type, sql.placeholder('type')))
    .orderBy(desc(jobs.runAt)).limit(boundLimit('limit')).offset(boundLimit('offset')).prepare()
  t.match(page.getQuery().sql, /limit \+\? offset \+\?$/, 'a unary plus: SQLite plans the statement once')
  t.same(page.all({ type: 't', limit: 2, offset: 1 }).map((r) => r.id), ['j3', 'j2'])
  t.same(page.all({ type: 't', limit: 10, offset: 0 }).length, 5)
  t.throws(() => page.all({ type: 't', limit: 2 }), /No value for placeholder "offset"/)
  const fixed = db.select({ id: jobs.id }).from(jobs).orderBy(jobs.runAt).limit(fixedLimit(3)).prepare()
  t.match(fixed.getQuery().sql, /limit 3$/, 'a constant is written into the SQL, not bound')
  t.same(fixed.all().map((r) => r.id), ['j0', 'j1', 'j2'])
  t.throws(() => fixedLimit(1.5))
})

t.test('preparedWrite runs what Drizzle rendered, binding placeholders, encoded values and constants', async (t) => {
  const handle = openDatabase(path.join(tempDir(t), 'db.sqlite'), { checkpointer: false })
  t.teardown(() => handle.close())
  const { db, sqlite } = handle
  const p = sql.placeholder
  const insert = preparedWrite(sqlite, db.insert(jobs).values({ id: p('id'), type: p('type'), payload: p('payload'),
    status: 'queued', attempts: 0, maxAttempts: p('max'), runAt: p('runAt'), createdAt: p('now'),
    updatedAt: p('now') }))
  t.equal(insert.run({ id: 'a', type: 't', payload: '{}', max: 3, runAt: 7, now: 'n1' }).changes, 1)
  const fail = preparedWrite(sqlite, db.update(jobs).set({ status: 'failed', lastError: sql`${p('error')}` })
    .where(and(eq(jobs.id, p('id')), eq(jobs.status, 'queued'))))
  t.equal(fail.run({ id: 'a', error: 'boom' }).changes, 1)
  t.equal(fail.run({ id: 'a', error: 'again' }).changes, 0, 'constants in the WHERE are bound too')
  t.same(db.select().from(jobs).all(), [{ id: 'a', type: 't', payload: '{}', status: 'failed', attempts: 0,
    maxAttempts: 3, runAt: 7, lastError: 'boom', createdAt: 'n1', updatedAt: 'n1' }])
  t.throws(() => insert.run({ id: 'b', type: 't', payload: '{}', max: 3, runAt: 7 }),
    /No value for placeholder "now"/, 'a missing value is an error, as in Drizzle')
  t.equal(db.select().from(jobs).all().length, 1)
})
