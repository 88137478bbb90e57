import { Type, type Static } from '@sinclair/typebox'
import { Uuid, Timestamp, Nullable } from './common.js'

export const ApiKeySchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  workspace_id: Nullable(Uuid),
  key_prefix: Type.String(),
  created_at: Timestamp,
  expires_at: Nullable(Timestamp),
  revoked_at: Nullable(Timestamp),
  last_used_at: Nullable(Timestamp)
})
export type ApiKey = Static<typeof ApiKeySchema>

/** The create and rotate responses: the only place the key value ever appears. */
export const NewApiKeySchema = Type.Object({
  id: Uuid,
  key: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  workspace_id: Nullable(Uuid),
  key_prefix: Type.String(),
  created_at: Timestamp,
  expires_at: Nullable(Timestamp)
})

export const CreateApiKeyBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  scopes: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 20 }),
  workspaceId: Type.Optional(Uuid),
  expiresAt: Type.Optional(Timestamp)
}, { additionalProperties: false })
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>

export const NewApiKeyResponse = Type.Object({ success: Type.Literal(true), data: NewApiKeySchema })
export const ApiKeyResponse = Type.Object({ success: Type.Literal(true), data: ApiKeySchema })
export const ListApiKeysResponse = Type.Object({ success: Type.Literal(true), data: Type.Array(ApiKeySchema) })
