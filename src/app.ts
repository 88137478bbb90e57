import Fastify, { type FastifyServerOptions } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import path from 'node:path'
import type { Config } from './config.js'
import { keptSecret } from './kept-secret.js'
import { openDatabase } from './db/index.js'
import { prepareTrigrams } from './knowledge/trigram-file.js'
import { restrictNewFiles, secureDataDir } from './db/data-dir.js'
import core from './core.js'
import writeTurn from './http/write-turn.js'
import auth, { type RouteAuth } from './auth/plugin.js'
import rateLimit, { failedAuthentications } from './http/rate-limit.js'
import idempotency from './http/idempotency.js'
import securityHeaders from './http/security-headers.js'
import shutdown from './http/shutdown.js'
import webConsole from './http/console.js'
import requestLog from './developer-log/recorder.js'
import events from './events/bus.js'
import workspaceEvents from './events/workspace-stream.js'
import metrics from './http/metrics.js'
import maintenance from './jobs/maintenance.js'
import openApi from './http/openapi.js'
import { requestIdOf } from './http/request-id.js'
import cors from '@fastify/cors'
import knowledgeModule from './knowledge/plugin.js'
import assistant from './assistant/plugin.js'
import channelsDomain from './channels/plugin.js'
import artifactsDomain from './artifacts/plugin.js'
import agentsDomain from './agents/plugin.js'
import searchDomain from './search/plugin.js'
import { errorHandler } from './http/errors.js'
import { installJsonGuard } from './http/json-guard.js'
import { installFiniteQueryCheck } from './http/finite-query.js'
import { installBodyBudgets, DEFAULT_BODY_LIMIT } from './http/body-budget.js'
import { strictBodies } from './http/validators.js'
import { serverTimeouts } from './http/timeouts.js'
import { ErrorSchema } from '../schema/api/common.js'
import { routeGroup } from './http/route-group.js'
import { trustProxyOption } from './net/client-address.js'
import mcp from './mcp/plugin.js'
import health from '../plugins/health/index.js'
import accounts from '../plugins/accounts/index.js'
import teammates from '../plugins/accounts/teammates.js'
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
import eventStream from '../plugins/events/index.js'
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
  /** Fastify's schema compilers; default: Fastify's own, built for this app (tests share them across apps) */
  schemaController?: FastifyServerOptions['schemaController']
}

/** Headers that carry credentials: never written to a log line. */
const REDACTED_HEADERS = [
  'req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers["x-service-key"]', 'req.headers.cookie'
]

/** The service's logger settings: JSON lines, credentials redacted. */
export function loggerOptions(level: string, stream?: { write(line: string): void }) {
  return { level, redact: { paths: REDACTED_HEADERS, censor: '[redacted]' }, ...(stream ? { stream } : {}) }
}

/** `CAIRN_JWT_SECRET` (docs/self-hosting.md): configured, or generated once and kept in the data dir (0600). */
export function jwtSecretFor(config: Config): string {
  return config.jwtSecret ?? keptSecret(config.dataDir, 'jwt-secret')
}

export async function buildApp(config: Config, options: BuildOptions = {}) {
  restrictNewFiles()
  const tightened = secureDataDir(config.dataDir)
  const jwtSecret = jwtSecretFor(config)
  // the checkpoint thread starts with the connection; its errors reach the app's log once there is one
  let checkpointError = (err: Error) => { console.error(err) }
  const database = openDatabase(path.join(config.dataDir, 'cairn.db'),
    { checkpointer: { onError: (err) => checkpointError(err) } })
  // the trigram index's file brought up to date (made again after an upgrade or a restore of the main file only)
  let trigrams
  try {
    trigrams = prepareTrigrams(database.sqlite.name)
  } catch (err) {
    await database.close()
    throw err
  }

  const app = Fastify({
    logger: options.logger ?? false,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // `discriminator` lets a union be checked by its tag alone (workflow steps): clear errors, one branch checked
    ajv: { customOptions: { discriminator: true } },
    genReqId: requestIdOf,
    // behind a reverse proxy (CAIRN_TRUST_PROXY), request.ip is the client's address from X-Forwarded-For
    trustProxy: trustProxyOption(config.trustProxy),
    requestIdHeader: false,
    // every request has a budget: bytes (each route's, src/http/body-budget.ts), time to arrive, no coercion of bodies
    bodyLimit: DEFAULT_BODY_LIMIT,
    ...serverTimeouts(config.requestTimeoutMs),
    schemaController: strictBodies(options.schemaController)
  }).withTypeProvider<TypeBoxTypeProvider>()
  checkpointError = (err) => app.log.error({ err }, 'write-ahead log checkpoint')
  if (trigrams.rebuilt) app.log.info('the trigram index file was made again from the passages')
  const { moved, orphans, ahead } = database.outbox
  if (moved) app.log.info(moved, 'webhook messages and deliveries moved into the outbox file')
  if (ahead > 0) {
    app.log.warn({ removed: ahead }, 'outbox file: messages of events cairn.db does not have removed (it was ahead)')
  }
  if (orphans > 0) app.log.info({ removed: orphans }, 'outbox file: rows of deleted webhooks removed')
  if (tightened.length) {
    app.log.warn({ changed: tightened }, `data directory: ${tightened.length} permission(s) tightened to 0700/0600`)
  }

  // first of all hooks: every answer, a refusal by auth or rate limit included, names its request (x-request-id)
  await app.register(securityHeaders)
  await app.register(shutdown)
  app.setErrorHandler(errorHandler)
  installJsonGuard(app)
  installFiniteQueryCheck(app)
  installBodyBudgets(app)
  // unknown paths: the web console's files and routes, else the JSON 404 (src/http/console.ts)
  await app.register(webConsole)
  app.addSchema(ErrorSchema)

  // every route, as registered: the authorization matrix test walks this table
  const routeTable: RouteEntry[] = []
  app.decorate('routeTable', routeTable)
  app.addHook('onRoute', (route) => {
    // each route's group, worked out once: rate limits and the request log read it on every request
    route.config = { ...route.config, group: routeGroup(route.url) }
    // the API documentation is public
    if (route.url.startsWith('/api/docs')) route.config.auth = 'public'
    // CORS preflight (answered by @fastify/cors before any credential check)
    if ([route.method].flat().every((m) => m === 'OPTIONS')) route.config.auth = 'public'
    for (const method of [route.method].flat()) routeTable.push({ method, url: route.url,
      auth: route.config?.auth ?? 'required' })
  })

  if (config.corsOrigins.length > 0) {
    await app.register(cors, {
      origin: config.corsOrigins,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      // the MCP headers: browser-based MCP clients (the tool server at /api/mcp) send and read them
      allowedHeaders: ['authorization', 'content-type', 'x-api-key', 'x-workspace-id', 'idempotency-key',
        'x-request-id', 'last-event-id', 'mcp-protocol-version', 'mcp-session-id'],
      exposedHeaders: ['x-request-id', 'idempotency-replayed', 'retry-after', 'x-ratelimit-limit',
        'x-ratelimit-remaining', 'x-ratelimit-reset', 'content-disposition', 'mcp-session-id', 'mcp-protocol-version'],
      maxAge: 600
    })
  }
  await app.register(openApi, { publicUrl: config.publicUrl })

  await app.register(core, { config, database })
  // ahead of auth: an address past its failed authentications is refused before its credentials are checked
  await app.register(failedAuthentications, { trustProxy: config.trustProxy !== false })
  await app.register(auth, { jwtSecret, jwtTtlSeconds: config.jwtTtlSeconds, serviceKey: config.serviceKey })
  await app.register(rateLimit, { limits: config.rateLimits })
  await app.register(idempotency, { secret: jwtSecret })
  // after idempotency: its preValidation hook goes ahead of the key's (a write)
  await app.register(writeTurn)
  await app.register(requestLog)
  await app.register(events)
  await app.register(workspaceEvents)
  await app.register(metrics)
  await app.register(maintenance)
  await app.register(knowledgeModule)
  await app.register(assistant)
  await app.register(channelsDomain)
  await app.register(artifactsDomain)
  await app.register(agentsDomain)
  await app.register(searchDomain)
  // before the resource plugins: the tool server reads their route schemas as they are registered
  await app.register(mcp)

  await app.register(health, { prefix: '/api' })
  await app.register(accounts, { prefix: '/api/v2' })
  await app.register(teammates, { prefix: '/api/v2' })
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
  await app.register(eventStream, { prefix: '/api/v2/events' })
  await app.register(knowledge, { prefix: '/api', ...options.knowledge })

  return app
}

export type App = Awaited<ReturnType<typeof buildApp>>
