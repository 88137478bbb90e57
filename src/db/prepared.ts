import type Database from 'better-sqlite3'
import { is, Param, Placeholder, sql, type Table } from 'drizzle-orm'

/**
 * A table's row as a raw SQL statement reads it (`SELECT *`, or a `Pick<>` of the columns selected): each column
 * under its SQL name, typed from the table, booleans as SQLite's 0 and 1. For the statements Drizzle cannot build.
 */
export type SqlRow<T extends Table> = {
  [K in keyof T['_']['columns'] & keyof T['$inferSelect'] as T['_']['columns'][K]['_']['name']]:
  T['$inferSelect'][K] extends infer V ? V extends boolean ? number : V : never
}

/**
 * A placeholder LIMIT or OFFSET rendered `+?`: SQLite recompiles a statement whose LIMIT is a bare parameter each
 * time that parameter is bound (it plans with the bound value), and Drizzle's `.limit(sql.placeholder(…))` renders a
 * bare `?`. The unary plus makes it an expression, planned once. Drizzle types `.limit()` as number or Placeholder,
 * but renders any SQL there: the cast is that one gap in its types.
 */
export function boundLimit(name: string): Placeholder {
  return sql`+${sql.placeholder(name)}` as unknown as Placeholder
}

/**
 * A constant LIMIT or OFFSET for a prepared statement, written into its SQL: Drizzle binds `.limit(50)` as a
 * parameter too (`LIMIT ?`, recompiled at every call, as above).
 */
export function fixedLimit(n: number): Placeholder {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`not a LIMIT: ${n}`)
  return sql.raw(String(n)) as unknown as Placeholder
}

type Values = Record<string, unknown>

/**
 * A Drizzle write (insert, update or delete without returning) prepared once and run by better-sqlite3 directly.
 * Drizzle renders the SQL and knows each parameter's kind when the statement is built, yet its prepared `run()`
 * works out every parameter's kind again at each call (prototype walks in `fillPlaceholders`): about 4 µs of a
 * 9-parameter insert, a third of the job queue's enqueue. Here that is done once; each call only binds.
 */
export function preparedWrite(sqlite: Database.Database, query: { toSQL(): { sql: string; params: unknown[] } }) {
  const { sql: text, params } = query.toSQL()
  const statement = sqlite.prepare(text)
  const bind = params.map((p): (values: Values) => unknown => {
    if (is(p, Placeholder)) return placeholderOf(p.name)
    if (is(p, Param) && is(p.value, Placeholder)) {
      const name = p.value.name
      const encoder = p.encoder
      if (!encoder) return placeholderOf(name)
      return (values) => encoder.mapToDriverValue(valueOf(values, name))
    }
    return () => p
  })
  const args: unknown[] = new Array(bind.length)
  return {
    run(values: Values): Database.RunResult {
      for (let i = 0; i < bind.length; i++) args[i] = bind[i](values)
      return statement.run(...args)
    },
    /** the SQL as run (tests) */
    sql: text
  }
}

function valueOf(values: Values, name: string) {
  const value = values[name]
  if (value === undefined && !(name in values)) throw new Error(`No value for placeholder "${name}" was provided`)
  return value
}

const placeholderOf = (name: string) => (values: Values) => valueOf(values, name)
