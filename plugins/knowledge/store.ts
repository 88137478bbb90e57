// The knowledge store lives in the domain module now (src/knowledge/); the routes' files import it from here.
export { createKnowledgeStore, type KnowledgeStore, type DocumentRow, type NewDocument } from '../../src/knowledge/store.js'
export { readableWhere, readableParams, readerResolver, type Reader, type DocFilters, type DocScope } from '../../src/knowledge/readers.js'
