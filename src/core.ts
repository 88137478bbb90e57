import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type Database from 'better-sqlite3'
import type { Config } from './config.js'
import type { Db, DatabaseHandle } from './db/index.js'
import type { OutboxDb } from './db/outbox-file.js'
import { createJobQueue, type JobQueue } from './jobs/queue.js'
import { configSecrets } from './log/mask.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    db: Db
    sqlite: Database.Database
    /** the outbox file (webhook messages and deliveries, src/db/outbox-file.ts): read here, written by its thread */
    outboxDb: OutboxDb
    outboxSqlite: Database.Database
    jobs: JobQueue
  }
}

/** The shared infrastructure every resource plugin is handed: config, database and job queue. */
async function corePlugin(app: FastifyInstance, opts: { config: Config; database: DatabaseHandle }) {
  app.decorate('config', opts.config)
  app.decorate('db', opts.database.db)
  app.decorate('sqlite', opts.database.sqlite)
  app.decorate('outboxDb', opts.database.outbox.db)
  app.decorate('outboxSqlite', opts.database.outbox.sqlite)
  app.decorate('jobs', createJobQueue(opts.database.db, opts.database.sqlite, app.log,
    { secrets: configSecrets(opts.config) }))
  app.addHook('onReady', async () => app.jobs.start())
  app.addHook('preClose', async () => { await app.jobs.stop() })
  app.addHook('onClose', async () => opts.database.close())
}

export default fp(corePlugin, { name: 'cairn-db' })
