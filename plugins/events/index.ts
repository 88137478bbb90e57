import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { StreamQuery } from '../../schema/api/events.js'
import { errors } from '../../schema/api/common.js'
import { requirePrincipal, requireWorkspaceContext } from '../../src/auth/plugin.js'
import type { StoredStreamEvent } from '../../src/events/workspace-stream.js'

/** events read from the log at a time */
const PAGE = 200
/** how often a stream whose client is behind looks whether it has caught up */
const CATCH_UP_LOOK_MS = 50
/** how often an open stream checks that its credential and membership still stand (from memory: cheap) */
const CREDENTIAL_CHECK_MS = 1000

/** One Server-Sent Event (or a comment line) as its text. */
function sseText(message: { id?: string; event?: string; data?: string; comment?: string }): string {
  if (message.comment !== undefined) return `:${message.comment}\n\n`
  return `id: ${message.id}\nevent: ${message.event}\ndata: ${message.data}\n\n`
}

/**
 * The workspace event stream (docs/api/events.md): Server-Sent Events of the workspace's changes that the caller may
 * read, each with the id of its row in the event log; a reconnect with Last-Event-ID resumes after it, or receives
 * one `reset` when the events after it are no longer kept. Not webhook events.
 *
 * The events are written straight to the connection, never queued in the process: once `eventStreamBuffer.bytes`
 * wait unread by a slow client, the stream stops reading the log until they are taken (its place in the log is all
 * it keeps), and ends after `stallMs` without progress; the client's reconnect resumes where it stopped.
 */
const eventStream: FastifyPluginAsyncTypebox = async (app) => {
  const log = app.workspaceEvents
  const channels = app.channelStore
  const heartbeatMs = app.config.eventStreamHeartbeatMs
  const buffer = app.config.eventStreamBuffer
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
    reply.header('content-type', 'text/event-stream; charset=utf-8')
    reply.header('cache-control', 'no-cache,no-transform')
    // HEAD says what GET would answer, without opening a stream
    if (request.method === 'HEAD') return reply.code(200).send()

    const raw = reply.raw
    reply.hijack()
    raw.writeHead(200, reply.getHeaders() as Record<string, string>)
    let closed = false
    /** whether the client is behind by more than the buffer allows: the log is not read meanwhile */
    const behind = () => raw.writableNeedDrain && raw.writableLength > buffer.bytes
    const send = (message: { id?: string; event?: string; data?: string; comment?: string }) => {
      if (!closed && !raw.destroyed) raw.write(sseText(message))
    }
    send({ comment: ' connected' })
    if (reset) {
      send({ id: String(cursor), event: 'reset',
        data: JSON.stringify({ id: String(cursor), workspace_id: ws.id, at: new Date().toISOString() }) })
    }
    let stalled: NodeJS.Timeout | undefined
    /** the rest of the page read last (at most PAGE rows), sent once the client has caught up */
    let rows: StoredStreamEvent[] = []
    let full = false
    const drain = () => {
      for (;;) {
        if (closed || stalled) return
        if (rows.length === 0) {
          rows = log.after(p.customerId, ws.id, cursor, PAGE)
          full = rows.length === PAGE
        }
        while (rows.length > 0) {
          if (behind()) return waitForClient()
          const row = rows.shift()!
          cursor = row.id
          if (!visible(row)) continue
          send({ id: String(row.id), event: row.name, data: JSON.stringify({ ...JSON.parse(row.data) as object,
            workspace_id: ws.id, at: row.createdAt }) })
        }
        if (!full) return
      }
    }
    // the client has not taken what was written: go on once it has (looked at every CATCH_UP_LOOK_MS, and at the
    // socket's drain), or end the stream if it is still behind after stallMs
    const waitForClient = () => {
      const since = Date.now()
      const look = () => {
        if (closed) return
        if (behind()) {
          if (Date.now() - since >= buffer.stallMs) return end()
          stalled = setTimeout(look, Math.min(CATCH_UP_LOOK_MS, buffer.stallMs))
          return
        }
        stalled = undefined
        drain()
      }
      stalled = setTimeout(look, Math.min(CATCH_UP_LOOK_MS, buffer.stallMs))
      raw.once('drain', () => {
        if (!stalled || closed) return
        clearTimeout(stalled)
        look()
      })
    }
    drain()
    const unsubscribe = log.subscribe(drain)
    const heartbeat = setInterval(() => { if (!behind()) send({ comment: ' keep-alive' }) }, heartbeatMs)
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
      clearTimeout(stalled)
      raw.end()
    }
    open.add(end)
    raw.on('close', end)
  })
}

export default eventStream
