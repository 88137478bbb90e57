import { Type, type TSchema } from '@sinclair/typebox'

export const Uuid = Type.String({ format: 'uuid' })
export const Timestamp = Type.String({ format: 'date-time' })
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

export const ErrorSchema = Type.Object({
  success: Type.Literal(false),
  statusCode: Type.Integer(),
  error: Type.String(),
  code: Type.String(),
  message: Type.String()
}, { $id: 'Error', additionalProperties: true })

const ErrorRef = Type.Ref('Error')

/** Response entries for the error statuses a route can send (shaped by the one error handler). */
export function errors(...statuses: number[]) {
  const out: Record<number, typeof ErrorRef> = {}
  for (const s of new Set([400, 401, 429, 500, ...statuses])) out[s] = ErrorRef
  return out
}

export const SuccessMessage = Type.Object({ success: Type.Literal(true), message: Type.String() })

export const IdParams = Type.Object({ id: Uuid })

export const Pagination = {
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  offset: Type.Integer({ minimum: 0, default: 0 })
}
