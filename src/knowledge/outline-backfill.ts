/**
 * The back-fill of titles and heading paths (src/ingest/outline.ts) for documents indexed before they were stored
 * (migration 0033): those documents have no title, which marks them. Run by the index worker while it is idle
 * (src/knowledge/index-worker.ts), on its write connection, each write after the server's waiting ones.
 *
 * A document's outline is read from its passages, in order: they hold its text's `#` lines, and each one starts with
 * the last `chunk_overlap` characters of the one before (src/ingest/chunker.ts), so the text and where each passage
 * lies in it follow from them alone, whatever chunker made them. Two passes, a page of passages at a time: the
 * outline, then each passage's heading path written, a page to a transaction; the title last, which takes the
 * document off the list. Restart-safe: the work left is always "indexed documents without a title" (a pass cut short
 * starts that document again; paths written twice are the same). Within one worker, a document cut short by a task
 * goes on from the page it reached.
 */
import type Database from 'better-sqlite3'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { documentTitle, fileTitle, hasOutline, OutlineReader, passageHeadingPath, storedHeadingPath,
  type Outline } from '../ingest/outline.js'

/** documents looked up at a time */
export const OUTLINE_BATCH = 50
/** passages read at a time, and written in one transaction (an update by the (document, chunk) index each) */
const PAGE = 500

/**
 * the documents without a title now, from the partial index of untitled documents (`+status`: not from the index on
 * status, which holds them all)
 */
export const LACKING_SQL = `SELECT id FROM knowledge_documents WHERE title IS NULL AND +status = 'indexed'
  ORDER BY id LIMIT ${OUTLINE_BATCH}`

type Row = { chunk_index: number; text: string }
type DocRow = { file_name: string; file_type: string; chunk_overlap: number }

/**
 * How many characters passage `next` shares with the one before: the document's overlap, or one more where the
 * chunker moved a start off a surrogate pair; a passage that starts one character after the one before (an overlap
 * of nearly the whole passage) shares all but that; 0 when none fits.
 */
export function sharedStart(before: string, next: string, overlap: number): number {
  for (const k of [overlap, overlap + 1, before.length - 1, before.length - 2]) {
    if (k >= 0 && k <= next.length && k <= before.length && before.endsWith(next.slice(0, k))) return k
  }
  return 0
}

/** the passage before the next one: where it starts in the text, and its text (none before the first) */
type Before = { start: number; text: string } | undefined

/** where passage `text` lies in the document's text, after `before`, and how much it shares with it */
function place(before: Before, text: string, overlap: number) {
  const shared = before ? sharedStart(before.text, text, overlap) : 0
  const start = before ? before.start + before.text.length - shared : 0
  return { start, end: start + text.length, shared }
}

/** a write's turn: undefined when the worker has other work (the back-fill stops there) */
export type WriteTurn = <T>(write: () => T) => Promise<{ value: T } | undefined>

export function outlineBackfill(sqlite: Database.Database) {
  const lacking = sqlite.prepare(LACKING_SQL).pluck()
  const docOf = sqlite.prepare(`SELECT file_name, file_type, chunk_overlap FROM knowledge_documents
    WHERE id = ? AND title IS NULL AND status = 'indexed'`)
  const page = sqlite.prepare(`SELECT chunk_index, text FROM knowledge_passages WHERE document_id = ?
    AND chunk_index >= ? ORDER BY chunk_index LIMIT ${PAGE}`)
  const setPath = sqlite.prepare(`UPDATE knowledge_passages SET heading_path = ? WHERE document_id = ?
    AND chunk_index = ?`)
  const setTitle = sqlite.prepare(`UPDATE knowledge_documents SET title = ? WHERE id = ? AND title IS NULL
    AND status = 'indexed'`)
  const writePaths = sqlite.transaction((id: string, paths: Array<[number, string]>) => {
    for (const [chunk, path] of paths) setPath.run(path, id, chunk)
  })

  /** the outline of a document read from its passages; undefined when `stop` said so between pages */
  async function outlineOf(id: string, overlap: number, stop: () => boolean): Promise<Outline | undefined> {
    const reader = new OutlineReader()
    let before: Before
    for (let from = 0; ; ) {
      const rows = page.all(id, from) as Row[]
      for (const r of rows) {
        const at = place(before, r.text, overlap)
        reader.push(r.text.slice(at.shared))
        before = { start: at.start, text: r.text }
      }
      if (rows.length < PAGE) return reader.end()
      from = rows[rows.length - 1].chunk_index + 1
      await yieldToLoop()
      if (stop()) return undefined
    }
  }

  /** the second pass of a document, kept when a task cuts it short */
  let going: { id: string; outline: Outline; title: string; from: number; before: Before } | undefined

  /**
   * Gives one document its heading paths and title: true once done (or when it needs none any more), false when the
   * worker has other work (`turn` refused, or `stop`).
   */
  async function fill(id: string, turn: WriteTurn, stop: () => boolean): Promise<boolean> {
    const doc = docOf.get(id) as DocRow | undefined
    if (!doc) return true
    if (!hasOutline(doc.file_type)) return (await turn(() => setTitle.run(fileTitle(doc.file_name), id))) !== undefined
    if (going?.id !== id) {
      const outline = await outlineOf(id, doc.chunk_overlap, stop)
      if (!outline) return false
      going = { id, outline, title: documentTitle(outline, doc.file_name), from: 0, before: undefined }
    }
    const g = going
    for (;;) {
      const rows = page.all(id, g.from) as Row[]
      const paths: Array<[number, string]> = []
      let before = g.before
      for (const r of rows) {
        const at = place(before, r.text, doc.chunk_overlap)
        const path = storedHeadingPath(passageHeadingPath(g.outline, at))
        if (path !== null) paths.push([r.chunk_index, path])
        before = { start: at.start, text: r.text }
      }
      // (refused: this page again next time, from the passage before it)
      if (paths.length > 0 && !await turn(() => writePaths(id, paths))) return false
      if (rows.length < PAGE) break
      g.from = rows[rows.length - 1].chunk_index + 1
      g.before = before
      if (stop()) return false
    }
    going = undefined
    return (await turn(() => setTitle.run(g.title, id))) !== undefined
  }

  return {
    /** the documents without a title now (at most OUTLINE_BATCH) */
    lacking: () => lacking.all() as string[],
    fill,
    /** every document without a title given one now, with its passages' heading paths (tests): how many */
    async all(): Promise<number> {
      let made = 0
      const now: WriteTurn = async (write) => ({ value: write() })
      for (let ids = lacking.all() as string[]; ids.length > 0; ids = lacking.all() as string[]) {
        for (const id of ids) if (await fill(id, now, () => false)) made++
      }
      return made
    }
  }
}
