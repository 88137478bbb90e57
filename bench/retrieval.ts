// `npm run bench -- retrieval`: answer quality of POST /api/knowledge/search in every mode, of MiniSearch (a BM25
// library) and of exact Okapi BM25 (bench/bm25.ts) over the same passages, on two corpora:
// - `fastify`: the Fastify documentation in node_modules/fastify/docs (Markdown), bench/retrieval-questions.ts;
// - `python`: the Python 3.11 documentation in HTML from Debian's python3.11-doc (/usr/share/doc/python3.11/html):
//   every page of library/, reference/, tutorial/, howto/, using/ and faq/ (381 pages, 34 MB of HTML), uploaded as
//   .html documents, bench/retrieval-questions-python.ts.
// BENCH_RETRIEVAL_CORPUS=fastify or python runs one of them; BENCH_DETAIL=1 adds each question's rank in every system.
// Every document is uploaded with chunkSize 1000 (the API's default) and its path as the file name ('/' made '-');
// a page's passages are found by that name.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import MiniSearch from 'minisearch'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import type { WordsSettings } from '../src/knowledge/search-settings.js'
import { projectRoot } from '../src/db/index.js'
import { Bm25 } from './bm25.js'
import { QUESTIONS, type Question, type Style } from './retrieval-questions.js'
import { PYTHON_QUESTIONS } from './retrieval-questions-python.js'

const K = 10
const CHUNK_SIZE = 1000
const STYLES: Style[] = ['question', 'keywords', 'identifier', 'paraphrase']

/** Markdown flattened (code ticks, emphasis, link targets gone), whitespace collapsed, lower case. */
export function flat(text: string): string {
  return text.replace(/\]\([^)]*\)/g, '').replace(/[`*[\]]/g, '').replace(/\s+/g, ' ').toLowerCase()
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' }
const BLOCK_TAG = /<\/?(p|div|li|dt|dd|tr|td|th|h[1-6]|pre|br|table|section|ul|ol|dl|blockquote)\b[^>]*>/gi

/**
 * The words of an HTML page, independently of Cairn's extraction (to tell an answer missing from the page from one
 * the extraction lost): scripts and styles dropped, block tags made spaces, other tags removed, entities decoded.
 */
export function htmlWords(html: string): string {
  return html.replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, ' ').replace(BLOCK_TAG, ' ').replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => e[0] !== '#' ? ENTITIES[e.toLowerCase()] ?? m
      : String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1))))
}

interface Corpus {
  name: string
  root: string
  /** paths under root, '/'-separated, sorted */
  files: string[]
  contentType: string
  questions: Question[]
  /** the page's text as the questions' answers are written against */
  pageText: (file: string) => string
}

const PYTHON_DOCS = '/usr/share/doc/python3.11/html'
const PYTHON_SECTIONS = ['library', 'reference', 'tutorial', 'howto', 'using', 'faq']

function corpora(): Corpus[] {
  const fastify = path.join(projectRoot(), 'node_modules', 'fastify', 'docs')
  const list: Corpus[] = [{ name: 'fastify', root: fastify, contentType: 'text/markdown', questions: QUESTIONS,
    files: fs.readdirSync(fastify, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md'))
      .map((f) => f.split(path.sep).join('/')).sort(),
    pageText: (file) => fs.readFileSync(path.join(fastify, file), 'utf8') }]
  if (fs.existsSync(path.join(PYTHON_DOCS, 'library'))) {
    list.push({ name: 'python', root: PYTHON_DOCS, contentType: 'text/html', questions: PYTHON_QUESTIONS,
      files: PYTHON_SECTIONS.flatMap((s) => fs.readdirSync(path.join(PYTHON_DOCS, s))
        .filter((f) => f.endsWith('.html')).map((f) => `${s}/${f}`)).sort(),
      pageText: (file) => htmlWords(fs.readFileSync(path.join(PYTHON_DOCS, file), 'utf8')) })
  } else {
    list.push({ name: 'python', root: PYTHON_DOCS, contentType: 'text/html', questions: PYTHON_QUESTIONS, files: [],
      pageText: () => '' })
  }
  const only = process.env.BENCH_RETRIEVAL_CORPUS
  if (only && !list.some((c) => c.name === only)) {
    throw new Error(`BENCH_RETRIEVAL_CORPUS=${only}: expected one of ${list.map((c) => c.name).join(', ')}`)
  }
  return list.filter((c) => !only || c.name === only)
}

const nameOf = (rel: string) => rel.replace(/\//g, '-')

interface Ranked { file: string; text: string }
interface Scores {
  n: number; hit1: number; hit5: number; hit10: number; mrr10: number; passageHit5: number
}

/** hit@k: the answering page among the first k passages; passage hit@5: a passage of it holding the answer. */
function score(questions: Question[], lists: Ranked[][]): Scores {
  let hit1 = 0, hit5 = 0, hit10 = 0, mrr = 0, passage = 0
  questions.forEach((q, i) => {
    const ranked = lists[i]
    const want = nameOf(q.file)
    const at = ranked.slice(0, K).findIndex((r) => r.file === want)
    if (at === 0) hit1++
    if (at >= 0 && at < 5) hit5++
    if (at >= 0) { hit10++; mrr += 1 / (at + 1) }
    const answer = flat(q.answer)
    if (ranked.slice(0, 5).some((r) => r.file === want && flat(r.text).includes(answer))) passage++
  })
  const n = questions.length
  const pct = (x: number) => n ? +((100 * x) / n).toFixed(1) : 0
  return { n, hit1: pct(hit1), hit5: pct(hit5), hit10: pct(hit10), mrr10: n ? +(mrr / n).toFixed(3) : 0,
    passageHit5: pct(passage) }
}

interface SystemResult {
  system: string
  all: Scores
  byStyle: Partial<Record<Style, Scores>>
  /** mean ms per query (Cairn over app.inject, the others in memory) */
  ms: number
  /** per question, the answering page's first rank (1 to 10; 0: not in the first 10) */
  ranks: number[]
}

function result(system: string, questions: Question[], lists: Ranked[][], times: number[]): SystemResult {
  const byStyle: Partial<Record<Style, Scores>> = {}
  for (const style of STYLES) {
    const at = questions.flatMap((q, i) => q.style === style ? [i] : [])
    if (at.length) byStyle[style] = score(at.map((i) => questions[i]), at.map((i) => lists[i]))
  }
  return { system, all: score(questions, lists), byStyle,
    ms: +(times.reduce((a, b) => a + b, 0) / Math.max(times.length, 1)).toFixed(2),
    ranks: questions.map((q, i) => lists[i].slice(0, K).findIndex((r) => r.file === nameOf(q.file)) + 1) }
}

type Passage = { id: string; text: string; file: string }
type App = Awaited<ReturnType<typeof buildApp>>

/** Uploads every file of the corpus through the API as one user and waits until all are indexed. */
export async function uploadCorpus(app: App, corpus: Corpus, auth: Record<string, string>): Promise<Passage[]> {
  for (const rel of corpus.files) {
    const boundary = '----bench' + Math.random().toString(16).slice(2)
    const payload = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="chunkSize"\r\n\r\n${CHUNK_SIZE}\r\n`),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; ` +
        `filename="${nameOf(rel)}"\r\nContent-Type: ${corpus.contentType}\r\n\r\n`),
      fs.readFileSync(path.join(corpus.root, rel)), Buffer.from(`\r\n--${boundary}--\r\n`)])
    const res = await app.inject({ method: 'POST', url: '/api/knowledge/upload',
      headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload })
    if (res.statusCode !== 201) throw new Error(`upload ${rel}: ${res.statusCode} ${res.body}`)
  }
  await app.jobs.idle()
  return app.sqlite.prepare(`SELECT p.id, p.text, d.file_name AS file FROM knowledge_passages p
    JOIN knowledge_documents d ON d.id = p.document_id ORDER BY p.rowid`).all() as Passage[]
}

/** The app on a fresh data directory, with one signed-up user's authorization header. */
export async function benchApp(): Promise<{ app: App; auth: Record<string, string>; close: () => Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-retrieval-'))
  const config = { ...loadConfig({ CAIRN_DATA_DIR: dataDir, CAIRN_SIGNUP: 'open', CAIRN_LOG_LEVEL: 'silent' }),
    rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 },
    // BENCH_WORDS_TUNING (JSON of the words settings): e.g. the bounded words path on this small corpus
    searchSettings: process.env.BENCH_WORDS_TUNING
      ? { words: JSON.parse(process.env.BENCH_WORDS_TUNING) as Partial<WordsSettings> } : undefined }
  const app = await buildApp(config)
  await app.ready()
  const close = async () => { await app.close(); fs.rmSync(dataDir, { recursive: true, force: true }) }
  try {
    const signup = await app.inject({ method: 'POST', url: '/api/v2/auth/signup',
      payload: { email: 'bench@example.test', password: 'correct horse battery' } })
    return { app, auth: { authorization: `Bearer ${signup.json().data.token}` }, close }
  } catch (err) {
    await close()
    throw err
  }
}

interface CorpusResult {
  corpus: string; files: number; passages: number; questions: number; chunkSize: number; systems: SystemResult[]
}

async function runCorpus(corpus: Corpus): Promise<CorpusResult> {
  const { app, auth, close } = await benchApp()
  try {
    const started = performance.now()
    const passages = await uploadCorpus(app, corpus, auth)
    const { questions } = corpus
    console.log(`${corpus.name}: ${corpus.files.length} files, ${passages.length} passages, ${questions.length} ` +
      `questions (uploaded and indexed in ${((performance.now() - started) / 1000).toFixed(0)} s)`)

    // every answer must be in its page and in one of its passages, or the question (or the extraction) is broken
    for (const q of questions) {
      const inFile = flat(corpus.pageText(q.file)).includes(flat(q.answer))
      const inPassage = passages.some((p) => p.file === nameOf(q.file) && flat(p.text).includes(flat(q.answer)))
      if (!inFile || !inPassage) {
        console.warn(`answer not found (${inFile ? 'not in one passage' : 'not in the page'}): ${q.file}: ${q.answer}`)
      }
    }

    const systems: SystemResult[] = []
    const modes = ['hybrid', 'words', 'substring', ...(app.knowledgeSearch.semanticEnabled ? ['semantic'] : [])]
    for (const mode of modes) {
      const lists: Ranked[][] = []
      const times: number[] = []
      // untimed first: the first search starts the search workers (~400 ms), which the first mode's mean carried
      await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: auth,
        payload: { query: 'warm up', limit: K, mode } })
      for (const q of questions) {
        const start = performance.now()
        const res = await app.inject({ method: 'POST', url: '/api/knowledge/search', headers: auth,
          payload: { query: q.q, limit: K, mode } })
        times.push(performance.now() - start)
        if (res.statusCode !== 200) throw new Error(`search (${mode}) "${q.q}": ${res.statusCode} ${res.body}`)
        lists.push((res.json().results as Array<{ document: { fileName: string };
          chunk: { text: string } }>).map((r) => ({ file: r.document.fileName, text: r.chunk.text })))
      }
      systems.push(result(`Cairn ${mode}`, questions, lists, times))
    }

    const mini = new MiniSearch<Passage>({ fields: ['text'], storeFields: ['text', 'file'] })
    mini.addAll(passages)
    systems.push(inMemory('MiniSearch 7 (BM25, defaults)', questions,
      (q) => mini.search(q).slice(0, K).map((r) => ({ file: r.file as string, text: r.text as string }))))
    const bm25 = new Bm25(passages.map((p) => p.text))
    systems.push(inMemory('Okapi BM25 (exact, k1 1.2, b 0.75)', questions,
      (q) => bm25.top(q, K).map((i) => ({ file: passages[i].file, text: passages[i].text }))))
    return { corpus: corpus.name, files: corpus.files.length, passages: passages.length, questions: questions.length,
      chunkSize: CHUNK_SIZE, systems }
  } finally {
    await close()
  }
}

function inMemory(system: string, questions: Question[], search: (q: string) => Ranked[]): SystemResult {
  const lists: Ranked[][] = []
  const times: number[] = []
  for (const q of questions) {
    const start = performance.now()
    lists.push(search(q.q))
    times.push(performance.now() - start)
  }
  return result(system, questions, lists, times)
}

function print(r: CorpusResult, questions: Question[]) {
  console.log(`\n${r.corpus}: ${r.files} files, ${r.passages} passages (chunkSize ${r.chunkSize}), ` +
    `${r.questions} questions`)
  console.table(r.systems.map((s) => ({ system: s.system, ...s.all, ms: s.ms })))
  for (const style of STYLES) {
    const rows = r.systems.flatMap((s) => s.byStyle[style] ? [{ system: s.system, ...s.byStyle[style] }] : [])
    if (rows.length === 0) continue
    console.log(`${r.corpus}, ${style} (${rows[0].n} questions)`)
    console.table(rows)
  }
  // BENCH_DETAIL=1: each question's rank of its page in every system
  if (process.env.BENCH_DETAIL === '1') {
    console.table(questions.map((q, i) => ({ style: q.style, q: q.q.slice(0, 60), file: q.file,
      ...Object.fromEntries(r.systems.map((s) => [s.system.split(' (')[0], s.ranks[i] || '-'])) })))
  }
}

export async function run() {
  const results: CorpusResult[] = []
  for (const corpus of corpora()) {
    if (corpus.files.length === 0) {
      console.log(`${corpus.name}: skipped, no pages in ${corpus.root} (apt-get install python3.11-doc)`)
      continue
    }
    const r = await runCorpus(corpus)
    print(r, corpus.questions)
    results.push(r)
  }
  console.log('hit@k, passage hit@5 in %; MRR@10; ms: mean per query (Cairn over app.inject, the others in memory)')
  // the ranks per question only with BENCH_DETAIL=1
  console.log(JSON.stringify(results, (key, value: unknown) =>
    key === 'ranks' && process.env.BENCH_DETAIL !== '1' ? undefined : value))
}

if (import.meta.url === `file://${process.argv[1]}`) await run()
