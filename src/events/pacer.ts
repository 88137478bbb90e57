/**
 * Paces the first attempts of a stream of events (the outbox thread's fan-out): while few wait and the outbox is
 * drained, a few start every `stepMs`, as many as spread the waiting ones over `spreadMs` (the time between two
 * expansions). The ~20 deliveries of an expansion would otherwise start together and keep the delivery thread and
 * the receiver busy at once for a few ms, and a request that comes then finds both cores of a small machine taken.
 * A burst (`under` or more waiting, or events left in the outbox) is not paced. Times in ms (performance.now()).
 */
export interface Pacer {
  /** after a fetch of pending messages: `waiting` of them wait, and sets how many start per step */
  spread(waiting: number): void
  /**
   * how many attempts may start now: Infinity in a burst (the caller's own limits apply), 0 until the next step
   * is due (`dueIn` says when)
   */
  allowed(now: number, waiting: number, burst: boolean): number
  /** ms until the next step is due (0: now) */
  dueIn(now: number): number
  /** `count` attempts were started at `now` (paced or not: a step starts the wait for the next) */
  started(now: number, count: number): void
}

export function createPacer(opts: { stepMs: number; spreadMs: number; under: number }): Pacer {
  const steps = Math.max(1, Math.round(opts.spreadMs / opts.stepMs))
  let perStep = 1
  let nextAt = -Infinity
  // a timer often fires a little before performance.now() reaches its end (its clock is the event loop's, taken
  // before the turn's own work): within this much of the step counts as due
  const early = Math.min(0.5, opts.stepMs / 4)
  const dueIn = (now: number) => {
    const ms = nextAt - now
    return ms > early ? ms : 0
  }
  return {
    spread(waiting) { perStep = Math.max(1, Math.ceil(waiting / steps)) },
    allowed(now, waiting, burst) {
      if (burst || waiting >= opts.under) return Infinity
      return dueIn(now) > 0 ? 0 : perStep
    },
    dueIn,
    started(now, count) { if (count > 0) nextAt = now + opts.stepMs }
  }
}
