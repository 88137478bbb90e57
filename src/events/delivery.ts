import http from 'node:http'
import https from 'node:https'
import { createHash, createHmac, randomUUID } from 'node:crypto'
import { checkPublicUrl, guardedLookup } from '../net/address-guard.js'
import { VERSION } from '../version.js'

export const PREVIEW_BYTES = 2048
const RESPONSE_KEEP_BYTES = 2048
/** read at most this much of a response before hanging up on it */
const RESPONSE_READ_LIMIT = 64 * 1024

export interface RequestRecord {
  event: string
  timestamp: string
  body_sha256: string
  body_bytes: number
  truncated: boolean
  body_preview: string
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
}

/** The first `max` bytes of a UTF-8 buffer, cut back to a character boundary. */
export function utf8Prefix(buf: Buffer, max: number): string {
  if (buf.length <= max) return buf.toString('utf8')
  let end = max
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--
  return buf.subarray(0, end).toString('utf8')
}

export function sign(secret: string, body: Buffer | string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex')
}

/**
 * One delivery attempt (SPEC.md "Delivery rules", CONTRACT.md §8): POST {event, timestamp, data} signed
 * with HMAC-SHA256 of the raw body; 10 s for the whole exchange; redirects are failures; the address is
 * checked again when connecting. Never throws: every outcome is an attempt to record.
 */
export async function deliver(target: { url: string; secret: string }, event: string, data: object,
  opts: { allowPrivate: boolean; timeoutMs?: number }): Promise<DeliveryAttempt> {
  const id = randomUUID()
  const timestamp = new Date().toISOString()
  const body = Buffer.from(JSON.stringify({ event, timestamp, data }))
  const request: RequestRecord = {
    event,
    timestamp,
    body_sha256: createHash('sha256').update(body).digest('hex'),
    body_bytes: body.length,
    truncated: body.length > PREVIEW_BYTES,
    body_preview: utf8Prefix(body, PREVIEW_BYTES)
  }
  const started = performance.now()
  const done = (statusCode: number, responseBody: string, error?: string): DeliveryAttempt => ({
    id, eventType: event, statusCode, success: statusCode >= 200 && statusCode < 300, request,
    latencyMs: Math.round(performance.now() - started), responseBody, ...(error ? { error } : {})
  })
  let url: URL
  try {
    url = await checkPublicUrl(target.url, { allowPrivate: opts.allowPrivate })
  } catch (err) {
    return done(0, '', (err as Error).message)
  }
  const client = url.protocol === 'https:' ? https : http
  return new Promise<DeliveryAttempt>((resolve) => {
    let settled = false
    const finish = (a: DeliveryAttempt) => { if (!settled) { settled = true; clearTimeout(timer); resolve(a) } }
    const req = client.request(url, {
      method: 'POST',
      lookup: guardedLookup(opts.allowPrivate),
      headers: {
        'content-type': 'application/json',
        'content-length': body.length,
        'user-agent': `Cairn-Webhooks/${VERSION}`,
        'x-cairn-event': event,
        'x-cairn-signature': sign(target.secret, body),
        'x-cairn-delivery': id
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
        finish(done(status, text, status >= 300 && status < 400 ? `redirect to ${res.headers.location ?? '?'} not followed` : undefined))
      }
      res.on('end', end)
      res.on('close', end)
      res.on('error', () => end())
    })
    const timer = setTimeout(() => {
      req.destroy()
      finish(done(0, '', `no answer within ${Math.round((opts.timeoutMs ?? 10_000) / 1000)} s`))
    }, opts.timeoutMs ?? 10_000)
    req.on('error', (err) => finish(done(0, '', err.message)))
    req.end(body)
  })
}
