import fp from 'fastify-plugin'
import { and, eq, gt, inArray, lt, sql } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import type { DeliveryAttempt } from './delivery.js'
import { createOutboxThread } from './outbox-thread.js'
import { secretBox, type SecretBox } from './secret-box.js'
import { keptSecret } from '../kept-secret.js'
import { newWriteIntent, writeIntentOf } from '../db/write-intent.js'
import { createOutboxReader, createOutboxWriter, newDeliveryId, RETRY_MAX_ATTEMPTS } from './outbox.js'
import type { EventName } from './names.js'
import { jobs } from '../../schema/tables/jobs.js'
import type { JobPayloads } from '../jobs/payloads.js'
import { webhookEvents, webhooks } from '../../schema/tables/webhooks.js'

export interface EventBus {
  /**
   * Writes the event to the outbox (one row, in the caller's transaction when there is one) if any active
   * webhook of the workspace subscribes to it; a background job fans it out. Returns that number of webhooks.
   */
  emit(workspaceId: string, event: EventName, data: object): number
  /** sends test.ping to one webhook now (active or not) and records the attempt */
  ping(hook: WebhookTarget): Promise<DeliveryAttempt>
  /**
   * queues a new attempt of a recorded delivery's message: the new delivery's id, undefined when it is not the
   * webhook's
   */
  redeliver(webhookId: string, deliveryId: string, org: string): string | undefined
  /** a webhook was deleted: its messages and delivery records go too (in the background) */
  forget(webhookId: string): void
  /** retention: outbox events, messages and delivery records older than `cutoff`; what was removed */
  retain(cutoff: string): Promise<Record<string, number>>
}

/** retries in flight at once, and of one organization at most */
const RETRY_SLOTS = 16
const RETRY_PER_ORG = 4
/** redeliveries in flight at once, and of one organization at most */
const REDELIVER_SLOTS = 4
const REDELIVER_PER_ORG = 2

export type WebhookTarget = Pick<typeof webhooks.$inferSelect, 'id' | 'workspaceId'>

declare module 'fastify' {
  interface FastifyInstance {
    events: EventBus
    /** webhook signing secrets sealed at rest (src/events/secret-box.ts) */
    webhookSecrets: SecretBox
  }
}

async function eventsPlugin(app: FastifyInstance) {
  const sqlite = app.sqlite
  const log = app.log
  const webhookKey = keptSecret(app.config.dataDir, 'webhook-key')
  const box = secretBox(webhookKey)
  app.decorate('webhookSecrets', box)
  sealOlderSecrets(app, box)

  const outbox = createOutboxWriter(app.db, sqlite)
  const reader = createOutboxReader(app.outboxDb)
  // the fan-out, the HTTP attempts and their recording run in threads of their own (outbox-worker.ts), on a
  // connection of their own: the request thread writes one outbox row per event and wakes them
  const thread = createOutboxThread({ file: sqlite.name, intent: writeIntentOf(sqlite) ?? newWriteIntent(),
    schedule: app.config.webhookRetrySchedule, allowPrivate: app.config.allowPrivateUrls,
    allow: app.config.webhookAllow, webhookKey }, {
    onKick: () => kick(),
    onRetries: () => app.jobs.poke(),
    log: (level, fields, msg) => log[level](fields, msg)
  })

  // the fan-out job: one at a time, queued when the outbox gets a row and none is queued or running
  let fanoutQueued = false
  /** set while the job's run is under way in the thread: an event wakes it rather than queuing a job */
  let fanoutRunning = false
  let emitted = false
  /** set when the app closes: a kick scheduled by a late emit must not touch the closed queue (the event stays in
   * the outbox and is fanned out at the next start) */
  let closed = false
  function kick() {
    if (closed) return
    if (fanoutQueued) return
    fanoutQueued = true
    app.jobs.enqueue('webhook.fanout', null)
  }
  /** after the caller's transaction and its response: the event's row is committed, and the reply written first */
  function notify() {
    if (emitted) return
    emitted = true
    setImmediate(() => {
      emitted = false
      if (fanoutRunning) thread.wake()
      else kick()
    })
  }

  app.jobs.register('webhook.fanout', async (_payload, ctx) => {
    fanoutQueued = true
    fanoutRunning = true
    try {
      await thread.fanout(ctx.signal)
    } finally {
      fanoutQueued = false
      fanoutRunning = false
    }
  }, { maxAttempts: 100, backoffMs: 1000, concurrency: 1 })

  // the retry slots are shared fairly: one organization's failing receivers hold at most RETRY_PER_ORG of them, and
  // another organization's due retry is claimed before the rest of its backlog
  app.jobs.register('webhook.retry', async (payload, ctx) => {
    const { seq, retry, messageId } = payload
    await thread.single({ seq, messageId, kind: 'retry', retry, deliveryId: newDeliveryId() }, ctx.signal)
  }, { maxAttempts: RETRY_MAX_ATTEMPTS, concurrency: RETRY_SLOTS, fairBy: 'org', perKey: RETRY_PER_ORG })

  // redeliveries, asked for by people, shared the same way: one organization's at most REDELIVER_PER_ORG at once
  app.jobs.register('webhook.redeliver', async (payload, ctx) => {
    const { seq, deliveryId, messageId } = payload
    await thread.single({ seq, messageId, kind: 'redeliver', retry: 0, deliveryId }, ctx.signal)
  }, { maxAttempts: 3, concurrency: REDELIVER_SLOTS, fairBy: 'org', perKey: REDELIVER_PER_ORG })

  // jobs queued by an earlier version (one per webhook and event): each becomes a message of its own, once whatever
  // stops the process: the event's seq goes into the job's payload in the transaction that writes the event (a run
  // after a stop finds it there), and the outbox thread adds its message only if that event has none for the webhook
  const setPayload = app.db.update(jobs).set({ payload: sql`${sql.placeholder('payload')}` })
    .where(eq(jobs.id, sql.placeholder('id'))).prepare()
  const legacyEvent = app.sqlite.transaction((jobId: string, workspaceId: string,
    payload: JobPayloads['webhook.deliver']) => {
    const { seq } = outbox.addEvent(workspaceId, payload.event, payload.data, true)
    setPayload.run({ id: jobId, payload: JSON.stringify({ ...payload, eventSeq: seq }) })
    return seq
  })
  app.jobs.register('webhook.deliver', async (payload, ctx) => {
    const { webhookId } = payload
    const hook = app.db.select({ workspaceId: webhooks.workspaceId }).from(webhooks).where(eq(webhooks.id, webhookId))
      .get()
    if (!hook) return
    const seq = payload.eventSeq ?? legacyEvent(ctx.jobId, hook.workspaceId, payload)
    await thread.chore({ add: { eventSeq: seq, webhookId } })
    notify()
  }, { maxAttempts: 1 })

  app.decorate('events', {
    emit(workspaceId, event, data) {
      const n = outbox.subscribers(workspaceId, event)
      if (n === 0) return 0
      outbox.addEvent(workspaceId, event, data)
      notify()
      return n
    },
    async ping(hook) {
      const { seq } = outbox.addEvent(hook.workspaceId, 'test.ping', {}, true)
      const attempt = await thread.single({ seq: { eventSeq: seq, webhookId: hook.id }, kind: 'test', retry: 0,
        deliveryId: newDeliveryId() })
      if (!attempt) throw new Error('the test message was removed before its attempt')
      return attempt
    },
    redeliver(webhookId, deliveryId, org) {
      const message = reader.deliveryMessage(deliveryId, webhookId)
      if (message === undefined) return undefined
      const id = newDeliveryId()
      app.jobs.enqueue('webhook.redeliver', { seq: message.seq, messageId: message.id, deliveryId: id, org })
      return id
    },
    forget(webhookId) {
      // rows left by a failure here are removed at the next start (src/db/outbox-file.ts)
      thread.chore({ purge: webhookId }).catch((err: Error) =>
        log.warn({ webhookId, error: err.message }, 'rows of a deleted webhook left for the next start'))
    },
    // the thread is not started for nothing: with no event or delivery record past the cutoff, nothing else is
    async retain(cutoff) {
      const old = app.db.select({ one: sql`1` }).from(webhookEvents).where(lt(webhookEvents.createdAt, cutoff))
        .limit(1).get() !== undefined || reader.anyOlder(cutoff)
      return old ? thread.chore({ retain: cutoff }) : {}
    }
  } satisfies EventBus)

  // events written by a process that stopped before fanning them out, or messages it had not sent yet
  app.addHook('onReady', async () => {
    const db = app.db
    const queued = db.select({ one: sql`1` }).from(jobs).where(and(eq(jobs.type, 'webhook.fanout'),
      inArray(jobs.status, ['queued', 'running']))).get()
    const work = db.select({ one: sql`1` }).from(webhookEvents).where(and(gt(webhookEvents.seq,
      reader.expandedThrough()), eq(webhookEvents.expanded, false))).limit(1).get() ?? reader.anyPending()
    if (queued) fanoutQueued = true
    else if (work) kick()
  })
  app.addHook('preClose', async () => { closed = true })
  app.addHook('onClose', async () => thread.close())
}

/** Secrets written before they were sealed (in clear) are sealed once, at start. */
function sealOlderSecrets(app: FastifyInstance, box: SecretBox) {
  const rows = app.db.select({ id: webhooks.id, secret: webhooks.signingSecret,
    previous: webhooks.previousSigningSecret }).from(webhooks).where(sql`${webhooks.signingSecret} NOT LIKE 'enc1:%'
      OR ${webhooks.previousSigningSecret} NOT LIKE 'enc1:%'`).all()
  if (rows.length === 0) return
  app.db.transaction((tx) => {
    for (const r of rows) {
      tx.update(webhooks).set({ signingSecret: box.sealed(r.secret) ? r.secret : box.seal(r.secret, r.id),
        previousSigningSecret: r.previous === null || box.sealed(r.previous) ? r.previous
          : box.seal(r.previous, r.id) })
        .where(eq(webhooks.id, r.id)).run()
    }
  })
  app.log.info({ webhooks: rows.length }, 'webhook signing secrets sealed at rest')
}

export default fp(eventsPlugin, { name: 'cairn-events', dependencies: ['cairn-db'] })
