// The PostgreSQL tables (CAIRN_DATABASE_URL): schema/tables and schema/outbox written in drizzle pg-core, table for
// table and column for column (test/db/migrations.test.ts compares the names). The same representations as in
// SQLite, so that domain code reads the same values from either: times as ISO text or epoch-ms integers, JSON as
// text (jsonb would hand back parsed objects and rewrite webhook bodies that must keep their bytes), SQLite's
// 64-bit integers as bigint read as numbers, REAL as double precision, 0/1 flags as boolean. Migrations:
// schema/pg-migrations (`npm run db:generate`), applied by src/db/postgres.ts.
export * from './accounts.js'
export * from './api-keys.js'
export * from './developer.js'
export * from './idempotency.js'
export * from './jobs.js'
export * from './artifacts.js'
export * from './knowledge.js'
export * from './webhooks.js'
export * from './voice-notes.js'
export * from './assistant.js'
export * from './workspace-events.js'
export * from './outbox.js'
