import Database from 'better-sqlite3'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import { sql, fillPlaceholders } from 'drizzle-orm'
import { randomUUID } from 'node:crypto'
import { jobs } from '../schema/tables/jobs.js'
const sqlite = new Database(':memory:')
sqlite.exec(`CREATE TABLE jobs (id text primary key, type text not null, payload text not null, status text not null, attempts integer not null default 0, max_attempts integer not null, run_at integer not null, last_error text, created_at text not null, updated_at text not null)`)
const db = drizzle(sqlite)
const p = sql.placeholder
const q = db.insert(jobs).values({
    id: p('id'), type: p('type'), payload: p('payload'), status: 'queued', attempts: 0,
    maxAttempts: p('maxAttempts'), runAt: p('runAt'), createdAt: p('now'), updatedAt: p('now')
  }).prepare()

const raw = sqlite.prepare(`INSERT INTO jobs (id, type, payload, status, attempts, max_attempts, run_at, created_at, updated_at) VALUES (?, ?, ?, 'queued', 0, ?, ?, ?, ?)`)
const rawSame = sqlite.prepare((q as any).query.sql)
const params = (q as any).query.params
console.log(params.map((x: any) => x?.constructor?.name))
const N = 10000
const fns: Record<string, () => void> = {
  drizzle: () => { const now = new Date().toISOString(); q.run({ id: randomUUID(), type: 't', payload: '{}', maxAttempts: 5, runAt: Date.now(), now }) },
  sameSql: () => { const now = new Date().toISOString(); rawSame.run(randomUUID(), 't', '{}', 'queued', 0, 5, Date.now(), now, now) },
  fill: () => { const now = new Date().toISOString(); fillPlaceholders(params, { id: randomUUID(), type: 't', payload: '{}', maxAttempts: 5, runAt: Date.now(), now }) },
  raw: () => { const now = new Date().toISOString(); raw.run(randomUUID(), 't', '{}', 5, Date.now(), now, now) },
}
const res: Record<string, number[]> = {}
for (let r = 0; r < 20; r++) for (const [k, f] of Object.entries(fns)) {
  const t = process.hrtime.bigint(); for (let i = 0; i < N; i++) f(); const us = Number(process.hrtime.bigint() - t) / 1000 / N
  ;(res[k] ??= []).push(us); sqlite.exec('DELETE FROM jobs')
}
for (const [k, v] of Object.entries(res)) { v.sort((a, b) => a - b); console.log(k, v.map(x => x.toFixed(2)).join(' ')) }
