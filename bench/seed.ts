import { randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'

const TYPES = ['task_plan', 'implementation_plan', 'walkthrough', 'verification_proof', 'decision_record', 'plan_mode', 'code_change', 'research_summary']
const STATUSES = ['draft', 'pending_review', 'approved', 'rejected', 'superseded']

/**
 * `total` artifacts in one workspace: one chain of 1,000 versions, the rest in short chains (1–5 versions)
 * spread over 500 workflow runs and 2,000 conversations. Inserted in batches of 5,000 rows per transaction.
 */
export function seedArtifacts(sqlite: Database.Database, who: { customerId: string; workspaceId: string; user: { id: string } }, total: number) {
  const insert = sqlite.prepare(`INSERT INTO artifacts (id, customer_id, workspace_id, type, subtype, title, content, status,
    workflow_id, workflow_run_id, conversation_id, message_id, parent_artifact_id, related_artifacts, confidence_score,
    review_policy, reviewed_by, created_by, created_at, updated_at)
    VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, NULL, ?, '[]', ?, 'agent_decides', NULL, ?, ?, ?)`)
  const runs = Array.from({ length: 500 }, () => randomUUID())
  const workflows = Array.from({ length: 20 }, () => randomUUID())
  const conversations = Array.from({ length: 2000 }, () => randomUUID())
  let clock = Date.now() - total * 1000
  const stamp = () => new Date((clock += 1000)).toISOString()
  let made = 0
  let longChainHead = ''
  let prev: string | null = null
  const batch = sqlite.transaction((n: number) => {
    for (let i = 0; i < n; i++) {
      // rows 0–999 form one chain; after that, chains of four versions
      const parent = made < 1000 ? prev : made % 4 === 0 ? null : prev
      const id = randomUUID()
      const at = stamp()
      insert.run(id, who.customerId, who.workspaceId, TYPES[made % TYPES.length], `Artifact ${made}`,
        JSON.stringify({ summary: `generated artifact number ${made}`, steps: [{ n: 1, text: 'step one' }, { n: 2, text: 'step two' }] }),
        STATUSES[made % STATUSES.length], workflows[made % workflows.length], runs[made % runs.length],
        conversations[made % conversations.length], parent, (made % 100) / 100, who.user.id, at, at)
      if (made === 0) longChainHead = id
      prev = id
      made++
    }
  })
  while (made < total) batch(Math.min(5000, total - made))
  sqlite.pragma('optimize')
  return { longChainHead, runId: runs[0], conversationId: conversations[0] }
}
