import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { RateLimits } from '../config.js'
import { routeGroup } from './route-group.js'
import { HttpError } from './errors.js'

/** The limit (requests per minute) of a route group; 0 means unlimited. */
export function limitFor(limits: RateLimits, group: string): number {
  switch (group) {
    case 'knowledge': return limits.knowledge
    case 'voice_notes': return limits.voiceNotes
    case 'artifacts': return limits.artifacts
    default: return limits.default
  }
}

const UNLIMITED_ROUTES = new Set(['/api/knowledge/health', '/api/health', '/metrics'])

/**
 * Whose budget a request spends: its user's (every API key and session of a person share one budget, so more keys
 * never buy more requests), else its client address (behind a proxy, the one CAIRN_TRUST_PROXY lets it name).
 */
export function rateLimitKey(request: FastifyRequest): string {
  const p = request.principal
  return p ? `user:${p.userId}` : `ip:${request.ip}`
}

/**
 * Per route group and user, else client address (rateLimitKey). Runs after credentials are resolved:
 * its hook is route-level, the auth hook instance-level.
 */
async function rateLimitPlugin(app: FastifyInstance, opts: { limits: RateLimits }) {
  const unlimited = (url: string) => UNLIMITED_ROUTES.has(url) || url.startsWith('/api/docs') ||
    limitFor(opts.limits, routeGroup(url)) === 0
  // decided once per route, before the plugin below sees it: unlimited routes carry no rate-limit hook at all
  app.addHook('onRoute', (route) => {
    if (unlimited(route.url)) route.config = { ...route.config, rateLimit: false }
  })
  await app.register(rateLimit, {
    global: true,
    timeWindow: 60_000,
    max: (request) => limitFor(opts.limits,
      request.routeOptions.config.group ?? routeGroup(request.routeOptions.config.url)),
    keyGenerator: (request) =>
      `${request.routeOptions.config.group ?? routeGroup(request.routeOptions.config.url)}|${rateLimitKey(request)}`,
    errorResponseBuilder: (_request, context) =>
      new HttpError(429, `Rate limit exceeded: ${context.max} requests per minute; retry in ${context.after}`,
        'RATE_LIMITED')
  })
}

export default fp(rateLimitPlugin, { name: 'cairn-rate-limit', dependencies: ['cairn-auth'] })

/** failed authentications one client address may make per window; past them its credentials wait for the next */
export const FAILED_AUTH_LIMIT = 60
const FAILED_AUTH_WINDOW_MS = 60_000
/** addresses counted at most (the oldest window forgotten first) */
const FAILED_AUTH_ADDRESSES = 100_000

/** credentials the auth plugin checks: not on public routes (a login's 401 is the login throttle's) */
const carriesCredentials = (request: FastifyRequest) => request.routeOptions.config?.auth !== 'public' &&
  (request.headers.authorization !== undefined || request.headers['x-api-key'] !== undefined ||
    request.headers['x-service-key'] !== undefined)

/**
 * Failed authentication counts against the client address: every 401 to a request that carried credentials (a bad,
 * revoked or expired key, token or service key) is counted, and once an address has made FAILED_AUTH_LIMIT of them
 * in a minute, its requests that carry credentials are refused with 429 before they are checked, until the minute
 * is over. Registered ahead of the auth plugin, so that its hook comes first. Also says once in the log when
 * requests come through a proxy that CAIRN_TRUST_PROXY does not name: every client then counts as the proxy.
 */
async function failedAuthenticationPlugin(app: FastifyInstance, opts: { trustProxy: boolean }) {
  const windows = new Map<string, { failures: number; endsAt: number }>()
  let warned = opts.trustProxy
  app.addHook('onRequest', (request, reply, done) => {
    if (!warned && request.headers['x-forwarded-for'] !== undefined) {
      warned = true
      request.log.warn({ address: request.ip }, 'requests come with X-Forwarded-For but CAIRN_TRUST_PROXY is unset: ' +
        'every client counts as the proxy\'s address for rate limits and the login throttle')
    }
    if (windows.size === 0) return done()
    const w = windows.get(request.ip)
    if (w === undefined || w.failures < FAILED_AUTH_LIMIT || !carriesCredentials(request)) return done()
    const now = Date.now()
    if (w.endsAt <= now) { windows.delete(request.ip); return done() }
    const seconds = Math.ceil((w.endsAt - now) / 1000)
    reply.header('retry-after', String(seconds))
    done(new HttpError(429, `Too many failed authentications from this address; retry in ${seconds} s`,
      'RATE_LIMITED'))
  })
  app.addHook('onResponse', (request, reply, done) => {
    if (reply.statusCode === 401 && request.principal === null && carriesCredentials(request)) {
      const now = Date.now()
      let w = windows.get(request.ip)
      if (w === undefined || w.endsAt <= now) {
        windows.delete(request.ip)
        if (windows.size >= FAILED_AUTH_ADDRESSES) windows.delete(windows.keys().next().value!)
        windows.set(request.ip, w = { failures: 0, endsAt: now + FAILED_AUTH_WINDOW_MS })
      }
      w.failures++
    }
    done()
  })
}

export const failedAuthentications = fp(failedAuthenticationPlugin, { name: 'cairn-failed-authentications' })
