import type { Config } from '../config.js'

const REDACTED = '[redacted]'

/**
 * Shapes of secrets that can turn up in an error message: credentials in a URL, sensitive query parameters,
 * authorization headers, `name=value` / `"name": "value"` pairs whose name says secret, well-known key formats, and
 * long mixed-case tokens (webhook URLs of chat services carry theirs in the path). Ids (UUIDs, hex digests) are
 * lower-case and stay readable.
 */
const PATTERNS: Array<[RegExp, string | ((...groups: string[]) => string)]> = [
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi, `$1${REDACTED}@`],
  [/([?&#;][\w.-]*(?:token|key|secret|password|passwd|pwd|sig|signature|auth|credential)[\w.-]*=)[^&\s#"'<>]+/gi,
    `$1${REDACTED}`],
  [/\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{6,}/g, `$1 ${REDACTED}`],
  [/((?:["'])?[\w.-]*(?:password|passwd|secret|token|api[_-]?key|apikey|authorization|credential)(?:["'])?\s*[:=]\s*)(?!\[redacted\])("[^"]*"|'[^']*'|[^\s,;&}\]]+)/gi,
    (_, name: string, value: string) => name + (/^["']/.test(value) ? `${value[0]}${REDACTED}${value[0]}` : REDACTED)],
  [/\b(cairn_|sk-|sk_live_|sk_test_|whsec_|xox[abpr]-|gh[pousr]_|glpat-)[A-Za-z0-9_+/=-]{8,}/g, `$1${REDACTED}`],
  [/\bAKIA[0-9A-Z]{16}\b/g, REDACTED],
  [/(?<![\w-])(?=[\w-]*[A-Z])(?=[\w-]*[a-z])(?=[\w-]*[0-9])[\w-]{24,}(?![\w-])/g, REDACTED]
]

/** `text` with every known secret value and every secret-shaped part replaced by `[redacted]`. */
export function maskSecrets(text: string, known: readonly string[] = []): string {
  let out = text
  // longest first: a secret that contains another is replaced whole
  for (const secret of [...known].sort((a, b) => b.length - a.length)) {
    if (secret.length >= 6) out = out.split(secret).join(REDACTED)
  }
  for (const [pattern, replacement] of PATTERNS) {
    out = typeof replacement === 'string' ? out.replace(pattern, replacement) : out.replace(pattern, replacement)
  }
  return out
}

/** The secret values of a configuration: API keys, the service key, the JWT secret, the SMTP password. */
export function configSecrets(config: Config): string[] {
  const out = [config.llm.apiKey, config.stt.apiKey, config.embeddings.apiKey, config.serviceKey, config.jwtSecret,
    config.metrics.token]
  if (config.mail.smtpUrl) {
    try {
      const url = new URL(config.mail.smtpUrl)
      out.push(decodeURIComponent(url.password), url.password)
    } catch { /* refused by loadConfig */ }
  }
  return out.filter((s): s is string => typeof s === 'string' && s.length > 0)
}

/** the longest message describeError returns by default; longer ones end in `…` */
export const MAX_ERROR_MESSAGE = 1000

export interface ErrorSummary {
  /** the message with its causes (`fetch failed: connect ECONNREFUSED 127.0.0.1:9`), secrets masked */
  message: string
  /** a machine code when the error or one of its causes has one (ECONNREFUSED, MODEL_UNAVAILABLE), else its name */
  code?: string
}

/** An error as the log may show it: the message along its chain of causes, a code, secrets masked. */
export function describeError(err: unknown, known: readonly string[] = [], max = MAX_ERROR_MESSAGE): ErrorSummary {
  const parts: string[] = []
  let code: string | undefined
  let name: string | undefined
  let current: unknown = err
  for (let depth = 0; depth < 4 && current !== undefined && current !== null; depth++) {
    if (current instanceof Error || (typeof current === 'object' && 'message' in current)) {
      const e = current as Error & { code?: unknown; errno?: unknown }
      const message = String(e.message ?? '').trim()
      if (message && !parts.some((p) => p.includes(message))) parts.push(message)
      if (code === undefined && typeof e.code === 'string' && e.code) code = e.code
      if (name === undefined && e.name && e.name !== 'Error') name = e.name
      current = e.cause
    } else {
      parts.push(String(current))
      break
    }
  }
  let message = maskSecrets(parts.join(': ') || 'unknown error', known)
  if (message.length > max) message = `${message.slice(0, max)}…`
  const summary: ErrorSummary = { message }
  const c = code ?? name
  if (c) summary.code = maskSecrets(c, known)
  return summary
}
