// How the request thread tells the outbox thread that events were written, without a message per event. A message
// wakes the thread (a profile of the request thread put ~30 µs on each post on a 2-core VM), yet under a stream of
// events the outbox thread looks at the outbox only every 40 ms and is awake several times in between: each event
// raises EVENTS_WRITTEN, which the thread takes whenever it wakes, and a wake is posted only when the thread asked
// for one (LISTENING): when it would otherwise sleep past the moment the event could be expanded, or has no run.

/** slot set to 1 by the request thread at each event, cleared by the outbox thread when it takes them */
export const EVENTS_WRITTEN = 0
/** slot set to 1 by the outbox thread when it wants a wake at the next event; the request thread clears it */
export const LISTENING = 1

export function newWakeFlags(): Int32Array {
  const flags = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT))
  listenWithoutRun(flags)
  return flags
}

/** The request thread's side: records an event; true when the outbox thread asked for a wake (post one). */
export function eventWritten(flags: Int32Array): boolean {
  Atomics.store(flags, EVENTS_WRITTEN, 1)
  return Atomics.compareExchange(flags, LISTENING, 1, 0) === 1
}

/** The outbox thread's side: whether an event was written since its last look (and clears the flag). */
export function takeEvents(flags: Int32Array): boolean {
  return Atomics.exchange(flags, EVENTS_WRITTEN, 0) === 1
}

/**
 * The outbox thread asks for a wake at the next event. False when an event came first: nothing is asked then, and
 * the caller looks at the outbox instead of waiting. The flag is raised before the events are looked at, so an
 * event written in between is seen here or posts its wake.
 */
export function askForWake(flags: Int32Array): boolean {
  Atomics.store(flags, LISTENING, 1)
  if (!takeEvents(flags)) return true
  Atomics.store(flags, LISTENING, 0)
  return false
}

/** The outbox thread no longer needs the wake it asked for (it woke for another reason). */
export function stopListening(flags: Int32Array): void {
  Atomics.store(flags, LISTENING, 0)
}

/** No run is under way (a new thread, or a run that ended): every event's wake must come, to be answered by a kick. */
export function listenWithoutRun(flags: Int32Array): void {
  Atomics.store(flags, LISTENING, 1)
}
