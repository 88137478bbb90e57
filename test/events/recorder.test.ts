import t from 'tap'
import { createRecorder } from '../../src/events/recorder.js'

/** a recorder whose writes (and the event-loop turns between them) are logged in order */
function logged(opts: { batch: number; delayMs: number; chunk: number }) {
  const log: Array<number[] | 'turn'> = []
  const waiters: Array<{ n: number; resolve: () => void }> = []
  let recorded = 0
  const recorder = createRecorder<number>((items) => {
    log.push(items)
    recorded += items.length
    // a request that came in during this write: it is served before the next write
    setImmediate(() => log.push('turn'))
    for (const w of waiters.filter((w) => recorded >= w.n)) { waiters.splice(waiters.indexOf(w), 1); w.resolve() }
  }, opts)
  const until = (n: number) => new Promise<void>((resolve) => {
    if (recorded >= n) resolve()
    else waiters.push({ n, resolve })
  })
  return { recorder, log, until, writes: () => log.filter((x) => x !== 'turn') as number[][] }
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i)

t.test('a full batch is recorded in chunks, with a turn of the event loop between two', async (t) => {
  const { recorder, log, until, writes } = logged({ batch: 10, delayMs: 60_000, chunk: 4 })
  for (const i of range(0, 10)) recorder.later(i)
  t.same(log, [], 'nothing written in the caller\'s turn')
  await until(10)
  t.same(writes(), [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]], 'each item once, in order, at most a chunk per write')
  const first = log.indexOf(writes()[1])
  t.equal(log[first - 1], 'turn', 'the loop turned between the first two writes')
  t.equal(log.slice(0, log.indexOf(writes()[2])).filter((x) => x === 'turn').length, 2)
})

t.test('items that come while a batch is being written join it', async (t) => {
  const { recorder, until, writes } = logged({ batch: 4, delayMs: 60_000, chunk: 2 })
  for (const i of range(0, 4)) recorder.later(i)
  await new Promise((r) => setImmediate(r))
  recorder.later(4)
  recorder.later(5)
  await until(6)
  t.same(writes().flat(), range(0, 6))
  t.ok(writes().every((w) => w.length <= 2))
})

t.test('fewer than a batch wait for the delay, then are written in chunks', async (t) => {
  const { recorder, until, writes } = logged({ batch: 100, delayMs: 5, chunk: 2 })
  for (const i of range(0, 5)) recorder.later(i)
  await until(5)
  t.same(writes(), [[0, 1], [2, 3], [4]])
})

t.test('flush() and now() write everything waiting before they return, and nothing twice', async (t) => {
  const { recorder, writes } = logged({ batch: 4, delayMs: 60_000, chunk: 3 })
  for (const i of range(0, 7)) recorder.later(i)
  recorder.flush()
  t.same(writes().flat(), range(0, 7), 'written at once')
  recorder.later(7)
  recorder.now(8)
  t.same(writes().flat(), range(0, 9))
  // the turns already scheduled find nothing left
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r))
  t.same(writes().flat(), range(0, 9), 'each item once')
})

t.test('a write that records only the first items of its chunk gets the rest again, in order, each once',
  async (t) => {
    const calls: number[][] = []
    const recorded: number[] = []
    // records two of what it is handed (its transaction ended early), and at least one
    const recorder = createRecorder<number>((items) => {
      calls.push([...items])
      recorded.push(...items.slice(0, 2))
      return Math.min(2, items.length)
    }, { batch: 100, delayMs: 1, chunk: 3 })
    for (const i of range(0, 7)) recorder.later(i)
    await new Promise((r) => setTimeout(r, 5))
    for (let i = 0; i < 10 && recorded.length < 7; i++) await new Promise((r) => setImmediate(r))
    t.same(recorded, range(0, 7), 'each item once, in order')
    t.same(calls, [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6]], 'the unrecorded ones lead the next chunk')
    recorder.later(7)
    recorder.later(8)
    recorder.later(9)
    recorder.flush()
    t.same(recorded, range(0, 10), 'flush() too, until nothing waits')
  })
