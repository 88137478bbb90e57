import { defineConfig } from 'drizzle-kit'

// the outbox file's tables (schema/outbox/tables.ts, src/db/outbox-file.ts): `npm run db:generate`
export default defineConfig({
  dialect: 'sqlite',
  schema: './schema/outbox/*.ts',
  out: './schema/outbox-migrations'
})
