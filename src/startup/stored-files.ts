import fsp from 'node:fs/promises'
import path from 'node:path'
import { and, asc, gt, isNull } from 'drizzle-orm'
import type { Db } from '../db/index.js'
import { knowledgeDocuments } from '../../schema/tables/knowledge.js'
import { voiceAudio, voiceNotes } from '../../schema/tables/voice-notes.js'

/** Rows whose stored files are not in the data directory (a restore of the database without them, a lost disk). */
export interface MissingStoredFiles {
  /** documents lacking their original upload or their extracted text */
  documents: number
  /** uploaded audio files missing */
  audio: number
  /** voice notes whose uploaded audio is missing */
  voiceNotes: number
  /** the first few ids of each, for the log */
  examples: { documents: string[]; audio: string[] }
}

const PAGE = 500
const EXAMPLES = 5
/** the path of uploaded audio in a voice note's audioUrl, whatever the public URL was when it was made */
const AUDIO_PATH = '/api/v2/voice-notes/audio/'

async function exists(file: string): Promise<boolean> {
  try {
    await fsp.access(file)
    return true
  } catch (err) {
    // only a file that is not there counts as missing; one that cannot be read is another problem, found on use
    return (err as NodeJS.ErrnoException).code !== 'ENOENT' && (err as NodeJS.ErrnoException).code !== 'ENOTDIR'
  }
}

/** Rows of a table a page at a time by id (no statement stays open across the awaits between pages). */
async function forEachPage<R extends { id: string }>(page: (after: string) => R[], each: (rows: R[]) => Promise<void>) {
  let after = ''
  for (;;) {
    const rows = page(after)
    if (rows.length === 0) return
    await each(rows)
    if (rows.length < PAGE) return
    after = rows[rows.length - 1].id
  }
}

/**
 * Looks for every stored file the database names: each document's original upload and extracted text, each
 * uploaded audio file. Reads only; a page of rows at a time, their files looked at side by side.
 */
export async function findMissingStoredFiles(db: Db, dataDir: string): Promise<MissingStoredFiles> {
  const out: MissingStoredFiles = { documents: 0, audio: 0, voiceNotes: 0, examples: { documents: [], audio: [] } }
  const abs = (rel: string) => path.join(dataDir, rel)

  await forEachPage((after) => db.select({ id: knowledgeDocuments.id, original: knowledgeDocuments.originalPath,
    text: knowledgeDocuments.textPath }).from(knowledgeDocuments).where(gt(knowledgeDocuments.id, after))
    .orderBy(asc(knowledgeDocuments.id)).limit(PAGE).all(), async (rows) => {
    const lacking = await Promise.all(rows.map(async (r) =>
      !(await exists(abs(r.text))) || (r.original !== null && !(await exists(abs(r.original))))))
    rows.forEach((r, i) => {
      if (!lacking[i]) return
      out.documents++
      if (out.examples.documents.length < EXAMPLES) out.examples.documents.push(r.id)
    })
  })

  const missingAudio = new Set<string>()
  await forEachPage((after) => db.select({ id: voiceAudio.id, path: voiceAudio.path }).from(voiceAudio)
    .where(gt(voiceAudio.id, after)).orderBy(asc(voiceAudio.id)).limit(PAGE).all(), async (rows) => {
    const present = await Promise.all(rows.map((r) => exists(abs(r.path))))
    rows.forEach((r, i) => { if (!present[i]) missingAudio.add(r.id) })
  })
  out.audio = missingAudio.size
  out.examples.audio = [...missingAudio].slice(0, EXAMPLES)

  if (missingAudio.size > 0) {
    await forEachPage((after) => db.select({ id: voiceNotes.id, audioUrl: voiceNotes.audioUrl }).from(voiceNotes)
      .where(and(gt(voiceNotes.id, after), isNull(voiceNotes.deletedAt))).orderBy(asc(voiceNotes.id)).limit(PAGE)
      .all(), async (rows) => {
      for (const r of rows) {
        const at = r.audioUrl.lastIndexOf(AUDIO_PATH)
        if (at >= 0 && missingAudio.has(r.audioUrl.slice(at + AUDIO_PATH.length))) out.voiceNotes++
      }
    })
  }
  return out
}

/** The warning a start writes when stored files are missing, or undefined when none is. */
export function missingFilesWarning(missing: MissingStoredFiles): string | undefined {
  if (missing.documents === 0 && missing.audio === 0) return undefined
  const parts: string[] = []
  if (missing.documents > 0) parts.push(`${missing.documents} document${missing.documents === 1 ? '' : 's'}`)
  if (missing.audio > 0) {
    parts.push(`${missing.audio} uploaded audio file${missing.audio === 1 ? '' : 's'} (of ${missing.voiceNotes} ` +
      `voice note${missing.voiceNotes === 1 ? '' : 's'})`)
  }
  return `stored files are missing from the data directory: ${parts.join(' and ')} lack their files. Was the ` +
    'database restored without the knowledge/ and voice/ folders beside it? Their downloads answer 410 ' +
    'STORED_FILE_MISSING until the files are put back (or the documents uploaded again)'
}
