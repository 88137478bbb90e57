import { Type } from '@sinclair/typebox'
import { StringEnum } from './common.js'

export const HealthResponse = Type.Object({
  status: StringEnum(['ok', 'degraded']),
  version: Type.String(),
  uptime: Type.Number({ description: 'seconds since start' }),
  database: StringEnum(['ok', 'error']),
  timestamp: Type.String({ format: 'date-time' })
})
