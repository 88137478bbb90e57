import { Type, type Static, type TString, type TNumber, type TInteger, type TBoolean } from '@sinclair/typebox'

export const Uuid = Type.String({ format: 'uuid' })
export const Timestamp = Type.String({ format: 'date-time' })

/**
 * A primitive or null, as `type: [t, "null"]` rather than anyOf: response serialisation stays a plain
 * type switch (anyOf makes fast-json-stringify validate each branch per value).
 */
export const Nullable = <T extends TString | TNumber | TInteger | TBoolean>(schema: T) =>
  Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] })

/** A string out of a fixed list, as a JSON Schema `enum` (not a union of literals). */
export const StringEnum = <const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })

/**
 * A response field out of a fixed list: the document declares the `enum` (generated clients narrow it without
 * casts), while handlers may return the stored text as it is (a string to TypeScript here).
 */
export const ClosedString = <const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<string>({ type: 'string', enum: [...values], ...options })

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
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 })
}
