import { randomUUID } from 'node:crypto'
import { and, desc, eq, inArray, isNotNull, isNull, lt, sql } from 'drizzle-orm'
import type { Db } from '../../src/db/index.js'
import { nowIso } from '../../src/db/index.js'
import { boundLimit, fixedLimit } from '../../src/db/prepared.js'
import { workflowRunCounts, workflowRuns, workflows } from '../../schema/tables/assistant.js'
import { users, workspaceMembers } from '../../schema/tables/accounts.js'
import type { InputDef, Run, StepState, Workflow, WorkflowDefinitionBody,
  WorkflowStep } from '../../schema/api/workflows.js'

export type WorkflowRow = typeof workflows.$inferSelect
export type RunRow = typeof workflowRuns.$inferSelect
type RunUpdate = Partial<Pick<RunRow, 'status' | 'outputs' | 'steps' | 'error' | 'startedAt' | 'finishedAt'>>

export const definitionOf = (w: WorkflowRow) => ({
  inputs: JSON.parse(w.inputs) as InputDef[],
  steps: JSON.parse(w.steps) as WorkflowStep[],
  scheduleInputs: JSON.parse(w.scheduleInputs ?? '{}') as Record<string, unknown>
})

export const toWorkflow = (w: WorkflowRow): Workflow => {
  const d = definitionOf(w)
  return {
    id: w.id, name: w.name, description: w.description, workspace_id: w.workspaceId, inputs: d.inputs, steps: d.steps,
    schedule: w.scheduleCron ? { cron: w.scheduleCron, inputs: d.scheduleInputs } : null,
    created_by: w.createdBy, updated_by: w.updatedBy, created_at: w.createdAt, updated_at: w.updatedAt
  }
}

/**
 * What a run executes, fixed when it is created (execute, a schedule's tick): a later edit of the workflow never
 * changes a queued run.
 */
export interface RunDefinition {
  steps: WorkflowStep[]
}

/**
 * A run as `viewerId` may see it. Its inputs, outputs and step outputs come from what the run's user may read
 * (a run acts as that user: docs/api/assistant.md#workflows), so only that user sees them; the other members of the
 * workspace see its status, its steps' status and its error.
 */
export const toRun = (r: RunRow, viewerId: string): Run => {
  const own = viewerId === r.startedBy
  const steps = JSON.parse(r.steps) as StepState[]
  return {
    id: r.id, workflow_id: r.workflowId, status: r.status, trigger: r.trigger, started_by: r.startedBy,
    inputs: own ? JSON.parse(r.inputs) as Record<string, unknown> : {},
    outputs: own && r.outputs ? JSON.parse(r.outputs) as Record<string, string> : null,
    steps: own ? steps : steps.map(({ output: _hidden, ...rest }) => rest),
    error: r.error, created_at: r.createdAt, started_at: r.startedAt, finished_at: r.finishedAt
  }
}

const definitionColumns = (b: WorkflowDefinitionBody) => ({
  name: b.name.trim(), description: b.description ?? '', inputs: JSON.stringify(b.inputs ?? []),
  steps: JSON.stringify(b.steps),
  scheduleCron: b.schedule?.cron ?? null, scheduleInputs: b.schedule ? JSON.stringify(b.schedule.inputs ?? {}) : null
})

/** Workflows and their runs; every look-up by a caller is filtered by workspace and organization. */
export function createWorkflowStore(db: Db) {
  const one = db.select().from(workflows).where(and(eq(workflows.id, sql.placeholder('id')),
    eq(workflows.workspaceId, sql.placeholder('workspaceId')),
    eq(workflows.customerId, sql.placeholder('customerId')))).prepare()
  const byId = db.select().from(workflows).where(eq(workflows.id, sql.placeholder('id'))).prepare()
  const runById = db.select().from(workflowRuns).where(eq(workflowRuns.id, sql.placeholder('id'))).prepare()
  const actor = db.select({ id: users.id, customerId: users.customerId, orgRole: users.orgRole, email: users.email,
    name: users.name })
    .from(users).innerJoin(workspaceMembers, eq(workspaceMembers.userId, users.id))
    .where(and(eq(users.id, sql.placeholder('userId')), isNull(users.removedAt),
      eq(workspaceMembers.workspaceId, sql.placeholder('workspaceId')))).prepare()
  const scheduledQueued = db.select({ id: workflowRuns.id }).from(workflowRuns)
    .where(and(eq(workflowRuns.workflowId, sql.placeholder('workflowId')), eq(workflowRuns.trigger, 'schedule'),
      eq(workflowRuns.status, 'queued'))).limit(fixedLimit(1)).prepare()
  // the runs quota (docs/api/assistant.md#workflows): a counter kept by triggers, and the in-flight runs by index
  const runCount = db.select({ count: workflowRunCounts.count }).from(workflowRunCounts)
    .where(eq(workflowRunCounts.customerId, sql.placeholder('customerId'))).prepare()
  const inFlight = db.select({ n: sql<number>`count(*)` }).from(workflowRuns)
    .where(and(eq(workflowRuns.customerId, sql.placeholder('customerId')),
      inArray(workflowRuns.status, ['queued', 'running']))).prepare()
  const oldestWith = (status: 'completed' | 'failed') => db.select({ id: workflowRuns.id,
    createdAt: workflowRuns.createdAt }).from(workflowRuns)
    .where(and(eq(workflowRuns.customerId, sql.placeholder('customerId')), eq(workflowRuns.status, status)))
    .orderBy(workflowRuns.createdAt, workflowRuns.id).limit(boundLimit('limit')).prepare()
  const oldestCompleted = oldestWith('completed')
  const oldestFailed = oldestWith('failed')

  return {
    find: (who: { customerId: string }, workspaceId: string, id: string): WorkflowRow | undefined =>
      one.get({ id, workspaceId, customerId: who.customerId }),
    byId: (id: string): WorkflowRow | undefined => byId.get({ id }),
    list: (customerId: string, workspaceId: string): WorkflowRow[] => db.select().from(workflows)
      .where(and(eq(workflows.workspaceId, workspaceId), eq(workflows.customerId, customerId)))
      .orderBy(desc(workflows.createdAt), desc(workflows.id)).all(),
    scheduled: (): WorkflowRow[] => db.select().from(workflows).where(isNotNull(workflows.scheduleCron)).all(),

    create(who: { customerId: string; userId: string }, workspaceId: string,
      body: WorkflowDefinitionBody): WorkflowRow {
      const now = nowIso()
      const row: WorkflowRow = {
        id: randomUUID(), customerId: who.customerId, workspaceId, createdBy: who.userId, updatedBy: who.userId,
        ...definitionColumns(body), createdAt: now, updatedAt: now
      }
      db.insert(workflows).values(row).run()
      return row
    },
    /** a new definition, saved by `userId`: from now on scheduled runs act as that user */
    replace(id: string, userId: string, body: WorkflowDefinitionBody): WorkflowRow | undefined {
      return db.update(workflows).set({ ...definitionColumns(body), updatedBy: userId, updatedAt: nowIso() })
        .where(eq(workflows.id, id)).returning().get()
    },
    remove: (id: string) => db.delete(workflows).where(eq(workflows.id, id)).run().changes > 0,

    /** the user a run acts as, only while still a member of the run's workspace and not removed */
    actor: (userId: string, workspaceId: string) => actor.get({ userId, workspaceId }),

    createRun(w: WorkflowRow, userId: string, trigger: RunRow['trigger'], inputs: Record<string, unknown>,
      definition: RunDefinition): string {
      const id = randomUUID()
      db.insert(workflowRuns).values({
        id, workflowId: w.id, workspaceId: w.workspaceId, customerId: w.customerId, startedBy: userId, trigger,
        status: 'queued', inputs: JSON.stringify(inputs), steps: '[]', definition: JSON.stringify(definition),
        createdAt: nowIso()
      }).run()
      return id
    },
    /** whether a scheduled run of the workflow is still waiting to start */
    scheduledWaiting: (workflowId: string) => scheduledQueued.get({ workflowId }) !== undefined,
    /** removes the workflow's finished scheduled runs older than its newest `keep` scheduled ones */
    pruneScheduled(workflowId: string, keep: number): number {
      const cut = db.select({ createdAt: workflowRuns.createdAt }).from(workflowRuns)
        .where(and(eq(workflowRuns.workflowId, workflowId), eq(workflowRuns.trigger, 'schedule')))
        .orderBy(desc(workflowRuns.createdAt)).limit(1).offset(keep - 1).get()
      if (!cut) return 0
      return db.delete(workflowRuns).where(and(eq(workflowRuns.workflowId, workflowId),
        eq(workflowRuns.trigger, 'schedule'), lt(workflowRuns.createdAt, cut.createdAt),
        inArray(workflowRuns.status, ['completed', 'failed']))).run().changes
    },
    /** how many runs the organization keeps (every status) */
    runCount: (customerId: string): number => runCount.get({ customerId })?.count ?? 0,
    /** how many of the organization's runs are queued or running */
    runsInFlight: (customerId: string): number => inFlight.get({ customerId })?.n ?? 0,
    /** removes the organization's `count` oldest finished runs (completed or failed; fewer when it has fewer) */
    pruneFinished(customerId: string, count: number): number {
      if (count <= 0) return 0
      const oldest = [...oldestCompleted.all({ customerId, limit: count }), ...oldestFailed.all({ customerId,
        limit: count })]
        .sort((a, b) => a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1)
        .slice(0, count).map((r) => r.id)
      let removed = 0
      // within SQLite's bound on variables of one statement
      for (let i = 0; i < oldest.length; i += 500) {
        removed += db.delete(workflowRuns).where(and(eq(workflowRuns.customerId, customerId),
          inArray(workflowRuns.id, oldest.slice(i, i + 500)))).run().changes
      }
      return removed
    },
    runById: (id: string): RunRow | undefined => runById.get({ id }),
    runsOf: (workflowId: string,
      limit: number): RunRow[] => db.select().from(workflowRuns).where(eq(workflowRuns.workflowId, workflowId))
      .orderBy(desc(workflowRuns.createdAt), desc(workflowRuns.id)).limit(limit).all(),
    updateRun: (id: string,
      fields: RunUpdate) => { db.update(workflowRuns).set(fields).where(eq(workflowRuns.id, id)).run() }
  }
}
export type WorkflowStore = ReturnType<typeof createWorkflowStore>
