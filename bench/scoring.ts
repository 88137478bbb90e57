// `npm run bench -- scoring`: word ranking on the seeded search corpus (run `search` first): FTS5 bm25() over
// every match against BM25 computed in JavaScript over a bounded candidate set (the newest 2,000 matches);
// then words search as it runs (bounded: the default words settings, or BENCH_WORDS_TUNING's) against exact bm25():
// time per question in process and how much of the exact top 10 it returns.
import type Database from 'better-sqlite3'
import fs from 'node:fs'
import path from 'node:path'
import { projectRoot } from '../src/db/index.js'
import { queryTerms, roughStem, fold, wordsMatch } from '../src/knowledge/query.js'
import { readerTokens } from '../src/knowledge/readers.js'
import { rng } from './seed.js'
import { drizzle } from 'drizzle-orm/better-sqlite3'
import * as tables from '../schema/tables/index.js'
import { createKnowledgeStore } from '../src/knowledge/store.js'
import { createSearch } from '../src/knowledge/search.js'
import type { WordsSettings } from '../src/knowledge/search-settings.js'
import { openSearchConnection } from '../src/knowledge/trigram-file.js'

const BOUND = 2000

export async function run() {
  const total = Number(process.env.BENCH_PASSAGES ?? 1_000_000)
  const dir = path.join(projectRoot(), 'data', 'bench', `search-${total}`)
  if (!fs.existsSync(path.join(dir,
    'seeded.json'))) { console.log(`no seeded corpus in ${dir}: run \`npm run bench -- search\` first`); return }
  const seeded = JSON.parse(fs.readFileSync(path.join(dir, 'seeded.json'), 'utf8')) as { vocabulary: string[] }
  // (the trigram index's file attached, as the search workers open it: index-walk.ts reads it)
  const db = openSearchConnection(path.join(dir, 'cairn.db'))
  const { customerId } = db.prepare(`SELECT customer_id AS customerId FROM users
    WHERE email = 'big@example.test'`).get() as { customerId: string }
  const tokens = readerTokens({ customerId, userId: '00000000-0000-0000-0000-000000000000', workspaceIds: [] },
    'organization')
  const ranked = db.prepare(`SELECT rowid, bm25(knowledge_passages_words, 1.0, 0.0) AS bm FROM knowledge_passages_words
    WHERE knowledge_passages_words MATCH ? ORDER BY bm LIMIT 100`)
  const newest = db.prepare(`SELECT w.rowid, p.text FROM (SELECT rowid FROM knowledge_passages_words
    WHERE knowledge_passages_words MATCH ? ORDER BY rowid DESC LIMIT ${BOUND}) w
      JOIN knowledge_passages p ON p.rowid = w.rowid`)
  const random = rng(3)
  const v = seeded.vocabulary
  const questions = Array.from({ length: 40 },
    () => `How do I ${Array.from({ length: 4 }, () => v[50 + Math.floor(random() * 3950)]).join(' ')}?`)
  const time = (f: () => void) => { const s = performance.now(); f(); return performance.now() - s }
  const a: number[] = []
  const b: number[] = []
  for (const q of questions) {
    const terms = queryTerms(q)
    const match = wordsMatch(terms, tokens)
    a.push(time(() => ranked.all(match)))
    b.push(time(() => {
      const rows = newest.all(match) as Array<{ rowid: number; text: string }>
      const stems = terms.flat().map(roughStem)
      const avg = rows.reduce((n, r) => n + r.text.length, 0) / Math.max(rows.length, 1)
      rows.map((r) => {
        const words = (fold(r.text).match(/[\p{L}\p{N}]+/gu) ?? []).map(roughStem)
        let score = 0
        for (const s of stems) {
          const tf = words.filter((w) => w === s).length
          score += (tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * r.text.length) / avg))
        }
        return score
      }).sort((x, y) => y - x)
    }))
  }
  const stat = (xs: number[]) => {
    const s = [...xs].sort((x,
      y) => x - y); return { p50: +s[Math.floor(s.length / 2)].toFixed(1), p99: +s[s.length - 1].toFixed(1) }
  }
  console.table([{ method: 'FTS5 bm25() over every match, top 100', ...stat(a) },
    { method: `JS BM25 over the newest ${BOUND} matches`, ...stat(b) }])
  await agreement(db, seeded.vocabulary)
  db.close()
}

/**
 * Words search as the search workers run it (bounded at this scale) against the exact path (FTS5 bm25() over
 * every match), on bench/search.ts's questions for the large organization: time per question (wall and CPU,
 * the steadier one on a loaded machine) and how many of the exact top 10 it returns.
 */
async function agreement(db: Database.Database, v: string[]) {
  const user = db.prepare(`SELECT id, customer_id AS customerId FROM users WHERE email = 'big@example.test'`)
    .get() as { id: string; customerId: string }
  const reader = { customerId: user.customerId, userId: user.id, workspaceIds: [] }
  const store = createKnowledgeStore(db, drizzle(db, { schema: tables }))
  const words = process.env.BENCH_WORDS_TUNING ? JSON.parse(process.env.BENCH_WORDS_TUNING) as Partial<WordsSettings>
    : {}
  const bounded = createSearch(db, store, { settings: { words } })
  const exact = createSearch(db, store, { settings: { words: { exactPostings: Number.MAX_SAFE_INTEGER } } })
  const random = rng(Number(process.env.BENCH_SEED ?? 5))
  const question = () => `How do I ${Array.from({ length: 3 + Math.floor(random() * 3) },
    () => v.slice(50, 4000)[Math.floor(random() * 3950)]).join(' ')}?`
  const warm = Array.from({ length: 20 }, question)
  const questions = Array.from({ length: Number(process.env.BENCH_QUERIES ?? 60) }, question)
  for (const q of warm) await bounded.search(reader, {}, q, 10, 'hybrid')
  const rows = []
  for (const mode of ['words', 'hybrid'] as const) {
    const wall: number[] = []
    const cpu: number[] = []
    for (const q of questions) {
      const c = process.cpuUsage()
      const start = performance.now()
      await bounded.search(reader, {}, q, 10, mode)
      wall.push(performance.now() - start)
      const d = process.cpuUsage(c)
      cpu.push((d.user + d.system) / 1000)
    }
    const pct = (xs: number[], p: number) => +[...xs].sort((x, y) => x - y)[Math.min(xs.length - 1,
      Math.floor(p / 100 * xs.length))].toFixed(1)
    rows.push({ mode, n: questions.length, wallP50: pct(wall, 50), wallP99: pct(wall, 99), cpuP50: pct(cpu, 50),
      cpuP99: pct(cpu, 99) })
  }
  let same = 0
  let total = 0
  let first = 0
  for (const q of questions) {
    const a = (await bounded.search(reader, {}, q, 10, 'words')).map((h) => h.chunk.id)
    const b = (await exact.search(reader, {}, q, 10, 'words')).map((h) => h.chunk.id)
    same += a.filter((id) => b.includes(id)).length
    total += b.length
    if (a[0] === b[0]) first++
  }
  console.table(rows)
  const loadAverage = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  console.log(`words search (in process) against exact bm25(): ${(100 * same / Math.max(total, 1)).toFixed(1)} % of ` +
    `the exact top 10 returned, the same first result for ${first} of ${questions.length} questions; ` +
    `load average ${loadAverage}`)
}
