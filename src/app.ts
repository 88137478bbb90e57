import Fastify, { type FastifyServerOptions } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import fs from 'node:fs'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import type { Config } from './config.js'
import { openDatabase } from './db/index.js'
import core from './core.js'
import auth, { type RouteAuth } from './auth/plugin.js'
import rateLimit from './http/rate-limit.js'
import idempotency from './http/idempotency.js'
import requestLog from './http/request-log.js'
import events from './events/bus.js'
import metrics from './http/metrics.js'
import knowledgeModule from './knowledge/plugin.js'
import services from './services.js'
import { errorHandler, notFoundHandler } from './http/errors.js'
import { installJsonGuard } from './http/json-guard.js'
import { ErrorSchema } from '../schema/api/common.js'
import { routeGroup } from './http/route-group.js'
import { VERSION } from './version.js'
import health from '../plugins/health/index.js'
import accounts from '../plugins/accounts/index.js'
import apiKeys from '../plugins/api-keys/index.js'
import developer from '../plugins/developer/index.js'
import activity from '../plugins/activity/index.js'
import voiceNotes, { type VoiceNotesOptions } from '../plugins/voice-notes/index.js'
import channels from '../plugins/channels/index.js'
import chat from '../plugins/chat/index.js'
import agents from '../plugins/agents/index.js'
import workflows from '../plugins/workflows/index.js'
import search from '../plugins/search/index.js'
import artifacts from '../plugins/artifacts/index.js'
import knowledge, { type KnowledgeOptions } from '../plugins/knowledge/index.js'

export interface RouteEntry { method: string; url: string; auth: RouteAuth }

declare module 'fastify' {
  interface FastifyInstance {
    routeTable: RouteEntry[]
  }
}

export interface BuildOptions {
  /** a Fastify logger setting; default: no logging (tests) */
  logger?: FastifyServerOptions['logger']
  knowledge?: KnowledgeOptions
  voiceNotes?: VoiceNotesOptions
}

/** Headers that carry credentials: never written to a log line. */
const REDACTED_HEADERS = [
  'req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers["x-service-key"]', 'req.headers.cookie'
]

/** The service's logger settings: JSON lines, credentials redacted. */
export function loggerOptions(level: string, stream?: { write(line: string): void }) {
  return { level, redact: { paths: REDACTED_HEADERS, censor: '[redacted]' }, ...(stream ? { stream } : {}) }
}

/** The JWT secret of CONTRACT.md §1: configured, or generated once and kept in the data dir (0600). */
export function jwtSecretFor(config: Config): string {
  if (config.jwtSecret) return config.jwtSecret
  const file = path.join(config.dataDir, 'jwt-secret')
  try {
    return fs.readFileSync(file, 'utf8').trim()
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  fs.mkdirSync(config.dataDir, { recursive: true })
  const secret = randomBytes(32).toString('base64url')
  try {
    fs.writeFileSync(file, secret + '\n', { mode: 0o600, flag: 'wx' })
    return secret
  } catch (err) {
    // another process created it first: use theirs
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(file, 'utf8').trim()
    throw err
  }
}

export async function buildApp(config: Config, options: BuildOptions = {}) {
  const jwtSecret = jwtSecretFor(config)
  // the checkpoint thread starts with the connection; its errors reach the app's log once there is one
  let checkpointError = (err: Error) => { console.error(err) }
  const database = openDatabase(path.join(config.dataDir, 'cairn.db'), { checkpointer: { onError: (err) => checkpointError(err) } })

  const app = Fastify({
    logger: options.logger ?? false,
    return503OnClosing: true,
    forceCloseConnections: 'idle'
  }).withTypeProvider<TypeBoxTypeProvider>()
  checkpointError = (err) => app.log.error({ err }, 'write-ahead log checkpoint')

  app.setErrorHandler(errorHandler)
  installJsonGuard(app)
  app.setNotFoundHandler(notFoundHandler)
  app.addSchema(ErrorSchema)

  // every route, as registered: the authorization matrix test walks this table
  const routeTable: RouteEntry[] = []
  app.decorate('routeTable', routeTable)
  app.addHook('onRoute', (route) => {
    // each route's group, worked out once: rate limits and the request log read it on every request
    route.config = { ...route.config, group: routeGroup(route.url) }
    // the API documentation is public
    if (route.url.startsWith('/api/docs')) route.config.auth = 'public'
    for (const method of [route.method].flat()) routeTable.push({ method, url: route.url, auth: route.config?.auth ?? 'required' })
  })

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Cairn API', version: VERSION, description: 'Self-hosted workspace platform for AI-assisted work' },
      servers: [{ url: config.publicUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'A JWT from /api/v2/auth/login, or an API key (cairn_...)' },
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' }
        }
      },
      security: [{ bearer: [] }, { apiKey: [] }]
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) || `def-${i}` }
  })
  await app.register(swaggerUi, { routePrefix: '/api/docs' })

  await app.register(core, { config, database })
  await app.register(auth, { jwtSecret, jwtTtlSeconds: config.jwtTtlSeconds, serviceKey: config.serviceKey })
  await app.register(rateLimit, { limits: config.rateLimits })
  await app.register(idempotency)
  await app.register(requestLog)
  await app.register(events)
  await app.register(metrics)
  await app.register(knowledgeModule)
  await app.register(services)

  await app.register(health, { prefix: '/api' })
  await app.register(accounts, { prefix: '/api/v2' })
  await app.register(apiKeys, { prefix: '/api/v2/api-keys' })
  await app.register(developer, { prefix: '/api/v2/developer' })
  await app.register(activity, { prefix: '/api/v2/activity' })
  await app.register(voiceNotes, { prefix: '/api/v2/voice-notes', ...options.voiceNotes })
  await app.register(channels, { prefix: '/api/v2' })
  await app.register(chat, { prefix: '/api/v2/chat' })
  await app.register(agents, { prefix: '/api/v2/agents' })
  await app.register(workflows, { prefix: '/api/v2' })
  await app.register(search, { prefix: '/api/v2/search' })
  await app.register(artifacts, { prefix: '/api/v2/artifacts' })
  await app.register(knowledge, { prefix: '/api', ...options.knowledge })

  return app
}

export type App = Awaited<ReturnType<typeof buildApp>>
