import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import multipart from '@fastify/multipart'
import { errors, SuccessMessage } from '../../schema/api/common.js'
import {
  UploadResponse, BatchResponse, ListDocumentsQuery, ListDocumentsResponse, GetDocumentQuery, GetDocumentResponse,
  StatusResponse, SearchBody, SearchQuery, SearchResponse, StatsQuery, StatsResponse, HealthResponse,
  GraphDocumentResponse, DocIdParams
} from '../../schema/api/knowledge.js'
import type { Principal } from '../../src/auth/plugin.js'
import { badRequest, forbidden, notFound, HttpError, toErrorBody } from '../../src/http/errors.js'
import { openStored } from '../../src/http/stored-file.js'
import { isDiskFull } from '../../src/db/disk-full.js'
import { sendJsonText } from '../../src/http/json-text.js'
import { SUPPORTED_FORMATS, extractorFor } from '../../src/ingest/formats.js'
import { createExtractor, DEFAULT_WORKER_LIMITS, type Extractor, type WorkerLimits } from '../../src/ingest/run.js'
import { UnreadableFileError } from '../../src/ingest/text.js'
import { VERSION } from '../../src/version.js'
import { knowledgeFiles } from '../../src/knowledge/files.js'
import { createIndexer } from '../../src/knowledge/indexer.js'
import { documentIndexed } from '../../src/events/workspace-stream.js'
import { createIntake } from '../../src/knowledge/intake.js'
import { uploadOptions, placement as placementOf, unsupported,
  type UploadOptions } from '../../src/knowledge/upload-policy.js'
import type { Reader } from '../../src/knowledge/readers.js'
import { toDocument } from '../../src/knowledge/store.js'
import { createListingCache, type ListingCacheOptions } from '../../src/knowledge/listing-cache.js'
import { EmbeddingsNotConfiguredError, QueryRefusedError } from '../../src/knowledge/search.js'
import { explainPlan } from '../../src/knowledge/planner.js'
import { EmbeddingError } from '../../src/knowledge/embeddings.js'
import { receiveMultipart, MAX_FILE_BYTES } from './receive.js'
import { contentDisposition } from './disposition.js'

const tags = ['knowledge']

export interface KnowledgeOptions {
  workerLimits?: WorkerLimits
  /** an extraction pool made by the caller (tests watch its events); closed with the app */
  extractor?: Extractor
  /** the listing cache's settings (tests: how soon other connections' writes are seen) */
  listingCache?: ListingCacheOptions
}

/** The knowledge base (docs/api/knowledge.md) and its knowledge-graph view. */
const knowledge: FastifyPluginAsyncTypebox<KnowledgeOptions> = async (app, opts) => {
  const store = app.knowledgeStore
  const files = knowledgeFiles(app.config.dataDir)
  files.clearTmp()
  app.addHook('onReady', async () => {
    const removed = await files.sweepOrphans((id) => store.exists(id))
    if (removed > 0) app.log.warn({ removed }, 'removed knowledge files left by an interrupted upload')
  })
  // extracted text counts against the upload limit: no file gives more text than a text file may have
  const extractor = opts.extractor ??
    createExtractor(opts.workerLimits ?? { ...DEFAULT_WORKER_LIMITS, maxTextBytes: MAX_FILE_BYTES })
  app.addHook('onClose', () => extractor.close())
  const searcher = app.knowledgeSearch
  const listings = createListingCache(app.sqlite, opts.listingCache)
  // the index worker writes on its own connection: a task's end makes listings read their version back
  const announceIndexed = (id: string) => {
    const doc = store.row(id)
    if (doc?.status === 'indexed') app.workspaceEvents.publish(documentIndexed(doc))
  }
  const indexer = createIndexer({ sqlite: app.sqlite, jobs: app.jobs, files, log: app.log,
    onTaskEnd: () => listings.recheck(), onIndexed: announceIndexed })
  app.addHook('onClose', () => indexer.close())
  const { ingest } = createIntake({ sqlite: app.sqlite, jobs: app.jobs, files, extractor, indexer,
    createDocument: (doc) => {
      store.create(doc)
      // a document without passages is indexed at once
      if (doc.chunkCount === 0) announceIndexed(doc.id)
    }, quotas: app.config.quotas })

  const readerOf = (request: FastifyRequest, queryWorkspace?: string): Reader => app.knowledgeReaders.readerOf(request,
    queryWorkspace)

  const tenantContext = (p: Principal, scope?: string) => ({ customerId: p.customerId, scope: scope ?? 'all' })

  const placement = (request: FastifyRequest, o: UploadOptions) =>
    placementOf(request.principal!, o, request.workspace?.id, (ws) => { app.workspaceFor(request.principal!, ws) })

  async function receive(request: FastifyRequest, fileFields: string[], maxFiles: number) {
    if (!request.isMultipart()) throw badRequest('No file uploaded', 'NO_FILE')
    return receiveMultipart(request, files.dirs.tmp, { fileFields, maxFiles })
  }

  app.get('/knowledge/health', {
    config: { auth: 'public' },
    schema: { tags, summary: 'Knowledge service health', response: { 200: HealthResponse } }
  }, async () => ({
    status: 'healthy', service: 'knowledge', version: VERSION, supportedFormats: [...SUPPORTED_FORMATS],
    timestamp: new Date().toISOString()
  }))

  // the upload routes in a context of their own: @fastify/multipart's hooks (an async onRequest and onResponse
  // on every request of its context) are paid by uploads only, not by listings and reads
  await app.register(async (uploads) => {
    await uploads.register(multipart, {
      limits: { fileSize: MAX_FILE_BYTES, files: 11, fields: 20, fieldSize: 64 * 1024, parts: 40 }
    })

    uploads.post('/knowledge/upload', {
      config: { action: 'knowledge.upload' },
      schema: {
        tags, summary: 'Upload one file (multipart field "file")', consumes: ['multipart/form-data'],
        response: { 201: UploadResponse, ...errors(403, 413, 415, 422) }
      }
    }, async (request, reply) => {
      const { files: received, fields, digest } = await receive(request, ['file'], 1)
      try {
        if (await app.idempotentContent(request, reply, digest)) return reply
        if (received.length === 0) throw badRequest('No file uploaded', 'NO_FILE')
        const o = uploadOptions(fields)
        const place = placement(request, o)
        const file = received[0]
        if (!extractorFor(file.fileType)) throw unsupported([file.fileName])
        let doc
        try {
          doc = await ingest(request.principal!, file, place, o)
        } catch (err) {
          if (err instanceof UnreadableFileError) {
            throw new HttpError(422, `Could not read ${file.fileName}: ${err.message}`, 'UNREADABLE_FILE')
          }
          throw err
        }
        reply.code(201)
        return {
          success: true as const,
          document: { id: doc.id, fileName: doc.fileName, filePath: null, originalStorage: 'local',
            fileSize: doc.fileSize,
            fileType: doc.fileType, textLength: doc.textLength, chunkCount: doc.chunkCount },
          message: `Uploaded ${doc.fileName}: ${doc.chunkCount} passages`
        }
      } finally {
        await files.removeQuietly(...received.map((f) => f.tmpPath))
      }
    })

    uploads.post('/knowledge/upload/batch', {
      config: { action: 'knowledge.upload_batch' },
      schema: {
        tags, summary: 'Upload up to 10 files (multipart field "files")', consumes: ['multipart/form-data'],
        response: { 201: BatchResponse, ...errors(403, 413, 415) }
      }
    }, async (request, reply) => {
      const { files: received, fields, digest } = await receive(request, ['files', 'files[]', 'file'], 10)
      try {
        if (await app.idempotentContent(request, reply, digest)) return reply
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
            } else if (err instanceof HttpError || isDiskFull(err)) {
              // a quota, a limit, a full disk: the file's own answer, as the single upload would give it
              const { message, code } = toErrorBody(err as Error)
              failures.push({ fileName: file.fileName, error: message, code })
            } else {
              request.log.error({ err, fileName: file.fileName }, 'batch upload: file failed')
              failures.push({ fileName: file.fileName, error: 'The file could not be processed',
                code: 'PROCESSING_FAILED' })
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
  })
  // the other routes take a multipart body as before (a 400 of their schema, not a 415), without reading it
  app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => { done(null) })

  app.get('/knowledge/documents', {
    config: { action: 'knowledge.list' },
    schema: { tags, summary: 'Documents the caller can read, newest first', querystring: ListDocumentsQuery,
      response: { 200: ListDocumentsResponse, ...errors(403) } }
  }, (request, reply) => {
    // not async: the answer, often a kept page, is sent at once, with no promise to settle first
    const q = request.query
    const reader = readerOf(request, q.workspaceId)
    // everything the answer depends on besides the organization's documents (whose version the cache checks)
    // (JSON: no two different queries write the same key, whatever characters their filters hold)
    const key = JSON.stringify([reader.userId, reader.workspaceIds, q.scope, q.category, q.tag, q.limit, q.offset])
    sendJsonText(reply, listings.page(reader.customerId, key, () => {
      const { documents, count } = store.listPage(reader,
        { scope: q.scope, category: q.category, tags: q.tag ? [q.tag] : undefined }, q.limit, q.offset)
      // the documents arrive as JSON text (rendered by SQLite): the answer is written around them, in the order
      // and with the fields of ListDocumentsResponse
      return `{"success":true,"documents":${documents},"count":${count},"limit":${q.limit},"offset":${q.offset},` +
        `"tenantContext":${JSON.stringify(tenantContext(request.principal!, q.scope))}}`
    }))
  })

  app.get('/knowledge/document/:id', {
    config: { action: 'knowledge.get' },
    schema: { tags, summary: 'A document with its passages', params: DocIdParams, querystring: GetDocumentQuery,
      response: { 200: GetDocumentResponse, ...errors(403, 404) } }
  }, async (request) => {
    const doc = store.get(readerOf(request, request.query.workspaceId), request.params.id)
    if (!doc) throw notFound('Document not found')
    const chunks = store.chunks(doc.id, request.query.chunkOffset, request.query.chunkLimit)
      .map((c) => ({ id: c.id, text: c.text, chunkIndex: c.chunk_index, chunkSize: c.text.length }))
    return { success: true as const, document: toDocument(doc), chunks }
  })

  app.get('/knowledge/document/:id/download', {
    config: { action: 'knowledge.download' },
    schema: { tags, summary: 'The original file (or its stored text)', params: DocIdParams,
      response: { ...errors(403, 404, 410) } }
  }, async (request, reply) => {
    const doc = store.get(readerOf(request), request.params.id)
    if (!doc) throw notFound('Document not found')
    // a document stored without its original (earlier versions) gives its text; one whose file is gone, 410
    const { handle, size } = await openStored(files.abs(doc.original_path || doc.text_path), 'document')
    reply.header('content-disposition', contentDisposition(doc.file_name)).header('content-length', size)
      .type(doc.original_path ? 'application/octet-stream' : 'text/plain; charset=utf-8')
    return reply.send(handle.createReadStream())
  })

  app.get('/knowledge/documents/:id/status', {
    config: { action: 'knowledge.status' },
    schema: { tags, summary: 'Indexing status of a document', params: DocIdParams,
      response: { 200: StatusResponse, ...errors(403, 404) } }
  }, async (request) => {
    const doc = store.get(readerOf(request), request.params.id)
    if (!doc) throw notFound('Document not found')
    const progress = doc.chunk_count === 0 || doc.status === 'indexed' ? 100
      : Math.min(99, Math.floor((doc.indexed_count / doc.chunk_count) * 100))
    return {
      success: true as const, status: doc.status, processingProgress: progress,
      document: { id: doc.id, fileName: doc.file_name, fileType: doc.file_type, chunkCount: doc.chunk_count,
        uploadedAt: doc.uploaded_at }
    }
  })

  async function deleteDocument(request: FastifyRequest, id: string) {
    const p = request.principal!
    const doc = store.get(readerOf(request), id)
    if (!doc || !store.canDelete(doc, p.userId, p.orgRole)) throw notFound('Document not found')
    store.remove(doc.id)
    app.jobs.enqueue('knowledge.purge', { documentId: doc.id, customerId: doc.customer_id })
    await files.removeQuietly(doc.original_path && files.abs(doc.original_path), files.abs(doc.text_path))
  }

  app.delete('/knowledge/document/:id', {
    config: { action: 'knowledge.delete' },
    schema: { tags, summary: 'Delete a document, its passages and its original', params: DocIdParams,
      response: { 200: SuccessMessage, ...errors(403, 404) } }
  }, async (request) => {
    await deleteDocument(request, request.params.id)
    return { success: true as const, message: 'Document deleted' }
  })

  app.post('/knowledge/search', {
    config: { action: 'knowledge.search', writes: false },
    schema: {
      tags, summary: 'Passages that answer the query: hybrid (default), substring, words or semantic', body: SearchBody,
      querystring: SearchQuery, response: { 200: SearchResponse, ...errors(400, 403, 502) }
    }
  }, async (request) => {
    const b = request.body
    const query = b.query.trim()
    if (query.length === 0) throw badRequest('query must not be blank', 'VALIDATION_ERROR')
    const explain = request.query.explain === true
    if (explain && !['owner', 'admin'].includes(request.principal!.orgRole)) {
      throw forbidden('Only organization owners and admins may ask for a search\'s plan (explain)')
    }
    let found
    try {
      found = await searcher.run(readerOf(request, b.workspaceId),
        { scope: b.scope, category: b.category, tags: b.tags }, query, b.limit, b.mode)
    } catch (err) {
      if (err instanceof EmbeddingsNotConfiguredError) throw badRequest(err.message, 'EMBEDDINGS_NOT_CONFIGURED')
      if (err instanceof QueryRefusedError) throw badRequest(err.message, 'VALIDATION_ERROR')
      if (err instanceof EmbeddingError) {
        request.log.warn({ detail: err.detail }, `semantic search failed: ${err.message}`)
        throw new HttpError(502, err.message, 'EMBEDDINGS_UNAVAILABLE')
      }
      throw err
    }
    // the path the search took and why (src/knowledge/planner.ts), for an operator reading debug logs
    request.log.debug({ plan: found.plan }, 'search plan')
    return { success: true as const, query, results: found.hits, count: found.hits.length,
      ...(found.partial ? { partial: true } : {}), ...(found.warnings.length > 0 ? { warnings: found.warnings } : {}),
      ...(explain && found.plan ? { plan: explainPlan(found.plan) } : {}),
      tenantContext: tenantContext(request.principal!, b.scope) }
  })

  app.get('/knowledge/stats', {
    config: { action: 'knowledge.stats' },
    schema: { tags, summary: 'Totals over the documents the caller can read', querystring: StatsQuery,
      response: { 200: StatsResponse, ...errors(403) } }
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
    schema: { tags: ['knowledge-graph'], summary: 'A knowledge document', params: DocIdParams,
      response: { 200: GraphDocumentResponse, ...errors(403, 404) } }
  }, async (request) => {
    const doc = store.get(readerOf(request), request.params.id)
    if (!doc) throw notFound('Document not found')
    return { success: true as const, data: toDocument(doc) }
  })

  app.delete('/knowledge-graph/documents/:id', {
    config: { action: 'knowledge_graph.delete' },
    schema: { tags: ['knowledge-graph'], summary: 'Delete a knowledge document', params: DocIdParams,
      response: { 200: SuccessMessage, ...errors(403, 404) } }
  }, async (request) => {
    await deleteDocument(request, request.params.id)
    return { success: true as const, message: 'Document deleted' }
  })
}

export default knowledge
