import type { FastifyInstance } from 'fastify'
import { Cron } from 'croner'
import { HttpError } from '../../src/http/errors.js'
import { definitionOf, type WorkflowRow, type WorkflowStore } from './store.js'
import { resolveInputs } from './definition.js'
import type { createRunStarter } from './runner.js'

/**
 * Cron schedules of workflows: a tick starts a run as the user who last saved the schedule (`updated_by`). A tick
 * while the previous scheduled run still waits in the queue is skipped: a busy queue never piles up a schedule's runs;
 * so is a tick while the organization's runs in flight fill its runs quota.
 */
export function createWorkflowScheduler(app: FastifyInstance, store: WorkflowStore,
  startRun: ReturnType<typeof createRunStarter>) {
  const crons = new Map<string, Cron>()

  function unschedule(id: string) {
    crons.get(id)?.stop()
    crons.delete(id)
  }

  function tick(id: string) {
    const current = store.byId(id)
    if (!current?.scheduleCron || store.scheduledWaiting(id)) return
    const d = definitionOf(current)
    const { inputs, missing } = resolveInputs(d.inputs, d.scheduleInputs)
    if (missing.length) {
      app.log.warn({ workflowId: id, missing }, 'scheduled run skipped: required inputs missing')
      return
    }
    startRun(current, current.updatedBy, 'schedule', inputs)
  }

  function schedule(w: WorkflowRow) {
    unschedule(w.id)
    if (!w.scheduleCron) return
    crons.set(w.id, new Cron(w.scheduleCron, { protect: true }, () => {
      try {
        tick(w.id)
      } catch (err) {
        if (err instanceof HttpError && err.code === 'QUOTA_EXCEEDED') {
          // the organization's runs in flight fill its runs quota: the next tick tries again
          app.log.warn({ workflowId: w.id, ...err.extra }, 'scheduled run skipped: runs quota reached')
          return
        }
        // a tick that cannot write (a full disk, a busy database) is skipped: the next one tries again
        app.log.error({ err, workflowId: w.id }, 'scheduled run not started')
      }
    }))
  }

  app.addHook('onReady', async () => { for (const w of store.scheduled()) schedule(w) })
  app.addHook('preClose', async () => { for (const c of crons.values()) c.stop(); crons.clear() })
  return { schedule, unschedule }
}
