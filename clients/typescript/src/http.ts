import { CairnError } from './errors.js'

export interface RetryOptions {
  /** retries after the first attempt (default 3) */
  maxRetries?: number
  /** first backoff delay in ms (default 500); doubles each retry, with full jitter */
  baseDelayMs?: number
  /** no single wait is longer; a Retry-After above it ends the retries (default 60 000) */
  maxDelayMs?: number
}

export interface TransportOptions extends RetryOptions {
  baseUrl: string
  /** a JWT (`/api/v2/auth/login`) or an API key (`cairn_…`), sent as `Authorization: Bearer` */
  token?: string
  /** the workspace context (`x-workspace-id`); a key bound to a workspace needs none */
  workspaceId?: string
  /**
   * A page served by Cairn itself (the console): no token, the browser's session cookie is the credential
   * (`signIn` sets it) and every request sends `x-cairn-csrf: 1`, which Cairn asks of such requests.
   */
  browserSession?: boolean
  /** the platform's fetch by default */
  fetch?: typeof fetch
  userAgent?: string
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined | null>
  json?: unknown
  form?: FormData
  headers?: Record<string, string>
  signal?: AbortSignal
  /** POST only: the Idempotency-Key to send (default: a new UUID per call, reused by its retries) */
  idempotencyKey?: string
  /** keep the response body unread (streams); retries still apply to the status */
  stream?: boolean
  /**
   * Told how much of the request body has been sent (in a browser, where XMLHttpRequest reports it; the platform's
   * fetch cannot). Each retry starts again from 0.
   */
  onUploadProgress?: (sent: number, total: number) => void
}

const RETRY_STATUSES = new Set([429, 503])
/** methods whose repetition is harmless after a network error (POST carries an Idempotency-Key) */
const SAFE_AFTER_NETWORK_ERROR = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'POST'])

function retryAfterSeconds(value: string | null): number | undefined {
  if (!value) return undefined
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Number(value)
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000)
}

function sleep(ms: number, signal?: AbortSignal) {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve() }, ms)
    const onAbort = () => { clearTimeout(timer); reject(signal!.reason) }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * A new Idempotency-Key. `crypto.randomUUID` exists only in secure contexts (https, localhost): a page opened over
 * plain http on another address gets a random key of the same strength from `getRandomValues`.
 */
function newKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID()
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('')
}

/** The error of a non-2xx answer, in the error shape of docs/api/errors.md. */
export async function errorFrom(res: Response): Promise<CairnError> {
  const text = await res.text().catch(() => '')
  let body: unknown = text
  try { body = JSON.parse(text) } catch { /* not JSON */ }
  const b = (body && typeof body === 'object' ? body : {}) as { code?: unknown; message?: unknown }
  return new CairnError(res.status, typeof b.code === 'string' ? b.code : `HTTP_${res.status}`,
    typeof b.message === 'string' ? b.message : (res.statusText || `HTTP ${res.status}`), body,
    retryAfterSeconds(res.headers.get('retry-after')))
}

/** The part of a browser's XMLHttpRequest used here (the client is typed without the DOM library). */
interface Xhr {
  open(method: string, url: string): void
  responseType: string
  withCredentials: boolean
  setRequestHeader(name: string, value: string): void
  upload: { onprogress: ((e: { lengthComputable: boolean; loaded: number; total: number }) => void) | null }
  onload: (() => void) | null
  onerror: (() => void) | null
  onabort: (() => void) | null
  readonly status: number
  readonly statusText: string
  readonly response: unknown
  getAllResponseHeaders(): string
  abort(): void
  send(body?: unknown): void
}
declare const XMLHttpRequest: (new () => Xhr) | undefined

/** fetch through XMLHttpRequest, whose upload events tell how much of the body has gone */
function xhrFetch(url: string, init: RequestInit,
  onProgress: (sent: number, total: number) => void): Promise<Response> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest!()
    xhr.open(init.method ?? 'GET', url)
    xhr.responseType = 'blob'
    xhr.withCredentials = init.credentials === 'include'
    const headers = init.headers as Record<string, string>
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value)
    xhr.upload.onprogress = (e) => { if (e.lengthComputable) onProgress(e.loaded, e.total) }
    xhr.onload = () => {
      const answered = new Headers()
      for (const line of xhr.getAllResponseHeaders().trim().split(/[\r\n]+/)) {
        const colon = line.indexOf(':')
        if (colon > 0) answered.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim())
      }
      const empty = xhr.status === 204 || xhr.status === 205 || xhr.status === 304
      resolve(new Response(empty ? null : xhr.response as Blob, { status: xhr.status, statusText: xhr.statusText,
        headers: answered }))
    }
    xhr.onerror = () => reject(new TypeError('Network request failed'))
    xhr.onabort = () => reject(new DOMException('The request was aborted', 'AbortError'))
    const signal = init.signal
    if (signal?.aborted) return reject(new DOMException('The request was aborted', 'AbortError'))
    signal?.addEventListener('abort', () => xhr.abort(), { once: true })
    xhr.send(init.body ?? null)
  })
}

/** HTTP with Cairn's credentials, workspace context, retries and Idempotency-Keys. */
export class Transport {
  readonly baseUrl: string
  readonly options: TransportOptions
  private readonly fetchImpl: typeof fetch

  constructor(options: TransportOptions) {
    this.options = options
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis)
  }

  /** The delay before retry number `attempt` (0-based): exponential with full jitter, or the server's Retry-After. */
  delayFor(attempt: number, retryAfter?: number): number {
    const base = this.options.baseDelayMs ?? 500
    const max = this.options.maxDelayMs ?? 60_000
    if (retryAfter !== undefined) return retryAfter * 1000
    return Math.min(max, base * 2 ** attempt) * (0.5 + Math.random() / 2)
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { accept: 'application/json', ...extra }
    if (this.options.token) h.authorization = `Bearer ${this.options.token}`
    if (this.options.browserSession) h['x-cairn-csrf'] = '1'
    if (this.options.workspaceId && !h['x-workspace-id']) h['x-workspace-id'] = this.options.workspaceId
    if (this.options.userAgent) h['user-agent'] = this.options.userAgent
    return h
  }

  url(path: string, query?: RequestOptions['query']): string {
    const search = new URLSearchParams()
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null) search.set(k, String(v))
    const qs = search.toString()
    return `${this.baseUrl}${path}${qs ? `?${qs}` : ''}`
  }

  /** One call with its retries; resolves with a 2xx response, else throws CairnError. */
  async send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const headers = this.headers(options.headers)
    let body: RequestInit['body']
    if (options.form) body = options.form
    else if (options.json !== undefined) {
      body = JSON.stringify(options.json)
      headers['content-type'] = 'application/json'
    }
    if (method === 'POST' && !options.stream) headers['idempotency-key'] = options.idempotencyKey ?? newKey()
    const maxRetries = this.options.maxRetries ?? 3
    const maxDelay = this.options.maxDelayMs ?? 60_000
    const url = this.url(path, options.query)
    for (let attempt = 0; ; attempt++) {
      let res: Response
      try {
        const init: RequestInit = { method, headers, body, signal: options.signal,
          ...(this.options.browserSession ? { credentials: 'same-origin' as const } : {}) }
        res = options.onUploadProgress && typeof XMLHttpRequest !== 'undefined' && !this.options.fetch
          ? await xhrFetch(url, init, options.onUploadProgress)
          : await this.fetchImpl(url, init)
      } catch (err) {
        if (options.signal?.aborted) {
          throw new CairnError(0, 'ABORTED', 'The request was aborted', undefined, undefined, { cause: err })
        }
        if (attempt < maxRetries && SAFE_AFTER_NETWORK_ERROR.has(method) && !options.stream) {
          await sleep(this.delayFor(attempt), options.signal)
          continue
        }
        throw new CairnError(0, 'NETWORK_ERROR', `Could not reach Cairn: ${(err as Error).message}`, undefined,
          undefined, { cause: err })
      }
      if (res.ok) return res
      if (RETRY_STATUSES.has(res.status) && attempt < maxRetries) {
        const retryAfter = retryAfterSeconds(res.headers.get('retry-after'))
        const delay = this.delayFor(attempt, retryAfter)
        if (delay <= maxDelay) {
          await res.body?.cancel().catch(() => undefined)
          await sleep(delay, options.signal)
          continue
        }
      }
      throw await errorFrom(res)
    }
  }

  /** A call whose answer is JSON. */
  async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const res = await this.send(method, path, options)
    return await res.json() as T
  }
}
