// Runs in a child process of its own, one file at a time: reads an uploaded file, extracts its text, writes
// the text next to it and counts its passages. The main process never holds the whole text, and a hostile
// file can only exhaust this process's own time and memory (its address space is limited; the pool then
// replaces it).
import { readFile, writeFile } from 'node:fs/promises'
import { extractText } from './extract.js'
import { countPassages } from './chunker.js'
import { UnreadableFileError } from './text.js'
import type { ExtractJob, ExtractOutcome } from './run.js'

/** what an allocation refused by the address-space limit or the heap limit says */
const OUT_OF_MEMORY = /allocation failed|out of memory|invalid array length|invalid string length/i

process.on('message', (job: ExtractJob) => {
  void (async () => {
    let outcome: ExtractOutcome
    try {
      const data = await readFile(job.source)
      const text = await extractText(job.kind, data, job.limits)
      await writeFile(job.target, text, 'utf8')
      outcome = { ok: true, textLength: text.length, chunkCount: countPassages(text, job.chunk) }
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err)
      // pdf.js reports a refused allocation as a damaged file: it is told apart by its message
      outcome = OUT_OF_MEMORY.test(message) ? { ok: false, unreadable: true, outOfMemory: true, message }
        : { ok: false, unreadable: err instanceof UnreadableFileError, message }
    }
    process.send!(outcome)
  })()
})
// the pool is gone (the service stopped or died): so is this process
process.on('disconnect', () => process.exit(0))
