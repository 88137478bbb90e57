import t from 'tap'
import path from 'node:path'
import Database from 'better-sqlite3'
import { createTableCache } from '../../src/db/table-cache.js'
import { bearerToken } from '../../src/auth/plugin.js'
import { build, signup, addUser, createKey, tempDir } from '../helper.js'

function database(t: Parameters<typeof tempDir>[0]) {
  const file = path.join(tempDir(t), 'cache.db')
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.exec(`CREATE TABLE people (id TEXT PRIMARY KEY, name TEXT NOT NULL, seen_at TEXT);
           CREATE TABLE other (id TEXT PRIMARY KEY)`)
  db.prepare(`INSERT INTO people (id, name) VALUES ('a', 'Ada'), ('b', 'Bob')`).run()
  t.teardown(() => db.close())
  return { db, file }
}

t.test('table cache: served from memory until a watched table changes through this connection', async (t) => {
  const { db } = database(t)
  const cache = createTableCache(db, { name: 'people', tables: { people: ['id', 'name'] } })
  const byId = db.prepare('SELECT name FROM people WHERE id = ?').pluck()
  let loads = 0
  const name = (id: string) => cache.get(`p:${id}`, () => { loads++; return byId.get(id) as string | undefined })

  t.equal(name('a'), 'Ada')
  t.equal(name('a'), 'Ada')
  t.equal(loads, 1, 'the second read is served from memory')

  db.prepare(`UPDATE people SET seen_at = 'now' WHERE id = 'a'`).run()
  t.equal(name('a'), 'Ada')
  t.equal(loads, 1, 'an update of an unwatched column keeps the cache')
  db.prepare(`INSERT INTO other (id) VALUES ('x')`).run()
  t.equal(loads, 1, 'a write to an unwatched table keeps the cache')

  db.prepare(`UPDATE people SET name = 'Ada L.' WHERE id = 'a'`).run()
  t.equal(name('a'), 'Ada L.', 'an update of a watched column empties it')
  db.prepare(`DELETE FROM people WHERE id = 'a'`).run()
  t.equal(name('a'), undefined, 'a delete empties it')
  t.equal(cache.size, 0, 'misses are not kept')
  db.prepare(`INSERT INTO people (id, name) VALUES ('a', 'Ann')`).run()
  t.equal(name('a'), 'Ann', 'an insert empties it')
})

t.test('table cache: nothing read inside a transaction is kept (it may be rolled back)', async (t) => {
  const { db } = database(t)
  const cache = createTableCache(db, { name: 'people', tables: { people: undefined } })
  const byId = db.prepare('SELECT name FROM people WHERE id = ?').pluck()
  const name = (id: string) => cache.get(`p:${id}`, () => byId.get(id) as string | undefined)
  t.throws(() => db.transaction(() => {
    db.prepare(`UPDATE people SET name = 'Temporary' WHERE id = 'b'`).run()
    t.equal(name('b'), 'Temporary', 'the transaction sees its own write')
    throw new Error('roll back')
  })())
  t.equal(name('b'), 'Bob', 'after the rollback the committed value is read, not the one seen inside')
})

t.test('table cache: writes by another connection are noticed within externalCheckMs', async (t) => {
  const { db, file } = database(t)
  const cache = createTableCache(db, { name: 'people', tables: { people: undefined }, externalCheckMs: 200 })
  const byId = db.prepare('SELECT name FROM people WHERE id = ?').pluck()
  const name = (id: string) => cache.get(`p:${id}`, () => byId.get(id) as string | undefined)
  t.equal(name('b'), 'Bob')
  const other = new Database(file)
  t.teardown(() => other.close())
  other.prepare(`UPDATE people SET name = 'Robert' WHERE id = 'b'`).run()
  await new Promise((r) => setTimeout(r, 250))
  t.equal(name('b'), 'Robert', 'the other connection\'s commit changed data_version: the cache started over')
  // the triggers are temporary: the other connection neither sees them nor needs the function they call
  t.equal(other.prepare(`SELECT count(*) FROM sqlite_master WHERE type = 'trigger'`).pluck().get(), 0)
})

t.test('table cache: bounded; names checked', async (t) => {
  const { db } = database(t)
  const cache = createTableCache(db, { name: 'people', tables: { people: undefined }, maxEntries: 3 })
  for (let i = 0; i < 10; i++) cache.get(`k${i}`, () => i)
  t.ok(cache.size <= 3)
  t.throws(() => createTableCache(db, { name: 'bad name; DROP', tables: {} }), /invalid cache name/)
})

t.test('credentials: revocation, expiry and membership changes take effect on the next request', async (t) => {
  const app = await build(t)
  const owner = await signup(app)
  const member = await addUser(app, owner)
  const key = await createKey(app, owner, ['read'])
  const usage = (k: string) => app.inject({ url: `/api/v2/developer/api-keys/${key.id}/usage`,
    headers: { 'x-api-key': k } })
  t.equal((await usage(key.key)).statusCode, 200)
  t.equal((await usage(key.key)).statusCode, 200, 'served again (from the cache)')

  // a direct edit of the database (an operator, a script) counts at once
  app.sqlite.prepare('UPDATE api_keys SET expires_at = ? WHERE id = ?').run(new Date(Date.now() - 1000).toISOString(),
    key.id)
  const expired = await usage(key.key)
  t.equal(expired.statusCode, 401)
  t.equal(expired.json().message, 'API key has expired')
  app.sqlite.prepare('UPDATE api_keys SET expires_at = NULL WHERE id = ?').run(key.id)
  t.equal((await usage(key.key)).statusCode, 200)

  const revoke = await app.inject({ method: 'DELETE', url: `/api/v2/api-keys/${key.id}`, headers: owner.auth })
  t.ok(revoke.statusCode < 300, 'revoked through the API')
  t.equal((await usage(key.key)).statusCode, 401, 'the revoked key is refused on the very next request')

  // membership: added, then removed
  const me = (u: typeof member) => app.inject({ url: '/api/v2/auth/me', headers: u.auth })
  const ws = (await app.inject({ method: 'POST', url: '/api/v2/workspaces', headers: owner.auth,
    payload: { name: 'Team' } })).json().data
  const inWs = () => app.inject({ url: `/api/v2/developer/logs`, headers: { ...member.auth, 'x-workspace-id': ws.id } })
  t.equal((await inWs()).statusCode, 403)
  t.same((await me(member)).json().data.workspaces, [])
  t.equal((await app.inject({ method: 'POST', url: `/api/v2/workspaces/${ws.id}/members`, headers: owner.auth,
    payload: { userId: member.userId, role: 'member' } })).statusCode, 201)
  t.equal((await inWs()).statusCode, 200, 'membership counts at once')
  t.same((await me(member)).json().data.workspaces.map((w: { id: string }) => w.id), [ws.id],
    'auth/me lists the new workspace')
  app.sqlite.prepare('DELETE FROM workspace_members WHERE workspace_id = ? AND user_id = ?').run(ws.id, member.userId)
  t.equal((await inWs()).statusCode, 403, 'and its removal too')
  t.same((await me(member)).json().data.workspaces, [])

  // a deleted user's token stops working
  app.sqlite.prepare('DELETE FROM users WHERE id = ?').run(member.userId)
  t.equal((await me(member)).statusCode, 401)
})

t.test('credentials: a revocation by another process is noticed within a second', async (t) => {
  const app = await build(t)
  const owner = await signup(app)
  const key = await createKey(app, owner, ['read'])
  const usage = () => app.inject({ url: `/api/v2/developer/api-keys/${key.id}/usage`,
    headers: { 'x-api-key': key.key } })
  t.equal((await usage()).statusCode, 200)
  const other = new Database(app.sqlite.name)
  other.pragma('busy_timeout = 5000')
  other.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ?').run(new Date().toISOString(), key.id)
  other.close()
  await new Promise((r) => setTimeout(r, 1100))
  t.equal((await usage()).statusCode, 401)
})

t.test('credentials: shared principals cannot be changed by a route', async (t) => {
  let seen: unknown
  const app = await build(t, {
    before: (app) => {
      app.get('/api/v2/test/mutate', { config: { auth: 'jwt' } }, async (request) => {
        try {
          (request.principal as { orgRole: string }).orgRole = 'owner'
          seen = 'changed'
        } catch (err) {
          seen = (err as Error).constructor.name
        }
        return {}
      })
    }
  })
  const owner = await signup(app)
  const member = await addUser(app, owner)
  await app.inject({ url: '/api/v2/test/mutate', headers: member.auth })
  t.equal(seen, 'TypeError', 'the principal is frozen')
  t.equal((await app.inject({ url: '/api/v2/auth/me', headers: member.auth })).json().data.orgRole, 'member')
})

t.test('JWT: a token verified once still expires on time', async (t) => {
  const app = await build(t)
  const owner = await signup(app)
  // `exp` is in whole seconds: a token for 1 s signed late in a second expired at once on a busy machine; with 3 s it
  // lives at least 2 s, and the wait runs to its own `exp`
  const token = app.jwt.sign({ sub: owner.userId, cid: owner.customerId }, { expiresIn: 3 })
  const me = () => app.inject({ url: '/api/v2/auth/me', headers: { authorization: `Bearer ${token}` } })
  t.equal((await me()).statusCode, 200)
  t.equal((await me()).statusCode, 200)
  const { exp } = app.jwt.decode(token) as { exp: number }
  await new Promise((r) => setTimeout(r, Math.max(0, exp * 1000 - Date.now()) + 100))
  const late = await me()
  t.equal(late.statusCode, 401)
  t.equal(late.json().message, 'Token has expired')
})

t.test('bearerToken: the scheme in any case, one token, surrounding spaces allowed', async (t) => {
  t.equal(bearerToken('Bearer abc.def'), 'abc.def')
  t.equal(bearerToken('bearer abc'), 'abc')
  t.equal(bearerToken('BEARER   abc  '), 'abc')
  t.equal(bearerToken('Bearer'), undefined)
  t.equal(bearerToken('Bearer '), undefined)
  t.equal(bearerToken('Bearer a b'), undefined)
  t.equal(bearerToken('Basic abc'), undefined)
  t.equal(bearerToken('Bearer a\tb'), undefined)
})

t.test('cached usage and memberships stay per tenant', async (t) => {
  const app = await build(t)
  const a = await signup(app)
  const b = await signup(app)
  const key = await createKey(app, a, ['read'])
  const url = `/api/v2/developer/api-keys/${key.id}/usage`
  t.equal((await app.inject({ url, headers: a.auth })).statusCode, 200, 'the owner reads it (now kept in memory)')
  t.equal((await app.inject({ url, headers: a.auth })).statusCode, 200)
  t.equal((await app.inject({ url, headers: b.auth })).statusCode, 404, 'another organization still gets 404')
  const other = await createKey(app, b, ['read'])
  t.equal((await app.inject({ url, headers: { 'x-api-key': other.key } })).statusCode, 404, 'also with its own key')

  const inA = { ...a.auth, 'x-workspace-id': a.workspaceId }
  t.equal((await app.inject({ url: '/api/v2/developer/logs', headers: inA })).statusCode, 200)
  const bInA = await app.inject({ url: '/api/v2/developer/logs',
    headers: { ...b.auth, 'x-workspace-id': a.workspaceId } })
  t.equal(bInA.statusCode, 403, 'a membership kept for one user is not another\'s')
})

t.test('table cache: two caches on one connection each empty themselves', async (t) => {
  const { db } = database(t)
  const first = createTableCache(db, { name: 'people', tables: { people: undefined } })
  const second = createTableCache(db, { name: 'people', tables: { people: undefined } })
  first.get('a', () => 1)
  second.get('a', () => 2)
  db.prepare(`UPDATE people SET name = 'x' WHERE id = 'a'`).run()
  t.equal(first.size, 0)
  t.equal(second.size, 0)
})
