import type {} from '@fastify/multipart'
import { createHash, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { FastifyRequest } from 'fastify'
import { badRequest, HttpError, malformedOr } from '../../src/http/errors.js'
import { fileTypeOf } from '../../src/ingest/formats.js'
import { safeFileName } from '../../src/ingest/file-name.js'
import type { IncomingFile } from '../../src/knowledge/intake.js'

/** A received file is what the intake takes (src/knowledge/intake.ts) */
export type ReceivedFile = IncomingFile

export const MAX_FILE_BYTES = 50 * 1024 * 1024

/**
 * Streams every file part of a multipart request to its own temp file (hashing on the way, never holding
 * a whole file in memory) and collects the text fields, whatever their order. On any failure the temp
 * files are removed before the error is thrown.
 */
export async function receiveMultipart(request: FastifyRequest, tmpDir: string,
  opts: { fileFields: string[]; maxFiles: number }) {
  const files: ReceivedFile[] = []
  const fields: Record<string, string> = {}
  try {
    for await (const part of request.parts()) {
      if (part.type !== 'file') {
        if (typeof part.value === 'string') fields[part.fieldname] = part.value
        continue
      }
      if (!opts.fileFields.includes(part.fieldname)) {
        part.file.resume()
        throw badRequest(`Unexpected file field "${part.fieldname}"; send the file as "${opts.fileFields[0]}"`,
          'VALIDATION_ERROR')
      }
      if (files.length >= opts.maxFiles) {
        part.file.resume()
        throw badRequest(opts.maxFiles === 1 ? 'Send one file per upload; use /upload/batch for several'
          : `At most ${opts.maxFiles} files per batch`, 'TOO_MANY_FILES')
      }
      const tmpPath = path.join(tmpDir, randomUUID())
      const hash = createHash('sha256')
      let size = 0
      const counter = new Transform({
        transform(chunk: Buffer, _enc, cb) { hash.update(chunk); size += chunk.length; cb(null, chunk) }
      })
      const entry = { fileName: safeFileName(part.filename ?? ''), mimeType: part.mimetype, tmpPath }
      files.push({ ...entry, fileType: fileTypeOf(entry.fileName), size: 0, sha256: '' })
      await pipeline(part.file, counter, fs.createWriteStream(tmpPath))
      if (part.file.truncated) throw fileTooLarge()
      Object.assign(files[files.length - 1], { size, sha256: hash.digest('hex') })
    }
  } catch (err) {
    for (const f of files) fs.rmSync(f.tmpPath, { force: true })
    if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw fileTooLarge()
    if ((err as { code?: string }).code === 'FST_FILES_LIMIT') {
      throw badRequest(`At most ${opts.maxFiles} files per request`, 'TOO_MANY_FILES')
    }
    throw malformedOr(err)
  }
  // what the upload is, for its Idempotency-Key: every file's name and hash, every field
  const digest = createHash('sha256').update(JSON.stringify([files.map((f) => [f.fileName, f.sha256]),
    Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))])).digest('hex')
  return { files, fields, digest }
}

function fileTooLarge() {
  return new HttpError(413, `File too large: at most ${MAX_FILE_BYTES / 1048576} MB per file`, 'PAYLOAD_TOO_LARGE')
}
