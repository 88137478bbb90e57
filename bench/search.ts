// `npm run bench -- search`: POST /api/knowledge/search over BENCH_PASSAGES (default 1,000,000) passages of
// English-like text in two organizations (99 % / 1 %), per query shape and mode, with a health probe every
// 10 ms. The corpus is seeded once into data/bench/search-<N>/ and kept between runs. BENCH_WARM_UP (default 60)
// untimed searches of other draws come first; BENCH_SHAPES and BENCH_QUERIES narrow a run (see below); BENCH_SEED
// (default 5) draws other queries (a second run with the same draw finds their pages cached). BENCH_CORPUS=markdown
// seeds real documentation instead (paragraphs of the Markdown in node_modules, passages of about 800 characters),
// whose words are as common as in real text: questions of common words are the words path's hard case there.
// BENCH_SEARCH_SETTINGS (JSON, src/knowledge/search-settings.ts overrides) runs the server's searches with other
// settings, e.g. {"substring":{"pairs":false}} or {"substring":{"runs":false}}: what each index earns, on the same
// corpus (the indexes are still written; the searches do not ask them).
import fs from 'node:fs'
import Database from 'better-sqlite3'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { loadConfig } from '../src/config.js'
import { buildApp } from '../src/app.js'
import { openDatabase, projectRoot } from '../src/db/index.js'
import { trigramFile } from '../src/knowledge/trigram-file.js'
import { segmentsOf, wantsMerge } from '../src/knowledge/fts-segments.js'
import { startServer, stopServer, table } from './lib.js'
import { optimizedTrigrams, rng, seedStatements } from './seed.js'
import { realSentences } from './corpus.js'
import { markdownParagraphs } from './markdown-corpus.js'

const PASSWORD = 'benchmark password'
interface Seeded { passages: number; big: string; small: string; vocabulary: string[]; phrases: string[];
  seconds: number }

/** A bigram model of the real sentences: new sentences with real words, in real proportions and orders. */
function sentenceMaker(random: () => number) {
  const sentences = realSentences()
  const next = new Map<string, string[]>()
  const starts: string[] = []
  for (const s of sentences) {
    const words = s.split(' ')
    starts.push(words[0])
    for (let i = 0; i < words.length; i++) {
      const key = words[i].toLowerCase()
      let list = next.get(key)
      if (!list) next.set(key, (list = []))
      list.push(words[i + 1] ?? '.')
    }
  }
  return {
    sentences,
    make() {
      let w = starts[Math.floor(random() * starts.length)]
      const out = [w]
      while (out.length < 40) {
        const list = next.get(w.toLowerCase())
        if (!list) break
        w = list[Math.floor(random() * list.length)]
        if (w === '.') break
        out.push(w)
        if (/[.!?]$/.test(w) && out.length > 6) break
      }
      const s = out.join(' ')
      return /[.!?]$/.test(s) ? s : s + '.'
    }
  }
}

/**
 * Passages of about `chars` characters of real Markdown: paragraphs drawn at random (fixed seed) and cut at white
 * space, with the question material (words by frequency, phrases of 8+ words) of the paragraphs drawn
 */
function markdownPassages(random: () => number, chars = 800) {
  const paragraphs = markdownParagraphs()
  const counts = new Map<string, number>()
  const phrases: string[] = []
  let rest = ''
  return {
    next(): string {
      while (rest.length < chars * 2) {
        const p = paragraphs[Math.floor(random() * paragraphs.length)]
        rest += (rest ? '\n\n' : '') + p
        if (counts.size < 200_000 || random() < 0.01) {
          for (const w of p.toLowerCase().match(/[a-z]{3,}/g) ?? []) counts.set(w, (counts.get(w) ?? 0) + 1)
        }
        if (phrases.length < 2000 && random() < 0.05) {
          const words = p.split(/\s+/).filter((w) => /^[A-Za-z][a-z]*[,.]?$/.test(w))
          if (words.length >= 8) phrases.push(words.slice(0, 8).join(' '))
        }
      }
      const cut = rest.lastIndexOf(' ', chars)
      const at = cut > chars / 2 ? cut : chars
      const text = rest.slice(0, at).trim()
      rest = rest.slice(at)
      return text.length > 0 ? text : this.next()
    },
    vocabulary: () => [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([w]) => w),
    phrases: () => phrases
  }
}

async function seed(dir: string, total: number, corpus: 'bigram' | 'markdown'): Promise<Seeded> {
  const t0 = Date.now()
  fs.mkdirSync(dir, { recursive: true })
  const app = await buildApp({ ...loadConfig({ CAIRN_DATA_DIR: dir, CAIRN_SIGNUP: 'open', CAIRN_LOG_LEVEL: 'silent' }),
    rateLimits: { knowledge: 0, voiceNotes: 0, artifacts: 0, default: 0 } })
  await app.ready()
  const org = async (email: string) => (await app.inject({ method: 'POST', url: '/api/v2/auth/signup',
    payload: { email, password: PASSWORD } })).json().data as
    { customerId: string; user: { id: string } }
  const big = await org('big@example.test')
  const small = await org('small@example.test')
  const random = rng(11)
  const maker = sentenceMaker(random)
  const markdown = corpus === 'markdown' ? markdownPassages(random) : undefined
  const sqlite = app.sqlite
  const { insertDoc, insertPassage } = seedStatements(sqlite)
  const perDoc = 200
  const docs = Math.ceil(total / perDoc)
  // the document row first: the word index's trigger reads its readers token. Many documents per
  // transaction: FTS5 writes a segment per commit, so small transactions cost merges later.
  sqlite.pragma('cache_size = -262144')
  const docsPerTx = 25
  const writeDocs = sqlite.transaction((first: number, made: number) => {
    for (let d = first; d < first + docsPerTx && made < total; d++) {
      const count = Math.min(perDoc, total - made)
      const owner = d % 100 === 50 ? small : big
      const id = randomUUID()
      const at = new Date(Date.now() - (docs - d) * 60_000).toISOString()
      insertDoc.run(id, owner.customerId, owner.user.id, `doc-${d}.txt`, count * 700, count * 700, count, count, at, at)
      for (let i = 0; i < count; i++) {
        let text = markdown?.next() ?? ''
        while (!markdown && text.length < 700) text += (text ? ' ' : '') + maker.make()
        insertPassage.run(randomUUID(), id, i, text)
      }
      made += count
    }
    return made
  })
  for (let made = 0, d = 0; made < total; d += docsPerTx) {
    made = writeDocs(d, made)
    if (d % 250 === 0) console.log(`seeded ${made} passages, ${((Date.now() - t0) / 1000).toFixed(0)} s`)
  }
  console.log(`the trigram file made in ${optimizedTrigrams(sqlite.name).toFixed(0)} s`)
  sqlite.exec(`INSERT INTO knowledge_passages_words (knowledge_passages_words) VALUES ('optimize')`)
  sqlite.pragma('optimize')
  // query material: words by frequency in the real sentences, and phrases taken from them
  const counts = new Map<string, number>()
  for (const s of maker.sentences) for (const w of s.toLowerCase().match(/[a-z]{3,}/g) ??
    []) counts.set(w, (counts.get(w) ?? 0) + 1)
  const vocabulary = markdown?.vocabulary() ?? [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([w]) => w)
  const phrases = markdown?.phrases() ?? maker.sentences.filter((_,
    i) => i % 97 === 0).map((s) => s.split(' ')).filter((w) => w.length >= 8).map((w) => w.join(' '))
  await app.close()
  const seeded: Seeded = { passages: total, big: 'big@example.test', small: 'small@example.test',
    vocabulary: vocabulary.slice(0, 12_000), phrases, seconds: Math.round((Date.now() - t0) / 1000) }
  fs.writeFileSync(path.join(dir, 'seeded.json'), JSON.stringify(seeded))
  return seeded
}

/** tags on the large organization's documents, by their order of upload (n from 1): the filters of the tag shapes */
const BENCH_TAGS: Record<string, { about: string; where: string }> = {
  rare: { about: 'every 97th document (51, scattered)', where: 'n % 97 = 0' },
  scatter: { about: 'every 10th document (495)', where: 'n % 10 = 0' },
  old: { about: 'the oldest 1,100 documents', where: 'n <= 1100' },
  half: { about: 'every other document (2,475)', where: 'n % 2 = 0' }
}

/**
 * gives the seeded documents their first and last passages' rowids, as the index worker and migration 0022 do (a
 * corpus seeded before the seed wrote them gains them here, once): without them every filter reads its documents'
 * ranges from the passages' index, two look-ups a document (the fallback for rows written before the migration)
 */
function spanDocuments(file: string) {
  const db = new Database(file)
  try {
    db.pragma('busy_timeout = 5000')
    db.prepare(`UPDATE knowledge_documents AS d SET
      first_passage_rowid = (SELECT min(p.rowid) FROM knowledge_passages p WHERE p.document_id = d.id),
      last_passage_rowid = (SELECT max(p.rowid) FROM knowledge_passages p WHERE p.document_id = d.id)
      WHERE first_passage_rowid IS NULL AND chunk_count > 0`).run()
  } finally {
    db.close()
  }
}

/**
 * A corpus seeded before migration 0023 had its trigram index in the main file: migrated, and the trigram file made
 * (once; as the server's start would, but merged into one segment as the seed leaves it)
 */
async function trigramsMoved(file: string) {
  const moved = !fs.existsSync(trigramFile(file))
  await openDatabase(file, { checkpointer: false }).close()
  if (moved) console.log(`migrated; the trigram file made in ${optimizedTrigrams(file).toFixed(0)} s`)
}

/** gives the seeded documents the tags of BENCH_TAGS, once (a corpus seeded before them gains them here) */
function tagDocuments(file: string, email: string) {
  const db = new Database(file)
  try {
    db.pragma('busy_timeout = 5000')
    const { customer_id: customerId } = db.prepare('SELECT customer_id FROM users WHERE email = ?').get(email) as
      { customer_id: string }
    for (const [tag, { where }] of Object.entries(BENCH_TAGS)) {
      db.prepare(`INSERT OR IGNORE INTO knowledge_document_tags (document_id, tag) SELECT id, ? FROM (SELECT id,
        row_number() OVER (ORDER BY uploaded_at, id) AS n FROM knowledge_documents WHERE customer_id = ?)
        WHERE ${where}`).run(tag, customerId)
    }
  } finally {
    db.close()
  }
}

/**
 * The server's index worker fills the pair index (migration 0019) in the background: once for a database seeded
 * before it, then after each ingest. Until then, phrases are searched through the trigram index.
 */
async function pairIndexCaughtUp(file: string) {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    const state = db.prepare(`SELECT (SELECT indexed_through FROM knowledge_pairs_state) AS through,
      (SELECT coalesce(max(rowid), 0) FROM knowledge_passages) AS newest`)
    const t0 = performance.now()
    for (let said = 0; ; ) {
      const { through, newest } = state.get() as { through: number; newest: number }
      if (through >= newest) break
      if (performance.now() - said > 10_000) {
        console.log(`the pair index is catching up: ${through} of ${newest} passages`)
        said = performance.now()
      }
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
    const s = (performance.now() - t0) / 1000
    if (s > 1) console.log(`the pair index caught up in ${s.toFixed(0)} s`)
  } finally {
    db.close()
  }
}

/**
 * Prints each passage index's segments, and waits (at most 20 minutes) for the idle merges that bring an index to
 * one segment (src/knowledge/fts-segments.ts): what a server left idle reaches, the state the queries measure.
 */
async function segmentsSettled(file: string) {
  const main = new Database(file, { readonly: true, fileMustExist: true })
  const trigrams = new Database(trigramFile(file), { readonly: true, fileMustExist: true })
  try {
    const indexes = ([['words', main, 'knowledge_passages_words'], ['pairs', main, 'knowledge_passages_pairs'],
      ['runs', main, 'knowledge_passages_runs'], ['trigrams', trigrams, 'knowledge_passages_fts']] as const)
      .map(([name, db, table]) => ({ name, of: segmentsOf(db, table) }))
    const read = () => indexes.map(({ name, of }) => ({ name, segments: of() }))
    const say = (what: string) => console.log(`${what}: ` + read().map(({ name, segments }) =>
      `${name} ${segments.length} (${segments.map((s) => s.pages).join(' + ')} pages` +
      `${segments.some((s) => s.merging) ? ', merging' : ''})`).join(', '))
    say('index segments')
    const t0 = performance.now()
    while (read().some(({ segments }) => wantsMerge(segments)) && performance.now() - t0 < 20 * 60_000) {
      await new Promise((resolve) => setTimeout(resolve, 1000))
    }
    const s = (performance.now() - t0) / 1000
    if (s > 1) say(`merged by the idle workers in ${s.toFixed(0)} s`)
  } finally {
    main.close()
    trigrams.close()
  }
}

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

export async function run() {
  const total = Number(process.env.BENCH_PASSAGES ?? 1_000_000)
  const corpus = process.env.BENCH_CORPUS === 'markdown' ? 'markdown' : 'bigram'
  const dir = path.join(projectRoot(), 'data', 'bench', `search-${total}${corpus === 'markdown' ? '-markdown' : ''}`)
  const file = path.join(dir, 'seeded.json')
  const seeded: Seeded = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8'))
    : await seed(dir, total, corpus)
  const size = fs.statSync(path.join(dir, 'cairn.db')).size
  console.log(`${total} passages in two organizations ` +
    `(seeded once in ${seeded.seconds} s; ${(size / 1e9).toFixed(2)} GB): ${dir}`)
  if (process.env.BENCH_SEARCH_SETTINGS) console.log(`search settings: ${process.env.BENCH_SEARCH_SETTINGS}`)
  tagDocuments(path.join(dir, 'cairn.db'), seeded.big)
  spanDocuments(path.join(dir, 'cairn.db'))
  await trigramsMoved(path.join(dir, 'cairn.db'))
  const { info, child } = await startServer<{ address: string }>('cairn', [], { BENCH_DATA_DIR: dir })
  try {
    await pairIndexCaughtUp(path.join(dir, 'cairn.db'))
    await segmentsSettled(path.join(dir, 'cairn.db'))
    const login = async (email: string) => (await (await fetch(`${info.address}/api/v2/auth/login`,
      { method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: PASSWORD }) })).json() as { data: { token: string } }).data.token
    const tokens = { big: await login(seeded.big), small: await login(seeded.small) }
    const random = rng(Number(process.env.BENCH_SEED ?? 5))
    const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]
    const v = seeded.vocabulary
    const phraseOf =
      (n: number) => {
        const w = pick(seeded.phrases).split(' '); const at =
          Math.floor(random() * (w.length - n)); return w.slice(at, at + n).join(' ')
      }
    const question = () =>
      `How do I ${Array.from({ length: 3 + Math.floor(random() * 3) }, () => pick(v.slice(50, 4000))).join(' ')}?`
    const shapes: Array<{ name: string; who: 'big' | 'small'; mode: string; queries: string[];
      filters?: Record<string, unknown> }> = [
      { name: 'questions', who: 'big', mode: 'hybrid', queries: Array.from({ length: 60 }, question) },
      { name: 'questions', who: 'big', mode: 'words', queries: Array.from({ length: 60 }, question) },
      { name: 'middling word', who: 'big', mode: 'substring',
        queries: Array.from({ length: 40 }, () => pick(v.slice(30, 3000))) },
      { name: 'word fragment (4 chars)', who: 'big', mode: 'substring',
        queries: Array.from({ length: 40 }, () => pick(v.slice(100, 5000)).slice(0, 4)) },
      { name: 'phrase, 2 words', who: 'big', mode: 'substring',
        queries: Array.from({ length: 40 }, () => phraseOf(2)) },
      { name: 'phrase, 3 words', who: 'big', mode: 'substring',
        queries: Array.from({ length: 40 }, () => phraseOf(3)) },
      { name: 'common word', who: 'big', mode: 'substring',
        queries: Array.from({ length: 20 }, () => pick(v.slice(0, 30))) },
      { name: 'rare word', who: 'big', mode: 'substring',
        queries: Array.from({ length: 40 }, () => pick(v.slice(5000, 12000))) },
      { name: '1–2 chars, present', who: 'big', mode: 'substring', queries: ['th', 'e', 'qu', 'ab', 'in', 'of'] },
      { name: '1–2 chars, absent', who: 'big', mode: 'substring', queries: ['qx', 'ŵ', 'zq', 'ñ'] },
      { name: 'small org: common words', who: 'small', mode: 'substring',
        queries: Array.from({ length: 30 }, () => pick(v.slice(0, 200))) },
      { name: 'small org: common words', who: 'small', mode: 'hybrid',
        queries: Array.from({ length: 30 }, () => pick(v.slice(0, 200))) },
      { name: 'small org: questions', who: 'small', mode: 'hybrid', queries: Array.from({ length: 30 }, question) },
      { name: 'small org: 1–2 chars, absent', who: 'small', mode: 'substring', queries: ['qx', 'ŵ'] },
      // a pasted paragraph (32 words are kept of it)
      { name: 'pasted paragraph', who: 'big', mode: 'hybrid',
        queries: Array.from({ length: 10 }, () => Array.from({ length: 8 }, () => pick(seeded.phrases)).join('. ')
          .slice(0, 1000)) },
      // a category filter (every seeded document is in 'bench'): one leaving nothing, one leaving everything
      { name: 'category matching nothing: questions', who: 'big', mode: 'hybrid', filters: { category: 'none' },
        queries: Array.from({ length: 20 }, question) },
      { name: 'category matching all: questions', who: 'big', mode: 'hybrid', filters: { category: 'bench' },
        queries: Array.from({ length: 20 }, question) },
      { name: 'category matching all: common word', who: 'big', mode: 'words', filters: { category: 'bench' },
        queries: Array.from({ length: 10 }, () => pick(v.slice(0, 30))) },
      // tags on part of the large organization's documents (tagDocuments)
      ...Object.entries(BENCH_TAGS).map(([tag, { about }]) => ({ name: `tag on ${about}: questions`,
        who: 'big' as const, mode: 'hybrid', filters: { tags: [tag] }, queries: Array.from({ length: 20 }, question) }))
    ]
    // BENCH_SHAPES=words,phrase runs only the shapes whose "name mode" contains one of the words;
    // BENCH_QUERIES=N runs at most N queries per shape (short runs while developing)
    const only = (process.env.BENCH_SHAPES ?? '').split(',').map((w) => w.trim().toLowerCase()).filter(Boolean)
    const most = Number(process.env.BENCH_QUERIES ?? 0)
    const chosen = shapes.filter((s) => only.length === 0 ||
      only.some((w) => `${s.name} ${s.mode} ${s.who}`.toLowerCase().includes(w)))
      .map((s) => (most > 0 ? { ...s, queries: s.queries.slice(0, most) } : s))
    // the health probe: a request every 10 ms during every query; its worst wait is the worst stall
    let probing = true
    let worstProbe = 0
    const probe = (async () => {
      while (probing) {
        const start = performance.now()
        await fetch(`${info.address}/api/health`).then((r) => r.arrayBuffer())
        worstProbe = Math.max(worstProbe, performance.now() - start)
        await new Promise((r) => setTimeout(r, 10))
      }
    })()
    // the character filters of 1–2 character search (src/knowledge/short-query-filter.ts) are back-filled by a search
    // worker from its first use: wait for them once, with the health probe running
    {
      const db = new Database(path.join(dir, 'cairn.db'), { readonly: true, fileMustExist: true })
      const count = () => db.prepare(`SELECT (SELECT count(*) FROM knowledge_documents WHERE status = 'indexed'
        AND chunk_count > 0) AS docs, (SELECT count(*) FROM knowledge_document_grams) AS done`).get() as
        { docs: number; done: number }
      const start = performance.now()
      const before = count()
      worstProbe = 0
      await fetch(`${info.address}/bench/loop-delay`)
      await fetch(`${info.address}/api/knowledge/search`,
        { method: 'POST', headers: { authorization: `Bearer ${tokens.big}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query: 'warm up', limit: 10 }) })
      let now = before
      // at most 20 minutes: a document whose filter cannot be made (passages still changing) must not hang the bench
      while (now.done < now.docs && performance.now() - start < 20 * 60_000) {
        await new Promise((r) => setTimeout(r, 1000))
        now = count()
      }
      const loop = await (await fetch(`${info.address}/bench/loop-delay`)).json() as { maxMs: number }
      console.log(`character filters: ${before.done} → ${now.done} of ${now.docs} documents in ` +
        `${((performance.now() - start) / 1000).toFixed(1)} s; worst loop delay ${loop.maxMs.toFixed(1)} ms, ` +
        `health waited at most ${worstProbe.toFixed(1)} ms`)
      db.close()
    }
    // steady state: untimed searches of other draws (questions, phrases, words; the timed queries are drawn above)
    // first, as on a server in use: the search workers' own page caches (CAIRN_SEARCH_CACHE_MB) and the JIT fill
    const warmUp = Number(process.env.BENCH_WARM_UP ?? 60)
    for (let i = 0; i < warmUp; i++) {
      const [query, mode] = i % 3 === 0 ? [question(), 'hybrid'] : i % 3 === 1 ? [phraseOf(2), 'substring']
        : [pick(v.slice(30, 3000)), 'words']
      await fetch(`${info.address}/api/knowledge/search`,
        { method: 'POST', headers: { authorization: `Bearer ${tokens.big}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query, limit: 10, mode }) }).then((r) => r.arrayBuffer())
    }
    const rows = []
    const all3: number[] = []
    // the server's reads from the disk (page cache misses: this VM's kernel drops file pages unused for seconds),
    // per query of a shape: what in-process CPU figures do not show
    const diskKb = () => {
      try {
        return Number(/read_bytes: (\d+)/.exec(fs.readFileSync(`/proc/${child.pid}/io`, 'utf8'))![1]) / 1024
      } catch {
        return NaN
      }
    }
    // the server's CPU (every thread: the search workers', the request thread's, the health probe's), per query of a
    // shape: on a loaded machine steadier than the wall time (/proc/<pid>/stat utime + stime, 10 ms ticks)
    const cpuMs = () => {
      try {
        const fields = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ')
        return (Number(fields[11]) + Number(fields[12])) * 10
      } catch {
        return NaN
      }
    }
    // each shape's slowest query (its p99 at 40 queries), printed after the table
    const slowest = new Map<(typeof chosen)[number], { ms: number; query: string }>()
    for (const shape of chosen) {
      worstProbe = 0
      await fetch(`${info.address}/bench/loop-delay`)
      const times: number[] = []
      let results = 0
      // one untimed query first: the search workers start on first use
      await fetch(`${info.address}/api/knowledge/search`,
        { method: 'POST', headers: { authorization: `Bearer ${tokens[shape.who]}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query: 'warm up', limit: 10, mode: shape.mode }) })
      const readBefore = diskKb()
      const cpuBefore = cpuMs()
      for (const query of shape.queries) {
        const start = performance.now()
        const res = await fetch(`${info.address}/api/knowledge/search`,
          { method: 'POST',
            headers: { authorization: `Bearer ${tokens[shape.who]}`, 'content-type': 'application/json' },
            body: JSON.stringify({ query, limit: 10, mode: shape.mode, ...shape.filters }) })
        const body = await res.json() as { count: number }
        times.push(performance.now() - start)
        const ms = times[times.length - 1]
        if (ms > (slowest.get(shape)?.ms ?? -1)) slowest.set(shape, { ms, query })
        if (res.status !== 200) throw new Error(`search failed: ${res.status} ${JSON.stringify(body)}`)
        results += body.count
      }
      const loop = await (await fetch(`${info.address}/bench/loop-delay`)).json() as { maxMs: number }
      const sorted = [...times].sort((a, b) => a - b)
      if (shape.mode === 'substring' && !shape.name.includes('1–2')) all3.push(...times)
      rows.push({ shape: shape.name, org: shape.who, mode: shape.mode, n: times.length,
        p50: +percentile(sorted, 50).toFixed(1), p99: +percentile(sorted, 99).toFixed(1),
        max: +sorted[sorted.length - 1].toFixed(1), avgResults: +(results / times.length).toFixed(1),
        loopMaxMs: +loop.maxMs.toFixed(1), healthWorstMs: +worstProbe.toFixed(1),
        diskKbPerQuery: +((diskKb() - readBefore) / times.length).toFixed(0),
        cpuMsPerQuery: +((cpuMs() - cpuBefore) / times.length).toFixed(1) })
    }
    probing = false
    await probe
    table(rows)
    console.log('slowest query of each shape:')
    for (const [shape, { ms, query }] of slowest) {
      console.log(`  ${shape.name} (${shape.who}, ${shape.mode}): ${ms.toFixed(1)} ms ` +
        JSON.stringify(query.slice(0, 80)))
    }
    const s3 = all3.sort((a, b) => a - b)
    if (s3.length === 0) s3.push(NaN)
    const loadAverage = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
    console.log(`load average ${loadAverage}; ` +
      `all 3+ character substring queries: p50 ${percentile(s3, 50).toFixed(1)} ms, ` +
      `p99 ${percentile(s3, 99).toFixed(1)} ms (targets 5 / 20); ` +
      'hybrid/words targets p50 10, p99 40; no stall over 50 ms')
  } finally {
    await stopServer(child)
  }
}
