import { test } from 'tap'
import { askForWake, eventWritten, listenWithoutRun, newWakeFlags, stopListening, takeEvents }
  from '../../src/events/wake-flags.js'

test('a new thread listens: the first event asks for a wake', async (t) => {
  const flags = newWakeFlags()
  t.equal(eventWritten(flags), true, 'the first event posts a wake')
  t.equal(takeEvents(flags), true, 'and is recorded')
  t.equal(takeEvents(flags), false, 'once')
})

test('one wake per listening: later events are only recorded until the thread listens again', async (t) => {
  const flags = newWakeFlags()
  t.equal(eventWritten(flags), true)
  t.equal(eventWritten(flags), false, 'no second message while the first is on its way')
  t.equal(eventWritten(flags), false)
  t.equal(takeEvents(flags), true, 'the thread takes the events when it wakes')
  t.equal(eventWritten(flags), false, 'a thread that did not ask for a wake gets none')
  t.equal(askForWake(flags), false, 'an event that came before the thread asks is taken instead of waited for')
  t.equal(eventWritten(flags), false, 'and that ask is withdrawn')
  t.equal(takeEvents(flags), true)
  t.equal(askForWake(flags), true, 'with no event waiting, the ask stands')
  t.equal(eventWritten(flags), true, 'a listening thread is woken again')
})

test('a thread that woke for another reason withdraws its ask; without a run every event wakes', async (t) => {
  const flags = newWakeFlags()
  stopListening(flags)
  t.equal(askForWake(flags), true)
  stopListening(flags)
  t.equal(eventWritten(flags), false, 'withdrawn: the event waits for the next look')
  t.equal(takeEvents(flags), true)
  listenWithoutRun(flags)
  t.equal(eventWritten(flags), true, 'no run: the wake is posted (and answered by a kick)')
})
