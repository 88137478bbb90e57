import t, { type Test } from 'tap'
import crypto from 'node:crypto'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import pg from 'pg'
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core'
import { drizzle } from 'drizzle-orm/node-postgres'
import { count, eq } from 'drizzle-orm'
import * as pgTables from '../../schema/pg/index.js'
import { createPostgresPool, migratePostgres, MIGRATION_LOCK, PostgresConnectionError,
  postgresTarget, describePostgresError } from '../../src/db/postgres.js'
import { needsPostgres, testPostgresUrl } from '../system-tools.js'

const root = path.resolve(import.meta.dirname, '../..')
const journal = JSON.parse(fs.readFileSync(path.join(root, 'schema/pg-migrations/meta/_journal.json'), 'utf8')) as
  { entries: { tag: string }[] }

/** a port on this machine that nothing listens on: one the system just handed out and took back */
async function closedPort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

t.test('a URL that is not a PostgreSQL URL is refused in words, without its password', async (t) => {
  for (const [url, said] of [['not a url', /not a URL/], ['mysql://u:hunter22@db/cairn', /must start with postgres/],
    ['postgres://u:hunter22@db', /names no database/], ['postgres:///cairn', /names no host/]] as const) {
    t.throws(() => createPostgresPool(url), PostgresConnectionError)
    try {
      createPostgresPool(url)
    } catch (err) {
      t.match((err as Error).message, said, url)
      t.notMatch((err as Error).message, /hunter22/)
    }
  }
  t.same(postgresTarget('postgresql://ann:p%40ss@db.example:6543/cairn%20prod'),
    { host: 'db.example', port: 6543, database: 'cairn prod', user: 'ann' })
})

t.test('a refused connection names the host and port and what to check, never the password', async (t) => {
  const port = await closedPort()
  const pool = createPostgresPool(`postgres://cairn:s3cret-pass@127.0.0.1:${port}/cairn`)
  t.teardown(() => pool.end())
  const err = await migratePostgres(pool).then(() => undefined, (e: unknown) => e as PostgresConnectionError)
  t.ok(err instanceof PostgresConnectionError)
  t.match(err?.message, `PostgreSQL at 127.0.0.1:${port} refused the connection`)
  t.match(err?.message, /is the server running/)
  t.notMatch(`${err?.message} ${(err?.cause as Error)?.message}`, /s3cret-pass/)
  // a password that is not valid percent-encoding (a bare %) is still cut out, and still explained
  const bare = `postgres://cairn:50%off@127.0.0.1:${port}/cairn`
  const described = describePostgresError(Object.assign(new Error('connect ECONNREFUSED: 50%off'),
    { code: 'ECONNREFUSED' }), bare)
  t.match(described.message, /refused the connection/)
  t.notMatch(`${described.message} ${(described.cause as Error)?.message}`, /50%off/)
  t.same(postgresTarget('postgres://127.0.0.1/cairn'), { host: '127.0.0.1', port: 5432, database: 'cairn',
    user: undefined }, 'no user in the URL: the operating system\'s, as node-postgres does')
})

if (await needsPostgres(t)) {
  const admin = new pg.Pool({ connectionString: testPostgresUrl, max: 2 })
  t.teardown(() => admin.end())

  /** a database of its own for one test, dropped after it: runs at the same time never meet */
  const freshDatabase = async (t: Test, options = ''): Promise<string> => {
    const name = `cairn_test_${crypto.randomBytes(6).toString('hex')}`
    await admin.query(`CREATE DATABASE ${name} ${options}`)
    t.teardown(() => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
    const url = new URL(testPostgresUrl)
    url.pathname = `/${name}`
    return url.href
  }
  const poolFor = (t: Test, url: string, options = {}) => {
    const pool = createPostgresPool(url, options)
    t.teardown(() => pool.end())
    return pool
  }
  const appliedMigrations = async (pool: pg.Pool) =>
    (await pool.query<{ id: number; hash: string }>('SELECT id, hash FROM drizzle.__drizzle_migrations ORDER BY id'))
      .rows

  t.test('migrating an empty database makes every table and column of schema/pg, with the pool\'s settings',
    async (t) => {
      const pool = poolFor(t, await freshDatabase(t), { poolSize: 3, statementTimeoutMs: 12_000 })
      await migratePostgres(pool)
      t.equal((await appliedMigrations(pool)).length, journal.entries.length, 'each migration once')

      const { rows } = await pool.query<{ table_name: string; column_name: string }>(`SELECT table_name,
        column_name FROM information_schema.columns WHERE table_schema = 'public'`)
      const made = new Map<string, Set<string>>()
      for (const r of rows) made.set(r.table_name, (made.get(r.table_name) ?? new Set()).add(r.column_name))
      for (const table of Object.values(pgTables).filter((v) => getTableConfig(v as PgTable).name)) {
        const config = getTableConfig(table as PgTable)
        t.same([...made.get(config.name) ?? []].sort(), config.columns.map((c) => c.name).sort(), config.name)
      }

      const settings = await pool.query(`SELECT current_setting('application_name') AS app,
        current_setting('statement_timeout') AS timeout`)
      t.same(settings.rows[0], { app: 'cairn', timeout: '12s' }, 'the migration left its connection as it was')
      t.equal(pool.options.max, 3)
      const counted = await pool.query('SELECT count(*) AS n FROM drizzle.__drizzle_migrations')
      t.equal(counted.rows[0].n, journal.entries.length, 'bigint is read as a number')
    })

  t.test('migrating twice is a no-op', async (t) => {
    const pool = poolFor(t, await freshDatabase(t))
    await migratePostgres(pool)
    const before = await appliedMigrations(pool)
    await pool.query(`INSERT INTO organizations (id, name, created_at) VALUES ('o1', 'Org', '2026-01-01T00:00:00Z')`)
    await migratePostgres(pool)
    t.same(await appliedMigrations(pool), before)
    t.equal((await pool.query('SELECT name FROM organizations')).rows[0]?.name, 'Org', 'the data is kept')
  })

  t.test('processes migrating at once: each succeeds and the migrations are applied once', async (t) => {
    const url = await freshDatabase(t)
    const pools = Array.from({ length: 4 }, () => poolFor(t, url))
    const results = await Promise.allSettled(pools.map((pool) => migratePostgres(pool)))
    t.same(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'],
      JSON.stringify(results.filter((r) => r.status === 'rejected').map((r) => String(r.reason))))
    const applied = await appliedMigrations(pools[0])
    t.equal(applied.length, journal.entries.length)
    t.equal(new Set(applied.map((m) => m.hash)).size, journal.entries.length)
    const held = await pools[0].query(`SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory'
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)
    t.equal(held.rows[0].n, 0, 'the lock is released')
    t.equal((await pools[0].query('SELECT pg_try_advisory_lock($1) AS got', [MIGRATION_LOCK])).rows[0].got, true)
  })

  t.test('a missing database and an unknown user are said in words', async (t) => {
    const url = new URL(testPostgresUrl)
    url.pathname = `/cairn_missing_${crypto.randomBytes(4).toString('hex')}`
    const missing = await migratePostgres(poolFor(t, url.href)).catch((e: unknown) => e as Error)
    t.match(missing?.message, `has no database "${url.pathname.slice(1)}"`)
    const stranger = new URL(testPostgresUrl)
    stranger.username = 'cairn_no_such_user'
    stranger.password = 'pw-not-shown'
    const refused = await migratePostgres(poolFor(t, stranger.href)).catch((e: unknown) => e as Error)
    t.match(refused?.message, 'refused user "cairn_no_such_user"')
    t.notMatch(refused?.message, /pw-not-shown/)
  })

  t.test('a database whose LC_CTYPE folds ASCII only is refused before anything is made', async (t) => {
    const pool = poolFor(t, await freshDatabase(t, `ENCODING 'UTF8' LC_CTYPE 'C' LC_COLLATE 'C' TEMPLATE template0`))
    await t.rejects(migratePostgres(pool), { name: 'PostgresConnectionError', message: /has LC_CTYPE C, which folds/ })
    const made = await pool.query(`SELECT count(*) AS n FROM pg_namespace WHERE nspname = 'drizzle'`)
    t.equal(made.rows[0].n, 0)
  })

  t.test('search indexes: substring ILIKE through pg_trgm, words through the tsvector, both case and accent ' +
    'insensitive', async (t) => {
    const pool = poolFor(t, await freshDatabase(t))
    await migratePostgres(pool)
    const db = drizzle(pool)
    const texts = ['Notre ÉCOLE est fermée le lundi', 'Parental leave policies apply to every team',
      'The quick brown fox', 'naïve café owners', ...Array.from({ length: 400 }, (_, i) => `filler passage ${i}`)]
    await db.insert(pgTables.knowledgePassages).values(texts.map((text, i) => ({ id: `p${i}`, documentId: 'd1',
      chunkIndex: i, text })))
    await pool.query('ANALYZE knowledge_passages')

    const client = await pool.connect()
    t.teardown(() => client.release())
    // with sequential scans priced out, a plan still without the index would show that the index cannot serve it
    await client.query('SET enable_seqscan = off')
    const planOf = async (where: string, value: string) => (await client.query(
      `EXPLAIN SELECT id FROM knowledge_passages WHERE ${where}`, [value])).rows.map((r) => r['QUERY PLAN']).join('\n')
    const idsOf = async (where: string, value: string) => (await client.query<{ id: string }>(
      `SELECT id FROM knowledge_passages WHERE ${where} ORDER BY rowid`, [value])).rows.map((r) => r.id)

    const substring = `text ILIKE '%' || $1 || '%'`
    t.match(await planOf(substring, 'école'), /Bitmap Index Scan on knowledge_passages_trgm_idx/)
    t.same(await idsOf(substring, 'école'), ['p0'], 'ÉCOLE folds to école')
    t.same(await idsOf(substring, 'RENTAL LEA'), ['p1'], 'across words')
    t.same(await idsOf(substring, 'ssage 39'), ['p43', ...Array.from({ length: 10 }, (_, i) => `p${394 + i}`)])

    const words = `words @@ plainto_tsquery('cairn_words', $1)`
    t.match(await planOf(words, 'policy'), /Bitmap Index Scan on knowledge_passages_words_idx/)
    t.same(await idsOf(words, 'policy'), ['p1'], 'stems: policies')
    t.same(await idsOf(words, 'CAFE naive'), ['p3'], 'folds case and accents')
    t.same(await idsOf(words, 'the'), ['p2'], 'keeps common words')
    t.same(await idsOf(words, 'ecole lundi'), ['p0'])

    const [{ rowid }] = await db.select({ rowid: pgTables.knowledgePassages.rowid }).from(pgTables.knowledgePassages)
      .where(eq(pgTables.knowledgePassages.id, 'p1'))
    t.equal(rowid, 2, 'rowids are numbers, given in order')
  })

  t.test('knowledge_reader_shares and knowledge_listing_versions follow every write of the documents and tags, as ' +
    'SQLite\'s triggers keep them', async (t) => {
    const pool = poolFor(t, await freshDatabase(t))
    await migratePostgres(pool)
    const db = drizzle(pool)
    const at = '2026-01-01T00:00:00.000Z'
    await db.insert(pgTables.organizations).values(['o1', 'o2'].map((id) => ({ id, name: id, createdAt: at })))
    await db.insert(pgTables.users).values(['o1', 'o2'].map((o) => ({ id: `u-${o}`, customerId: o,
      email: `${o}@example.com`, name: o, passwordHash: 'x', orgRole: 'owner' as const, createdAt: at })))
    await db.insert(pgTables.workspaces).values(['w1', 'w2'].map((id) => ({ id, customerId: 'o1', name: id,
      createdBy: 'u-o1', createdAt: at })))
    const doc = (id: string, org: string, scope: 'organization' | 'workspace' | 'personal', chunks: number,
      workspaceId: string | null = null) => ({ id, customerId: org, workspaceId, ownerId: `u-${org}`, scope,
      fileName: `${id}.txt`, fileType: 'txt', fileSize: 1, sha256: '', category: 'c', tags: '[]', metadata: '{}',
      textLength: 1, chunkCount: chunks, chunkSize: 1000, chunkOverlap: 0, indexedCount: 0, status: 'indexed' as const,
      textPath: '', uploadedAt: at, updatedAt: at })
    const kept = async () => (await pool.query(`SELECT customer_id, scope, workspace, owner, passages::int
      FROM knowledge_reader_shares ORDER BY 1, 2, 3, 4`)).rows
    const summed = async () => (await pool.query(`SELECT customer_id, scope,
        CASE scope WHEN 'workspace' THEN coalesce(workspace_id, '') ELSE '' END AS workspace,
        CASE scope WHEN 'personal' THEN owner_id ELSE '' END AS owner, sum(chunk_count)::int AS passages
      FROM knowledge_documents GROUP BY 1, 2, 3, 4 HAVING sum(chunk_count) > 0 ORDER BY 1, 2, 3, 4`)).rows
    const version = async (org: string) => Number((await pool.query(
      'SELECT version FROM knowledge_listing_versions WHERE customer_id = $1', [org])).rows[0]?.version ?? 0)
    const docs = pgTables.knowledgeDocuments
    await db.insert(docs).values([doc('d1', 'o1', 'organization', 5), doc('d2', 'o1', 'workspace', 3, 'w1'),
      doc('d3', 'o1', 'workspace', 2, 'w2'), doc('d4', 'o1', 'personal', 4), doc('d5', 'o2', 'organization', 7)])
    t.same(await kept(), await summed(), 'after inserts')
    t.equal(await version('o1'), 4)
    t.equal(await version('o2'), 1)
    await db.update(docs).set({ scope: 'workspace', workspaceId: 'w1' }).where(eq(docs.id, 'd1'))
    await db.update(docs).set({ chunkCount: 9 }).where(eq(docs.id, 'd2'))
    t.same(await kept(), await summed(), 'after a scope change and a count change')
    t.equal(await version('o1'), 6)
    const before = await version('o1')
    await db.insert(pgTables.knowledgeDocumentTags).values({ documentId: 'd3', tag: 'red' })
    await db.delete(pgTables.knowledgeDocumentTags).where(eq(pgTables.knowledgeDocumentTags.documentId, 'd3'))
    t.equal(await version('o1'), before + 2, 'a tag written and removed')
    await db.delete(docs).where(eq(docs.id, 'd3'))
    await db.delete(docs).where(eq(docs.id, 'd4'))
    t.same(await kept(), await summed(), 'after deletes: no empty share is kept')
    t.equal(await version('o2'), 1, 'another organization\'s writes leave its version alone')
  })

  t.test('artifact_counts follows inserts and deletes, per workspace', async (t) => {
    const pool = poolFor(t, await freshDatabase(t))
    await migratePostgres(pool)
    const db = drizzle(pool)
    const at = '2026-01-01T00:00:00.000Z'
    await db.insert(pgTables.organizations).values({ id: 'o1', name: 'Org', createdAt: at })
    await db.insert(pgTables.users).values({ id: 'u1', customerId: 'o1', email: 'a@example.com', name: 'A',
      passwordHash: 'x', orgRole: 'owner', createdAt: at })
    await db.insert(pgTables.workspaces).values(['w1', 'w2'].map((id) => ({ id, customerId: 'o1', name: id,
      createdBy: 'u1', createdAt: at })))
    const artifact = (id: string, workspaceId: string) => ({ id, customerId: 'o1', workspaceId, type: 'note',
      title: id, content: '{}', status: 'draft', relatedArtifacts: '[]', reviewPolicy: 'none', createdBy: 'u1',
      createdAt: at, updatedAt: at })
    await db.insert(pgTables.artifacts).values([artifact('a1', 'w1'), artifact('a2', 'w1'), artifact('a3', 'w2')])
    await db.delete(pgTables.artifacts).where(eq(pgTables.artifacts.id, 'a2'))
    const counts = await db.select().from(pgTables.artifactCounts).orderBy(pgTables.artifactCounts.workspaceId)
    t.same(counts, [{ workspaceId: 'w1', count: 1 }, { workspaceId: 'w2', count: 1 }])
    const [{ n }] = await db.select({ n: count() }).from(pgTables.artifacts)
    t.equal(n, 2)
  })
}
