// Runs in a worker thread, one file at a time: reads an uploaded file, extracts its text, writes the text
// next to it and counts its passages. The main thread never holds the whole text, and a hostile file can
// only exhaust this worker's own time and memory (the pool then replaces the worker).
import { parentPort } from 'node:worker_threads'
import { readFile, writeFile } from 'node:fs/promises'
import { extractText } from './extract.js'
import { countPassages } from './chunker.js'
import { UnreadableFileError } from './text.js'
import type { ExtractJob, ExtractOutcome } from './run.js'

parentPort!.on('message', async (job: ExtractJob) => {
  let outcome: ExtractOutcome
  try {
    const data = await readFile(job.source)
    const text = await extractText(job.kind, data, job.limits)
    await writeFile(job.target, text, 'utf8')
    outcome = { ok: true, textLength: text.length, chunkCount: countPassages(text, job.chunk) }
  } catch (err) {
    outcome = err instanceof UnreadableFileError
      ? { ok: false, unreadable: true, message: err.message }
      : { ok: false, unreadable: false, message: err instanceof Error ? err.message : String(err) }
  }
  parentPort!.postMessage(outcome)
})
