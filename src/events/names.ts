/** Event names a webhook may subscribe to (docs/api/webhooks.md#events); any other is refused. */
export const EVENT_NAMES = [
  'message.created', 'workflow.completed', 'test.ping',
  'agent.completed', 'credit.low', 'swarm.spawn', 'knowledge.indexed'
] as const
export type EventName = (typeof EVENT_NAMES)[number]

export function unknownEvents(events: readonly string[]): string[] {
  return events.filter((e) => !(EVENT_NAMES as readonly string[]).includes(e))
}
