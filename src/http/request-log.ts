import fp from 'fastify-plugin'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { routeAction, routeGroup } from './route-group.js'

export interface DevLogEntry {
  customerId: string
  userId: string
  apiKeyId: string | null
  category: string
  action: string
  method?: string
  path?: string
  statusCode: number
  durationMs: number
  metadata?: unknown
}

export interface DevLog {
  /** queue an entry; written with the next batch. Returns the entry's id and timestamp. */
  record(entry: DevLogEntry): { id: string; createdAt: string }
  /** write everything queued now (tests, shutdown) */
  flush(): void
  /** requests by this key still waiting in the buffer, per UTC day (YYYY-MM-DD) */
  pendingUsage(keyId: string): Map<string, number>
}

declare module 'fastify' {
  interface FastifyInstance {
    devLog: DevLog
  }
  interface FastifyRequest {
    /** set by a route that records its own developer-log entry instead of the request entry */
    skipRequestLog: boolean
  }
}

const FLUSH_EVERY_MS = 250
const FLUSH_AT = 500

/**
 * Records every request made with an API key into developer_logs and key_usage_daily.
 * Entries are buffered and written in one transaction per batch, off the request's path.
 */
async function requestLogPlugin(app: FastifyInstance) {
  const sqlite = app.sqlite
  const insertLog = sqlite.prepare(
    `INSERT INTO developer_logs (id, customer_id, user_id, api_key_id, category, action, method, path, status_code, duration_ms, metadata, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
  )
  const bumpUsage = sqlite.prepare(
    `INSERT INTO key_usage_daily (key_id, day, count) VALUES (?, ?, ?)
     ON CONFLICT (key_id, day) DO UPDATE SET count = count + excluded.count`
  )
  const touchKey = sqlite.prepare(`UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`)

  /**
   * A queued entry, in the column order of insertLog (positional parameters bind faster than named ones).
   * The id and created_at of a request entry are filled in by the batch: on the request's path they cost
   * more than the rest of the entry together, and nobody reads them before the batch.
   */
  type Row = [
    id: string | null, customerId: string, userId: string, apiKeyId: string | null, category: string, action: string,
    method: string | null, path: string | null, statusCode: number, durationMs: number, metadata: string | null,
    createdAt: string | null, at: number
  ]
  let buffer: Row[] = []
  /** per key, per UTC day: requests in `buffer`, so usage reads are exact without forcing a write */
  let pending = new Map<string, Map<string, number>>()
  let timer: NodeJS.Timeout | undefined
  const stamp = createTimestamps()

  const writeBatch = sqlite.transaction((rows: Row[]) => {
    const usage = new Map<string, number>()
    const lastUsed = new Map<string, string>()
    for (const row of rows) {
      const at = row.pop() as number // the statement binds the first twelve
      row[0] ??= randomUUID()
      const createdAt = (row[11] ??= stamp.iso(at))
      insertLog.run(row)
      const keyId = row[3]
      if (keyId) {
        const k = `${keyId} ${createdAt.slice(0, 10)}`
        usage.set(k, (usage.get(k) ?? 0) + 1)
        const prev = lastUsed.get(keyId)
        if (!prev || prev < createdAt) lastUsed.set(keyId, createdAt)
      }
    }
    for (const [k, n] of usage) {
      const [keyId, day] = k.split(' ')
      bumpUsage.run(keyId, day, n)
    }
    for (const [keyId, at] of lastUsed) touchKey.run(at, keyId, at)
  }).immediate

  function flush() {
    if (timer) { clearTimeout(timer); timer = undefined }
    if (buffer.length === 0 || !sqlite.open) return
    const rows = buffer
    buffer = []
    pending = new Map()
    try {
      writeBatch(rows)
    } catch (err) {
      app.log.error({ err, entries: rows.length }, 'could not write developer log batch')
    }
  }

  function queue(row: Row) {
    buffer.push(row)
    const keyId = row[3]
    if (keyId) {
      let days = pending.get(keyId)
      if (!days) pending.set(keyId, (days = new Map()))
      const day = row[11] === null ? stamp.day(row[12]) : row[11].slice(0, 10)
      days.set(day, (days.get(day) ?? 0) + 1)
    }
    if (buffer.length >= FLUSH_AT) setImmediate(flush)
    else if (!timer) { timer = setTimeout(flush, FLUSH_EVERY_MS); timer.unref() }
  }

  const devLog: DevLog = {
    record(entry) {
      const id = randomUUID()
      const at = Date.now()
      const createdAt = stamp.iso(at)
      queue([
        id, entry.customerId, entry.userId, entry.apiKeyId, entry.category, entry.action, entry.method ?? null, entry.path ?? null,
        entry.statusCode, entry.durationMs, entry.metadata === undefined ? null : JSON.stringify(entry.metadata), createdAt, at
      ])
      return { id, createdAt }
    },
    flush,
    pendingUsage(keyId) {
      return pending.get(keyId) ?? new Map()
    }
  }

  app.decorate('devLog', devLog)
  app.decorateRequest('skipRequestLog', false)

  // each route's action, worked out once (the request hook below reads it)
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat()
    if (!route.config?.action && methods.length === 1) route.config = { ...route.config, action: routeAction(methods[0], route.url) }
  })

  // a callback hook, not an async one: it runs on every request and needs no promise
  app.addHook('onResponse', (request, reply, done) => {
    const p = request.principal
    const config = p?.apiKey && !request.skipRequestLog ? request.routeOptions.config : undefined
    if (p?.apiKey && config?.url !== undefined) {
      const q = request.url.indexOf('?')
      queue([
        null, p.customerId, p.userId, p.apiKey.id, config.group ?? routeGroup(config.url), config.action ?? routeAction(request.method, config.url),
        request.method, q < 0 ? request.url : request.url.slice(0, q), reply.statusCode, Math.round(reply.elapsedTime), null, null, Date.now()
      ])
    }
    done()
  })
  // onClose hooks run in reverse registration order: this one after in-flight requests, before the database closes
  app.addHook('onClose', async () => flush())
}

const DAY_MS = 86_400_000

/**
 * ISO 8601 timestamps and UTC day labels of epoch milliseconds, remembering the last one of each: entries come
 * in bursts within the same millisecond and day, and `Date#toISOString` is slow next to a comparison.
 */
export function createTimestamps() {
  let lastMs = NaN
  let lastIso = ''
  let dayStart = NaN
  let dayLabel = ''
  return {
    iso(ms: number): string {
      if (ms !== lastMs) { lastMs = ms; lastIso = new Date(ms).toISOString() }
      return lastIso
    },
    day(ms: number): string {
      if (!(ms >= dayStart && ms < dayStart + DAY_MS)) {
        dayStart = ms - (ms % DAY_MS)
        dayLabel = new Date(dayStart).toISOString().slice(0, 10)
      }
      return dayLabel
    }
  }
}

export default fp(requestLogPlugin, { name: 'cairn-request-log', dependencies: ['cairn-db', 'cairn-auth'] })
