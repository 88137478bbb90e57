import Database from 'better-sqlite3'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import { eq } from 'drizzle-orm'
import { jobs } from '../schema/tables/jobs.js'
const db = drizzle(new Database(':memory:'))
console.log(db.select().from(jobs).where(eq(jobs.id, 'x')).limit(50).toSQL())
console.log(db.update(jobs).set({ lastError: null, runAt: undefined }).where(eq(jobs.id, 'x')).toSQL())
