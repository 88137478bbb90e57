import { randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import type { FastifyRequest } from 'fastify'
import { and, eq, lt, sql } from 'drizzle-orm'
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3'
import { sessions } from '../../schema/tables/accounts.js'
import { createTableCache } from '../db/table-cache.js'
import { forbidden } from '../http/errors.js'

/**
 * Sign-in sessions and the console's cookie (docs/console.md#signing-in).
 *
 * Every token that login and sign-up hand out names a session (`sid`). A browser that signs in with
 * `cookie: true` gets that token in an HttpOnly, SameSite=Strict cookie (Secure over https) that page scripts
 * cannot read. Ending a session (`POST /api/v2/auth/logout`) refuses its token from then on, wherever it was
 * copied. A request carried by the cookie that changes something must also send `x-cairn-csrf: 1`, which a
 * cross-site form cannot send and a cross-site script cannot send without a CORS preflight, and must not come from
 * another origin (`Origin`, `Sec-Fetch-Site`): a forged request is refused before anything else reads it.
 */

export const SESSION_COOKIE = 'cairn_session'
export const CSRF_HEADER = 'x-cairn-csrf'

/** Sessions ended or expired for longer than this are removed when a new one starts. */
const KEEP_ENDED_MS = 86_400_000

export interface SessionStore {
  /** a new session of the user, ending `ttlSeconds` from now */
  start(userId: string, ttlSeconds: number): { id: string; expiresMs: number }
  /** whether the session exists, belongs to the user, has not ended and has not expired */
  isLive(id: string, userId: string): boolean
  /** ends the session for good (a no-op for an unknown or ended one) */
  end(id: string): void
}

export function createSessionStore(sqlite: Database.Database, db: BetterSQLite3Database<Record<string, unknown>>):
SessionStore {
  const p = sql.placeholder
  const byId = db.select({ userId: sessions.userId, expiresAt: sessions.expiresAt, endedAt: sessions.endedAt })
    .from(sessions).where(eq(sessions.id, p('id'))).prepare()
  // every request of a signed-in person asks: kept in memory, emptied by any change to the table
  const cache = createTableCache(sqlite, { name: 'sessions', tables: { sessions: undefined } })

  return {
    start(userId, ttlSeconds) {
      const now = Date.now()
      const id = randomUUID()
      const expiresMs = now + ttlSeconds * 1000
      db.transaction((tx) => {
        tx.delete(sessions).where(lt(sessions.expiresAt, now - KEEP_ENDED_MS)).run()
        tx.insert(sessions).values({ id, userId, createdAt: new Date(now).toISOString(), expiresAt: expiresMs,
          endedAt: null }).run()
      })
      return { id, expiresMs }
    },
    isLive(id, userId) {
      const row = cache.get(`s:${id}`, () => byId.get({ id }))
      return row !== undefined && row.userId === userId && row.endedAt === null && row.expiresAt > Date.now()
    },
    end(id) {
      db.update(sessions).set({ endedAt: new Date().toISOString() })
        .where(and(eq(sessions.id, id), sql`${sessions.endedAt} IS NULL`)).run()
    }
  }
}

/** The session token the request's cookie holds, if any. */
export function sessionCookieToken(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie
  if (typeof header !== 'string' || !header.includes(SESSION_COOKIE)) return undefined
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue
    const value = part.slice(eq + 1).trim()
    return value === '' ? undefined : value
  }
  return undefined
}

/** Whether the browser reached the service over https (directly, or as the public URL says). */
export function secureCookies(request: FastifyRequest, publicUrl: string): boolean {
  return request.protocol === 'https' || publicUrl.startsWith('https:')
}

/** `Set-Cookie` for a session token; `maxAgeSeconds` 0 removes the cookie. */
export function sessionCookie(token: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}; HttpOnly; ` +
    `SameSite=Strict${secure ? '; Secure' : ''}`
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Refuses (403 `CSRF_REJECTED`) a state-changing request that a page of another site could have made: without
 * `x-cairn-csrf: 1`, or with an `Origin` other than this service's, or a `Sec-Fetch-Site` other than same-origin.
 * Reads (GET, HEAD) pass: SameSite=Strict keeps the cookie off cross-site ones, and CORS keeps their answers.
 */
export function checkCsrf(request: FastifyRequest, publicUrl: string): void {
  if (SAFE_METHODS.has(request.method)) return
  if (request.headers[CSRF_HEADER] !== '1') {
    throw forbidden(`A request signed in by the console's cookie must send the header ${CSRF_HEADER}: 1`,
      'CSRF_REJECTED')
  }
  const site = request.headers['sec-fetch-site']
  if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') {
    throw forbidden('A request signed in by the console\'s cookie must come from the console itself', 'CSRF_REJECTED')
  }
  const origin = request.headers.origin
  if (typeof origin === 'string' && origin !== new URL(publicUrl).origin &&
    origin !== `${request.protocol}://${request.headers.host ?? ''}`) {
    throw forbidden('A request signed in by the console\'s cookie must come from the console itself', 'CSRF_REJECTED')
  }
}
