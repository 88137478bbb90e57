// what the search worker also loads: no import of the HTTP side (the request's reader is made in ./plugin.ts)

export type DocScope = 'organization' | 'workspace' | 'personal'

/** Who reads: the organization, the workspaces in view (the context, or all of the user's), the user. */
export interface Reader {
  customerId: string
  userId: string
  workspaceIds: readonly string[]
}

export interface DocFilters {
  scope?: DocScope
  category?: string
  /** documents carrying any of these tags */
  tags?: string[]
}

/**
 * The readable-documents rule (docs/api/knowledge.md, "Who reads and deletes what") as SQL over the alias `d`,
 * with its filters. One place: list, get, search, stats and the knowledge-graph routes all read through it.
 */
export function readableWhere(filters: DocFilters = {}): string {
  const parts = [
    `d.customer_id = @customerId`,
    `(d.scope = 'organization'
      OR (d.scope = 'workspace' AND d.workspace_id IN (SELECT value FROM json_each(@workspaceIds)))
      OR (d.scope = 'personal' AND d.owner_id = @userId))`
  ]
  if (filters.scope) parts.push(`d.scope = @scope`)
  if (filters.category) parts.push(`d.category = @category`)
  if (filters.tags && filters.tags.length > 0) {
    parts.push(`EXISTS (SELECT 1 FROM knowledge_document_tags g WHERE g.document_id = d.id AND g.tag IN (SELECT value
      FROM json_each(@tags)))`)
  }
  return parts.join(' AND ')
}

export function readableParams(reader: Reader, filters: DocFilters = {}) {
  return {
    customerId: reader.customerId,
    userId: reader.userId,
    workspaceIds: JSON.stringify(reader.workspaceIds),
    ...(filters.scope ? { scope: filters.scope } : {}),
    ...(filters.category ? { category: filters.category } : {}),
    ...(filters.tags && filters.tags.length > 0 ? { tags: JSON.stringify(filters.tags) } : {})
  }
}

const hex = (uuid: string) => uuid.replace(/-/g, '').toLowerCase()

/**
 * The tokens of the word index's `readers` column that this reader may see (migration 0012 writes one per
 * passage: o<org>z, w<workspace>z, u<owner><org>z), narrowed by a scope filter. The trailing z keeps the
 * Porter stemmer from touching them.
 */
export function readerTokens(reader: Reader, scope?: DocScope): string[] {
  const tokens: string[] = []
  if (!scope || scope === 'organization') tokens.push(`o${hex(reader.customerId)}z`)
  if (!scope || scope === 'workspace') for (const w of reader.workspaceIds) tokens.push(`w${hex(w)}z`)
  if (!scope || scope === 'personal') tokens.push(`u${hex(reader.userId)}${hex(reader.customerId)}z`)
  return tokens
}
