/**
 * Every machine-readable `code` the API sends in its error shape (CONTRACT.md §4), as one union type.
 * The generic ones follow the status (errors.ts uses them when a throw names no code); the rest are
 * specific to a rule. test/http/error-codes.test.ts fails when the source throws a code missing here.
 */
export const ERROR_CODES = [
  // generic, by status
  'BAD_REQUEST', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'NOT_ACCEPTABLE', 'CONFLICT',
  'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'UNPROCESSABLE_ENTITY', 'RATE_LIMITED', 'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
  // request shape
  'VALIDATION_ERROR', 'INVALID_JSON', 'FORBIDDEN_PROPERTY', 'MALFORMED_MULTIPART',
  // accounts, keys, workspaces
  'EMAIL_TAKEN', 'SIGNUP_CLOSED', 'KEY_REVOKED', 'INVALID_SCOPES', 'NO_ISSUABLE_SCOPES', 'INSUFFICIENT_SCOPE',
  'API_KEY_NOT_ALLOWED', 'WORKSPACE_REQUIRED', 'WORKSPACE_FORBIDDEN',
  // idempotency
  'IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_IN_FLIGHT',
  // knowledge and voice notes
  'NO_FILE', 'TOO_MANY_FILES', 'UNSUPPORTED_FILE_TYPE', 'UNREADABLE_FILE', 'PROCESSING_FAILED',
  // artifacts, agents, workflows, webhooks, the assistant
  'INVALID_REFERENCE', 'INVALID_STATE', 'UNKNOWN_TOOL', 'INVALID_WORKFLOW', 'MISSING_INPUT', 'UNKNOWN_EVENT',
  'URL_NOT_ALLOWED', 'MODEL_UNAVAILABLE'
] as const

export type ErrorCode = (typeof ERROR_CODES)[number]

const known = new Set<string>(ERROR_CODES)
export const isErrorCode = (code: string): code is ErrorCode => known.has(code)
