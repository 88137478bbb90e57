import { randomBytes, randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import { nowIso } from '../../src/db/index.js'

interface HookRow {
  id: string; customer_id: string; workspace_id: string; url: string; events: string; signing_secret: string
  previous_signing_secret: string | null; previous_secret_expires_at: string | null
  active: number; description: string; created_at: string; updated_at: string
}

const publicHook = (r: HookRow) => ({
  id: r.id, url: r.url, events: JSON.parse(r.events) as string[], active: r.active === 1,
  description: r.description, created_at: r.created_at, updated_at: r.updated_at
})

const newSecret = () => `whsec_${randomBytes(32).toString('hex')}`
/** how long a replaced secret keeps signing deliveries (a second signature) */
const ROTATION_OVERLAP_MS = 86_400_000

/** Webhooks of a workspace and their delivery records; every query is confined to workspace and organization. */
export function createWebhookStore(sqlite: Database.Database) {
  const insert = sqlite.prepare(`INSERT INTO webhooks (id, customer_id, workspace_id, url, events, signing_secret,
    active, description,
    created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)`)
  const list = sqlite.prepare(`SELECT * FROM webhooks WHERE workspace_id = ? AND customer_id = ?
    ORDER BY created_at DESC, id DESC`)
  const one = sqlite.prepare(`SELECT * FROM webhooks WHERE id = ? AND workspace_id = ? AND customer_id = ?`)
  const remove = sqlite.prepare(`DELETE FROM webhooks WHERE id = ? AND workspace_id = ? AND customer_id = ?`)
  const rotate = sqlite.prepare(`UPDATE webhooks
    SET previous_signing_secret = signing_secret, previous_secret_expires_at = ?,
    signing_secret = ?, updated_at = ? WHERE id = ? AND workspace_id = ? AND customer_id = ?`)
  const deliveries = sqlite.prepare(`SELECT * FROM webhook_deliveries WHERE webhook_id = ?
    ORDER BY created_at DESC, rowid DESC LIMIT 50`)

  return {
    create(ws: { customerId: string; workspaceId: string; userId: string },
      input: { url: string; events: string[]; description: string }) {
      const id = randomUUID()
      const secret = newSecret()
      const now = nowIso()
      insert.run(id, ws.customerId, ws.workspaceId, input.url, JSON.stringify(input.events), secret, input.description,
        ws.userId, now, now)
      return {
        id, workspace_id: ws.workspaceId, url: input.url, events: input.events, signing_secret: secret,
        active: true, description: input.description, created_at: now
      }
    },
    list(workspaceId: string, customerId: string) {
      return (list.all(workspaceId, customerId) as HookRow[]).map(publicHook)
    },
    /** the full row (with the secrets, for signing); undefined for a missing or foreign webhook */
    find(id: string, workspaceId: string, customerId: string) {
      return one.get(id, workspaceId, customerId) as HookRow | undefined
    },
    update(id: string, workspaceId: string, customerId: string,
      patch: { url?: string; events?: string[]; active?: boolean; description?: string }) {
      const sets: string[] = []
      const values: unknown[] = []
      if (patch.url !== undefined) { sets.push('url = ?'); values.push(patch.url) }
      if (patch.events !== undefined) { sets.push('events = ?'); values.push(JSON.stringify(patch.events)) }
      // switched on again: the 5 days of failures count from the next failure
      if (patch.active !== undefined) {
        sets.push('active = ?'); values.push(patch.active ? 1
          : 0); if (patch.active) sets.push('failing_since = NULL')
      }
      if (patch.description !== undefined) { sets.push('description = ?'); values.push(patch.description) }
      sets.push('updated_at = ?')
      values.push(nowIso())
      const row = sqlite.prepare(`UPDATE webhooks SET ${sets.join(', ')} WHERE id = ? AND workspace_id = ?
        AND customer_id = ? RETURNING *`)
        .get(...values, id, workspaceId, customerId) as HookRow | undefined
      return row && publicHook(row)
    },
    /**
     * a new signing secret; the one it replaces keeps signing for 24 hours. undefined for a missing or foreign webhook
     */
    rotateSecret(id: string, workspaceId: string, customerId: string, now = Date.now()) {
      const secret = newSecret()
      const changed = rotate.run(new Date(now + ROTATION_OVERLAP_MS).toISOString(), secret, new Date(now).toISOString(),
        id, workspaceId, customerId).changes
      return changed > 0 ? secret : undefined
    },
    remove(id: string, workspaceId: string, customerId: string) {
      return remove.run(id, workspaceId, customerId).changes > 0
    },
    deliveries(webhookId: string) {
      return (deliveries.all(webhookId) as Array<{
        id: string; webhook_id: string; message_id: string | null; attempt: number; next_attempt_at: string | null;
        event_type: string
        status_code: number; success: number; latency_ms: number; request_body: string; response_body: string;
        error: string | null; created_at: string
      }>).map((d) => ({
        id: d.id, webhook_id: d.webhook_id, message_id: d.message_id, attempt: d.attempt,
        next_attempt_at: d.next_attempt_at,
        event_type: d.event_type, status_code: d.status_code, success: d.success === 1,
        latency_ms: d.latency_ms, request_body: JSON.parse(d.request_body), response_body: d.response_body,
        ...(d.error ? { error: d.error } : {}), created_at: d.created_at
      }))
    }
  }
}
