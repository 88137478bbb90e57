import t from 'tap'
import path from 'node:path'
import Database from 'better-sqlite3'
import { countWriteIntent, writeIntentOf } from '../../src/db/write-intent.js'
import { tempDir } from '../helper.js'

t.test('the write intent counts statements that may write and transactions while they run, and only then',
  async (t) => {
    const sqlite = new Database(path.join(tempDir(t), 'a.db'))
    t.teardown(() => sqlite.close())
    t.equal(writeIntentOf(sqlite), undefined, 'none before it is asked for')
    const intent = countWriteIntent(sqlite)
    t.equal(countWriteIntent(sqlite), intent, 'one count per connection')
    t.equal(writeIntentOf(sqlite), intent)
    // seen from inside a statement, as the index worker sees it while the statement waits or runs
    sqlite.function('peek', () => Atomics.load(intent, 0))
    sqlite.exec('CREATE TABLE seen (n INTEGER)')
    const insert = sqlite.prepare('INSERT INTO seen (n) VALUES (peek())')
    insert.run()
    t.equal(sqlite.prepare('SELECT peek()').pluck().get(), 0, 'a read-only statement is not counted')
    t.same(sqlite.prepare('SELECT n FROM seen').pluck().all(), [1], 'a write is counted while it runs')
    t.same(sqlite.prepare('INSERT INTO seen (n) VALUES (peek()) RETURNING n').pluck().all(), [1],
      'also one that returns rows')
    sqlite.transaction(() => { insert.run() }).immediate()
    t.equal(sqlite.prepare('SELECT max(n) FROM seen').pluck().get(), 2, 'a write inside a transaction: both')
    t.throws(() => sqlite.prepare('INSERT INTO missing (n) VALUES (peek())'))
    t.throws(() => sqlite.transaction(() => { throw new Error('rolled back') })())
    t.throws(() => sqlite.prepare('INSERT INTO seen (n) VALUES (1 / 0 + abs(-9223372036854775808))').run())
    t.equal(Atomics.load(intent, 0), 0, 'back to 0 after failures')
  })
