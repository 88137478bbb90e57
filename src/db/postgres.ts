import path from 'node:path'
import pg from 'pg'
import { drizzle } from 'drizzle-orm/node-postgres'
import { migrate } from 'drizzle-orm/node-postgres/migrator'
import { projectRoot } from './index.js'

/**
 * The PostgreSQL connection (CAIRN_DATABASE_URL): a pool per process and the migrations of schema/pg-migrations,
 * applied once however many processes start at the same time.
 */

export interface PostgresOptions {
  /** connections this process opens at most; default 10 */
  poolSize?: number
  /** the server cancels a statement running longer (milliseconds; 0: no limit); default 30 s */
  statementTimeoutMs?: number
  /** how long opening a connection may take before it fails (milliseconds); default 10 s */
  connectTimeoutMs?: number
  /** an idle connection that broke (the server restarted): it has left the pool; the next query opens another */
  onIdleError?: (err: Error) => void
}

/** Where a URL points, without its password: what every error names. */
export interface PostgresTarget {
  host: string
  port: number
  database: string
  /** undefined when the URL names none (node-postgres then connects as the operating system's user) */
  user?: string
}

/** A refused connection or a wrong URL, said in words: it names the server and what to check, never the password. */
export class PostgresConnectionError extends Error {
  override name = 'PostgresConnectionError'
  constructor(message: string, readonly target?: PostgresTarget, options?: ErrorOptions) {
    super(message, options)
  }
}

const URL_SHAPE = 'postgres://user:password@host:5432/database'

/** Reads the parts of a PostgreSQL URL; throws PostgresConnectionError for anything else. */
export function postgresTarget(url: string): PostgresTarget {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new PostgresConnectionError(`CAIRN_DATABASE_URL is not a URL: expected ${URL_SHAPE}`)
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new PostgresConnectionError(`CAIRN_DATABASE_URL must start with postgres:// or postgresql:// (it starts ` +
      `with ${parsed.protocol}//): expected ${URL_SHAPE}`)
  }
  const database = decoded(parsed.pathname.replace(/^\//, ''))
  if (!parsed.hostname || !database || database.includes('/')) {
    throw new PostgresConnectionError(`CAIRN_DATABASE_URL names no ${parsed.hostname ? 'database' : 'host'}: ` +
      `expected ${URL_SHAPE}`)
  }
  return {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 5432,
    database,
    // (none in the URL: node-postgres connects as the operating system's user)
    user: decoded(parsed.username) || undefined
  }
}

/** a URL part percent-decoded, or as written when it is not valid percent-encoding (a bare `%` in a password) */
function decoded(part: string): string {
  try { return decodeURIComponent(part) } catch { return part }
}

const where = (t: PostgresTarget) => `PostgreSQL at ${t.host}:${t.port}`

/**
 * An error of opening a connection or of a first query, as PostgresConnectionError saying what to check. The
 * driver's own message is kept as the cause, with the password cut out should it appear in it.
 */
export function describePostgresError(err: unknown, url: string): Error {
  if (err instanceof PostgresConnectionError) return err
  const target = postgresTarget(url)
  const e = err as Error & { code?: string }
  const raw = new URL(url).password
  // both forms cut out: the URL's, and the decoded one the driver may repeat
  const password = decoded(raw)
  const scrub = (s: string) => [password, raw].reduce((out, p) => p ? out.split(p).join('***') : out, s)
  const cause = new Error(scrub(String(e?.message ?? err)))
  const say = (message: string) => new PostgresConnectionError(message, target, { cause })
  switch (e?.code) {
    case 'ECONNREFUSED':
      return say(`${where(target)} refused the connection: is the server running, and listening on that address ` +
        `and port (postgresql.conf: listen_addresses, port)? Check the host and port of CAIRN_DATABASE_URL.`)
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return say(`The host ${target.host} of CAIRN_DATABASE_URL was not found (DNS): check its spelling.`)
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return say(`${where(target)} did not answer: check the host and port of CAIRN_DATABASE_URL and any ` +
        `firewall between.`)
    case '28P01':
    case '28000':
      return say(`${where(target)} refused ${target.user ? `user "${target.user}"`
        : 'the operating system\'s user (the URL names none)'} for database "${target.database}": check the user and ` +
        `password in CAIRN_DATABASE_URL, and pg_hba.conf on the server.`)
    case '3D000':
      return say(`${where(target)} has no database "${target.database}": create it (createdb ${target.database}) ` +
        `or correct CAIRN_DATABASE_URL.`)
    case '53300':
      return say(`${where(target)} has no connection left (max_connections): lower the pool size of each Cairn ` +
        `process or raise max_connections.`)
  }
  if (/timeout/i.test(e?.message ?? '')) {
    return say(`${where(target)} did not answer in time: check the host and port of CAIRN_DATABASE_URL and any ` +
      `firewall between.`)
  }
  return say(`${where(target)}, database "${target.database}": ${cause.message}`)
}

/**
 * 64-bit integers as JavaScript numbers, as better-sqlite3 reads SQLite's: counts (`count(*)` is bigint), epoch
 * milliseconds, sequence numbers. The driver's default is a string. Set on the driver's shared parsers, since
 * drizzle's queries pass their own parsers, which fall back to those.
 */
function readInt8AsNumber() {
  pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => {
    const n = Number(value)
    if (!Number.isSafeInteger(n)) throw new RangeError(`bigint ${value} is beyond JavaScript's safe integers`)
    return n
  })
}

/** A pool of connections to `url`; no connection is opened until the first query. */
export function createPostgresPool(url: string, options: PostgresOptions = {}): pg.Pool {
  postgresTarget(url)
  readInt8AsNumber()
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    application_name: 'cairn'
  })
  pool.on('error', (err) => options.onIdleError?.(err))
  return pool
}

/**
 * What Cairn needs of the server, checked before migrating: PostgreSQL 15 or newer, UTF-8, and case folding beyond
 * ASCII (substring search is case-insensitive through `ILIKE` and pg_trgm, which fold by the database's LC_CTYPE:
 * under C or POSIX only A–Z would fold).
 */
async function checkServer(client: pg.PoolClient, target: PostgresTarget) {
  const fail = (problems: string[]) => new PostgresConnectionError(`${where(target)}, database ` +
    `"${target.database}", ${problems.join('; ')}.`, target)
  // first and alone: pg_database's datlocprovider is new in 15
  const { rows: [{ version }] } = await client.query<{ version: string }>('SHOW server_version_num')
  if (Number(version) < 150000) throw fail([`is version ${version}; Cairn needs 15 or newer`])
  const { rows: [db] } = await client.query<{ encoding: string; ctype: string; provider: string }>(`SELECT
    pg_encoding_to_char(encoding) AS encoding, datctype AS ctype, datlocprovider::text AS provider
    FROM pg_database WHERE datname = current_database()`)
  const problems = []
  if (db.encoding !== 'UTF8') problems.push(`stores ${db.encoding}; Cairn needs UTF8`)
  if (db.provider === 'c' && /^(C|POSIX)$/i.test(db.ctype)) {
    problems.push(`has LC_CTYPE ${db.ctype}, which folds the case of A-Z only; Cairn's case-insensitive ` +
      `search needs a UTF-8 locale (CREATE DATABASE … ENCODING 'UTF8' LC_CTYPE 'C.UTF-8' TEMPLATE template0)`)
  }
  if (problems.length > 0) throw fail(problems)
}

/** `SELECT hashtext('cairn migrations')`: the advisory lock every Cairn process takes to migrate */
export const MIGRATION_LOCK = -1_386_002_140

/**
 * Applies schema/pg-migrations with drizzle's migrator, on one connection holding a session advisory lock: when
 * several processes start at once, one migrates and the others wait, then find nothing left to do. drizzle's
 * migrator alone would race (each creates its schema and table, each applies the first migration). The migration
 * is one transaction; a connection whose migration failed is closed, which frees the lock with whatever else it
 * held, as a process that dies while migrating frees it.
 */
export async function migratePostgres(pool: pg.Pool,
  migrationsFolder = path.join(projectRoot(), 'schema', 'pg-migrations')): Promise<void> {
  const url = pool.options.connectionString
  if (!url) throw new TypeError('migratePostgres needs a pool made from a URL (createPostgresPool)')
  const target = postgresTarget(url)
  let client: pg.PoolClient
  try {
    client = await pool.connect()
  } catch (err) {
    throw describePostgresError(err, url)
  }
  let failed = false
  try {
    await checkServer(client, target)
    // a migration (an index over a large table) and the wait for another process's may outlast statement_timeout
    await client.query('SET statement_timeout = 0')
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK])
    await migrate(drizzle(client), { migrationsFolder })
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK])
    await client.query('RESET statement_timeout')
  } catch (err) {
    failed = true
    throw err
  } finally {
    client.release(failed)
  }
}
