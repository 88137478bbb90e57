import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
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
  const groupLimit = (request: FastifyRequest) => limitFor(opts.limits, routeGroup(request.routeOptions.url))
  await app.register(rateLimit, {
    global: true,
    timeWindow: 60_000,
    max: (request) => groupLimit(request),
    keyGenerator: (request) => `${routeGroup(request.routeOptions.url)}|${callerKey(request)}`,
    allowList: (request) => UNLIMITED_ROUTES.has(request.routeOptions.url ?? '') ||
      (request.routeOptions.url ?? '').startsWith('/api/docs') || groupLimit(request) === 0,
    errorResponseBuilder: (_request, context) =>
      new HttpError(429, `Rate limit exceeded: ${context.max} requests per minute; retry in ${context.after}`, 'RATE_LIMITED')
  })
}

export default fp(rateLimitPlugin, { name: 'cairn-rate-limit', dependencies: ['cairn-auth'] })
