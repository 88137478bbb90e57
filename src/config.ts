import { envSchema } from 'env-schema'
import { Type, type Static } from '@sinclair/typebox'
import fs from 'node:fs'
import path from 'node:path'
import { isIP } from 'node:net'
import type { SearchSettingsOverrides } from './knowledge/search-settings.js'
import { parseAllowList } from './net/allow-list.js'

/** Standard Webhooks' schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h after each failed attempt */
const DEFAULT_RETRY_SCHEDULE = '5,300,1800,7200,18000,36000,36000'

const EnvSchema = Type.Object({
  HOST: Type.String({ default: '127.0.0.1' }),
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65535 }),
  CAIRN_DATA_DIR: Type.String({ default: './data' }),
  CAIRN_DATABASE_URL: Type.Optional(Type.String()),
  CAIRN_PUBLIC_URL: Type.Optional(Type.String({ minLength: 1 })),
  CAIRN_JWT_SECRET: Type.Optional(Type.String({ minLength: 16 })),
  CAIRN_JWT_TTL: Type.Integer({ default: 86400, minimum: 60 }),
  CAIRN_SIGNUP: Type.Union([Type.Literal('first-user'), Type.Literal('open')], { default: 'first-user' }),
  CAIRN_RATE_LIMIT_KNOWLEDGE: Type.Integer({ default: 30, minimum: 0 }),
  CAIRN_RATE_LIMIT_VOICE_NOTES: Type.Integer({ default: 100, minimum: 0 }),
  CAIRN_RATE_LIMIT_ARTIFACTS: Type.Integer({ default: 120, minimum: 0 }),
  CAIRN_RATE_LIMIT_DEFAULT: Type.Integer({ default: 600, minimum: 0 }),
  CAIRN_ALLOW_PRIVATE_URLS: Type.Boolean({ default: false }),
  CAIRN_WEBHOOK_ALLOW: Type.Optional(Type.String()),
  CAIRN_TRUST_PROXY: Type.Optional(Type.String()),
  CAIRN_LLM_BASE_URL: Type.Optional(Type.String({ minLength: 1 })),
  CAIRN_LLM_API_KEY: Type.Optional(Type.String()),
  CAIRN_LLM_MODEL: Type.Optional(Type.String()),
  CAIRN_STT: Type.Union(
    [Type.Literal('auto'), Type.Literal('openai'), Type.Literal('pocketsphinx'), Type.Literal('none')],
    { default: 'auto' }
  ),
  CAIRN_STT_BASE_URL: Type.Optional(Type.String({ minLength: 1 })),
  CAIRN_STT_API_KEY: Type.Optional(Type.String()),
  CAIRN_STT_MODEL: Type.String({ default: 'whisper-1' }),
  CAIRN_EMBED_BASE_URL: Type.Optional(Type.String({ minLength: 1 })),
  CAIRN_EMBED_API_KEY: Type.Optional(Type.String()),
  CAIRN_EMBED_MODEL: Type.Optional(Type.String({ minLength: 1 })),
  CAIRN_WEB_SEARCH_URL: Type.Optional(Type.String({ minLength: 1 })),
  CAIRN_SEARCH_REWRITE: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'off' }),
  CAIRN_SERVICE_KEY: Type.Optional(Type.String({ minLength: 16 })),
  CAIRN_LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' }
  ),
  CAIRN_LOG_FORMAT: Type.Union([Type.Literal('auto'), Type.Literal('json'), Type.Literal('pretty')],
    { default: 'auto' }),
  CAIRN_RETENTION_DAYS: Type.Integer({ default: 30, minimum: 1 }),
  CAIRN_WEBHOOK_RETRY_SCHEDULE: Type.String({
    default: DEFAULT_RETRY_SCHEDULE,
    pattern: '^\\s*\\d+(\\.\\d+)?(\\s*,\\s*\\d+(\\.\\d+)?)*\\s*$',
    description: 'seconds between a failed webhook attempt and the next, comma-separated (one retry each)'
  }),
  CAIRN_METRICS: Type.Boolean({ default: false }),
  CAIRN_METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  CAIRN_SHUTDOWN_TIMEOUT: Type.Number({ default: 10, exclusiveMinimum: 0, maximum: 3600 }),
  CAIRN_REQUEST_TIMEOUT: Type.Number({ default: 120, exclusiveMinimum: 0, maximum: 3600 }),
  CAIRN_SEARCH_CACHE_MB: Type.Integer({ default: 64, minimum: 0, maximum: 65536 }),
  CAIRN_SEARCH_BUDGET_MS: Type.Integer({ default: 2000, minimum: 1, maximum: 600_000 }),
  CAIRN_QUOTA_STORAGE_MB: Type.Integer({ default: 20480, minimum: 0 }),
  CAIRN_QUOTA_PASSAGES: Type.Integer({ default: 10_000_000, minimum: 0 }),
  CAIRN_QUOTA_DEVELOPER_LOG_MB: Type.Integer({ default: 1024, minimum: 0 }),
  CAIRN_QUOTA_RUNS: Type.Integer({ default: 10_000, minimum: 0 }),
  CAIRN_CORS_ORIGINS: Type.Optional(Type.String()),
  CAIRN_SMTP_URL: Type.Optional(Type.String({ minLength: 1 })),
  CAIRN_MAIL_FROM: Type.Optional(Type.String({ minLength: 3 }))
})

/** Variables that must hold an http(s) URL (checked at start, not at the first request). */
const URL_VARIABLES = ['CAIRN_LLM_BASE_URL', 'CAIRN_STT_BASE_URL', 'CAIRN_EMBED_BASE_URL', 'CAIRN_WEB_SEARCH_URL',
  'CAIRN_PUBLIC_URL'] as const

/** A configuration the service cannot start with: one line per bad variable, naming it and what it accepts. */
export class ConfigError extends Error {
  override name = 'ConfigError'
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`)
  }
}

/** What a variable of the schema accepts, in words. */
function accepted(schema: Record<string, unknown> | undefined): string {
  if (!schema) return 'a valid value'
  const literals = (schema.anyOf as Array<{ const?: unknown }> | undefined)?.map((s) => s.const)
  if (literals?.every((l) => typeof l === 'string')) return `one of ${literals.join(', ')}`
  if (schema.type === 'integer') {
    const { minimum: min, maximum: max } = schema as { minimum?: number; maximum?: number }
    return min !== undefined && max !== undefined ? `an integer from ${min} to ${max}`
      : min !== undefined ? `an integer of at least ${min}` : 'an integer'
  }
  if (schema.type === 'boolean') return 'true or false'
  if (typeof schema.minLength === 'number' && schema.minLength > 1) {
    return `a string of at least ${schema.minLength} characters`
  }
  return 'a non-empty string'
}

/** An absolute http(s) URL, or why not. */
export function httpUrlProblem(value: string): string | undefined {
  let url: URL
  try { url = new URL(value) } catch { return 'is not a URL' }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `has the scheme ${url.protocol.slice(0, -1)}`
  if (url.username || url.password) return 'carries credentials (use the matching _API_KEY variable)'
  return undefined
}

function problemsOf(env: NodeJS.ProcessEnv, err: unknown): string[] {
  const out = new Map<string, string>()
  const properties = EnvSchema.properties as Record<string, Record<string, unknown>>
  for (const e of (err as { errors?: Array<{ instancePath: string; params: { missingProperty?: string } }> }).errors ??
    []) {
    const name = e.instancePath.replace(/^\//, '') || e.params.missingProperty || ''
    if (!name || out.has(name)) continue
    out.set(name, `${name}=${JSON.stringify(env[name] ?? '')} is invalid: expected ${accepted(properties[name])}`)
  }
  if (out.size === 0) out.set('', (err as Error).message)
  return [...out.values()]
}

type Env = Static<typeof EnvSchema>

export interface RateLimits {
  knowledge: number
  voiceNotes: number
  artifacts: number
  default: number
}

export interface Config {
  host: string
  port: number
  dataDir: string
  publicUrl: string
  /** undefined: generated once and kept in `<dataDir>/jwt-secret` */
  jwtSecret?: string
  jwtTtlSeconds: number
  signup: 'first-user' | 'open'
  rateLimits: RateLimits
  allowPrivateUrls: boolean
  /**
   * CAIRN_WEBHOOK_ALLOW: private destinations webhooks and audio URLs may reach, as host names, addresses and CIDR
   * ranges (src/net/allow-list.ts); everything else private stays refused
   */
  webhookAllow: string[]
  /**
   * CAIRN_TRUST_PROXY: whose X-Forwarded-For names the client (Fastify's `trustProxy`): false, none (the peer is the
   * client); a number, that many proxies in front; else the proxies' addresses and CIDR ranges
   */
  trustProxy: false | number | string[]
  llm: { baseUrl?: string; apiKey?: string; model?: string }
  stt: { mode: 'auto' | 'openai' | 'pocketsphinx' | 'none'; baseUrl?: string; apiKey?: string; model: string }
  /** an OpenAI-compatible /v1 embeddings endpoint: semantic and hybrid search use it when set */
  embeddings: { baseUrl?: string; apiKey?: string; model?: string;
    /** passages per request (default 32) */ batchSize?: number
    /** ms between looks for new passages (default 2000) */ pollMs?: number }
  webSearchUrl?: string
  /**
   * the assistant's own search_knowledge calls, with a model configured: `enabled` (CAIRN_SEARCH_REWRITE) asks the
   * model for search terms first (src/assistant/rewrite.ts); `timeoutMs` bounds that call, past it the question is
   * searched as asked
   */
  searchRewrite: { enabled: boolean; timeoutMs: number }
  serviceKey?: string
  logLevel: string
  /** CAIRN_LOG_FORMAT: `pretty` (lines for people), `json` (one JSON object a line), `auto`: pretty on a terminal */
  logFormat: 'auto' | 'json' | 'pretty'
  retentionDays: number
  /** delays in seconds before each automatic retry of a failed webhook attempt */
  webhookRetrySchedule: number[]
  /** origins allowed to call the API from a browser; empty: no CORS headers at all */
  corsOrigins: string[]
  /** Prometheus metrics at /metrics; with a token, scrapers must send it as a bearer token */
  metrics: { enabled: boolean; token?: string }
  /** CAIRN_SHUTDOWN_TIMEOUT: the whole graceful shutdown on SIGTERM/SIGINT finishes within this */
  shutdownTimeoutMs: number
  /**
   * CAIRN_REQUEST_TIMEOUT: a request's headers and body must arrive within this, else 408 and the connection is
   * closed (the answer may take longer: streams and waits are not cut)
   */
  requestTimeoutMs: number
  /**
   * CAIRN_SEARCH_CACHE_MB: each search worker's own SQLite page cache, in MB (filled as pages are read; half for
   * the main file, half for the trigram file)
   */
  searchCacheMb: number
  /** CAIRN_SEARCH_BUDGET_MS: each search's time on a search worker; past it, the answer is what it found, partial */
  searchBudgetMs: number
  /**
   * overrides of passage search's tuned bounds (src/knowledge/search-settings.ts), not read from the environment:
   * benches and tests set them to measure or exercise one path
   */
  searchSettings?: SearchSettingsOverrides
  /** the interval of the workspace event stream's comment lines (keep-alive through proxies) */
  eventStreamHeartbeatMs: number
  /**
   * bytes of events a workspace event stream leaves unread by its client before it stops reading the event log for
   * it, and how long it then waits for the client to catch up before ending (the client resumes with Last-Event-ID)
   */
  eventStreamBuffer: { bytes: number; stallMs: number }
  /**
   * per organization; 0: unlimited. `storedBytes` (CAIRN_QUOTA_STORAGE_MB): knowledge files, each counted as its
   * upload plus its extracted text; `passages` (CAIRN_QUOTA_PASSAGES); `developerLogBytes`
   * (CAIRN_QUOTA_DEVELOPER_LOG_MB): past it, the oldest entries of the organization's developer log go; `runs`
   * (CAIRN_QUOTA_RUNS): workflow runs kept, past it the oldest finished ones go and, when the runs in flight alone
   * reach it, a new run is refused
   */
  quotas: { storedBytes: number; passages: number; developerLogBytes: number; runs: number }
  /** CAIRN_SMTP_URL / CAIRN_MAIL_FROM: invitation and password-reset links are e-mailed when set */
  mail: { smtpUrl?: string; from: string }
}

/** proxy-addr's names of ranges, accepted beside addresses and CIDR ranges */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal']

/**
 * CAIRN_TRUST_PROXY: unset, empty, `false` or `0`: no proxy is trusted; a whole number: that many proxies in front;
 * else comma-separated addresses, CIDR ranges and the names of PROXY_RANGE_NAMES. `true` (believe any peer) is
 * refused: a client that reaches the service directly could then pass for any address.
 */
export function trustedProxies(value: string | undefined, problems: string[]): false | number | string[] {
  const v = (value ?? '').trim()
  if (v === '' || v === 'false' || v === '0') return false
  const expected = 'expected a number of proxies (1-10) or comma-separated proxy addresses, CIDR ranges, ' +
    `${PROXY_RANGE_NAMES.join(', ')}`
  if (/^\d+$/.test(v)) {
    const hops = Number(v)
    if (hops <= 10) return hops
    problems.push(`CAIRN_TRUST_PROXY=${JSON.stringify(v)} is invalid: ${expected}`)
    return false
  }
  const list = v.split(',').map((s) => s.trim()).filter(Boolean)
  for (const item of list) {
    if (PROXY_RANGE_NAMES.includes(item)) continue
    const [address, prefix, ...rest] = item.split('/')
    const family = isIP(address)
    const bits = family === 4 ? 32 : 128
    const prefixOk = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= bits)
    if (family === 0 || !prefixOk || rest.length > 0) {
      problems.push(`CAIRN_TRUST_PROXY: ${JSON.stringify(item)} is invalid: ${expected}` +
        (item === 'true' ? ' (`true` would let any client name its own address)' : ''))
    }
  }
  return list
}

/** Reads the environment once; the only place in the service that looks at process.env. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  let e: Env
  try {
    e = envSchema<Env>({ schema: EnvSchema, data: env, dotenv: false })
  } catch (err) {
    throw new ConfigError(problemsOf(env, err))
  }
  const problems: string[] = []
  for (const name of URL_VARIABLES) {
    const value = env[name]
    if (value === undefined || value === '') continue
    const problem = httpUrlProblem(value)
    if (problem) problems.push(`${name}=${JSON.stringify(value)} ${problem}: expected an http:// or https:// URL`)
  }
  if (e.CAIRN_LLM_BASE_URL && !e.CAIRN_LLM_MODEL) {
    problems.push('CAIRN_LLM_MODEL is unset: with CAIRN_LLM_BASE_URL set, name the model to use (for Ollama ' +
      'e.g. llama3.2)')
  }
  const corsOrigins = (e.CAIRN_CORS_ORIGINS ?? '').split(',').map((o) => o.trim()).filter(Boolean)
  for (const origin of corsOrigins) {
    const problem = httpUrlProblem(origin) ?? (new URL(origin).origin !== origin ? 'is not a bare origin' : undefined)
    if (problem) problems.push(`CAIRN_CORS_ORIGINS: ${JSON.stringify(origin)} ${problem}: expected comma-separated origins such as https://app.example.org`)
  }
  if (e.CAIRN_EMBED_BASE_URL && !httpUrlProblem(e.CAIRN_EMBED_BASE_URL) && !e.CAIRN_EMBED_MODEL) {
    problems.push('CAIRN_EMBED_MODEL is unset: with CAIRN_EMBED_BASE_URL set, name the embedding model (for Ollama ' +
      'e.g. nomic-embed-text)')
  }
  if (e.CAIRN_SMTP_URL) {
    let scheme = ''
    try { scheme = new URL(e.CAIRN_SMTP_URL).protocol } catch { /* reported below */ }
    if (scheme !== 'smtp:' && scheme !== 'smtps:') {
      problems.push('CAIRN_SMTP_URL is invalid: expected smtp://user:pass@host:port or smtps://user:pass@host:port')
    }
  }
  if (e.CAIRN_DATABASE_URL) {
    // a process that ignored it would keep its own SQLite database, and several behind one address would each answer
    // from a database of their own
    problems.push('CAIRN_DATABASE_URL is set, but this version of Cairn keeps its data only in the embedded SQLite ' +
      'database of CAIRN_DATA_DIR: unset CAIRN_DATABASE_URL, and run one Cairn process per data directory')
  }
  const trustProxy = trustedProxies(e.CAIRN_TRUST_PROXY, problems)
  const webhookAllow = parseAllowList(e.CAIRN_WEBHOOK_ALLOW)
  problems.push(...webhookAllow.problems)
  if (problems.length > 0) throw new ConfigError(problems)
  return {
    host: e.HOST,
    port: e.PORT,
    dataDir: path.resolve(e.CAIRN_DATA_DIR),
    publicUrl: (e.CAIRN_PUBLIC_URL ?? `http://${e.HOST}:${e.PORT}`).replace(/\/+$/, ''),
    jwtSecret: e.CAIRN_JWT_SECRET,
    jwtTtlSeconds: e.CAIRN_JWT_TTL,
    signup: e.CAIRN_SIGNUP,
    rateLimits: {
      knowledge: e.CAIRN_RATE_LIMIT_KNOWLEDGE,
      voiceNotes: e.CAIRN_RATE_LIMIT_VOICE_NOTES,
      artifacts: e.CAIRN_RATE_LIMIT_ARTIFACTS,
      default: e.CAIRN_RATE_LIMIT_DEFAULT
    },
    allowPrivateUrls: e.CAIRN_ALLOW_PRIVATE_URLS,
    webhookAllow: webhookAllow.entries,
    trustProxy,
    llm: { baseUrl: e.CAIRN_LLM_BASE_URL, apiKey: e.CAIRN_LLM_API_KEY, model: e.CAIRN_LLM_MODEL },
    stt: {
      mode: e.CAIRN_STT,
      baseUrl: e.CAIRN_STT_BASE_URL,
      apiKey: e.CAIRN_STT_API_KEY,
      model: e.CAIRN_STT_MODEL
    },
    embeddings: { baseUrl: e.CAIRN_EMBED_BASE_URL, apiKey: e.CAIRN_EMBED_API_KEY, model: e.CAIRN_EMBED_MODEL },
    webSearchUrl: e.CAIRN_WEB_SEARCH_URL,
    searchRewrite: { enabled: e.CAIRN_SEARCH_REWRITE === 'on', timeoutMs: 5000 },
    serviceKey: e.CAIRN_SERVICE_KEY,
    logLevel: e.CAIRN_LOG_LEVEL,
    logFormat: e.CAIRN_LOG_FORMAT,
    retentionDays: e.CAIRN_RETENTION_DAYS,
    webhookRetrySchedule: e.CAIRN_WEBHOOK_RETRY_SCHEDULE.split(',').map((s) => Number(s.trim())),
    corsOrigins,
    metrics: { enabled: e.CAIRN_METRICS, token: e.CAIRN_METRICS_TOKEN },
    shutdownTimeoutMs: Math.round(e.CAIRN_SHUTDOWN_TIMEOUT * 1000),
    requestTimeoutMs: Math.round(e.CAIRN_REQUEST_TIMEOUT * 1000),
    searchCacheMb: e.CAIRN_SEARCH_CACHE_MB,
    searchBudgetMs: e.CAIRN_SEARCH_BUDGET_MS,
    eventStreamHeartbeatMs: 15_000,
    eventStreamBuffer: { bytes: 256 * 1024, stallMs: 60_000 },
    quotas: { storedBytes: e.CAIRN_QUOTA_STORAGE_MB * 1048576, passages: e.CAIRN_QUOTA_PASSAGES,
      developerLogBytes: e.CAIRN_QUOTA_DEVELOPER_LOG_MB * 1048576, runs: e.CAIRN_QUOTA_RUNS },
    mail: { smtpUrl: e.CAIRN_SMTP_URL,
      from: e.CAIRN_MAIL_FROM ?? `Cairn <cairn@${new URL((e.CAIRN_PUBLIC_URL ?? `http://${e.HOST}`)).hostname || 'localhost'}>` }
  }
}

/**
 * The data directory exists (created if need be) and the service may read, write and enter it; else a
 * ConfigError naming the path and what is missing. Probed with a real file: root ignores modes, and a
 * read-only mount is only found by writing.
 */
export function checkDataDir(dir: string): void {
  const fail = (what: string): never => {
    throw new ConfigError([`CAIRN_DATA_DIR=${JSON.stringify(dir)} ${what}`])
  }
  try {
    fs.mkdirSync(dir, { recursive: true })
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EACCES' || code === 'EPERM') {
      fail('cannot be created: the parent directory needs write permission for the user running Cairn')
    }
    if (code === 'EROFS') fail('cannot be created: the file system is read-only')
    if (code === 'ENOTDIR' || code === 'EEXIST') fail('is not a directory')
    throw err
  }
  if (!fs.statSync(dir).isDirectory()) fail('is not a directory')
  const probe = path.join(dir, `.write-test-${process.pid}`)
  try {
    fs.writeFileSync(probe, '')
    fs.rmSync(probe)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EROFS') fail('is on a read-only file system: Cairn needs to write its database there')
    if (code === 'EACCES' || code === 'EPERM') {
      fail(`is not writable: the user running Cairn (uid ${process.getuid?.() ?? '?'}) ` +
        'needs read, write and execute permission on it')
    }
    throw err
  }
}
