import { defineConfig } from 'drizzle-kit'

// the PostgreSQL tables (schema/pg, src/db/postgres.ts): `npm run db:generate`
export default defineConfig({
  dialect: 'postgresql',
  schema: './schema/pg/*.ts',
  out: './schema/pg-migrations'
})
