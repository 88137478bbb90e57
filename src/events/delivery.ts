import http from 'node:http'
import https from 'node:https'
import { createHash, createHmac } from 'node:crypto'
import { checkPublicUrl, guardedLookup } from '../net/address-guard.js'
import { VERSION } from '../version.js'

export const PREVIEW_BYTES = 2048
const RESPONSE_KEEP_BYTES = 2048
/** read at most this much of a response before hanging up on it */
const RESPONSE_READ_LIMIT = 64 * 1024
const SECRET_PREFIX = 'whsec_'

export interface RequestRecord {
  event: string
  timestamp: string
  body_sha256: string
  body_bytes: number
  truncated: boolean
  body_preview: string
}

/** What one attempt sends: the message (its id and body are the same for every attempt) and this attempt's id. */
export interface OutgoingMessage {
  /** `webhook-id` */
  id: string
  /** `X-Cairn-Delivery`: this attempt */
  deliveryId: string
  event: string
  /** the event's time, as in the body */
  timestamp: string
  /** the exact JSON sent: {event, timestamp, data} */
  body: string
}

export interface DeliveryAttempt {
  id: string
  eventType: string
  statusCode: number
  success: boolean
  latencyMs: number
  request: RequestRecord
  responseBody: string
  error?: string
  /** unix seconds sent as `webhook-timestamp` */
  sentAt: number
  /** a 429 or 503 answer's `Retry-After`, in ms from its arrival */
  retryAfterMs?: number
}

/** statuses whose `Retry-After` the retry schedule honours */
const RETRY_AFTER_STATUSES = new Set([429, 503])

/** `Retry-After` as ms from `now`: delay-seconds or an HTTP-date (RFC 9110 §10.2.3); undefined when unreadable */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  const v = value?.trim()
  if (!v) return undefined
  if (/^\d+$/.test(v)) return Number(v) * 1000
  const at = Date.parse(v)
  return Number.isNaN(at) || !/[a-z]/i.test(v) ? undefined : Math.max(0, at - now)
}

/** an attempt that ended before any byte was sent */
export const failedAttempt = (message: OutgoingMessage, error: string,
  started = performance.now()): DeliveryAttempt => ({
  id: message.deliveryId, eventType: message.event, statusCode: 0, success: false,
  latencyMs: Math.round(performance.now() - started),
  request: { event: message.event, timestamp: message.timestamp, body_sha256: '',
    body_bytes: Buffer.byteLength(message.body), truncated: false, body_preview: '' },
  responseBody: '', error, sentAt: Math.floor(Date.now() / 1000)
})

/** The first `max` bytes of a UTF-8 buffer, cut back to a character boundary. */
export function utf8Prefix(buf: Buffer, max: number): string {
  if (buf.length <= max) return buf.toString('utf8')
  let end = max
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--
  return buf.subarray(0, end).toString('utf8')
}

/** `X-Cairn-Signature`: lower-case hex HMAC-SHA256 of the raw body keyed with the UTF-8 bytes of the whole secret. */
export function sign(secret: string, body: Buffer | string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')
}

/**
 * The Standard Webhooks key: the base64 decoding of the secret after `whsec_`. Cairn's secrets are 64 hex
 * characters, which are base64 characters too (length a multiple of 4, no padding): they decode to 48 bytes,
 * exactly as the `standardwebhooks` and `svix` libraries decode the same string.
 */
export function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64')
}

/** One `v1,<base64>` signature of `<webhook-id>.<webhook-timestamp>.<body>`. */
export function standardSignature(secret: string, messageId: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', standardKey(secret)).update(`${messageId}.${timestamp}.${body}`).digest('base64')}`
}

export interface Deliverer {
  /**
   * One attempt (docs/api/webhooks.md): POST of the message's body with Cairn's and
   * Standard Webhooks' headers, signed with each secret given (the current one first); 10 s for the whole
   * exchange; redirects are failures; the address is checked again when connecting. Never throws: every
   * outcome is an attempt to record (an aborted one has `error: 'aborted'`).
   */
  deliver(url: string, secrets: readonly string[], message: OutgoingMessage,
    signal?: AbortSignal): Promise<DeliveryAttempt>
  /** closes kept-alive connections */
  close(): void
}

export function createDeliverer(
  opts: { allowPrivate: boolean; allow?: readonly string[]; timeoutMs?: number }): Deliverer {
  const timeoutMs = opts.timeoutMs ?? 10_000
  // connections to a receiver are kept for its next deliveries (a burst to one endpoint reuses a few sockets)
  const agents = { http: new http.Agent({ keepAlive: true, timeout: timeoutMs }),
    https: new https.Agent({ keepAlive: true, timeout: timeoutMs }) }
  const lookup = guardedLookup(opts.allowPrivate, opts.allow)

  async function deliver(target: string, secrets: readonly string[], message: OutgoingMessage,
    signal?: AbortSignal): Promise<DeliveryAttempt> {
    const body = Buffer.from(message.body)
    const sentAt = Math.floor(Date.now() / 1000)
    const request: RequestRecord = {
      event: message.event,
      timestamp: message.timestamp,
      body_sha256: createHash('sha256').update(body).digest('hex'),
      body_bytes: body.length,
      truncated: body.length > PREVIEW_BYTES,
      body_preview: utf8Prefix(body, PREVIEW_BYTES)
    }
    const started = performance.now()
    const done = (statusCode: number, responseBody: string, error?: string): DeliveryAttempt => ({
      id: message.deliveryId, eventType: message.event, statusCode, success: statusCode >= 200 && statusCode < 300,
      request,
      latencyMs: Math.round(performance.now() - started), responseBody, sentAt, ...(error ? { error } : {})
    })
    let url: URL
    try {
      url = await checkPublicUrl(target, { allowPrivate: opts.allowPrivate, allow: opts.allow })
    } catch (err) {
      return done(0, '', (err as Error).message)
    }
    if (signal?.aborted) return done(0, '', 'aborted')
    const secure = url.protocol === 'https:'
    return new Promise<DeliveryAttempt>((resolve) => {
      let settled = false
      const finish = (a: DeliveryAttempt) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        resolve(a)
      }
      const req = (secure ? https.request : http.request)(url, {
        method: 'POST',
        agent: secure ? agents.https : agents.http,
        lookup,
        headers: {
          'content-type': 'application/json',
          'content-length': body.length,
          'user-agent': `Cairn-Webhooks/${VERSION}`,
          'x-cairn-event': message.event,
          'x-cairn-signature': sign(secrets[0], body),
          'x-cairn-delivery': message.deliveryId,
          'webhook-id': message.id,
          'webhook-timestamp': String(sentAt),
          'webhook-signature': secrets.map((s) => standardSignature(s, message.id, sentAt, message.body)).join(' ')
        }
      }, (res) => {
        const chunks: Buffer[] = []
        let size = 0
        res.on('data', (c: Buffer) => {
          if (size < RESPONSE_READ_LIMIT) { chunks.push(c); size += c.length } else res.destroy()
        })
        const end = () => {
          const status = res.statusCode ?? 0
          const text = utf8Prefix(Buffer.concat(chunks), RESPONSE_KEEP_BYTES)
          const attempt = done(status, text,
            status >= 300 && status < 400 ? `redirect to ${res.headers.location ?? '?'} not followed` : undefined)
          const retryAfter = RETRY_AFTER_STATUSES.has(status) ? parseRetryAfter(res.headers['retry-after']) : undefined
          finish(retryAfter === undefined ? attempt : { ...attempt, retryAfterMs: retryAfter })
        }
        res.on('end', end)
        res.on('close', end)
        res.on('error', () => end())
      })
      const onAbort = () => { req.destroy(); finish(done(0, '', 'aborted')) }
      signal?.addEventListener('abort', onAbort, { once: true })
      const timer = setTimeout(() => {
        req.destroy()
        finish(done(0, '', `no answer within ${Math.round(timeoutMs / 1000)} s`))
      }, timeoutMs)
      req.on('error', (err) => finish(done(0, '', err.message)))
      req.end(body)
    })
  }

  return {
    deliver,
    close() { agents.http.destroy(); agents.https.destroy() }
  }
}
