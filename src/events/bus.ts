import fp from 'fastify-plugin'
import { and, eq, inArray, sql } from 'drizzle-orm'
import { setMaxListeners } from 'node:events'
import type { FastifyInstance } from 'fastify'
import type { DeliveryAttempt } from './delivery.js'
import { createWorkerDeliverer } from './worker-deliverer.js'
import { createRecorder } from './recorder.js'
import { secretBox, type SecretBox } from './secret-box.js'
import { keptSecret } from '../kept-secret.js'
import { createOutboxStore, eventsPerExpansion, newDeliveryId, signingSecrets, type AttemptKind, type OutboxMessage,
  type Outcome } from './outbox.js'
import type { EventName } from './names.js'
import { jobs } from '../../schema/tables/jobs.js'
import { webhookEvents, webhookMessages, webhooks } from '../../schema/tables/webhooks.js'

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
  redeliver(webhookId: string, deliveryId: string): string | undefined
}

export type WebhookTarget = Pick<typeof webhooks.$inferSelect, 'id' | 'workspaceId'>

declare module 'fastify' {
  interface FastifyInstance {
    events: EventBus
    /** webhook signing secrets sealed at rest (src/events/secret-box.ts) */
    webhookSecrets: SecretBox
  }
}

/**
 * messages made per expansion (one transaction), about: the events of a transaction are chosen from the fan-out
 * of the last expansion, so that a burst never holds the loop and SQLite's write lock for long
 */
const EXPAND_MESSAGES = 64
/**
 * after an expansion that emptied the outbox, the next waits this long (ms): under a stream of events (50 a second)
 * a transaction then expands a few of them, not one each; a burst (expansions that leave events behind) is not held
 */
const EXPAND_EVERY_MS = 40
/** outbox events expanded per transaction at most */
const EXPAND_BATCH = 200
/** messages read per query, and kept waiting for a free slot at most about twice that */
const FETCH_BATCH = 256
/** first attempts in flight at once, in all and per webhook (a slow receiver takes only its own slots) */
const MAX_IN_FLIGHT = 64
const MAX_PER_HOOK = 16
/** attempts started per event-loop turn, so a burst never holds the loop */
const STARTS_PER_TURN = 16
/**
 * finished attempts are recorded once this many wait, or the oldest has waited RECORD_DELAY_MS: a commit writes the
 * same few pages (the new deliveries' and their indexes' last leaves) whether it records 5 attempts or 50
 */
const RECORD_BATCH = 100
const RECORD_DELAY_MS = 100
/**
 * attempts recorded per transaction, with a turn of the event loop between two (requests that came in meanwhile
 * are served first): about 1 ms of the request thread each, where a whole batch held it 2–5 ms
 */
const RECORD_CHUNK = 25
/**
 * how long a fan-out run with nothing left waits for the next event before it ends: under a stream of events
 * (10 a second or more) one run serves them all, instead of a job written, claimed and deleted for each event
 */
const LINGER_MS = 100

async function eventsPlugin(app: FastifyInstance) {
  const sqlite = app.sqlite
  const log = app.log
  const webhookKey = keptSecret(app.config.dataDir, 'webhook-key')
  const box = secretBox(webhookKey)
  app.decorate('webhookSecrets', box)
  sealOlderSecrets(app, box)

  // HTTP attempts run in a thread of their own, which opens the sealed secrets too: a burst of deliveries does not
  // compete with requests for the loop
  const deliverer = createWorkerDeliverer({ allowPrivate: app.config.allowPrivateUrls,
    webhookKey,
    onUnreadable: (webhookId, error) => log.error({ webhookId, error }, 'webhook signing secret unreadable') })
  const outbox = createOutboxStore(app.db, sqlite, {
    schedule: app.config.webhookRetrySchedule,
    scheduleRetry: (seq, retry, runAt) => { app.jobs.enqueue('webhook.retry', { seq, retry }, { runAt }) },
    onDeactivated: (webhookId) => log.warn({ webhookId }, 'webhook set inactive: every attempt failed for 5 days')
  })

  const attempt = (row: OutboxMessage, deliveryId: string, signal?: AbortSignal) => {
    const message = { id: row.id, deliveryId, event: row.event, timestamp: row.timestamp, body: row.body }
    return deliverer.deliver(row.url, row.webhookId, signingSecrets(row), message, signal)
  }

  // finished attempts wait here (a few ms) to be recorded together. A crash before that means the attempt is made
  // again (receivers de-duplicate on webhook-id).
  const recorder = createRecorder<Outcome>((outcomes) => outbox.record(outcomes),
    { batch: RECORD_BATCH, delayMs: RECORD_DELAY_MS, chunk: RECORD_CHUNK })

  // the fan-out job: one at a time, queued when the outbox gets a row and none is queued or running
  let fanoutQueued = false
  let outboxDirty = true
  let emitted = false
  /** set when the app closes: a kick scheduled by a late emit must not touch the closed queue (the event stays in
   * the outbox and is fanned out at the next start) */
  let closed = false
  /** set while the fan-out waits: for an attempt to finish, or for a new event */
  let wake: (() => void) | undefined
  function kick() {
    if (closed) return
    if (fanoutQueued) return
    fanoutQueued = true
    app.jobs.enqueue('webhook.fanout', null)
  }

  /**
   * Expands the outbox and makes the first attempt of every pending message, until neither is left. Messages
   * of a crashed process are still pending and are sent by the next run. A stop (shutdown) aborts the attempts
   * in flight; their messages stay pending.
   */
  async function fanout(stop: AbortSignal) {
    // one listener on the queue's signal, however many attempts are in flight
    const controller = new AbortController()
    setMaxListeners(MAX_IN_FLIGHT + 1, controller.signal)
    const signal = controller.signal
    const abort = () => controller.abort()
    stop.addEventListener('abort', abort, { once: true })
    try {
      await fanoutUntilDone(signal)
    } finally {
      stop.removeEventListener('abort', abort)
    }
  }

  async function fanoutUntilDone(signal: AbortSignal) {
    const waiting = new Map<string, OutboxMessage[]>()
    const perHook = new Map<string, number>()
    const inFlight = new Set<Promise<void>>()
    let waitingCount = 0
    let cursor = 0
    let morePending = true
    /** set once the run has waited LINGER_MS with nothing to do; work coming in starts the wait over */
    let lingered = false
    /** events per expansion: about EXPAND_MESSAGES messages at the last expansion's fan-out (16 at first) */
    let expandEvents = eventsPerExpansion(1, 16, EXPAND_MESSAGES, EXPAND_BATCH)
    /** until wake() (or, given `ms`, that long; or the run is stopped: one listener for the run, not per wait) */
    const sleep = (ms?: number) => new Promise<void>((resolve) => {
      if (signal.aborted) { resolve(); return }
      const timer = ms === undefined ? undefined : setTimeout(() => wake?.(), ms)
      wake = () => {
        wake = undefined
        clearTimeout(timer)
        resolve()
      }
    })
    // the signal is this run's own (see fanout()): the listener ends with it
    signal.addEventListener('abort', () => wake?.(), { once: true })
    /** when the last expansion that emptied the outbox ran (performance.now()), or -Infinity */
    let drainedAt = -Infinity
    /**
     * ms until the next expansion may run (0: now), Infinity with nothing to expand: a stream of single events is
     * expanded a few at a time. Within 1 ms counts as due: a timer measures from the loop's clock, which lags
     * performance.now() by the turn's own work, so it often fires a little early.
     */
    const expandIn = () => {
      if (!outboxDirty) return Infinity
      const ms = drainedAt + EXPAND_EVERY_MS - performance.now()
      return ms <= 1 ? 0 : ms
    }
    while (!signal.aborted) {
      if (expandIn() === 0) {
        lingered = false
        const { events, messages } = outbox.expand(expandEvents)
        // cleared only once the expansion is done: one that throws leaves the events for the retried run
        outboxDirty = events === expandEvents
        if (!outboxDirty) drainedAt = performance.now()
        if (messages > 0) morePending = true
        if (events > 0) expandEvents = eventsPerExpansion(events, messages, EXPAND_MESSAGES, EXPAND_BATCH)
      }
      if (morePending && waitingCount < FETCH_BATCH) {
        const rows = outbox.pendingAfter(cursor, FETCH_BATCH)
        if (rows.length < FETCH_BATCH) morePending = false
        for (const row of rows) {
          cursor = row.seq
          if (!row.active) { outbox.fail(row.seq); continue }
          const list = waiting.get(row.webhookId)
          if (list) list.push(row)
          else waiting.set(row.webhookId, [row])
          waitingCount++
        }
      }
      // round robin over the webhooks with a free slot
      let started = 0
      let progress = true
      while (progress && inFlight.size < MAX_IN_FLIGHT && started < STARTS_PER_TURN) {
        progress = false
        for (const [hookId, list] of waiting) {
          if (inFlight.size >= MAX_IN_FLIGHT || started >= STARTS_PER_TURN) break
          const busy = perHook.get(hookId) ?? 0
          if (busy >= MAX_PER_HOOK) continue
          const row = list.shift()!
          if (list.length === 0) waiting.delete(hookId)
          waitingCount--
          perHook.set(hookId, busy + 1)
          const p: Promise<void> = attempt(row, newDeliveryId(), signal).then((a) => {
            if (!signal.aborted) recorder.later({ row, attempt: a, kind: 'first', retry: 0 })
          }).finally(() => {
            inFlight.delete(p)
            perHook.set(hookId, perHook.get(hookId)! - 1)
            wake?.()
          })
          inFlight.add(p)
          started++
          progress = true
        }
      }
      // an expansion held back by EXPAND_EVERY_MS: how long until it is due
      const due = expandIn()
      const heldFor = due > 0 && due !== Infinity ? due : undefined
      if (started === STARTS_PER_TURN) await new Promise((r) => setImmediate(r))
      // a finished attempt or a new event wakes the loop (one waiter, whatever the number of attempts in flight):
      // a slow receiver's attempts never hold up the others' events (a held-back expansion wakes it too; a backlog
      // left by a full one waits for an attempt, as before)
      else if (inFlight.size > 0) await sleep(heldFor)
      else if (waitingCount === 0 && !morePending && heldFor !== undefined) await sleep(heldFor)
      else if (waitingCount === 0 && !morePending && !outboxDirty) {
        if (!lingered) {
          lingered = true
          await sleep(LINGER_MS)
          continue
        }
        // nothing left: the next emit queues a new run (no await between this check and the flag)
        fanoutQueued = false
        break
      } else {
        lingered = false
        // more to expand or to read, and nothing awaited in this turn: requests first
        await new Promise((r) => setImmediate(r))
      }
    }
    await Promise.allSettled(inFlight)
    recorder.flush()
    if (signal.aborted) throw new Error('stopped')
  }

  app.jobs.register('webhook.fanout', async (_payload, ctx) => {
    fanoutQueued = true
    try {
      await fanout(ctx.signal)
    } finally {
      fanoutQueued = false
    }
  }, { maxAttempts: 100, backoffMs: 1000, concurrency: 1 })

  async function single(seq: number, kind: AttemptKind, retry: number, deliveryId: string, signal: AbortSignal) {
    const row = outbox.message(seq)
    if (!row) return
    if (kind === 'retry') {
      if (row.state !== 'retrying') return
      if (!row.active) { outbox.fail(seq); return }
    }
    const a = await attempt(row, deliveryId, signal)
    if (signal.aborted) throw new Error('stopped')
    recorder.now({ row, attempt: a, kind, retry })
  }

  app.jobs.register('webhook.retry', async (payload, ctx) => {
    const { seq, retry } = payload
    await single(seq, 'retry', retry, newDeliveryId(), ctx.signal)
  }, { maxAttempts: 3, concurrency: 8 })

  app.jobs.register('webhook.redeliver', async (payload, ctx) => {
    const { seq, deliveryId } = payload
    await single(seq, 'redeliver', 0, deliveryId, ctx.signal)
  }, { maxAttempts: 3, concurrency: 4 })

  // jobs queued by an earlier version (one per webhook and event): each becomes a message of its own
  app.jobs.register('webhook.deliver', async (payload) => {
    const { webhookId, event, data } = payload
    const hook = app.db.select({ workspaceId: webhooks.workspaceId }).from(webhooks).where(eq(webhooks.id, webhookId))
      .get()
    if (!hook) return
    sqlite.transaction(() => outbox.addMessage(outbox.addEvent(hook.workspaceId, event, data, true).seq, webhookId))()
    outboxDirty = true
    kick()
  }, { maxAttempts: 1 })

  app.decorate('events', {
    emit(workspaceId, event, data) {
      const n = outbox.subscribers(workspaceId, event)
      if (n === 0) return 0
      outbox.addEvent(workspaceId, event, data)
      outboxDirty = true
      // after the caller's transaction and its response: a fan-out woken here would expand the event in the
      // microtasks that run before the request's reply is written, and a job row is not part of the request
      if (!emitted) {
        emitted = true
        setImmediate(() => {
          emitted = false
          wake?.()
          kick()
        })
      }
      return n
    },
    async ping(hook) {
      const seq = sqlite.transaction(() => outbox.addMessage(outbox.addEvent(hook.workspaceId, 'test.ping', {},
        true).seq, hook.id))()
      const row = outbox.message(seq)!
      const a = await attempt(row, newDeliveryId())
      recorder.now({ row, attempt: a, kind: 'test', retry: 0 })
      return a
    },
    redeliver(webhookId, deliveryId) {
      const seq = outbox.deliveryMessage(deliveryId, webhookId)
      if (seq === undefined) return undefined
      const id = newDeliveryId()
      app.jobs.enqueue('webhook.redeliver', { seq, deliveryId: id })
      return id
    }
  } satisfies EventBus)

  // events written by a process that stopped before fanning them out, or messages it had not sent yet
  app.addHook('onReady', async () => {
    const db = app.db
    const queued = db.select({ one: sql`1` }).from(jobs).where(and(eq(jobs.type, 'webhook.fanout'),
      inArray(jobs.status, ['queued', 'running']))).get()
    // literals, for the partial indexes on these conditions (see createOutboxStore)
    const work = db.select({ one: sql`1` }).from(webhookEvents).where(sql`${webhookEvents.expanded} = 0`).get() ??
      db.select({ one: sql`1` }).from(webhookMessages).where(sql`${webhookMessages.state} = 'pending'`).get()
    if (queued) fanoutQueued = true
    else if (work) kick()
  })
  app.addHook('preClose', async () => { closed = true })
  app.addHook('onClose', async () => deliverer.close())
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
