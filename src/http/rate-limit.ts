import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import type { RateLimits } from '../config.js'
import { routeGroup } from './route-group.js'
import { HttpError } from './errors.js'
import { callerKey } from '../auth/plugin.js'

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
 * Per route group and caller (API key, else user, else IP). Runs after credentials are resolved:
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
      `${request.routeOptions.config.group ?? routeGroup(request.routeOptions.config.url)}|${callerKey(request)}`,
    errorResponseBuilder: (_request, context) =>
      new HttpError(429, `Rate limit exceeded: ${context.max} requests per minute; retry in ${context.after}`,
        'RATE_LIMITED')
  })
}

export default fp(rateLimitPlugin, { name: 'cairn-rate-limit', dependencies: ['cairn-auth'] })
