import t from 'tap'
import { createPacer } from '../../src/events/pacer.js'

// times are given, not read from a clock: each case is a schedule of calls at chosen moments (ms)

t.test('a stream is spread: the waiting attempts start a few per step, over the time between two expansions',
  async (t) => {
    const pacer = createPacer({ stepMs: 4, spreadMs: 40, under: 48 })
    let waiting = 20
    pacer.spread(waiting)
    const starts: Array<[number, number]> = []
    for (let now = 0; now < 60 && waiting > 0; now++) {
      const n = Math.min(pacer.allowed(now, waiting, false), waiting)
      t.not(n, Infinity, 'a stream is paced')
      if (n > 0) {
        waiting -= n
        starts.push([now, n])
      }
      pacer.started(now, n)
    }
    t.same(starts, [[0, 2], [4, 2], [8, 2], [12, 2], [16, 2], [20, 2], [24, 2], [28, 2], [32, 2], [36, 2]],
      '20 attempts: 2 every 4 ms, the last started within the 40 ms')
  })

t.test('between two steps nothing starts, and dueIn says how long until the next', async (t) => {
  const pacer = createPacer({ stepMs: 4, spreadMs: 40, under: 48 })
  pacer.spread(10)
  t.equal(pacer.allowed(100, 10, false), 1, 'at least one per step')
  pacer.started(100, 1)
  t.equal(pacer.allowed(101, 9, false), 0)
  t.equal(pacer.dueIn(101), 3)
  t.equal(pacer.allowed(103.8, 9, false), 1, 'a timer that fires a little early finds the step due')
  t.equal(pacer.dueIn(103.8), 0)
  pacer.started(103.8, 0)
  t.equal(pacer.allowed(103.9, 9, false), 1, 'a turn that started nothing does not start a step')
})

t.test('a burst is not paced: many waiting, or events left in the outbox', async (t) => {
  const pacer = createPacer({ stepMs: 4, spreadMs: 40, under: 48 })
  pacer.spread(60)
  t.equal(pacer.allowed(0, 60, false), Infinity, '48 or more waiting')
  pacer.started(0, 16)
  t.equal(pacer.allowed(1, 44, true), Infinity, 'the last expansion left events behind')
  pacer.spread(44)
  t.equal(pacer.allowed(1, 44, false), 0, 'once few wait and the outbox is drained, steps again')
  t.equal(pacer.allowed(4, 44, false), 5, '44 over 10 steps: 5 a step')
})
