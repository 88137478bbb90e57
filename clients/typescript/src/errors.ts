/** An error answer of Cairn (docs/api/errors.md), or a request that never got one (statusCode 0). */
export class CairnError extends Error {
  override readonly name = 'CairnError'
  /** the HTTP status; 0 when no answer arrived (network error, aborted) */
  readonly statusCode: number
  /**
   * Cairn's machine code, e.g. `VALIDATION_ERROR`, `HUMAN_REVIEW_REQUIRED`, `RATE_LIMITED`; `NETWORK_ERROR` without an
   * answer
   */
  readonly code: string
  /** the whole error body, when there was one */
  readonly body: unknown
  /** seconds from `Retry-After`, when the answer had one */
  readonly retryAfter: number | undefined

  constructor(statusCode: number, code: string, message: string, body?: unknown, retryAfter?: number,
    options?: { cause?: unknown }) {
    super(message, options)
    this.statusCode = statusCode
    this.code = code
    this.body = body
    this.retryAfter = retryAfter
  }
}
