import t from 'tap'
import { eventsPerExpansion } from '../../src/events/outbox.js'

t.test('an expansion takes the events that make about the messages asked for, at the last fan-out', async (t) => {
  t.equal(eventsPerExpansion(1, 16, 64, 200), 4, 'the first guess: 16 webhooks an event')
  t.equal(eventsPerExpansion(4, 40, 64, 200), 6, '10 webhooks an event: 6 events, 60 messages')
  t.equal(eventsPerExpansion(6, 600, 64, 200), 1, 'never fewer than one event, however many webhooks')
  t.equal(eventsPerExpansion(6, 6, 64, 200), 64, 'one webhook an event')
  t.equal(eventsPerExpansion(50, 0, 64, 200), 200, 'events nobody subscribes to any more: up to the most')
})
