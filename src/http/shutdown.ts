import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'

/**
 * Keep-alive during shutdown: once closing starts, every response says `Connection: close` (Node then
 * ends the socket after it) and idle sockets are closed at once, so a client holding a connection open
 * cannot keep the process waiting.
 */
async function shutdownPlugin(app: FastifyInstance) {
  let closing = false
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })
  app.addHook('preClose', (done) => {
    closing = true
    app.server.closeIdleConnections?.()
    done()
  })
}

export default fp(shutdownPlugin, { name: 'cairn-shutdown' })

/**
 * SIGTERM/SIGINT: stop accepting, let in-flight requests and the current background batch finish, and
 * close within `timeoutMs` (CAIRN_SHUTDOWN_TIMEOUT): at three quarters of it the connections still open
 * are cut, so that Fastify's close (request-log flush, WAL checkpoint, database close) can complete; if even
 * that has not finished at the limit, the database is checkpointed and closed here. Resolves to the exit code.
 */
export async function shutDown(app: FastifyInstance, timeoutMs: number): Promise<number> {
  const cut = setTimeout(() => {
    app.log.warn('shutdown: cutting the connections still open')
    app.server.closeAllConnections?.()
  }, Math.floor(timeoutMs * 0.75))
  let limit: NodeJS.Timeout | undefined
  const outcome = await Promise.race([
    app.close().then(() => 'closed' as const,
      (err: unknown) => { app.log.error({ err }, 'error during shutdown'); return 'error' as const }),
    new Promise<'timeout'>((resolve) => { limit = setTimeout(() => resolve('timeout'), timeoutMs) })
  ])
  clearTimeout(cut)
  clearTimeout(limit)
  if (outcome === 'closed') return 0
  if (outcome === 'timeout') app.log.error({ timeoutMs }, 'graceful shutdown timed out')
  try {
    app.devLog.flush()
  } catch (err) {
    app.log.error({ err }, 'request log flush at shutdown')
  }
  try {
    if (app.sqlite.open) {
      app.sqlite.pragma('wal_checkpoint(TRUNCATE)')
      app.sqlite.close()
    }
  } catch (err) {
    app.log.error({ err }, 'database close at shutdown')
  }
  return 1
}
