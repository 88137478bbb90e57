import { envSchema } from 'env-schema'
import { Type, type Static } from '@sinclair/typebox'
import path from 'node:path'

const EnvSchema = Type.Object({
  HOST: Type.String({ default: '127.0.0.1' }),
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65535 }),
  CAIRN_DATA_DIR: Type.String({ default: './data' }),
  CAIRN_PUBLIC_URL: Type.Optional(Type.String({ minLength: 1 })),
  CAIRN_JWT_SECRET: Type.Optional(Type.String({ minLength: 16 })),
  CAIRN_JWT_TTL: Type.Integer({ default: 86400, minimum: 60 }),
  CAIRN_SIGNUP: Type.Union([Type.Literal('first-user'), Type.Literal('open')], { default: 'first-user' }),
  CAIRN_RATE_LIMIT_KNOWLEDGE: Type.Integer({ default: 30, minimum: 0 }),
  CAIRN_RATE_LIMIT_VOICE_NOTES: Type.Integer({ default: 100, minimum: 0 }),
  CAIRN_RATE_LIMIT_ARTIFACTS: Type.Integer({ default: 120, minimum: 0 }),
  CAIRN_RATE_LIMIT_DEFAULT: Type.Integer({ default: 600, minimum: 0 }),
  CAIRN_ALLOW_PRIVATE_URLS: Type.Boolean({ default: false }),
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
  CAIRN_SERVICE_KEY: Type.Optional(Type.String({ minLength: 16 })),
  CAIRN_LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' }
  ),
  CAIRN_RETENTION_DAYS: Type.Integer({ default: 30, minimum: 1 }),
  CAIRN_METRICS: Type.Boolean({ default: false }),
  CAIRN_METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 }))
})

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
  llm: { baseUrl?: string; apiKey?: string; model?: string }
  stt: { mode: 'auto' | 'openai' | 'pocketsphinx' | 'none'; baseUrl?: string; apiKey?: string; model: string }
  /** an OpenAI-compatible /v1 embeddings endpoint: semantic and hybrid search use it when set */
  embeddings: { baseUrl?: string; apiKey?: string; model?: string; /** passages per request (default 32) */ batchSize?: number; /** ms between looks for new passages (default 2000) */ pollMs?: number }
  webSearchUrl?: string
  serviceKey?: string
  logLevel: string
  retentionDays: number
  /** Prometheus metrics at /metrics; with a token, scrapers must send it as a bearer token */
  metrics: { enabled: boolean; token?: string }
}

/** Reads the environment once; the only place in the service that looks at process.env. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const e = envSchema<Env>({ schema: EnvSchema, data: env, dotenv: false })
  if (e.CAIRN_EMBED_BASE_URL && !e.CAIRN_EMBED_MODEL) throw new Error('CAIRN_EMBED_MODEL is required when CAIRN_EMBED_BASE_URL is set (e.g. nomic-embed-text)')
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
    llm: { baseUrl: e.CAIRN_LLM_BASE_URL, apiKey: e.CAIRN_LLM_API_KEY, model: e.CAIRN_LLM_MODEL },
    stt: {
      mode: e.CAIRN_STT,
      baseUrl: e.CAIRN_STT_BASE_URL,
      apiKey: e.CAIRN_STT_API_KEY,
      model: e.CAIRN_STT_MODEL
    },
    embeddings: { baseUrl: e.CAIRN_EMBED_BASE_URL, apiKey: e.CAIRN_EMBED_API_KEY, model: e.CAIRN_EMBED_MODEL },
    webSearchUrl: e.CAIRN_WEB_SEARCH_URL,
    serviceKey: e.CAIRN_SERVICE_KEY,
    logLevel: e.CAIRN_LOG_LEVEL,
    retentionDays: e.CAIRN_RETENTION_DAYS,
    metrics: { enabled: e.CAIRN_METRICS, token: e.CAIRN_METRICS_TOKEN }
  }
}
