import t from 'tap'
import { build, closedPort } from '../helper.js'
import { loggerOptions } from '../../src/app.js'
import { PermanentJobError } from '../../src/jobs/queue.js'

interface Line { level: number; msg: string; type?: string; attempts?: number; maxAttempts?: number;
  retryInMs?: number; error?: { message: string; code?: string } }

t.test('a failing job logs its error (message, cause and code) at each retry and when it gives up, secrets masked',
  async (t) => {
    const lines: string[] = []
    const apiKey = 'configured-llm-key-7f3a'
    const app = await build(t, {
      config: { llm: { baseUrl: 'http://127.0.0.1:9/v1', apiKey, model: 'm' } },
      logger: loggerOptions('info', { write: (line: string) => { lines.push(line) } })
    })
    const port = await closedPort()
    app.jobs.register('test.unreachable', async () => {
      // a real connection refused, as a model or webhook server that is down gives it
      const res = await fetch(`http://127.0.0.1:${port}/v1/models?api_key=${apiKey}`)
      await res.text()
    }, { backoffMs: 5, maxAttempts: 2 })
    app.jobs.register('test.refused', async () => {
      throw new PermanentJobError(`https://user:pa55word@example.org refused the key ${apiKey} (Authorization: Bearer ${apiKey})`)
    })
    const unreachable = app.jobs.enqueue('test.unreachable', {})
    const refused = app.jobs.enqueue('test.refused', {})
    await app.jobs.idle()

    const logged = lines.map((l) => JSON.parse(l) as Line)
    const about = (type: string) => logged.filter((l) => l.type === type)
    const [retry, gaveUp] = about('test.unreachable')
    t.equal(retry.level, 40, 'a retry is a warning')
    t.match(retry, { attempts: 1, maxAttempts: 2, retryInMs: 5,
      error: { message: `fetch failed: connect ECONNREFUSED 127.0.0.1:${port}`, code: 'ECONNREFUSED' } })
    t.equal(retry.msg, `job test.unreachable failed (attempt 1 of 2), retried in 5 ms: fetch failed: connect ` +
      `ECONNREFUSED 127.0.0.1:${port}`, 'the message itself says what went wrong')
    t.equal(gaveUp.level, 50, 'giving up is an error')
    t.match(gaveUp, { attempts: 2, error: { code: 'ECONNREFUSED' } })
    t.match(gaveUp.msg, /^job test\.unreachable failed 2 times, given up: fetch failed: connect ECONNREFUSED/)
    t.notOk(logged.some((l) => l.msg === 'job will be retried'), 'no retry line without its error')

    const [permanent] = about('test.refused')
    t.equal(permanent.level, 50)
    t.equal(permanent.error?.message,
      'https://[redacted]@example.org refused the key [redacted] (Authorization: [redacted] [redacted])')
    t.match(permanent.msg, /^job test\.refused cannot succeed, given up: /)
    t.notOk(lines.some((l) => l.includes(apiKey) || l.includes('pa55word')), 'no secret reaches the log')

    const stored = app.sqlite.prepare('SELECT id, last_error FROM jobs WHERE id IN (?, ?)').all(unreachable, refused) as
      Array<{ id: string; last_error: string }>
    t.equal(stored.length, 2)
    for (const row of stored) t.notOk(row.last_error.includes(apiKey), 'nor the row kept for the failed job')
  })
