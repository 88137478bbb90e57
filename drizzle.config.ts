import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'sqlite',
  schema: './schema/tables/*.ts',
  out: './schema/migrations'
})
