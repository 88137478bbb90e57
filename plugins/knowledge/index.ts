import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import multipart from '@fastify/multipart'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { errors, SuccessMessage } from '../../schema/api/common.js'
import {
  SCOPES, UploadResponse, BatchResponse, ListDocumentsQuery, ListDocumentsResponse, GetDocumentQuery, GetDocumentResponse,
  StatusResponse, SearchBody, SearchResponse, StatsQuery, StatsResponse, HealthResponse, GraphDocumentResponse, DocIdParams
} from '../../schema/api/knowledge.js'
import type { Principal } from '../../src/auth/plugin.js'
import { badRequest, forbidden, notFound, HttpError } from '../../src/http/errors.js'
import { SUPPORTED_FORMATS, extractorFor } from '../../src/ingest/formats.js'
import { chunkOptionsProblem } from '../../src/ingest/chunker.js'
import { createExtractor, DEFAULT_WORKER_LIMITS, type WorkerLimits } from '../../src/ingest/run.js'
import { UnreadableFileError } from '../../src/ingest/text.js'
import { VERSION } from '../../src/version.js'
import type { DocScope, Reader } from '../../src/knowledge/readers.js'
import type { ListedDocumentRow } from '../../src/knowledge/store.js'
import { EmbeddingsNotConfiguredError } from '../../src/knowledge/search.js'
import { EmbeddingError } from '../../src/knowledge/embeddings.js'
import { knowledgeFiles } from './files.js'
import { receiveMultipart, MAX_FILE_BYTES, type ReceivedFile } from './receive.js'
import { registerKnowledgeJobs } from './indexer.js'
import { contentDisposition } from './disposition.js'

const tags = ['knowledge']
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

interface UploadOptions {
  scope: DocScope
  workspaceId?: string
  category: string
  tags: string[]
  chunkSize: number
  chunkOverlap: number
}

/** The text fields of an upload, checked: 400 with the reason for anything off. */
function uploadOptions(fields: Record<string, string>): UploadOptions {
  const scope = (fields.scope || 'organization') as DocScope
  if (!(SCOPES as readonly string[]).includes(scope)) throw badRequest(`scope must be one of ${SCOPES.join(', ')}`, 'VALIDATION_ERROR')
  const workspaceId = fields.workspaceId || undefined
  if (workspaceId && !UUID.test(workspaceId)) throw badRequest('workspaceId must be a UUID', 'VALIDATION_ERROR')
  const category = (fields.category ?? 'general').trim() || 'general'
  if (category.length > 100) throw badRequest('category must be at most 100 characters', 'VALIDATION_ERROR')
  let tagList: string[] = []
  if (fields.tags !== undefined && fields.tags.trim() !== '') {
    let parsed: unknown
    try { parsed = JSON.parse(fields.tags) } catch { parsed = undefined }
    if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === 'string')) {
      throw badRequest('tags must be a JSON array of strings, e.g. ["policy","2024"]', 'VALIDATION_ERROR')
    }
    tagList = [...new Set(parsed.map((x: string) => x.trim()).filter(Boolean))]
    if (tagList.length > 50 || tagList.some((x) => x.length > 100)) throw badRequest('at most 50 tags of at most 100 characters', 'VALIDATION_ERROR')
  }
  const int = (name: string, value: string | undefined, fallback: number) => {
    if (value === undefined || value.trim() === '') return fallback
    const n = Number(value)
    if (!Number.isInteger(n)) throw badRequest(`${name} must be an integer`, 'VALIDATION_ERROR')
    return n
  }
  const chunkSize = int('chunkSize', fields.chunkSize, 1000)
  // without an explicit overlap, 200 (or a fifth of a smaller passage size)
  const chunkOverlap = int('chunkOverlap', fields.chunkOverlap, Math.min(200, Math.floor(chunkSize / 5)))
  const problem = chunkOptionsProblem({ chunkSize, chunkOverlap })
  if (problem) throw badRequest(problem, 'VALIDATION_ERROR')
  return { scope, workspaceId, category, tags: tagList, chunkSize, chunkOverlap }
}

function unsupported(names: string[]) {
  return new HttpError(415, `Unsupported file type: ${names.join(', ')}. Supported: ${SUPPORTED_FORMATS.join(' ')}`,
    'UNSUPPORTED_FILE_TYPE', { supportedFormats: [...SUPPORTED_FORMATS] })
}

function toDocument(row: ListedDocumentRow) {
  return {
    id: row.id,
    fileName: row.file_name,
    filePath: row.original_path,
    originalStorage: row.original_path ? 'local' : 'none',
    size: row.file_size,
    fileType: row.file_type,
    category: row.category,
    tags: JSON.parse(row.tags) as string[],
    textLength: row.text_length,
    chunkCount: row.chunk_count,
    uploadedAt: row.uploaded_at,
    updated: row.updated_at,
    scope: row.scope,
    workspaceId: row.workspace_id,
    status: row.status,
    metadata: JSON.parse(row.metadata) as Record<string, unknown>
  }
}

export interface KnowledgeOptions {
  workerLimits?: WorkerLimits
}

/** The knowledge base (SPEC.md "Knowledge base", CONTRACT.md §5) and its knowledge-graph view. */
const knowledge: FastifyPluginAsyncTypebox<KnowledgeOptions> = async (app, opts) => {
  await app.register(multipart, {
    limits: { fileSize: MAX_FILE_BYTES, files: 11, fields: 20, fieldSize: 64 * 1024, parts: 40 }
  })
  const store = app.knowledgeStore
  const files = knowledgeFiles(app.config.dataDir)
  files.clearTmp()
  const documentExists = app.sqlite.prepare(`SELECT 1 FROM knowledge_documents WHERE id = ?`)
  app.addHook('onReady', async () => {
    const removed = await files.sweepOrphans((id) => !!documentExists.get(id))
    if (removed > 0) app.log.warn({ removed }, 'removed knowledge files left by an interrupted upload')
  })
  const extractor = createExtractor(opts.workerLimits ?? DEFAULT_WORKER_LIMITS)
  app.addHook('onClose', () => extractor.close())
  const searcher = app.knowledgeSearch
  registerKnowledgeJobs(app, store, files)

  const readerOf = (request: FastifyRequest, queryWorkspace?: string): Reader => app.knowledgeReaders.readerOf(request, queryWorkspace)

  const tenantContext = (p: Principal, scope?: string) => ({ customerId: p.customerId, scope: scope ?? 'all' })

  /** Where new documents go; a workspace-bound key may add only to its workspace or personal documents. */
  function placement(request: FastifyRequest, o: UploadOptions): { scope: DocScope; workspaceId: string | null } {
    const p = request.principal!
    const bound = p.apiKey?.workspaceId
    if (bound) {
      if (o.scope === 'personal') return { scope: 'personal', workspaceId: null }
      if (o.scope === 'workspace' && (!o.workspaceId || o.workspaceId === bound)) return { scope: 'workspace', workspaceId: bound }
      throw forbidden('This API key is bound to a workspace: it can add documents only to that workspace (scope=workspace) or to personal documents', 'WORKSPACE_FORBIDDEN')
    }
    if (o.scope !== 'workspace') return { scope: o.scope, workspaceId: null }
    const ws = o.workspaceId ?? request.workspace?.id
    if (!ws) throw badRequest('workspaceId is required when scope is workspace', 'VALIDATION_ERROR')
    app.workspaceFor(p, ws)
    return { scope: 'workspace', workspaceId: ws }
  }

  /** Extracts, stores and queues one received file; nothing is left behind when it fails. */
  async function ingest(p: Principal, file: ReceivedFile, place: { scope: DocScope; workspaceId: string | null }, o: UploadOptions) {
    const id = randomUUID()
    const textTmp = path.join(files.dirs.tmp, `${id}.txt`)
    const originalRel = files.originalRel(id)
    const textRel = files.textRel(id)
    try {
      const { textLength, chunkCount } = await extractor.extract(file.tmpPath, textTmp, extractorFor(file.fileType)!,
        { chunkSize: o.chunkSize, chunkOverlap: o.chunkOverlap })
      await fsp.rename(file.tmpPath, files.abs(originalRel))
      await fsp.rename(textTmp, files.abs(textRel))
      store.create({
        id, customerId: p.customerId, workspaceId: place.workspaceId, ownerId: p.userId, scope: place.scope,
        fileName: file.fileName, fileType: file.fileType, fileSize: file.size, sha256: file.sha256,
        category: o.category, tags: o.tags, metadata: { contentType: file.mimeType, sha256: file.sha256 },
        textLength, chunkCount, chunkSize: o.chunkSize, chunkOverlap: o.chunkOverlap, originalPath: originalRel, textPath: textRel
      })
      if (chunkCount > 0) app.jobs.enqueue('knowledge.index', { documentId: id })
      return { id, fileName: file.fileName, fileSize: file.size, fileType: file.fileType, textLength, chunkCount, originalRel }
    } catch (err) {
      await files.removeQuietly(textTmp, files.abs(originalRel), files.abs(textRel))
      throw err
    }
  }

  async function receive(request: FastifyRequest, fileFields: string[], maxFiles: number) {
    if (!request.isMultipart()) throw badRequest('No file uploaded', 'NO_FILE')
    return receiveMultipart(request, files.dirs.tmp, { fileFields, maxFiles })
  }

  app.get('/knowledge/health', {
    config: { auth: 'public' },
    schema: { tags, summary: 'Knowledge service health', response: { 200: HealthResponse } }
  }, async () => ({
    status: 'healthy', service: 'knowledge', version: VERSION, supportedFormats: [...SUPPORTED_FORMATS], timestamp: new Date().toISOString()
  }))

  app.post('/knowledge/upload', {
    config: { action: 'knowledge.upload' },
    schema: {
      tags, summary: 'Upload one file (multipart field "file")', consumes: ['multipart/form-data'],
      response: { 201: UploadResponse, ...errors(403, 413, 415, 422) }
    }
  }, async (request, reply) => {
    const { files: received, fields } = await receive(request, ['file'], 1)
    try {
      if (received.length === 0) throw badRequest('No file uploaded', 'NO_FILE')
      const o = uploadOptions(fields)
      const place = placement(request, o)
      const file = received[0]
      if (!extractorFor(file.fileType)) throw unsupported([file.fileName])
      let doc
      try {
        doc = await ingest(request.principal!, file, place, o)
      } catch (err) {
        if (err instanceof UnreadableFileError) throw new HttpError(422, `Could not read ${file.fileName}: ${err.message}`, 'UNREADABLE_FILE')
        throw err
      }
      reply.code(201)
      return {
        success: true as const,
        document: { id: doc.id, fileName: doc.fileName, filePath: null, originalStorage: 'local', fileSize: doc.fileSize,
          fileType: doc.fileType, textLength: doc.textLength, chunkCount: doc.chunkCount },
        message: `Uploaded ${doc.fileName}: ${doc.chunkCount} passages`
      }
    } finally {
      await files.removeQuietly(...received.map((f) => f.tmpPath))
    }
  })

  app.post('/knowledge/upload/batch', {
    config: { action: 'knowledge.upload_batch' },
    schema: {
      tags, summary: 'Upload up to 10 files (multipart field "files")', consumes: ['multipart/form-data'],
      response: { 201: BatchResponse, ...errors(403, 413, 415) }
    }
  }, async (request, reply) => {
    const { files: received, fields } = await receive(request, ['files', 'files[]', 'file'], 10)
    try {
      if (received.length === 0) throw badRequest('No file uploaded', 'NO_FILE')
      const o = uploadOptions(fields)
      const place = placement(request, o)
      const refused = received.filter((f) => !extractorFor(f.fileType)).map((f) => f.fileName)
      if (refused.length > 0) throw unsupported(refused)
      const results = []
      const failures = []
      for (const file of received) {
        try {
          const doc = await ingest(request.principal!, file, place, o)
          results.push({ id: doc.id, fileName: doc.fileName, fileSize: doc.fileSize, fileType: doc.fileType,
            textLength: doc.textLength, chunkCount: doc.chunkCount, scope: place.scope })
        } catch (err) {
          if (err instanceof UnreadableFileError) {
            failures.push({ fileName: file.fileName, error: err.message, code: 'UNREADABLE_FILE' })
          } else {
            request.log.error({ err, fileName: file.fileName }, 'batch upload: file failed')
            failures.push({ fileName: file.fileName, error: 'The file could not be processed', code: 'PROCESSING_FAILED' })
          }
        }
      }
      reply.code(201)
      return {
        success: true as const, results, errors: failures, successCount: results.length, errorCount: failures.length,
        message: `${results.length} of ${received.length} files uploaded`
      }
    } finally {
      await files.removeQuietly(...received.map((f) => f.tmpPath))
    }
  })

  app.get('/knowledge/documents', {
    config: { action: 'knowledge.list' },
    schema: { tags, summary: 'Documents the caller can read, newest first', querystring: ListDocumentsQuery, response: { 200: ListDocumentsResponse, ...errors(403) } }
  }, async (request) => {
    const q = request.query
    const { rows, count } = store.list(readerOf(request, q.workspaceId), { scope: q.scope, category: q.category, tags: q.tag ? [q.tag] : undefined }, q.limit, q.offset)
    return { success: true as const, documents: rows.map(toDocument), count, limit: q.limit, offset: q.offset, tenantContext: tenantContext(request.principal!, q.scope) }
  })

  app.get('/knowledge/document/:id', {
    config: { action: 'knowledge.get' },
    schema: { tags, summary: 'A document with its passages', params: DocIdParams, querystring: GetDocumentQuery, response: { 200: GetDocumentResponse, ...errors(403, 404) } }
  }, async (request) => {
    const doc = store.get(readerOf(request, request.query.workspaceId), request.params.id)
    if (!doc) throw notFound('Document not found')
    const chunks = store.chunks(doc.id, request.query.chunkOffset, request.query.chunkLimit)
      .map((c) => ({ id: c.id, text: c.text, chunkIndex: c.chunk_index, chunkSize: c.text.length }))
    return { success: true as const, document: toDocument(doc), chunks }
  })

  app.get('/knowledge/document/:id/download', {
    config: { action: 'knowledge.download' },
    schema: { tags, summary: 'The original file (or its stored text)', params: DocIdParams, response: { ...errors(403, 404) } }
  }, async (request, reply) => {
    const doc = store.get(readerOf(request), request.params.id)
    if (!doc) throw notFound('Document not found')
    const original = doc.original_path ? files.abs(doc.original_path) : undefined
    const stat = original ? await fsp.stat(original).catch(() => undefined) : undefined
    reply.header('content-disposition', contentDisposition(doc.file_name))
    if (original && stat) {
      reply.header('content-length', stat.size).type('application/octet-stream')
      return reply.send(fs.createReadStream(original))
    }
    reply.type('text/plain; charset=utf-8')
    return reply.send(fs.createReadStream(files.abs(doc.text_path)))
  })

  app.get('/knowledge/documents/:id/status', {
    config: { action: 'knowledge.status' },
    schema: { tags, summary: 'Indexing status of a document', params: DocIdParams, response: { 200: StatusResponse, ...errors(403, 404) } }
  }, async (request) => {
    const doc = store.get(readerOf(request), request.params.id)
    if (!doc) throw notFound('Document not found')
    const progress = doc.chunk_count === 0 || doc.status === 'indexed' ? 100 : Math.min(99, Math.floor((doc.indexed_count / doc.chunk_count) * 100))
    return {
      success: true as const, status: doc.status, processingProgress: progress,
      document: { id: doc.id, fileName: doc.file_name, fileType: doc.file_type, chunkCount: doc.chunk_count, uploadedAt: doc.uploaded_at }
    }
  })

  async function deleteDocument(request: FastifyRequest, id: string) {
    const p = request.principal!
    const doc = store.get(readerOf(request), id)
    if (!doc || !store.canDelete(doc, p.userId, p.orgRole)) throw notFound('Document not found')
    store.remove(doc.id)
    app.jobs.enqueue('knowledge.purge', { documentId: doc.id })
    await files.removeQuietly(doc.original_path && files.abs(doc.original_path), files.abs(doc.text_path))
  }

  app.delete('/knowledge/document/:id', {
    config: { action: 'knowledge.delete' },
    schema: { tags, summary: 'Delete a document, its passages and its original', params: DocIdParams, response: { 200: SuccessMessage, ...errors(403, 404) } }
  }, async (request) => {
    await deleteDocument(request, request.params.id)
    return { success: true as const, message: 'Document deleted' }
  })

  app.post('/knowledge/search', {
    config: { action: 'knowledge.search' },
    schema: {
      tags, summary: 'Passages that answer the query: hybrid (default), substring, words or semantic', body: SearchBody,
      response: { 200: SearchResponse, ...errors(400, 403, 502) }
    }
  }, async (request) => {
    const b = request.body
    const query = b.query.trim()
    if (query.length === 0) throw badRequest('query must not be blank', 'VALIDATION_ERROR')
    let results
    try {
      results = await searcher.search(readerOf(request, b.workspaceId), { scope: b.scope, category: b.category, tags: b.tags }, query, b.limit, b.mode)
    } catch (err) {
      if (err instanceof EmbeddingsNotConfiguredError) throw badRequest(err.message, 'EMBEDDINGS_NOT_CONFIGURED')
      if (err instanceof EmbeddingError) throw new HttpError(502, err.message, 'EMBEDDINGS_UNAVAILABLE')
      throw err
    }
    return { success: true as const, query, results, count: results.length, tenantContext: tenantContext(request.principal!, b.scope) }
  })

  app.get('/knowledge/stats', {
    config: { action: 'knowledge.stats' },
    schema: { tags, summary: 'Totals over the documents the caller can read', querystring: StatsQuery, response: { 200: StatsResponse, ...errors(403) } }
  }, async (request) => {
    const s = store.stats(readerOf(request, request.query.workspaceId), { scope: request.query.scope })
    return {
      success: true as const, documentCount: s.documents, chunkCount: s.chunks, totalCharacters: s.characters,
      fileTypes: s.fileTypes, categories: s.categories, scopes: s.scopes, supportedFormats: [...SUPPORTED_FORMATS],
      tenantContext: tenantContext(request.principal!, request.query.scope)
    }
  })

  app.get('/knowledge-graph/documents/:id', {
    config: { action: 'knowledge_graph.get' },
    schema: { tags: ['knowledge-graph'], summary: 'A knowledge document', params: DocIdParams, response: { 200: GraphDocumentResponse, ...errors(403, 404) } }
  }, async (request) => {
    const doc = store.get(readerOf(request), request.params.id)
    if (!doc) throw notFound('Document not found')
    return { success: true as const, data: toDocument(doc) }
  })

  app.delete('/knowledge-graph/documents/:id', {
    config: { action: 'knowledge_graph.delete' },
    schema: { tags: ['knowledge-graph'], summary: 'Delete a knowledge document', params: DocIdParams, response: { 200: SuccessMessage, ...errors(403, 404) } }
  }, async (request) => {
    await deleteDocument(request, request.params.id)
    return { success: true as const, message: 'Document deleted' }
  })
}

export default knowledge
