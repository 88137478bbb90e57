declare module 'fastify' {
  interface FastifyContextConfig {
    /** the route's group (set at registration by buildApp): its rate limit and its developer-log category */
    group?: string
  }
}

/** The route group of a route URL: the unit of rate limits and the `category` of developer logs. */
export function routeGroup(url: string | undefined): string {
  if (!url) return 'other'
  if (url.startsWith('/api/knowledge-graph')) return 'knowledge_graph'
  if (url.startsWith('/api/knowledge')) return 'knowledge'
  if (url.startsWith('/api/v2/developer/webhooks')) return 'webhooks'
  if (url.startsWith('/api/v2/developer')) return 'developer'
  const m = /^\/api\/v2\/([^/]+)/.exec(url)
  if (m) return m[1].replace(/-/g, '_')
  return 'other'
}

/** The default `action` of a route: group plus its last fixed path segment, e.g. `knowledge.search`. */
export function routeAction(method: string, url: string | undefined): string {
  const group = routeGroup(url)
  const parts = (url ?? '').split('/').filter((p) => p && !p.startsWith(':'))
  const last = parts[parts.length - 1] ?? 'root'
  return `${group}.${method.toLowerCase()}_${last.replace(/-/g, '_')}`
}
