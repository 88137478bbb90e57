import { Type } from '@sinclair/typebox'
import { Nullable } from './common.js'

export const UsageQuery = Type.Object({
  days: Type.Integer({ minimum: 1, maximum: 90, default: 7 })
})

export const UsageResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({
    key_id: Type.String(),
    days: Type.Integer(),
    sparkline: Type.Array(Type.Integer())
  })
})

const WebhookBase = {
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  active: Type.Boolean(),
  disabled_reason: Type.Unsafe<'gone' | 'failing' | null>({ type: ['string', 'null'], enum: ['gone', 'failing', null],
    description: 'why the service switched the webhook off: `gone` (its receiver answered 410 Gone), `failing` ' +
      '(every attempt failed for 5 days); null while active or when switched off by a person. Setting `active` ' +
      'clears it' }),
  description: Type.String(),
  created_at: Type.String({ format: 'date-time' })
}

export const CreateWebhookBody = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  events: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 20, uniqueItems: true }),
  description: Type.Optional(Type.String({ maxLength: 500 }))
})
export const UpdateWebhookBody = Type.Object({
  url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  events: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }),
    { minItems: 1, maxItems: 20, uniqueItems: true })),
  active: Type.Optional(Type.Boolean()),
  description: Type.Optional(Type.String({ maxLength: 500 }))
})
export const WorkspaceIdQuery = Type.Object({ workspaceId: Type.Optional(Type.String()) })

export const WebhookEventsResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Array(Type.Object({
    name: Type.String({ description: 'the name to put in a webhook\'s `events`' }),
    description: Type.String(),
    sent: Type.Boolean({ description: 'false: accepted in a subscription, never sent by this version' })
  }, { additionalProperties: false }))
})

export const CreateWebhookResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({ ...WebhookBase, workspace_id: Type.String(), signing_secret: Type.String() })
})
export const ListWebhooksResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Array(Type.Object({ ...WebhookBase, updated_at: Type.String({ format: 'date-time' }) }))
})
export const UpdateWebhookResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({ id: Type.String(), url: Type.String(), events: Type.Array(Type.String()), active: Type.Boolean(),
    disabled_reason: WebhookBase.disabled_reason, updated_at: Type.String({ format: 'date-time' }) })
})
export const DeliveriesResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Array(Type.Object({
    id: Type.String(),
    webhook_id: Type.String(),
    /** `webhook-id`: the same for every attempt and redelivery of one event to this webhook */
    message_id: Nullable(Type.String()),
    /** 1 for the first attempt of the message */
    attempt: Type.Integer({ minimum: 1 }),
    /** when the next automatic attempt is due after this failed one; null when none will follow */
    next_attempt_at: Nullable(Type.String({ format: 'date-time' })),
    event_type: Type.String(),
    status_code: Type.Integer(),
    success: Type.Boolean(),
    latency_ms: Type.Integer(),
    request_body: Type.Object({
      event: Type.String(), timestamp: Type.String(), body_sha256: Type.String(), body_bytes: Type.Integer(),
      truncated: Type.Boolean(), body_preview: Type.String()
    }),
    response_body: Type.String(),
    error: Type.Optional(Type.String()),
    created_at: Type.String({ format: 'date-time' })
  }))
})
export const DeliveryParams = Type.Object({ id: Type.String({ format: 'uuid' }),
  deliveryId: Type.String({ format: 'uuid' }) })
export const RedeliverResponse = Type.Object({
  success: Type.Literal(true),
  /** the id of the new attempt, listed with the deliveries once made */
  data: Type.Object({ id: Type.String() })
})
export const RotateSecretResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({ signing_secret: Type.String() })
})
export const TestWebhookResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Object({
    delivered: Type.Boolean(), status_code: Type.Integer(), latency_ms: Type.Integer(),
    delivery: Type.Object({ id: Type.String(), event_type: Type.String() }),
    error: Type.Optional(Type.String())
  })
})

export const LogsQuery = Type.Object({
  categories: Type.Optional(Type.String({ maxLength: 500 })),
  api_key_id: Type.Optional(Type.String({ maxLength: 100 })),
  start: Type.Optional(Type.String({ format: 'date-time' })),
  end: Type.Optional(Type.String({ format: 'date-time' })),
  cursor: Type.Optional(Type.String({ maxLength: 100 })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 })
})
export const LogEntrySchema = Type.Object({
  id: Type.String(),
  category: Type.String(),
  action: Type.String(),
  api_key_id: Type.Union([Type.String(), Type.Null()]),
  status_code: Type.Integer(),
  duration_ms: Type.Integer(),
  metadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
  created_at: Type.String({ format: 'date-time' })
})
export const LogsResponse = Type.Object({
  success: Type.Literal(true),
  data: Type.Array(LogEntrySchema),
  nextCursor: Type.Union([Type.String(), Type.Null()])
})
export const ActivityBody = Type.Object({
  action: Type.String({ minLength: 1, maxLength: 100 }),
  category: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  metadata: Type.Optional(Type.Object({}, { additionalProperties: true }))
})
export const ActivityResponse = Type.Object({ success: Type.Literal(true), data: LogEntrySchema })
