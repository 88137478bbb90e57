import Database from 'better-sqlite3'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import { sql } from 'drizzle-orm'
import { randomUUID } from 'node:crypto'
import { jobs } from '../schema/tables/jobs.js'
import { preparedWrite } from '../src/db/prepared.js'
const sqlite = new Database(':memory:')
sqlite.exec(`CREATE TABLE jobs (id text primary key, type text not null, payload text not null, status text not null, attempts integer not null default 0, max_attempts integer not null, run_at integer not null, last_error text, created_at text not null, updated_at text not null); create index a on jobs(status, run_at); create index b on jobs(status, updated_at)`)
const db = drizzle(sqlite)
const p = sql.placeholder
const b = db.insert(jobs).values({
    id: p('id'), type: p('type'), payload: p('payload'), status: 'queued', attempts: 0,
    maxAttempts: p('maxAttempts'), runAt: p('runAt'), createdAt: p('now'), updatedAt: p('now')
  })
const q = b.prepare()
const pw = preparedWrite(sqlite, b)
const raw = sqlite.prepare(`INSERT INTO jobs (id, type, payload, status, attempts, max_attempts, run_at, created_at, updated_at) VALUES (?, ?, ?, 'queued', 0, ?, ?, ?, ?)`)
const rawSame = sqlite.prepare(pw.sql)
const N = 5000
const v = () => ({ id: randomUUID(), type: 't', payload: '{}', maxAttempts: 5, runAt: Date.now(), now: new Date().toISOString() })
const fns: Record<string, () => void> = {
  drizzle: () => { q.run(v()) },
  pw: () => { pw.run(v()) },
  sameSql: () => { const x = v(); rawSame.run(x.id, x.type, x.payload, 'queued', 0, x.maxAttempts, x.runAt, x.now, x.now) },
  raw: () => { const x = v(); raw.run(x.id, x.type, x.payload, x.maxAttempts, x.runAt, x.now, x.now) },
}
const res: Record<string, number[]> = {}
for (let r = 0; r < 30; r++) for (const [k, f] of Object.entries(fns)) {
  sqlite.exec('BEGIN')
  const t = process.cpuUsage(); for (let i = 0; i < N; i++) f(); const c = process.cpuUsage(t); const us = (c.user + c.system) / N
  sqlite.exec('COMMIT')
  ;(res[k] ??= []).push(us); sqlite.exec('DELETE FROM jobs')
}
for (const [k, v] of Object.entries(res)) { v.sort((a, b) => a - b); console.log(k, 'min', v[0].toFixed(2), 'p25', v[7].toFixed(2), 'med', v[15].toFixed(2), 'p75', v[22].toFixed(2)) }
