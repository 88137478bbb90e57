/** Event names a webhook may subscribe to (docs/api/webhooks.md#events); any other is refused. */
export const EVENT_NAMES = [
  'message.created', 'workflow.completed', 'test.ping',
  'agent.completed', 'credit.low', 'swarm.spawn', 'knowledge.indexed'
] as const
export type EventName = (typeof EVENT_NAMES)[number]

/** What each event tells and whether this version sends it, for choosing events (docs/api/webhooks.md#events). */
export const EVENT_INFO: Readonly<Record<EventName, { description: string; sent: boolean }>> = {
  'message.created': { sent: true, description: 'A message was posted in a public, announcement or text channel' },
  'workflow.completed': { sent: true,
    description: 'A workflow run finished successfully (never with the run\'s inputs or outputs)' },
  'test.ping': { sent: true, description: 'Sent on demand by the webhook\'s test (Send test)' },
  'agent.completed': { sent: false, description: 'Reserved: accepted in a subscription, not sent by this version' },
  'credit.low': { sent: false, description: 'Reserved: accepted in a subscription, not sent by this version' },
  'swarm.spawn': { sent: false, description: 'Reserved: accepted in a subscription, not sent by this version' },
  'knowledge.indexed': { sent: false, description: 'Reserved: accepted in a subscription, not sent by this version' }
}

export function unknownEvents(events: readonly string[]): string[] {
  return events.filter((e) => !(EVENT_NAMES as readonly string[]).includes(e))
}
