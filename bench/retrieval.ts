// `npm run bench -- retrieval`: answer quality of POST /api/knowledge/search in every mode, and of MiniSearch
// (a BM25 library) over the same passages, on questions about the Fastify documentation in node_modules.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import MiniSearch from 'minisearch'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import type { WordsSettings } from '../src/knowledge/search-settings.js'
import { projectRoot } from '../src/db/index.js'
import { QUESTIONS } from './retrieval-questions.js'

const DOCS = path.join(projectRoot(), 'node_modules', 'fastify', 'docs')
const K = 10

/** Markdown flattened (code ticks, emphasis, link targets gone), whitespace collapsed, lower case. */
export function flat(text: string): string {
  return text.replace(/\]\([^)]*\)/g, '').replace(/[`*[\]]/g, '').replace(/\s+/g, ' ').toLowerCase()
}

const nameOf = (rel: string) => rel.replace(/\//g, '-')

interface Ranked { file: string; text: string }
interface Scores { hit1: number; hit5: number; mrr10: number; passageHit5: number; ms: number }

function score(lists: Ranked[][], times: number[]): Scores {
  const n = QUESTIONS.length
  let hit1 = 0, hit5 = 0, mrr = 0, passage = 0
  QUESTIONS.forEach((q, i) => {
    const ranked = lists[i]
    const want = nameOf(q.file)
    const at = ranked.slice(0, K).findIndex((r) => r.file === want)
    if (at === 0) hit1++
    if (at >= 0 && at < 5) hit5++
    if (at >= 0) mrr += 1 / (at + 1)
    const answer = flat(q.answer)
    if (ranked.slice(0, 5).some((r) => r.file === want && flat(r.text).includes(answer))) passage++
  })
  const pct = (x: number) => +((100 * x) / n).toFixed(1)
  return { hit1: pct(hit1), hit5: pct(hit5), mrr10: +(mrr / n).toFixed(3), passageHit5: pct(passage),
    ms: +(times.reduce((a, b) => a + b, 0) / times.length).toFixed(2) }
}

export async function run() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-retrieval-'))
  const config = { ...loadConfig({ CAIRN_DATA_DIR: dataDir, CAIRN_SIGNUP: 'open', CAIRN_LOG_LEVEL: 'silent' }),
    rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 },
    // BENCH_WORDS_TUNING (JSON of the words settings): e.g. the bounded words path on this small corpus
    searchSettings: process.env.BENCH_WORDS_TUNING
      ? { words: JSON.parse(process.env.BENCH_WORDS_TUNING) as Partial<WordsSettings> } : undefined }
  const app = await buildApp(config)
  await app.ready()
  try {
    const signup = await app.inject({ method: 'POST', url: '/api/v2/auth/signup',
      payload: { email: 'bench@example.test', password: 'correct horse battery' } })
    const auth = { authorization: `Bearer ${signup.json().data.token}` }
    const files = fs.readdirSync(DOCS, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md')).sort()
    for (const rel of files) {
      const boundary = '----bench' + Math.random().toString(16).slice(2)
      const payload =
        Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; ` +
          `filename="${nameOf(rel)}"\r\nContent-Type: text/markdown\r\n\r\n`),
        fs.readFileSync(path.join(DOCS, rel)), Buffer.from(`\r\n--${boundary}--\r\n`)])
      const res = await app.inject({ method: 'POST', url: '/api/knowledge/upload',
        headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload })
      if (res.statusCode !== 201) throw new Error(`upload ${rel}: ${res.statusCode} ${res.body}`)
    }
    await app.jobs.idle()
    const passages = app.sqlite.prepare(`SELECT p.id, p.text, d.file_name AS file FROM knowledge_passages p
      JOIN knowledge_documents d ON d.id = p.document_id`).all() as
      Array<{ id: string; text: string; file: string }>
    console.log(`${files.length} files, ${passages.length} passages, ${QUESTIONS.length} questions`)

    // every answer must be in its file and in one of its passages, or the question is broken
    for (const q of QUESTIONS) {
      const inFile = flat(fs.readFileSync(path.join(DOCS, q.file), 'utf8')).includes(flat(q.answer))
      const inPassage = passages.some((p) => p.file === nameOf(q.file) && flat(p.text).includes(flat(q.answer)))
      if (!inFile || !inPassage) {
        console.warn(`answer not found (${inFile ? 'not in one passage' : 'not in the file'}): ${q.file}: ${q.answer}`)
      }
    }

    const rows: Array<Record<string, string | number>> = []
    const modes = ['hybrid', 'words', 'substring', ...(app.knowledgeSearch.semanticEnabled ? ['semantic'] : [])]
    for (const mode of modes) {
      const lists: Ranked[][] = []
      const times: number[] = []
      // untimed first: the first search starts the search workers (~400 ms), which the first mode's mean carried
      await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: auth,
        payload: { query: 'warm up', limit: K, mode } })
      for (const q of QUESTIONS) {
        const start = performance.now()
        const res = await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: auth,
          payload: { query: q.q, limit: K, mode } })
        times.push(performance.now() - start)
        lists.push((res.json().results as Array<{ document: { fileName: string };
          chunk: { text: string } }>).map((r) => ({ file: r.document.fileName, text: r.chunk.text })))
      }
      rows.push({ system: `Cairn ${mode}`, ...score(lists, times) })
    }
    const mini = new MiniSearch<{ id: string; text: string; file: string }>({ fields: ['text'],
      storeFields: ['text', 'file'] })
    mini.addAll(passages)
    const miniLists: Ranked[][] = []
    const miniTimes: number[] = []
    for (const q of QUESTIONS) {
      const start = performance.now()
      miniLists.push(mini.search(q.q).slice(0, K).map((r) => ({ file: r.file as string, text: r.text as string })))
      miniTimes.push(performance.now() - start)
    }
    rows.push({ system: 'MiniSearch 7 (BM25, defaults)', ...score(miniLists, miniTimes) })
    console.table(rows)
    console.log('hit@k, passage hit@5 in %; MRR@10; ms: mean per query (Cairn over app.inject, MiniSearch in memory)')
  } finally {
    await app.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run()
