import t from 'tap'
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { is } from 'drizzle-orm'
import { getTableConfig as getPgConfig, PgTable } from 'drizzle-orm/pg-core'
import { getTableConfig as getSqliteConfig, SQLiteTable } from 'drizzle-orm/sqlite-core'
import * as sqliteTables from '../../schema/tables/index.js'
import * as outboxTables from '../../schema/outbox/tables.js'
import * as pgTables from '../../schema/pg/index.js'
import { tempDir } from '../helper.js'

const run = promisify(execFile)
const root = path.resolve(import.meta.dirname, '../..')
const drizzleKit = path.join(root, 'node_modules/.bin/drizzle-kit')

/**
 * The migration drift check: schema/tables and schema/migrations describe the same database (cairn.db), as do
 * schema/outbox and schema/outbox-migrations (the outbox file). drizzle-kit runs against a copy of the migrations,
 * so a drift never writes into the project.
 */
for (const [name, schema, migrations] of [['cairn.db', 'schema/tables', 'schema/migrations'],
  ['the outbox file', 'schema/outbox', 'schema/outbox-migrations']]) {
  t.test(`${name}: drizzle-kit generate finds nothing to migrate, and check passes`, async (t) => {
    const dir = tempDir(t)
    const out = path.join(dir, 'migrations')
    fs.cpSync(path.join(root, migrations), out, { recursive: true })
    const config = path.join(dir, 'drizzle.config.mjs')
    fs.writeFileSync(config, `export default ${JSON.stringify({
      // relative to the project: drizzle-kit check reads paths as './' + out
      dialect: 'sqlite', schema: `./${schema}/*.ts`, out: path.relative(root, out)
    })}\n`)
    const before = fs.readdirSync(out).sort()

    const generated = await run(drizzleKit, ['generate', `--config=${config}`], { cwd: root })
    const after = fs.readdirSync(out).sort()
    const said = generated.stdout + generated.stderr
    t.same(after, before, `${schema} and ${migrations} agree (else: npm run db:generate)`, { said })
    t.match(said, /No schema changes/)

    const checked = await run(drizzleKit, ['check', `--config=${config}`], { cwd: root })
    t.match(checked.stdout + checked.stderr, /Everything's fine/)
  })
}

/**
 * The PostgreSQL tables (schema/pg, schema/pg-migrations) against the same check, and against the SQLite tables: the
 * same tables, columns (nullable alike) and indexes by name, so that a column added to one dialect only fails here.
 * PostgreSQL's own search structures are the only names of one side alone.
 */
t.test('PostgreSQL: drizzle-kit generate finds nothing to migrate, and check passes', async (t) => {
  const dir = tempDir(t)
  const out = path.join(dir, 'migrations')
  fs.cpSync(path.join(root, 'schema/pg-migrations'), out, { recursive: true })
  const config = path.join(dir, 'drizzle.config.mjs')
  fs.writeFileSync(config, `export default ${JSON.stringify({
    dialect: 'postgresql', schema: './schema/pg/*.ts', out: path.relative(root, out)
  })}\n`)
  const before = fs.readdirSync(out).sort()
  const generated = await run(drizzleKit, ['generate', `--config=${config}`], { cwd: root })
  const said = generated.stdout + generated.stderr
  t.same(fs.readdirSync(out).sort(), before, 'schema/pg and schema/pg-migrations agree (else: npm run db:generate)',
    { said })
  t.match(said, /No schema changes/)
  const checked = await run(drizzleKit, ['check', `--config=${config}`], { cwd: root })
  t.match(checked.stdout + checked.stderr, /Everything's fine/)
})

t.test('the PostgreSQL tables have the SQLite tables\' names, columns and indexes', async (t) => {
  const pgOnly = new Set(['knowledge_passages.words', 'knowledge_passages.knowledge_passages_trgm_idx',
    'knowledge_passages.knowledge_passages_words_idx'])
  const describe = (configs: { name: string; columns: { name: string; notNull: boolean; isUnique: boolean;
    uniqueName?: string }[]; indexes: { config: { name?: string } }[] }[]) => {
    const names = new Map<string, string[]>()
    for (const table of configs) {
      names.set(table.name, [
        ...table.columns.map((c) => `${c.name}${c.notNull ? ' not null' : ''}`),
        ...table.columns.filter((c) => c.isUnique).map((c) => `unique ${c.uniqueName}`),
        ...table.indexes.map((i) => `index ${i.config.name}`)
      ].filter((name) => !pgOnly.has(`${table.name}.${name.replace(/^index |^unique | not null$/g, '')}`)).sort())
    }
    return Object.fromEntries([...names].sort(([a], [b]) => a.localeCompare(b)))
  }
  const tablesOf = <T>(modules: Record<string, unknown>[], isTable: (v: unknown) => v is T) =>
    modules.flatMap((m) => Object.values(m).filter(isTable))
  const sqlite = tablesOf([sqliteTables, outboxTables], (v): v is SQLiteTable => is(v, SQLiteTable))
  const postgres = tablesOf([pgTables], (v): v is PgTable => is(v, PgTable))
  const sqliteNames = describe(sqlite.map((table) => getSqliteConfig(table)))
  const pgNames = describe(postgres.map((table) => getPgConfig(table)))
  t.ok(Object.keys(sqliteNames).length >= 30, 'every table of both files')
  t.same(pgNames, sqliteNames)
})
