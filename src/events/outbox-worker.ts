// The webhook outbox thread: its own connection to cairn.db, with the outbox file attached, which it alone writes
// (src/db/outbox-file.ts). It expands the outbox into messages, hands their attempts to the delivery thread (niced,
// started from here) and records the outcomes. The request thread writes one outbox row per event in the request's
// transaction and wakes this thread: none of a fan-out's reads, writes and messages run on the event loop that
// serves requests, and only a failed attempt's recording writes cairn.db (its write lock).
import { parentPort, workerData } from 'node:worker_threads'
import { randomUUID } from 'node:crypto'
import { setMaxListeners } from 'node:events'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import * as tables from '../../schema/tables/index.js'
import { holdingWriteLock, INTENT, OUTBOX_HOLDER } from '../db/write-intent.js'
import { openThreadWriter } from '../db/connection.js'
import { attachOutbox, OUTBOX_SCHEMA } from '../db/outbox-file.js'
import { jobInsert } from '../jobs/queue.js'
import type { DeliveryAttempt } from './delivery.js'
import { createWorkerDeliverer } from './worker-deliverer.js'
import { createRecorder } from './recorder.js'
import { createPacer } from './pacer.js'
import { askForWake, listenWithoutRun, stopListening, takeEvents } from './wake-flags.js'
import { createOutboxStore, eventsPerExpansion, newDeliveryId, RETRY_MAX_ATTEMPTS, signingSecrets,
  type AttemptKind, type OutboxMessage, type Outcome, type StepAside } from './outbox.js'

export interface OutboxThreadData {
  file: string
  /** the server connection's write count (src/db/write-intent.ts) */
  intent: Int32Array
  /** shared with the request thread: EVENTS_WRITTEN and LISTENING (outbox-thread.ts) */
  wakeFlags: Int32Array
  /** seconds before each retry */
  schedule: number[]
  allowPrivate: boolean
  /** CAIRN_WEBHOOK_ALLOW's entries */
  allow: string[]
  webhookKey: string
  timeoutMs?: number
}

/**
 * an attempt asked for by a job or a route: a retry, a redelivery or a test ping of one message (`seq`; for a test
 * ping, the message made first of its event and webhook)
 */
export interface SingleRequest {
  n: number
  seq: number | { eventSeq: number; webhookId: string }
  /** the message `seq` named when the job was queued: nothing is attempted if it names another one now */
  messageId?: string
  kind: Exclude<AttemptKind, 'first'>
  retry: number
  deliveryId: string
}

/** the outbox file's other writes, asked for by the request thread */
export type Chore =
  /** a message for one webhook of an event never fanned out (a job of an earlier version); a run sends it */
  | { add: { eventSeq: number; webhookId: string } }
  /** the messages and deliveries of a webhook deleted from cairn.db */
  | { purge: string }
  /** retention: records and outbox events older than the cutoff (ISO 8601) */
  | { retain: string }

export type ToOutbox =
  /** a fan-out run: expand and make first attempts until nothing is left, then `done` */
  | { run: true }
  /** an event was written */
  | { wake: true }
  /** aborts the run and every attempt in flight (their messages stay pending); the run answers `done` */
  | { stop: true }
  | { single: SingleRequest }
  | { chore: Chore; n: number }
  /** records what has finished, closes the connection and ends the thread */
  | { close: true }

export type FromOutbox =
  | { done: true; error?: string }
  /** a wake came with no run: the request thread queues one */
  | { kick: true }
  /** a single attempt's end: `attempt` undefined when there was nothing to attempt */
  | { single: number; attempt?: DeliveryAttempt; error?: string }
  /** a chore's end: what it removed, by kind of row */
  | { chore: number; removed?: Record<string, number>; error?: string }
  /** retry jobs were queued on this connection */
  | { retries: true }
  | { log: 'warn' | 'error'; msg: string; fields: Record<string, unknown> }

/**
 * after an expansion that emptied the outbox, the next waits this long (ms): under a stream of events (50 a second)
 * a transaction then expands a few of them, not one each; a burst (expansions that leave events behind) is not held
 */
const EXPAND_EVERY_MS = 40
/**
 * messages made per expansion (one transaction of the outbox file), about: the events of a transaction are chosen
 * from the fan-out of the last expansion
 */
const EXPAND_MESSAGES = 64
/** outbox events expanded per transaction at most */
const EXPAND_BATCH = 200
/** messages read per query, and kept waiting for a free slot at most about twice that */
const FETCH_BATCH = 256
/**
 * first attempts in flight at once: in all, per organization and per webhook. The slots are shared fairly: an
 * organization takes at most half of them, and its turn comes round after every other's (so one tenant's slow
 * receivers take only its own share, and another tenant's deliveries start at once)
 */
const MAX_IN_FLIGHT = 64
const MAX_PER_ORG = 32
const MAX_PER_HOOK = 16
/**
 * an attempt in flight this long no longer counts against MAX_IN_FLIGHT, only against its organization's and
 * webhook's slots: receivers that hold their requests open until the timeout cannot fill the shared slots. A held
 * request costs a socket and no CPU; MAX_OPEN bounds them all
 */
const SLOW_MS = 1000
const MAX_OPEN = 512
/**
 * messages of one organization kept waiting for a slot at most: the fetch passes over the rest (and reads the
 * others' behind them), and comes back for them once that organization's waiting ones are half gone. All the
 * organizations' waiting messages together stay under MAX_WAITING
 */
const MAX_WAITING_PER_ORG = 128
const MAX_WAITING = 1024
/** attempts started per event-loop turn, so that finished ones are taken in between */
const STARTS_PER_TURN = 16
/**
 * under a stream of events, first attempts start a few every PACE_MS, spread over EXPAND_EVERY_MS, while fewer
 * than PACE_UNDER wait and the outbox is drained (pacer.ts); a burst is not paced
 */
const PACE_MS = 4
const PACE_UNDER = 48
/**
 * finished attempts are recorded once this many wait, or the oldest has waited RECORD_DELAY_MS: a commit writes the
 * same few pages (the new deliveries' and their indexes' last leaves) whether it records 5 attempts or 50
 */
const RECORD_BATCH = 100
const RECORD_DELAY_MS = 100
/** attempts recorded per transaction at most; a transaction ends sooner when a write of the server waits */
const RECORD_CHUNK = 100
/**
 * how long a fan-out run with nothing left waits for the next event before it ends: under a stream of events
 * (10 a second or more) one run serves them all, instead of a job written, claimed and deleted for each event
 */
const LINGER_MS = 100
/** the step of this thread's waits for the server's writes, and the longest it lets them go first */
const GAP_MS = 1
const YIELD_MAX_MS = 1000
/**
 * how long a transaction is rolled back for a write of the server (about a request's: a stream of requests is
 * rarely met twice), before it commits what it has done instead (under a load of writes it still moves on)
 */
const ROLL_BACK_FOR_MS = 20

const port = parentPort!
const options = workerData as OutboxThreadData
const { intent, wakeFlags } = options
/** asks for a wake at the next event (wake-flags.ts); false, with the outbox marked, when one came already */
function listen(): boolean {
  if (askForWake(wakeFlags)) return true
  outboxDirty = true
  return false
}
// the server's checkpoint thread folds both files' logs (src/db/checkpointer.ts)
const sqlite = openThreadWriter(options.file)
attachOutbox(sqlite)
const db = drizzle(sqlite, { schema: tables })
/**
 * this thread's own checkpoint of the outbox file, now and then: it alone writes that file, whose log would grow
 * without end if the checkpoint thread failed or is off (one with nothing left to copy costs next to nothing)
 */
const OUTBOX_CHECKPOINT_MS = 10_000
setInterval(() => {
  try {
    sqlite.pragma(`${OUTBOX_SCHEMA}.wal_checkpoint(PASSIVE)`)
  } catch { /* the checkpoint thread's, or the next one */ }
}, OUTBOX_CHECKPOINT_MS).unref()

const post = (message: FromOutbox) => port.postMessage(message)
const nap = new Int32Array(new SharedArrayBuffer(4))

const serverWaits = () => Atomics.load(intent, INTENT) > 0

/**
 * Runs `write` (a transaction) when no write of the server's connection waits, flagged so that the server's writes
 * wait for its commit (src/db/write-intent.ts). It steps aside for a write of the server that comes meanwhile
 * (StepAside in outbox.ts): by rolling back for ROLL_BACK_FOR_MS after the first try, then by committing what it
 * has done; after YIELD_MAX_MS of the server's writes, it runs anyway.
 */
function locked<T>(write: (aside: StepAside) => T | undefined): T {
  const since = performance.now()
  for (;;) {
    const waited = performance.now() - since
    const aside: StepAside = { waits: serverWaits, rollBack: waited < ROLL_BACK_FOR_MS }
    const done = holdingWriteLock(intent, () => write(aside), waited >= YIELD_MAX_MS, OUTBOX_HOLDER)
    if (done?.value !== undefined) return done.value
    Atomics.wait(nap, 0, 0, GAP_MS)
  }
}

const queueJob = jobInsert(db, sqlite, 'queued')
let retriesQueued = false
const outbox = createOutboxStore(db, sqlite, {
  schedule: options.schedule,
  scheduleRetry(seq, messageId, retry, runAt, org) {
    queueJob.run({ id: randomUUID(), type: 'webhook.retry', payload: JSON.stringify({ seq, retry, messageId, org }),
      maxAttempts: RETRY_MAX_ATTEMPTS, runAt, now: new Date().toISOString() })
    retriesQueued = true
  },
  onDeactivated: (webhookId, reason) => post({ log: 'warn', msg: reason === 'gone'
    ? 'webhook set inactive: its receiver answered 410 Gone' : 'webhook set inactive: every attempt failed for 5 days',
  fields: { webhookId, reason } })
})

const deliverer = createWorkerDeliverer({ allowPrivate: options.allowPrivate, allow: options.allow,
  timeoutMs: options.timeoutMs,
  webhookKey: options.webhookKey,
  onUnreadable: (webhookId, error) => post({ log: 'error', msg: 'webhook signing secret unreadable',
    fields: { webhookId, error } }) })

const attempt = (row: OutboxMessage, deliveryId: string, signal?: AbortSignal) => {
  const message = { id: row.id, deliveryId, event: row.event, timestamp: row.timestamp, body: row.body }
  return deliverer.deliver(row.url, row.webhookId, signingSecrets(row), message, signal)
}

// finished attempts wait here (a few ms) to be recorded together. A crash before that means the attempt is made
// again (receivers de-duplicate on webhook-id).
const recorder = createRecorder<Outcome>((outcomes) => {
  try {
    const recording = outbox.recording(outcomes)
    retriesQueued = false
    // cleared before each try: once locked() returns, it tells whether the committed one queued a retry (a
    // rolled-back or failed one queued nothing). Only outcomes that write cairn.db take its lock.
    const recorded = !recording.touchesMain ? outbox.record(recording)! : locked((aside) => {
      retriesQueued = false
      return outbox.record(recording, aside)
    })
    if (retriesQueued) post({ retries: true })
    for (let i = 0; i < recorded; i++) held.delete(outcomes[i].row.seq)
    return recorded
  } catch (err) {
    // their messages stay pending: a run attempts them again
    for (const o of outcomes) held.delete(o.row.seq)
    post({ log: 'error', msg: 'webhook attempts not recorded', fields: { error: (err as Error).message,
      attempts: outcomes.length } })
    return outcomes.length
  }
}, { batch: RECORD_BATCH, delayMs: RECORD_DELAY_MS, chunk: RECORD_CHUNK })

/** a run's attempts in flight and the single ones listen to it (one listener each) */
function stopper() {
  const controller = new AbortController()
  setMaxListeners(MAX_OPEN + 64, controller.signal)
  return controller
}
/** aborted by `stop` and `close`: the run's attempts and the single ones in flight */
let stopping = stopper()
let running = false
/** set by an event: the run expands the outbox (a new run always looks) */
let outboxDirty = true
/** set when a chore added a message: the run reads the pending messages again */
let messageAdded = false
/**
 * the messages of test pings whose one attempt is in flight (single): pending in the file until it is recorded, and
 * left alone by a run that reads them meanwhile (else sent twice, or failed when the webhook is inactive). A ping
 * cut short by a crash is still pending, and sent by the next run as any message of a crashed process.
 */
const pinging = new Set<number>()
/**
 * the messages a run holds: waiting for a slot, in flight, or attempted and not recorded yet (still pending in the
 * file). A run that reads pending messages again (after passing over an organization's) leaves them alone
 */
const held = new Set<number>()
/** set while the run waits: for an attempt to finish, or for a new event */
let wake: (() => void) | undefined

/**
 * Expands the outbox and makes the first attempt of every pending message, until neither is left and no event
 * came for LINGER_MS. Messages of a crashed process are still pending and are sent by the next run. A stop
 * aborts the attempts in flight; their messages stay pending.
 */
async function fanoutUntilDone(signal: AbortSignal) {
  /** organization → webhook → its waiting messages; both maps in the order of their next turn */
  const waiting = new Map<string, Map<string, OutboxMessage[]>>()
  const waitingOf = new Map<string, number>()
  const perOrg = new Map<string, number>()
  const perHook = new Map<string, number>()
  const inFlight = new Set<Promise<void>>()
  /** attempts in flight for less than SLOW_MS */
  let fast = 0
  /**
   * organizations whose messages the fetch passes over (MAX_WAITING_PER_ORG of theirs wait): the first seq it
   * passed over, read again once their waiting ones are half gone
   */
  const passedOver = new Map<string, number>()
  let waitingCount = 0
  let cursor = 0
  let morePending = true
  /** the last expansion left events in the outbox: a burst, whose attempts are not paced */
  let expansionLeftMore = false
  const pacer = createPacer({ stepMs: PACE_MS, spreadMs: EXPAND_EVERY_MS, under: PACE_UNDER })
  /** set once the run has waited LINGER_MS with nothing to do; work coming in starts the wait over */
  let lingered = false
  /** events per expansion: about EXPAND_MESSAGES messages at the last expansion's fan-out (16 at first) */
  let expandEvents = eventsPerExpansion(1, 16, EXPAND_MESSAGES, EXPAND_BATCH)
  // a new run always looks at the outbox (and takes the events at its first turn)
  outboxDirty = true
  /** until wake() (or, given `ms`, that long; or the run is stopped) */
  const sleep = (ms?: number) => new Promise<void>((resolve) => {
    if (signal.aborted) { resolve(); return }
    // events are taken at each turn: until the next one could be expanded, a turn then serves as well as a wake
    const expandable = drainedAt + EXPAND_EVERY_MS - performance.now()
    if (ms === undefined && !outboxDirty && expandable > 1) ms = expandable
    // a wake is asked for the next event when nothing else ends this wait, or it ends after the event could have
    // been expanded; none if an event came already
    const listening = ms === undefined || (!outboxDirty && ms > expandable)
    if (listening && !listen()) { resolve(); return }
    const timer = ms === undefined ? undefined : setTimeout(() => wake?.(), ms)
    wake = () => {
      wake = undefined
      clearTimeout(timer)
      if (listening) stopListening(wakeFlags)
      resolve()
    }
  })
  const onAbort = () => wake?.()
  signal.addEventListener('abort', onAbort, { once: true })
  const canStart = () => fast < MAX_IN_FLIGHT && inFlight.size < MAX_OPEN
  const waitingPassedOver = () => {
    let n = 0
    for (const org of passedOver.keys()) n += waitingOf.get(org) ?? 0
    return n
  }
  /** the first attempt of a waiting message */
  const start = (row: OutboxMessage, org: string) => {
    const hookId = row.webhookId
    waitingCount--
    const left = waitingOf.get(org)! - 1
    if (left === 0) waitingOf.delete(org)
    else waitingOf.set(org, left)
    perOrg.set(org, (perOrg.get(org) ?? 0) + 1)
    perHook.set(hookId, (perHook.get(hookId) ?? 0) + 1)
    fast++
    let slowTimer: NodeJS.Timeout | undefined = setTimeout(() => {
      slowTimer = undefined
      fast--
      wake?.()
    }, SLOW_MS)
    let recorded = false
    const p: Promise<void> = attempt(row, newDeliveryId(), signal).then((a) => {
      if (signal.aborted) return
      recorder.later({ row, attempt: a, kind: 'first', retry: 0 })
      recorded = true
    }).finally(() => {
      if (slowTimer) {
        clearTimeout(slowTimer)
        fast--
      }
      // an attempt cut short stays pending, for a run to come
      if (!recorded) held.delete(row.seq)
      inFlight.delete(p)
      const inOrg = perOrg.get(org)! - 1
      if (inOrg === 0) perOrg.delete(org)
      else perOrg.set(org, inOrg)
      const inHook = perHook.get(hookId)! - 1
      if (inHook === 0) perHook.delete(hookId)
      else perHook.set(hookId, inHook)
      wake?.()
    })
    inFlight.add(p)
  }
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
  try {
    while (!signal.aborted) {
      if (takeEvents(wakeFlags)) outboxDirty = true
      if (messageAdded) {
        messageAdded = false
        morePending = true
      }
      if (expandIn() === 0) {
        lingered = false
        const { events, messages, more } = outbox.expand(expandEvents)
        // cleared only once the expansion is done: one that throws leaves the events for the retried run
        outboxDirty = more
        expansionLeftMore = more
        if (!outboxDirty) drainedAt = performance.now()
        if (messages > 0) morePending = true
        if (events > 0) expandEvents = eventsPerExpansion(events, messages, EXPAND_MESSAGES, EXPAND_BATCH)
      }
      // the messages of organizations passed over count only against MAX_WAITING: the others' are read meanwhile
      if (morePending && waitingCount - waitingPassedOver() < FETCH_BATCH && waitingCount < MAX_WAITING) {
        const rows = outbox.pendingAfter(cursor, FETCH_BATCH, [...passedOver.keys()])
        if (rows.length < FETCH_BATCH) morePending = false
        for (const row of rows) {
          cursor = row.seq
          if (pinging.has(row.seq) || held.has(row.seq)) continue
          if (!row.active) { outbox.fail(row.seq); continue }
          const org = row.customerId
          const n = waitingOf.get(org) ?? 0
          if (n >= MAX_WAITING_PER_ORG) {
            if (!passedOver.has(org)) passedOver.set(org, row.seq)
            continue
          }
          waitingOf.set(org, n + 1)
          let hooks = waiting.get(org)
          if (!hooks) waiting.set(org, hooks = new Map())
          const list = hooks.get(row.webhookId)
          if (list) list.push(row)
          else hooks.set(row.webhookId, [row])
          held.add(row.seq)
          waitingCount++
        }
        if (rows.length > 0) pacer.spread(waitingCount)
      }
      const allowed = pacer.allowed(performance.now(), waitingCount, morePending || expansionLeftMore)
      const paced = allowed !== Infinity
      const limit = Math.min(allowed, STARTS_PER_TURN)
      // round robin over the organizations with a free slot, and within each over its webhooks with one
      let started = 0
      let progress = true
      while (progress && canStart() && started < limit) {
        progress = false
        for (const [org, hooks] of waiting) {
          if (!canStart() || started >= limit) break
          if ((perOrg.get(org) ?? 0) >= MAX_PER_ORG) continue
          let hookId: string | undefined
          for (const id of hooks.keys()) {
            if ((perHook.get(id) ?? 0) < MAX_PER_HOOK) { hookId = id; break }
          }
          if (hookId === undefined) continue
          const list = hooks.get(hookId)!
          const row = list.shift()!
          // both go to the back of their turn (a Map re-visits an entry set again during its iteration: the pass
          // goes on round the organizations until the limits are met or none can start)
          hooks.delete(hookId)
          if (list.length > 0) hooks.set(hookId, list)
          waiting.delete(org)
          if (hooks.size > 0) waiting.set(org, hooks)
          start(row, org)
          started++
          progress = true
        }
      }
      // an organization passed over whose waiting messages are half gone: the fetch reads its messages again from
      // the first it passed over (the others' met again are held, or no longer pending)
      for (const [org, from] of passedOver) {
        if ((waitingOf.get(org) ?? 0) > MAX_WAITING_PER_ORG / 2) continue
        passedOver.delete(org)
        cursor = Math.min(cursor, from - 1)
        morePending = true
      }
      pacer.started(performance.now(), started)
      /** paced, with attempts waiting and a free slot: ms until the next step (undefined when due: a finished
       * attempt frees the slot it waits for) */
      const step = pacer.dueIn(performance.now())
      const paceIn = paced && waitingCount > 0 && canStart() && step > 0 ? step : undefined
      // an expansion held back by EXPAND_EVERY_MS: how long until it is due
      const due = expandIn()
      const heldFor = due > 0 && due !== Infinity ? due : undefined
      /** the loop's next timed step: an expansion or paced starts coming due */
      const timed = heldFor === undefined ? paceIn : paceIn === undefined ? heldFor : Math.min(heldFor, paceIn)
      if (!paced && started === STARTS_PER_TURN) await new Promise((r) => setImmediate(r))
      // a finished attempt or a new event wakes the loop (one waiter, whatever the number of attempts in flight):
      // a slow receiver's attempts never hold up the others' events
      else if (inFlight.size > 0) await sleep(timed)
      else if (waitingCount === 0 && !morePending && heldFor !== undefined) await sleep(heldFor)
      else if (waitingCount === 0 && !morePending && !outboxDirty) {
        if (!lingered) {
          lingered = true
          await sleep(LINGER_MS)
          continue
        }
        // nothing left: the run ends, unless an event came meanwhile (a wake that comes after this asks the server
        // for a new run)
        if (!listen()) continue
        break
      } else {
        lingered = false
        if (paceIn !== undefined) await sleep(paceIn)
        else await new Promise((r) => setImmediate(r))
      }
    }
    await Promise.allSettled(inFlight)
    recorder.flush()
    if (signal.aborted) throw new Error('stopped')
  } finally {
    // messages never started stay pending, for the next run
    for (const hooks of waiting.values()) {
      for (const list of hooks.values()) for (const row of list) held.delete(row.seq)
    }
    signal.removeEventListener('abort', onAbort)
    listenWithoutRun(wakeFlags)
  }
}

async function single({ n, seq: which, messageId, kind, retry, deliveryId }: SingleRequest) {
  const signal = stopping.signal
  let added: number | undefined
  try {
    if (typeof which !== 'number') pinging.add(added = outbox.addMessage(which.eventSeq, which.webhookId))
    const seq = added ?? which as number
    const row = outbox.message(seq)
    if (!row || (messageId !== undefined && row.id !== messageId)) { post({ single: n }); return }
    if (kind === 'retry') {
      if (row.state !== 'retrying') { post({ single: n }); return }
      if (!row.active) {
        outbox.fail(row.seq)
        post({ single: n })
        return
      }
    }
    const a = await attempt(row, deliveryId, signal)
    if (signal.aborted) { post({ single: n, error: 'stopped' }); return }
    recorder.now({ row, attempt: a, kind, retry })
    post({ single: n, attempt: a })
  } catch (err) {
    post({ single: n, error: (err as Error).message })
  } finally {
    if (added !== undefined) pinging.delete(added)
  }
}

async function chore(c: Chore): Promise<Record<string, number>> {
  if ('add' in c) {
    // (a job of an earlier version run again after a stop: its message is there already)
    if (outbox.hasMessage(c.add.eventSeq, c.add.webhookId)) return {}
    outbox.addMessage(c.add.eventSeq, c.add.webhookId)
    // a run under way reads it (a run that starts reads every pending message)
    messageAdded = true
    wake?.()
    return {}
  }
  if ('purge' in c) return { 'webhook rows': outbox.purge(c.purge) }
  const removed = { deliveries: 0, messages: 0, events: 0 }
  // a turn of the loop between two chunks: the fan-out and the recordings go on meanwhile
  const steps = outbox.retain(c.retain, (write) => locked(write), removed)
  while (!steps.next().done) await new Promise((resolve) => setImmediate(resolve))
  return removed
}

port.on('message', (msg: ToOutbox) => {
  if ('run' in msg) {
    if (running) return
    running = true
    fanoutUntilDone(stopping.signal).then(() => post({ done: true }),
      (err: Error) => post({ done: true, error: err.message })).finally(() => { running = false })
  } else if ('wake' in msg) {
    outboxDirty = true
    if (running) wake?.()
    else post({ kick: true })
  } else if ('stop' in msg) {
    stopping.abort()
    stopping = stopper()
  } else if ('single' in msg) {
    void single(msg.single)
  } else if ('chore' in msg) {
    chore(msg.chore).then((removed) => post({ chore: msg.n, removed }),
      (err: Error) => post({ chore: msg.n, error: err.message }))
  } else if ('close' in msg) {
    stopping.abort()
    try { recorder.flush() } catch { /* attempted again after the next start */ }
    deliverer.close()
    sqlite.close()
    process.exit(0)
  }
})
