import fp from 'fastify-plugin'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { routeAction, routeGroup } from '../http/route-group.js'
import { encodeEntry, type EntryAt } from './format.js'
import { afterWriteTurn, writeTurn } from '../db/write-intent.js'
import { diskFullPause, isDiskFull } from '../db/disk-full.js'
import { HttpError } from '../http/errors.js'
import { and, eq, isNull, lt, or, sql } from 'drizzle-orm'
import { apiKeys } from '../../schema/tables/api-keys.js'
import { developerLogChunks, keyUsageDaily } from '../../schema/tables/developer.js'

export interface DevLogEntry {
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
/** a chunk's serialised entries stay under this many characters (unless one entry alone is larger) */
const CHUNK_BYTES = 1 << 20
/**
 * the largest entry the log takes, metadata included (JSON, UTF-8 bytes): a larger one posted to the activity log
 * answers 413. A log is for events, not for documents.
 */
export const MAX_ENTRY_BYTES = 64 * 1024
/** entries kept in memory while the disk is full (the newest; older ones are dropped and counted) */
const MAX_KEPT = 1000
/** chunks an organization's log loses at a time when it is over its quota (the oldest first) */
const TRIM_BATCH = 50

/**
 * An entry waiting for the next batch, in epoch ms (its ISO time is made when it is read), with the user and key
 * it is filed under. A request entry has no id: its place in the log is its id (format.ts, placeId).
 */
type Queued = EntryAt & {
  userId: string
  apiKeyId: string | null
}

/** bytes, roughly, that an entry's metadata adds to its chunk */
function metadataBytes(metadata: unknown): number {
  if (metadata === undefined || metadata === null) return 0
  return Buffer.byteLength(JSON.stringify(metadata))
}

/**
 * Records every request made with an API key into the developer log and key_usage_daily.
 * Entries are buffered and written in one transaction per batch, off the request's path: one
 * developer_log_chunks row per user and key in the batch, plus one usage row per key and day.
 *
 * Bounded: an entry holds at most MAX_ENTRY_BYTES, and an organization's log at most its quota
 * (config.quotas.developerLogBytes): past it, its oldest chunks go. A batch that finds the disk full stays in
 * memory (the newest MAX_KEPT entries) and is written once there is space again.
 */
async function requestLogPlugin(app: FastifyInstance) {
  const sqlite = app.sqlite
  const quota = app.config.quotas.developerLogBytes
  const p = sql.placeholder
  const insertChunk = app.db.insert(developerLogChunks).values({
    userId: p('userId'), apiKeyId: p('apiKeyId'), categories: p('categories'), firstAt: p('firstAt'),
    lastAt: p('lastAt'),
    count: p('count'), entries: p('entries')
  }).prepare()
  const bumpUsage = app.db.insert(keyUsageDaily).values({ keyId: p('keyId'), day: p('day'), count: p('count') })
    .onConflictDoUpdate({ target: [keyUsageDaily.keyId, keyUsageDaily.day],
      set: { count: sql`${keyUsageDaily.count} + excluded.count` } })
    .prepare()
  const touchKey = app.db.update(apiKeys).set({ lastUsedAt: sql`${p('at')}` })
    .where(and(eq(apiKeys.id, p('keyId')), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, p('at'))))).prepare()

  // an organization's log, in bytes, and its oldest chunks: through the user index (a user is in one organization)
  const ofOrganization = `user_id IN (SELECT id FROM users WHERE customer_id = ?)`
  const logBytes = sqlite.prepare(`SELECT coalesce(sum(octet_length(entries)), 0) FROM developer_log_chunks
    WHERE ${ofOrganization}`).pluck()
  const oldestChunks = sqlite.prepare(`SELECT seq, octet_length(entries) AS bytes FROM developer_log_chunks
    WHERE ${ofOrganization} ORDER BY seq LIMIT ${TRIM_BATCH}`)
  const removeChunk = sqlite.prepare('DELETE FROM developer_log_chunks WHERE seq = ?')
  const organizationOf = sqlite.prepare('SELECT customer_id FROM users WHERE id = ?').pluck()
  /** user → organization, as read (users never change organization) */
  const organizations = new Map<string, string | undefined>()
  const orgOf = (userId: string) => {
    if (!organizations.has(userId)) {
      if (organizations.size > 10_000) organizations.clear()
      organizations.set(userId, organizationOf.get(userId) as string | undefined)
    }
    return organizations.get(userId)
  }
  /** organization → its log's bytes, as last counted and added to since (counted again before anything is removed) */
  const orgBytes = new Map<string, number>()
  const trimming = new Set<string>()
  const pause = diskFullPause(app.log, 'the developer log')
  let dropped = 0

  let buffer: Queued[] = []
  /** per key, per UTC day: requests in `buffer`, so usage reads are exact without forcing a write */
  let pending = new Map<string, Map<string, number>>()
  let timer: NodeJS.Timeout | undefined
  const stamp = createTimestamps()

  const writeBatch = sqlite.transaction((entries: Queued[]) => {
    /** per organization, the bytes its chunks took */
    const written = new Map<string, number>()
    // one chunk per key (or, without a key, per user), its entries in the order they were made
    const chunks = new Map<string, Queued[]>()
    for (const e of entries) {
      const k = e.apiKeyId ?? `user ${e.userId}`
      const chunk = chunks.get(k)
      if (chunk) chunk.push(e)
      else chunks.set(k, [e])
    }
    for (const group of chunks.values()) {
      const { userId, apiKeyId } = group[0]
      // entries are serialised one by one so that a chunk stays under CHUNK_BYTES (activity metadata can be large);
      // each against the one before it in its chunk (format.ts)
      let parts: string[] = []
      let bytes = 0
      let categories = new Set<string>()
      let first: Queued | undefined
      let previous: Queued | undefined
      const perDay = new Map<string, number>()
      const org = quota > 0 ? orgOf(userId) : undefined
      const write = () => {
        if (org !== undefined) written.set(org, (written.get(org) ?? 0) + bytes)
        insertChunk.run({
          userId, apiKeyId, categories: `,${[...categories].join(',')},`, firstAt: stamp.iso(first!.at),
          lastAt: stamp.iso(previous!.at), count: parts.length, entries: `[${parts.join(',')}]`
        })
        parts = []
        bytes = 0
        categories = new Set()
        first = undefined
        previous = undefined
      }
      for (const e of group) {
        let json = JSON.stringify(encodeEntry(e, previous))
        if (parts.length > 0 && bytes + json.length > CHUNK_BYTES) {
          write()
          json = JSON.stringify(encodeEntry(e))
        }
        first ??= e
        parts.push(json)
        bytes += json.length + 1
        categories.add(e.category)
        previous = e
        const day = stamp.day(e.at)
        perDay.set(day, (perDay.get(day) ?? 0) + 1)
      }
      const lastAt = stamp.iso(previous!.at)
      write()
      if (apiKeyId) {
        for (const [day, n] of perDay) bumpUsage.run({ keyId: apiKeyId, day, count: n })
        touchKey.run({ at: lastAt, keyId: apiKeyId })
      }
    }
    return written
  }).immediate

  /** the organizations whose log is past the quota after a batch: their oldest chunks go, a batch a turn */
  function account(written: Map<string, number>) {
    for (const [org, bytes] of written) {
      const total = orgBytes.has(org) ? orgBytes.get(org)! + bytes : logBytes.get(org) as number
      orgBytes.set(org, total)
      if (total > quota && !trimming.has(org)) {
        trimming.add(org)
        void trim(org).finally(() => trimming.delete(org))
      }
    }
  }

  async function trim(org: string) {
    try {
      let total = logBytes.get(org) as number
      let removed = 0
      while (total > quota && sqlite.open) {
        const turn = writeTurn(sqlite)
        if (turn) await turn
        if (!sqlite.open) return
        const oldest = oldestChunks.all(org) as Array<{ seq: number; bytes: number }>
        if (oldest.length === 0) break
        sqlite.transaction(() => {
          for (const c of oldest) {
            if (total <= quota) break
            removeChunk.run(c.seq)
            total -= c.bytes
            removed++
          }
        }).immediate()
        await new Promise((resolve) => setImmediate(resolve))
      }
      orgBytes.set(org, total)
      if (removed > 0) {
        app.log.info({ organizationId: org, chunks: removed }, 'developer log over its quota: oldest entries removed')
      }
    } catch (err) {
      orgBytes.delete(org)
      app.log.error({ err, organizationId: org }, 'developer log: could not remove entries past the quota')
    }
  }

  function flush() {
    if (timer) { clearTimeout(timer); timer = undefined }
    if (buffer.length === 0 || !sqlite.open) return
    const entries = buffer
    buffer = []
    let written: Map<string, number>
    try {
      written = writeBatch(entries)
    } catch (err) {
      if (!isDiskFull(err)) {
        pending = new Map()
        app.log.error({ err, entries: entries.length }, 'could not write developer log batch')
        return
      }
      // kept for the next try, once there is space (the newest only: memory is not a second disk)
      buffer = keep(entries)
      const wait = pause.failed(err)
      timer = setTimeout(flushInTurn, wait)
      timer.unref()
      return
    }
    pending = new Map()
    pause.succeeded()
    if (dropped > 0) {
      app.log.warn({ entries: dropped }, 'developer log entries dropped while the disk was full')
      dropped = 0
    }
    if (quota > 0) account(written)
  }

  /** the newest MAX_KEPT of `entries`, the others counted as dropped (and no longer in the pending usage) */
  function keep(entries: Queued[]): Queued[] {
    if (entries.length <= MAX_KEPT) return entries
    dropped += entries.length - MAX_KEPT
    const kept = entries.slice(-MAX_KEPT)
    pending = new Map()
    for (const e of kept) countPending(e)
    return kept
  }

  /** a batch's flush after another thread's writer has let go of the lock, the event loop free meanwhile */
  const flushInTurn = () => {
    // while the disk is full, the batch waits for its retry (flush() itself, at shutdown, tries anyway)
    const left = pause.left()
    if (left > 0) {
      if (timer) clearTimeout(timer)
      timer = setTimeout(flushInTurn, left)
      timer.unref()
      return
    }
    afterWriteTurn(sqlite, flush)
  }

  function countPending(e: Queued) {
    if (!e.apiKeyId) return
    let days = pending.get(e.apiKeyId)
    if (!days) pending.set(e.apiKeyId, (days = new Map()))
    const day = stamp.day(e.at)
    days.set(day, (days.get(day) ?? 0) + 1)
  }

  function queue(e: Queued) {
    buffer.push(e)
    countPending(e)
    if (pause.paused && buffer.length > MAX_KEPT) buffer = keep(buffer)
    if (buffer.length === FLUSH_AT) setImmediate(flushInTurn) // once: the flush empties the buffer
    else if (!timer) { timer = setTimeout(flushInTurn, FLUSH_EVERY_MS); timer.unref() }
  }

  const devLog: DevLog = {
    record(entry) {
      const bytes = metadataBytes(entry.metadata)
      if (bytes > MAX_ENTRY_BYTES) {
        throw new HttpError(413, `A developer-log entry's metadata holds at most ${MAX_ENTRY_BYTES / 1024} KB ` +
          `(this one: ${Math.ceil(bytes / 1024)} KB)`, 'PAYLOAD_TOO_LARGE')
      }
      const id = randomUUID()
      const at = Date.now()
      queue({
        id, userId: entry.userId, apiKeyId: entry.apiKeyId, category: entry.category, action: entry.action,
        method: entry.method ?? null,
        path: entry.path ?? null, statusCode: entry.statusCode, durationMs: entry.durationMs, metadata: entry.metadata,
        at
      })
      return { id, createdAt: stamp.iso(at) }
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
    if (!route.config?.action && methods.length === 1) {
      route.config = { ...route.config, action: routeAction(methods[0], route.url) }
    }
  })

  // a callback hook, not an async one: it runs on every request and needs no promise
  app.addHook('onResponse', (request, reply, done) => {
    const p = request.principal
    const config = p?.apiKey && !request.skipRequestLog ? request.routeOptions.config : undefined
    if (p?.apiKey && config?.url !== undefined) {
      const q = request.url.indexOf('?')
      queue({
        id: null, userId: p.userId, apiKeyId: p.apiKey.id, category: config.group ?? routeGroup(config.url),
        action: config.action ?? routeAction(request.method, config.url), method: request.method,
        path: q < 0 ? request.url : request.url.slice(0, q), statusCode: reply.statusCode,
        durationMs: Math.round(reply.elapsedTime),
        metadata: undefined, at: Date.now()
      })
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
