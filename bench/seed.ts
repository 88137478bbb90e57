import { randomUUID } from 'node:crypto'
import type Database from 'better-sqlite3'
import { passageWriter } from '../src/knowledge/passages.js'
import { openTrigrams } from '../src/knowledge/trigram-file.js'

const TYPES = ['task_plan', 'implementation_plan', 'walkthrough', 'verification_proof', 'decision_record', 'plan_mode',
  'code_change', 'research_summary']
const STATUSES = ['draft', 'pending_review', 'approved', 'rejected', 'superseded']

/**
 * `total` artifacts in one workspace: one chain of 1,000 versions, the rest in short chains (1–5 versions)
 * spread over 500 workflow runs and 2,000 conversations. Inserted in batches of 5,000 rows per transaction.
 */
export function seedArtifacts(sqlite: Database.Database,
  who: { customerId: string; workspaceId: string; user: { id: string } }, total: number) {
  const insert = sqlite.prepare(`INSERT INTO artifacts (id, customer_id, workspace_id, type, subtype, title, content,
    status,
    workflow_id, workflow_run_id, conversation_id, message_id, parent_artifact_id, related_artifacts, confidence_score,
    review_policy, reviewed_by, created_by, created_at, updated_at)
    VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, NULL, ?, '[]', ?, 'agent_decides', NULL, ?, ?, ?)`)
  const runs = Array.from({ length: 500 }, () => randomUUID())
  const workflows = Array.from({ length: 20 }, () => randomUUID())
  const conversations = Array.from({ length: 2000 }, () => randomUUID())
  let clock = Date.now() - total * 1000
  const stamp = () => new Date((clock += 1000)).toISOString()
  let made = 0
  let longChainHead = ''
  let prev: string | null = null
  const batch = sqlite.transaction((n: number) => {
    for (let i = 0; i < n; i++) {
      // rows 0–999 form one chain; after that, chains of four versions
      const parent = made < 1000 ? prev : made % 4 === 0 ? null : prev
      const id = randomUUID()
      const at = stamp()
      insert.run(id, who.customerId, who.workspaceId, TYPES[made % TYPES.length], `Artifact ${made}`,
        JSON.stringify({ summary: `generated artifact number ${made}`,
          steps: [{ n: 1, text: 'step one' }, { n: 2, text: 'step two' }] }),
        STATUSES[made % STATUSES.length], workflows[made % workflows.length], runs[made % runs.length],
        conversations[made % conversations.length], parent, (made % 100) / 100, who.user.id, at, at)
      if (made === 0) longChainHead = id
      prev = id
      made++
    }
  })
  while (made < total) batch(Math.min(5000, total - made))
  sqlite.pragma('optimize')
  return { longChainHead, runId: runs[0], conversationId: conversations[0] }
}

/** A deterministic pseudo-random generator, so every run builds the same corpus. */
export function rng(seed = 42) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let x = s
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

/** A vocabulary of pronounceable words and a Zipf (s = 1.07) sampler over it: natural-language-like counts. */
export function zipfVocabulary(size: number, random: () => number) {
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'shi', 'vo', 'qua', 'ber', 'din', 'gal', 'hom', 'jet', 'pix',
    'sor', 'tel', 'ul', 'ver', 'zan', 'é', 'ño']
  const words = new Set<string>()
  while (words.size < size) {
    const n = 1 + Math.floor(random() * 3) + (words.size > 200 ? 1 : 0)
    let w = ''
    for (let i = 0; i < n; i++) w += syllables[Math.floor(random() * syllables.length)]
    words.add(w)
  }
  const list = [...words]
  const cdf: number[] = []
  let total = 0
  for (let r = 1; r <= size; r++) { total += 1 / r ** 1.07; cdf.push(total) }
  const sample = () => {
    const x = random() * total
    let lo = 0
    let hi = size - 1
    while (lo < hi) { const mid = (lo + hi) >> 1; if (cdf[mid] < x) lo = mid + 1; else hi = mid }
    return list[lo]
  }
  return { words: list, sample }
}

/**
 * What the search benchmarks seed with: an indexed organization document, and its passages with their index
 * entries (the document row goes first: its passages carry its readers token).
 */
export function seedStatements(sqlite: Database.Database) {
  const insertDoc = sqlite.prepare(`INSERT INTO knowledge_documents (id, customer_id, workspace_id, owner_id, scope,
      file_name, file_type, file_size, sha256, category, tags, metadata, text_length, chunk_count, chunk_size,
      chunk_overlap, indexed_count, status, original_path, text_path, uploaded_at, updated_at)
    VALUES (?, ?, NULL, ?, 'organization', ?, 'txt', ?, '', 'bench', '[]', '{}', ?, ?, 1000, 0, ?, 'indexed', NULL,
      '', ?, ?)`)
  const writer = passageWriter(sqlite)
  // the document's first and last passages' rowids, as the index worker keeps them (migration 0022)
  const span = sqlite.prepare(`UPDATE knowledge_documents SET first_passage_rowid = coalesce(first_passage_rowid,
    @rowid), last_passage_rowid = @rowid WHERE id = @id`)
  let current = { id: '', readers: null as string | null | undefined }
  const insertPassage = { run(_id: string, documentId: string, chunkIndex: number, text: string) {
    if (current.id !== documentId) current = { id: documentId, readers: writer.readers(documentId) }
    span.run({ id: documentId, rowid: writer.insert(documentId, current.readers ?? null, chunkIndex, text) })
  } }
  return { insertDoc, insertPassage }
}

/**
 * `passages` passages of about `chars` characters in documents of 200 passages, all readable by `who`,
 * written straight to the tables with their index entries.
 */
export function seedPassages(sqlite: Database.Database, who: { customerId: string; user: { id: string } },
  passages: number, chars = 700) {
  const random = rng(7)
  const vocab = zipfVocabulary(20_000, random)
  const { insertDoc, insertPassage } = seedStatements(sqlite)
  const perDoc = 200
  const sentence = () => {
    const n = 6 + Math.floor(random() * 12)
    const ws: string[] = []
    for (let i = 0; i < n; i++) ws.push(vocab.sample())
    const s = ws.join(' ')
    return s[0].toUpperCase() + s.slice(1) + '.'
  }
  const writeDoc = sqlite.transaction((d: number, count: number) => {
    const id = randomUUID()
    const texts: string[] = []
    let length = 0
    for (let i = 0; i < count; i++) {
      let text = ''
      while (text.length < chars) text += (text ? ' ' : '') + sentence()
      length += text.length
      texts.push(text)
    }
    const at = new Date(Date.now() - (passages - d) * 1000).toISOString()
    insertDoc.run(id, who.customerId, who.user.id, `corpus-${d}.txt`, length, length, count, count, at, at)
    texts.forEach((text, i) => insertPassage.run(randomUUID(), id, i, text))
  })
  for (let made = 0, d = 0; made < passages; d++) {
    const count = Math.min(perDoc, passages - made)
    writeDoc(d, count)
    made += count
  }
  optimizedTrigrams(sqlite.name)
  return { words: vocab.words }
}

/**
 * The trigram file (src/knowledge/trigram-file.ts) brought up to the passages written straight to the tables, its
 * segments merged into one (as after FTS5's 'optimize'); seconds taken.
 */
export function optimizedTrigrams(mainFile: string): number {
  const t0 = performance.now()
  const trigrams = openTrigrams(mainFile)
  try {
    trigrams.reconcile()
    trigrams.catchUp()
    trigrams.sqlite.exec(`INSERT INTO knowledge_passages_fts (knowledge_passages_fts) VALUES ('optimize')`)
  } finally {
    trigrams.close()
  }
  return (performance.now() - t0) / 1000
}
