import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { createExtractor, DEFAULT_WORKER_LIMITS, type ExtractCaller, type ExtractEvent } from '../../src/ingest/run.js'
import { tempDir } from '../helper.js'

t.test('extraction takes turns per organization and per user; busy callers never hold every process',
  async (t) => {
    const dir = tempDir(t)
    const chunk = { chunkSize: 1000, chunkOverlap: 200 }
    // heavy after a millisecond of extraction: whoever has a file running is heavy, a newcomer is not
    const pool = createExtractor({ ...DEFAULT_WORKER_LIMITS, concurrency: 2, heavyMs: 1 })
    t.teardown(() => pool.close())
    const log: string[] = []
    for (const kind of ['start', 'end'] as const) {
      pool.events.on(kind, (e: ExtractEvent) => log.push(`${kind} ${path.basename(e.source, '.html')}`))
    }
    const run = (name: string, caller: ExtractCaller) => {
      const source = path.join(dir, `${name}.html`)
      fs.writeFileSync(source, `<p>${name}</p>`)
      return pool.extract(source, path.join(dir, `${name}.txt`), 'html', chunk, caller)
    }
    const jobs: Array<Promise<unknown>> = []
    // two sign-ups hold both processes; then a newcomer, one of them again in another organization of
    // theirs, and the first organization's next file arrive
    let started = 0
    pool.events.on('start', () => {
      if (++started !== 2) return
      // a moment later (both are still starting their processes): both callers have extraction time now
      setTimeout(() => {
        jobs.push(run('newcomer', { organization: 'org-c', user: 'carol' }))
        jobs.push(run('alice-elsewhere', { organization: 'org-a2', user: 'alice' }))
        jobs.push(run('a2', { organization: 'org-a', user: 'alice' }))
      }, 20)
    })
    jobs.push(run('a1', { organization: 'org-a', user: 'alice' }))
    jobs.push(run('b1', { organization: 'org-b', user: 'bob' }))
    await new Promise<void>((resolve) => {
      const check = () => (jobs.length === 5 ? resolve() : setImmediate(check))
      check()
    })
    await Promise.all(jobs)
    const at = (entry: string) => log.indexOf(entry)
    t.ok(at('start newcomer') < at('end a1') && at('start newcomer') < at('end b1'),
      'the newcomer did not wait for the two long files')
    t.ok(at('start alice-elsewhere') > at('end a1'), 'a user\'s second organization waits for her first file')
    t.ok(at('start a2') > at('end a1'), 'an organization has one process at a time')
    t.equal(log.filter((l) => l.startsWith('end')).length, 5)
  })
