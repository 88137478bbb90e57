import fs from 'node:fs'
import fsp from 'node:fs/promises'
import { pipeline } from 'node:stream/promises'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import type Database from 'better-sqlite3'
import type { JobQueue } from '../jobs/queue.js'
import { extractorFor } from '../ingest/formats.js'
import type { Extractor } from '../ingest/run.js'
import { decodeTextSliced, decodeUtf8Sliced, textEncodingOf, textFilePieces, writeUtf8Sliced } from '../ingest/text.js'
import type { KnowledgeFiles } from './files.js'
import type { Indexer } from './indexer.js'
import type { NewDocument } from './store.js'
import { quotaExceeded, type KnowledgeQuotas, type Placement, type UploadOptions } from './upload-policy.js'
import { writeTurn } from '../db/write-intent.js'
import { fileTitle } from '../ingest/outline.js'

/** Documents whose extracted text is at most this many bytes (UTF-8) are searchable when their upload answers. */
export const READ_YOUR_WRITES_BYTES = 1024 * 1024
/**
 * the bytes of a large text file decoded at a time: a piece's string stays under V8's large-object size, so
 * it dies young in a scavenge instead of waiting in old space for a full collection (peak RSS of a 50 MB upload)
 */
const PIECE_BYTES = 64 * 1024

/** the first bytes of a file: enough for textEncodingOf, which looks at 4 KB at most */
async function head(file: string): Promise<Buffer> {
  const handle = await fsp.open(file)
  try {
    const buf = Buffer.alloc(4096)
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0)
    return buf.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
}

/** A file received from an upload, on disk. */
export interface IncomingFile {
  fileName: string
  fileType: string
  mimeType: string
  tmpPath: string
  size: number
  sha256: string
}

/** The document row to create, as the knowledge store takes it. */
export interface IngestedDocument {
  id: string
  fileName: string
  fileSize: number
  fileType: string
  textLength: number
  chunkCount: number
}

/**
 * From a received file to a stored document: text extracted (plain text on the main thread a slice at
 * a time; other formats in the extraction pool, taking turns per organization and per user), files moved
 * into place, then the document row and its indexing job committed together. A document of at most 1 MB of text is
 * indexed before this resolves (read your writes); a larger one by the background job.
 * The organization's quotas (stored bytes, passages) are checked before extraction with the file's size, and
 * again, exactly, in the transaction that records the document: an upload past one is refused whole (413).
 */
export function createIntake(deps: {
  sqlite: Database.Database
  jobs: JobQueue
  files: KnowledgeFiles
  extractor: Extractor
  indexer: Indexer
  createDocument: (doc: NewDocument) => void
  /** per organization; default none */
  quotas?: KnowledgeQuotas
}) {
  const { sqlite, jobs, files, extractor, indexer } = deps
  const quotas = deps.quotas ?? { storedBytes: 0, passages: 0 }

  // a document counts its upload and its extracted text (characters: what a search reads); its row goes at once when
  // it is deleted, so a deletion makes room at once
  const usageOf = sqlite.prepare(`SELECT coalesce(sum(file_size + text_length), 0) AS bytes,
    coalesce(sum(chunk_count), 0) AS passages FROM knowledge_documents WHERE customer_id = ?`)
  /** throws 413 QUOTA_EXCEEDED when `adds` does not fit in the organization's quotas */
  function checkQuotas(customerId: string, adds: { bytes: number; passages: number }) {
    if (quotas.storedBytes <= 0 && quotas.passages <= 0) return
    const used = usageOf.get(customerId) as { bytes: number; passages: number }
    if (quotas.storedBytes > 0 && used.bytes + adds.bytes > quotas.storedBytes) {
      throw quotaExceeded('storedBytes', quotas.storedBytes, used.bytes)
    }
    if (quotas.passages > 0 && used.passages + adds.passages > quotas.passages) {
      throw quotaExceeded('passages', quotas.passages, used.passages)
    }
  }

  const commit = sqlite.transaction((doc: NewDocument, claimed: boolean) => {
    checkQuotas(doc.customerId, { bytes: doc.fileSize + doc.textLength, passages: doc.chunkCount })
    deps.createDocument(doc)
    return doc.chunkCount > 0 ? jobs.enqueue('knowledge.index', { documentId: doc.id }, { claimed }) : undefined
  }).immediate

  /**
   * Plain text needs no worker. Up to 1 MB it is decoded here in slices and kept for indexing at once;
   * a larger file is decoded, checked and counted a piece at a time, then stored as UTF-8.
   */
  async function plainText(file: IncomingFile, target: string, chunk: { chunkSize: number; chunkOverlap: number }) {
    if (file.size <= READ_YOUR_WRITES_BYTES) {
      const bytes = await fsp.readFile(file.tmpPath)
      const text = await decodeTextSliced(bytes, yieldToLoop)
      const { encoding, skip } = textEncodingOf(bytes)
      if (encoding === 'utf-8') await fsp.writeFile(target, bytes.subarray(skip))
      else await writeUtf8Sliced(target, text, yieldToLoop)
      return { text, textLength: text.length, chunkCount: await indexer.countPassages(text, chunk) }
    }
    // UTF-8 (the usual case) is stored as uploaded, copied by the kernel; only UTF-16 is encoded again here
    const { encoding, skip } = textEncodingOf(await head(file.tmpPath))
    const out = encoding === 'utf-8' ? undefined : await fsp.open(target, 'w')
    let textLength = 0
    try {
      const pieces = async function* () {
        for await (const piece of textFilePieces(file.tmpPath, PIECE_BYTES, 'upload')) {
          textLength += piece.length
          if (out) await out.write(Buffer.from(piece, 'utf8'))
          yield piece
        }
      }
      const chunkCount = await indexer.countPieces(pieces(), chunk)
      if (!out) {
        if (skip === 0) await fsp.copyFile(file.tmpPath, target)
        else await pipeline(fs.createReadStream(file.tmpPath, { start: skip }), fs.createWriteStream(target))
      }
      return { text: undefined, textLength, chunkCount }
    } finally {
      await out?.close()
    }
  }

  async function ingest(who: { customerId: string; userId: string }, file: IncomingFile, place: Placement,
    o: UploadOptions): Promise<IngestedDocument> {
    const id = randomUUID()
    const textTmp = path.join(files.dirs.tmp, `${id}.txt`)
    const originalRel = files.originalRel(id)
    const textRel = files.textRel(id)
    const chunk = { chunkSize: o.chunkSize, chunkOverlap: o.chunkOverlap }
    // refused before its text is extracted when the file alone does not fit
    checkQuotas(who.customerId, { bytes: file.size, passages: 0 })
    try {
      const kind = extractorFor(file.fileType)!
      let text: string | undefined
      let textLength: number
      let chunkCount: number
      if (kind === 'text') {
        ({ text, textLength, chunkCount } = await plainText(file, textTmp, chunk))
      } else {
        ({ textLength, chunkCount } = await extractor.extract(file.tmpPath, textTmp, kind, chunk,
          { organization: who.customerId, user: who.userId }))
      }
      const inline = chunkCount > 0 && (await fsp.stat(textTmp)).size <= READ_YOUR_WRITES_BYTES
      // a large text is read again by the background job: not kept meanwhile
      if (!inline) text = undefined
      else if (text === undefined) text = await decodeUtf8Sliced(await fsp.readFile(textTmp), yieldToLoop)
      await fsp.rename(file.tmpPath, files.abs(originalRel))
      await fsp.rename(textTmp, files.abs(textRel))
      // the request's turn came before its body was read and its text extracted: another now, the event loop free
      await writeTurn(sqlite)
      const jobId = commit({
        id, customerId: who.customerId, workspaceId: place.workspaceId, ownerId: who.userId, scope: place.scope,
        fileName: file.fileName, title: fileTitle(file.fileName), fileType: file.fileType, fileSize: file.size,
        sha256: file.sha256,
        category: o.category, tags: o.tags, metadata: { contentType: file.mimeType, sha256: file.sha256 },
        textLength, chunkCount, chunkSize: o.chunkSize, chunkOverlap: o.chunkOverlap, originalPath: originalRel,
        textPath: textRel
      }, inline)
      if (inline && jobId) await indexer.indexNow(id, text!, jobId)
      return { id, fileName: file.fileName, fileSize: file.size, fileType: file.fileType, textLength, chunkCount }
    } catch (err) {
      await files.removeQuietly(textTmp, files.abs(originalRel), files.abs(textRel))
      throw err
    }
  }

  return { ingest }
}

export type Intake = ReturnType<typeof createIntake>
