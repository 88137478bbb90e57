/**
 * Every machine-readable `code` an error body can carry (docs/api/errors.md), with what it means: one list for the
 * union type, the OpenAPI `Error` schema and the table of docs/api/errors.md. The generic codes follow the status
 * (errors.ts uses them when a throw names no code). test/http/error-codes.test.ts fails when the source sends a code
 * missing here, or docs/api/errors.md misses one.
 */
export const ERROR_CODE_DESCRIPTIONS = {
  BAD_REQUEST: 'A request the route cannot use (400)',
  VALIDATION_ERROR: 'The body, query or parameters do not match the schema, or a field breaks a rule (400)',
  INVALID_JSON: 'The body is not valid JSON, or not well-formed Unicode (400)',
  FORBIDDEN_PROPERTY: 'The JSON body has a `__proto__` or `constructor.prototype` key (400)',
  WORKSPACE_REQUIRED: 'The route needs a workspace context: `x-workspace-id` or `workspace_id` (400)',
  URL_NOT_ALLOWED: 'A webhook or audio URL points at a private address or is not http(s) (400)',
  EMBEDDINGS_NOT_CONFIGURED: 'A `semantic` search without an embedding endpoint configured (400)',
  UNKNOWN_EVENT: 'A webhook names an event that does not exist (400)',
  UNKNOWN_TOOL: 'An agent names a tool that does not exist (400)',
  INVALID_WORKFLOW: 'A workflow definition is inconsistent (400)',
  MISSING_INPUT: 'A workflow run lacks a required input (400)',
  INVALID_SCOPES: 'An API key scope list is empty, repeated, unknown or `admin` (400)',
  INVALID_REFERENCE: 'An artifact refers to something that does not exist in its workspace (400)',
  NO_FILE: 'An upload without a file part (400)',
  TOO_MANY_FILES: 'More files than the upload route takes (400)',
  MALFORMED_MULTIPART: 'A multipart body that cannot be parsed (400)',
  UNAUTHORIZED: 'No, malformed, unknown, revoked or expired credentials (401)',
  FORBIDDEN: 'Authenticated but not allowed (403)',
  WORKSPACE_FORBIDDEN: 'The caller is not a member of the named workspace, or the key is bound to another (403)',
  API_KEY_NOT_ALLOWED: 'API keys cannot be used on this route (403)',
  INSUFFICIENT_SCOPE: 'The API key lacks the scope this route needs (403)',
  SIGNUP_CLOSED: 'Sign-up is closed (403)',
  CSRF_REJECTED: 'A change carried by the console\'s cookie without `x-cairn-csrf: 1`, or from another origin (403)',
  HUMAN_REVIEW_REQUIRED: 'An API key cannot approve or reject, or lift the policy of, an artifact whose ' +
    'review_policy is request_review: a person decides (403)',
  WORKFLOW_FORBIDDEN: 'Changing, scheduling or deleting a workflow needs its creator or a workspace owner/admin (403)',
  AGENT_FORBIDDEN: 'Changing or deleting an agent needs its creator or an organization owner/admin (403)',
  NOT_FOUND: 'No such resource or route, or another tenant\'s (404)',
  METHOD_NOT_ALLOWED: 'The method is not allowed here (405)',
  NOT_ACCEPTABLE: 'No acceptable representation (406)',
  CONFLICT: 'The request conflicts with the current state (409)',
  EMAIL_TAKEN: 'An account with this email exists (409)',
  INVALID_STATE: 'The resource is not in a state that allows this (409)',
  ARTIFACT_REVIEWED: 'A person has approved or rejected this request_review artifact: an API key cannot change, ' +
    'supersede or delete it (409)',
  KEY_REVOKED: 'A revoked API key cannot be rotated (409)',
  NO_ISSUABLE_SCOPES: 'The key holds no scope that can still be issued (409)',
  IDEMPOTENCY_IN_FLIGHT: 'A request with this Idempotency-Key is still running (409)',
  IDEMPOTENCY_SECRET_GONE: 'The kept answer of this Idempotency-Key carried a secret that was revoked, rotated or ' +
    'deleted since: it is not replayed (409)',
  STORED_FILE_MISSING: 'The database names a stored file (a document\'s upload, an audio file) that the data ' +
    'directory does not hold, as after a restore without its files (410)',
  PAYLOAD_TOO_LARGE: 'The body or a file is over its limit (413)',
  QUOTA_EXCEEDED: 'The organization\'s quota leaves no room for this (413): `quota` names which one, with its ' +
    '`limit` and `used`',
  UNSUPPORTED_MEDIA_TYPE: 'The body\'s media type is not accepted, or a voice upload is not audio (415)',
  UNSUPPORTED_FILE_TYPE: 'A knowledge file type that cannot be indexed; `supportedFormats` lists those that can (415)',
  UNPROCESSABLE_ENTITY: 'The request is well-formed but cannot be processed (422)',
  IDEMPOTENCY_KEY_REUSED: 'The Idempotency-Key was used with a different request (422)',
  UNREADABLE_FILE: 'The file\'s text cannot be extracted (422; per file in batch uploads)',
  PROCESSING_FAILED: 'A file of a batch upload failed for another reason (per file in batch uploads)',
  RATE_LIMITED: 'Too many requests; see `Retry-After` (429)',
  LOGIN_THROTTLED: 'Too many failed logins for this account; see `Retry-After` (429)',
  CHAT_BUSY: 'The person has as many chat answers under way as allowed (4); one must end first (429)',
  INTERNAL_ERROR: 'An internal error; the request id helps find it in the log (500)',
  MODEL_UNAVAILABLE: 'The language model server failed or is unreachable (502)',
  EMBEDDINGS_UNAVAILABLE: 'The embedding server failed or is unreachable during a `semantic` search (502)',
  SERVICE_UNAVAILABLE: 'The service is shutting down or unavailable (503)',
  INSUFFICIENT_STORAGE: 'The server\'s disk is full: the write was refused (reads still work); try again once ' +
    'space is freed (507)',
  ERROR: 'Any other status (for example 408)'
} as const satisfies Record<string, string>

export type ErrorCode = keyof typeof ERROR_CODE_DESCRIPTIONS

export const ERROR_CODES = Object.keys(ERROR_CODE_DESCRIPTIONS) as ErrorCode[]

const known = new Set<string>(ERROR_CODES)
export const isErrorCode = (code: string): code is ErrorCode => known.has(code)
