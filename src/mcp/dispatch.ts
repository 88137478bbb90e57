import type { FastifyInstance, FastifyRequest } from 'fastify'

/** Headers that say who calls and where: a tool call carries exactly these to the route it stands for. */
const FORWARDED = ['authorization', 'x-api-key', 'x-service-key', 'x-workspace-id'] as const

export interface RouteCall {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'
  url: string
  query?: Record<string, unknown>
  payload?: unknown
  headers?: Record<string, string>
}

export interface RouteAnswer {
  statusCode: number
  body: Record<string, unknown>
  headers: Record<string, string | string[] | number | undefined>
}

export type Dispatch = (call: RouteCall) => Promise<RouteAnswer>

/** A query value as text: an object or array as its JSON (the route's schema refuses it), never a throw. */
const queryText = (v: unknown) => typeof v === 'object' ? JSON.stringify(v) : String(v)

/**
 * Calls a route of this app in-process, as the caller of `request`: the route's own hooks apply its
 * credential checks, capability table, workspace context, rate limit, Idempotency-Key and developer-log entry.
 */
export function dispatcherFor(app: FastifyInstance, request: FastifyRequest): Dispatch {
  const headers: Record<string, string> = { 'user-agent': 'cairn-mcp' }
  for (const name of FORWARDED) {
    const value = request.headers[name]
    if (typeof value === 'string') headers[name] = value
  }
  return async (call) => {
    const search = new URLSearchParams()
    for (const [k, v] of Object.entries(call.query ?? {})) {
      if (v !== undefined && v !== null) search.set(k, queryText(v))
    }
    const qs = search.toString()
    const res = await app.inject({
      method: call.method,
      url: qs ? `${call.url}?${qs}` : call.url,
      headers: { ...headers, ...call.headers },
      ...(call.payload === undefined ? {} : { payload: call.payload as string })
    })
    let body: Record<string, unknown>
    try {
      const parsed = JSON.parse(res.body) as unknown
      body = parsed !== null && typeof parsed === 'object' ? parsed as Record<string, unknown> : { value: parsed }
    } catch {
      body = { text: res.body }
    }
    return { statusCode: res.statusCode, body, headers: res.headers }
  }
}
