import { randomUUID } from 'node:crypto'
import { and, desc, eq, sql } from 'drizzle-orm'
import type { Db } from '../db/index.js'
import { nowIso } from '../db/index.js'
import { agents } from '../../schema/tables/assistant.js'
import type { ToolName } from '../assistant/assistant.js'
import type { Agent } from '../../schema/api/agents.js'

export type AgentRow = typeof agents.$inferSelect

export const toAgent = (r: AgentRow): Agent => ({
  id: r.id, name: r.name, systemPrompt: r.systemPrompt, capabilities: { tools: JSON.parse(r.tools) as string[] },
  createdAt: r.createdAt, updatedAt: r.updatedAt
})

export const toolsOf = (r: AgentRow) => JSON.parse(r.tools) as ToolName[]

/** Agents of an organization (docs/api/assistant.md#agents); used by the agents routes and by workflow agent steps. */
export function createAgentStore(db: Db) {
  const one = db.select().from(agents)
    .where(and(eq(agents.id, sql.placeholder('id')), eq(agents.customerId, sql.placeholder('customerId')))).prepare()
  const list = db.select().from(agents).where(eq(agents.customerId, sql.placeholder('customerId')))
    .orderBy(desc(agents.createdAt), desc(agents.id)).prepare()

  return {
    find: (customerId: string, id: string): AgentRow | undefined => one.get({ id, customerId }),
    list: (customerId: string): AgentRow[] => list.all({ customerId }),
    create(who: { customerId: string; userId: string },
      input: { name: string; systemPrompt: string; tools: string[] }): AgentRow {
      const now = nowIso()
      const row: AgentRow = {
        id: randomUUID(), customerId: who.customerId, createdBy: who.userId, name: input.name,
        systemPrompt: input.systemPrompt,
        tools: JSON.stringify(input.tools), createdAt: now, updatedAt: now
      }
      db.insert(agents).values(row).run()
      return row
    },
    remove: (customerId: string, id: string) =>
      db.delete(agents).where(and(eq(agents.id, id), eq(agents.customerId, customerId))).run().changes > 0
  }
}
export type AgentStore = ReturnType<typeof createAgentStore>
