import type { Socket } from 'node:net'
import type { ServerOptions } from 'node:http'
import { errorBody } from './errors.js'

/** Node's own limit on the headers alone (its default), never longer than the whole request's. */
const HEADERS_TIMEOUT_MS = 60_000
/** Node's default interval between its looks at requests in progress; shorter for short timeouts */
const CHECK_EVERY_MS = 30_000

/**
 * The time budget of a request on the HTTP server: its headers and body must arrive within `requestTimeoutMs`
 * (Node answers 408 and closes the connection; a body that comes slowly or never no longer holds a connection
 * for ever). It covers receiving the request only: answers that stream (chat) or wait (the tool server's
 * wait_for_review) may take longer. There is no inactivity timeout on sockets (`connectionTimeout`): a wait for a
 * model's or a person's answer sends nothing for a while. Idle keep-alive connections close after Fastify's
 * `keepAliveTimeout` (72 s, longer than the usual proxies').
 */
export function serverTimeouts(requestTimeoutMs: number): { requestTimeout: number; http: ServerOptions;
  clientErrorHandler: (err: NodeJS.ErrnoException, socket: Socket) => void } {
  return {
    requestTimeout: requestTimeoutMs,
    http: {
      requestTimeout: requestTimeoutMs,
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, requestTimeoutMs),
      // a request is cut between its limit and its limit plus one interval
      connectionsCheckingInterval: Math.max(10, Math.min(CHECK_EVERY_MS, Math.round(requestTimeoutMs / 4)))
    },
    clientErrorHandler
  }
}

/**
 * Fastify's answer to a request Node refused before any route saw it (a timeout, a malformed request line,
 * headers too large), in the error shape of every other answer. As Node does, nothing is written once an
 * answer to that connection has begun.
 */
function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400
  const message = status === 408 ? 'The request did not arrive in full within the time allowed'
    : status === 431 ? 'The request headers are too large' : 'Malformed HTTP request'
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (socket.writable && !inFlight?.headersSent) {
    const body = JSON.stringify(errorBody(status, message))
    socket.write(`HTTP/1.1 ${status} ${errorBody(status, '').error}\r\nContent-Type: application/json; charset=utf-8` +
      `\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy(err)
}
