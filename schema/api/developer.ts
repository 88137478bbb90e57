import { Type } from '@sinclair/typebox'

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
