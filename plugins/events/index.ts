import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { FastifySSEPlugin } from 'fastify-sse-v2'
import { StreamQuery } from '../../schema/api/events.js'
import { errors } from '../../schema/api/common.js'
import { requirePrincipal, requireWorkspaceContext } from '../../src/auth/plugin.js'
import type { StoredStreamEvent } from '../../src/events/workspace-stream.js'

/** events read from the log at a time */
const PAGE = 200
/** how often an open stream checks that its credential and membership still stand (from memory: cheap) */
const CREDENTIAL_CHECK_MS = 1000

/**
 * The workspace event stream (docs/api/events.md): Server-Sent Events of the workspace's changes that the caller may
 * read, each with the id of its row in the event log; a reconnect with Last-Event-ID resumes after it, or receives
 * one `reset` when the events after it are no longer kept. Not webhook events.
 */
const eventStream: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(FastifySSEPlugin, { retryDelay: false })
  const log = app.workspaceEvents
  const channels = app.channelStore
  const heartbeatMs = app.config.eventStreamHeartbeatMs
  /** the open streams' ends: a closing server ends them (an open stream would hold its close) */
  const open = new Set<() => void>()
  app.addHook('preClose', async () => { for (const end of [...open]) end() })

  app.get('/stream', {
    config: { action: 'events.stream' },
    schema: {
      tags: ['events'],
      summary: 'The workspace\'s changes as Server-Sent Events (artifact.*, document.indexed, voice_note.updated, ' +
        'message.created, workflow_run.updated); Last-Event-ID resumes, `reset` says what was missed is gone',
      querystring: StreamQuery,
      response: { ...errors(400, 403) }
    }
  }, async (request, reply) => {
    const p = requirePrincipal(request)
    const ws = requireWorkspaceContext(request, request.query.workspace_id, 'workspace_id')
    // an API key (artifacts:read) hears of artifacts only
    const artifactsOnly = p.kind === 'apiKey'
    const visible = (row: StoredStreamEvent) => {
      if (artifactsOnly && !row.name.startsWith('artifact.')) return false
      if (row.userId !== null && row.userId !== p.userId) return false
      if (row.channelId !== null && !channels.find(p, row.channelId)) return false
      return true
    }

    const last = request.headers['last-event-id']
    const lastText = Array.isArray(last) ? last[0] : last
    let cursor = log.lastId()
    let reset = false
    if (lastText !== undefined && lastText.trim() !== '') {
      const n = /^\d{1,15}$/.test(lastText.trim()) ? Number(lastText.trim()) : NaN
      if (log.resumable(n)) cursor = n
      else reset = true
    }

    // proxies (nginx) must pass each event on at once, not buffer the stream
    reply.header('x-accel-buffering', 'no')
    let closed = false
    const send = (message: { id?: string; event?: string; data?: string; comment?: string }) => {
      if (!closed && !reply.raw.destroyed) reply.sse(message)
    }
    send({ comment: ' connected' })
    if (reset) {
      send({ id: String(cursor), event: 'reset',
        data: JSON.stringify({ id: String(cursor), workspace_id: ws.id, at: new Date().toISOString() }) })
    }
    const drain = () => {
      for (;;) {
        if (closed) return
        const rows = log.after(p.customerId, ws.id, cursor, PAGE)
        for (const row of rows) {
          cursor = row.id
          if (!visible(row)) continue
          send({ id: String(row.id), event: row.name, data: JSON.stringify({ ...JSON.parse(row.data) as object,
            workspace_id: ws.id, at: row.createdAt }) })
        }
        if (rows.length < PAGE) return
      }
    }
    drain()
    const unsubscribe = log.subscribe(drain)
    const heartbeat = setInterval(() => send({ comment: ' keep-alive' }), heartbeatMs)
    // a signed-out session, a revoked key or a membership removed ends the stream; its reconnect is refused
    const check = setInterval(() => {
      try {
        const now = app.principalOf(request)
        if (now?.userId !== p.userId) end()
        else app.workspaceFor(now, ws.id)
      } catch {
        end()
      }
    }, CREDENTIAL_CHECK_MS)
    const end = () => {
      if (closed) return
      closed = true
      open.delete(end)
      unsubscribe()
      clearInterval(heartbeat)
      clearInterval(check)
      reply.sseContext?.source.end()
    }
    open.add(end)
    reply.raw.on('close', end)
  })
}

export default eventStream
