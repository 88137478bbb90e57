import type { SqlRow } from '../src/db/prepared.js'
import { knowledgeDocuments } from '../schema/tables/knowledge.js'
import { webhooks } from '../schema/tables/webhooks.js'
type D = SqlRow<typeof knowledgeDocuments>
type W = SqlRow<typeof webhooks>
const d: D['workspace_id'] = null
const s: D['scope'] = 'personal'
const a: W['active'] = 1
const bad: W['active'] = true
const x: D['nope'] = 1
export { d, s, a, bad, x }
