import type { FastifyInstance } from 'fastify'
import { Cron } from 'croner'
import { definitionOf, type WorkflowRow, type WorkflowStore } from './store.js'
import { resolveInputs } from './definition.js'
import { RUN_JOB } from './runner.js'

/** Cron schedules of workflows: a tick starts a run as the user who last saved the schedule (`updated_by`). */
export function createWorkflowScheduler(app: FastifyInstance, store: WorkflowStore) {
  const crons = new Map<string, Cron>()

  function unschedule(id: string) {
    crons.get(id)?.stop()
    crons.delete(id)
  }

  function schedule(w: WorkflowRow) {
    unschedule(w.id)
    if (!w.scheduleCron) return
    crons.set(w.id, new Cron(w.scheduleCron, { protect: true }, () => {
      const current = store.byId(w.id)
      if (!current?.scheduleCron) return
      const d = definitionOf(current)
      const { inputs, missing } = resolveInputs(d.inputs, d.scheduleInputs)
      if (missing.length) {
        app.log.warn({ workflowId: w.id, missing },
          'scheduled run skipped: required inputs missing'); return
      }
      app.jobs.enqueue(RUN_JOB, { runId: store.createRun(current, current.updatedBy, 'schedule', inputs) })
    }))
  }

  app.addHook('onReady', async () => { for (const w of store.scheduled()) schedule(w) })
  app.addHook('preClose', async () => { for (const c of crons.values()) c.stop(); crons.clear() })
  return { schedule, unschedule }
}
