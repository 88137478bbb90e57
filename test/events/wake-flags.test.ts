import { test } from 'tap'
import { EVENTS_WRITTEN, eventWritten, LISTENING, newWakeFlags } from '../../src/events/wake-flags.js'

test('a new thread listens: the first event asks for a wake', async (t) => {
  const flags = newWakeFlags()
  t.equal(Atomics.load(flags, LISTENING), 1)
  t.equal(eventWritten(flags), true, 'the first event posts a wake')
  t.equal(Atomics.load(flags, EVENTS_WRITTEN), 1, 'and is recorded')
})

test('one wake per listening: later events are only recorded until the thread listens again', async (t) => {
  const flags = newWakeFlags()
  t.equal(eventWritten(flags), true)
  t.equal(eventWritten(flags), false, 'no second message while the first is on its way')
  t.equal(eventWritten(flags), false)
  // the thread takes the events when it wakes
  t.equal(Atomics.exchange(flags, EVENTS_WRITTEN, 0), 1)
  t.equal(eventWritten(flags), false, 'a thread that did not ask for a wake gets none')
  t.equal(Atomics.load(flags, EVENTS_WRITTEN), 1, 'the event waits for its next look')
  Atomics.store(flags, LISTENING, 1)
  t.equal(eventWritten(flags), true, 'a listening thread is woken again')
})
