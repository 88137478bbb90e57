import { SCOPES } from '../../schema/api/knowledge.js'
import { badRequest, forbidden, HttpError } from '../http/errors.js'
import { chunkOptionsProblem } from '../ingest/chunker.js'
import { SUPPORTED_FORMATS } from '../ingest/formats.js'
import type { Principal } from '../auth/plugin.js'

export type DocScope = (typeof SCOPES)[number]

export interface UploadOptions {
  /** undefined when the upload names none: `placement` decides */
  scope?: DocScope
  workspaceId?: string
  category: string
  tags: string[]
  chunkSize: number
  chunkOverlap: number
}

export interface Placement {
  scope: DocScope
  workspaceId: string | null
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The text fields of an upload, checked: 400 with the reason for anything off. */
export function uploadOptions(fields: Record<string, string>): UploadOptions {
  const scope = (fields.scope || undefined) as DocScope | undefined
  if (scope !== undefined && !(SCOPES as readonly string[]).includes(scope)) {
    throw badRequest(`scope must be one of ${SCOPES.join(', ')}`, 'VALIDATION_ERROR')
  }
  const workspaceId = fields.workspaceId || undefined
  if (workspaceId && !UUID.test(workspaceId)) throw badRequest('workspaceId must be a UUID', 'VALIDATION_ERROR')
  const category = (fields.category ?? 'general').trim() || 'general'
  if (category.length > 100) throw badRequest('category must be at most 100 characters', 'VALIDATION_ERROR')
  let tagList: string[] = []
  if (fields.tags !== undefined && fields.tags.trim() !== '') {
    let parsed: unknown
    try { parsed = JSON.parse(fields.tags) } catch { parsed = undefined }
    if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === 'string')) {
      throw badRequest('tags must be a JSON array of strings, e.g. ["policy","2024"]', 'VALIDATION_ERROR')
    }
    tagList = [...new Set(parsed.map((x: string) => x.trim()).filter(Boolean))]
    if (tagList.length > 50 || tagList.some((x) => x.length > 100)) {
      throw badRequest('at most 50 tags of at most 100 characters', 'VALIDATION_ERROR')
    }
  }
  const int = (name: string, value: string | undefined, fallback: number) => {
    if (value === undefined || value.trim() === '') return fallback
    const n = Number(value)
    if (!Number.isInteger(n)) throw badRequest(`${name} must be an integer`, 'VALIDATION_ERROR')
    return n
  }
  const chunkSize = int('chunkSize', fields.chunkSize, 1000)
  // without an explicit overlap, 200 (or a fifth of a smaller passage size)
  const chunkOverlap = int('chunkOverlap', fields.chunkOverlap, Math.min(200, Math.floor(chunkSize / 5)))
  const problem = chunkOptionsProblem({ chunkSize, chunkOverlap })
  if (problem) throw badRequest(problem, 'VALIDATION_ERROR')
  return { scope, workspaceId, category, tags: tagList, chunkSize, chunkOverlap }
}

/**
 * The scope of an upload that names none: the workspace when one is given (a workspace-bound key, the form's
 * `workspaceId`, the request's workspace context), else the organization.
 */
export function defaultScope(p: Principal, o: UploadOptions, contextWorkspaceId: string | undefined): DocScope {
  return p.apiKey?.workspaceId || o.workspaceId || contextWorkspaceId ? 'workspace' : 'organization'
}

/**
 * Where new documents go: a workspace-bound key may add only to its workspace or to
 * personal documents; a workspace document needs a workspace the caller belongs to (`checkMember`
 * throws otherwise). Without a scope, the workspace when one is given (defaultScope).
 */
export function placement(p: Principal, given: UploadOptions, contextWorkspaceId: string | undefined,
  checkMember: (workspaceId: string) => void): Placement {
  const o = { ...given, scope: given.scope ?? defaultScope(p, given, contextWorkspaceId) }
  const bound = p.apiKey?.workspaceId
  if (bound) {
    if (o.scope === 'personal') return { scope: 'personal', workspaceId: null }
    if (o.scope === 'workspace' && (!o.workspaceId || o.workspaceId === bound)) {
      return { scope: 'workspace', workspaceId: bound }
    }
    throw forbidden('This API key is bound to a workspace: it can add documents only to that workspace ' +
      '(scope=workspace) or to personal documents', 'WORKSPACE_FORBIDDEN')
  }
  if (o.scope !== 'workspace') return { scope: o.scope, workspaceId: null }
  const ws = o.workspaceId ?? contextWorkspaceId
  if (!ws) throw badRequest('workspaceId is required when scope is workspace', 'VALIDATION_ERROR')
  checkMember(ws)
  return { scope: 'workspace', workspaceId: ws }
}

/** what an organization's knowledge base may hold (config.quotas); 0: unlimited */
export interface KnowledgeQuotas {
  /** bytes of uploads plus characters of their extracted text */
  storedBytes: number
  passages: number
}

/** 413 QUOTA_EXCEEDED: the organization's `quota` leaves no room for this upload */
export function quotaExceeded(quota: keyof KnowledgeQuotas, limit: number, used: number) {
  const what = quota === 'storedBytes' ? `${(limit / 1048576).toFixed(0)} MB of stored files`
    : `${limit} passages`
  return new HttpError(413, `Your organization's knowledge base holds at most ${what}: this upload does not fit ` +
    '(delete documents to make room)', 'QUOTA_EXCEEDED', { quota, limit, used })
}

export function unsupported(names: string[]) {
  return new HttpError(415, `Unsupported file type: ${names.join(', ')}. Supported: ${SUPPORTED_FORMATS.join(' ')}`,
    'UNSUPPORTED_FILE_TYPE', { supportedFormats: [...SUPPORTED_FORMATS] })
}
