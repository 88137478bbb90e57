import { Type, type TSchema } from '@sinclair/typebox'
import { MessageSchema } from './channels.js'
import { EVENT_NAMES, type EventName } from '../../src/events/names.js'

/**
 * The bodies Cairn POSTs to webhook receivers: `{event, timestamp, data}`, one schema per event. Published in the
 * OpenAPI document as `callbacks` of the webhook-creating operation (docs/api/webhooks.md).
 */
const envelope = (event: EventName, data: TSchema, description: string) => Type.Object({
  event: Type.Literal(event),
  timestamp: Type.String({ format: 'date-time', description: 'when the event happened; the same for every attempt' }),
  data
}, { title: `WebhookEvent ${event}`, description, additionalProperties: false })

const MessageCreated = envelope('message.created', Type.Object({
  ...MessageSchema.properties,
  channel_name: Type.String()
}, { additionalProperties: false }), 'A message was posted in a public or announcement channel')

const WorkflowCompleted = envelope('workflow.completed', Type.Object({
  workspace_id: Type.String(), run_id: Type.String(), workflow_id: Type.String(), workflow_name: Type.String(),
  status: Type.Literal('completed'), started_at: Type.String({ format: 'date-time' }),
  finished_at: Type.String({ format: 'date-time' }), duration_ms: Type.Integer({ minimum: 0 })
}, { additionalProperties: false, description: 'never the run\'s inputs or outputs' }),
'A workflow run finished')

const TestPing = envelope('test.ping', Type.Object({}, { additionalProperties: false }),
  'Sent by `POST /api/v2/developer/webhooks/{id}/test`')

/** events a webhook may subscribe to that this version does not send yet: their data is an object */
const reserved = (event: EventName) => envelope(event, Type.Object({}, { additionalProperties: true }),
  'Reserved: accepted in a subscription, not sent by this version')

const SENT: Partial<Record<EventName, TSchema>> = {
  'message.created': MessageCreated, 'workflow.completed': WorkflowCompleted, 'test.ping': TestPing
}
export const WEBHOOK_EVENT_SCHEMAS: Record<EventName, TSchema> = Object.fromEntries(EVENT_NAMES.map((name) =>
  [name, SENT[name] ?? reserved(name)])) as Record<EventName, TSchema>

/**
 * OpenAPI `callbacks` for the operation that creates a webhook: one per event, a POST to the webhook's URL with
 * Cairn's and Standard Webhooks' headers; a 2xx answer is a success, 410 switches the webhook off, and
 * `Retry-After` on 429 or 503 lengthens the wait before the next retry.
 */
export const webhookCallbacks = () => Object.fromEntries(EVENT_NAMES.map((name) => [name, {
  '{$request.body#/url}': {
    post: {
      requestBody: {
        required: true,
        content: { 'application/json': { schema: WEBHOOK_EVENT_SCHEMAS[name] } }
      },
      responses: {
        '2XX': { description: 'Received. Any other answer is a failed attempt, retried on the schedule' },
        410: { description: 'Gone: the webhook is switched off (`disabled_reason: gone`) and nothing is retried' },
        429: { description: 'Too many requests: a `Retry-After` (seconds or HTTP-date) lengthens the next wait' },
        503: { description: 'Unavailable: a `Retry-After` (seconds or HTTP-date) lengthens the next wait' }
      }
    }
  }
}]))
