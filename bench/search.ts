// `npm run bench -- search`: POST /api/knowledge/search over >= 200,000 passages, against a plain LIKE scan.
import Database from 'better-sqlite3'
import path from 'node:path'
import { startServer, stopServer, table } from './lib.js'
import { rng } from './seed.js'

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}
function summary(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b)
  return { n: s.length, p50: +percentile(s, 50).toFixed(2), p99: +percentile(s, 99).toFixed(2) }
}

export async function run() {
  const passages = Number(process.env.BENCH_PASSAGES ?? 200_000)
  const t0 = Date.now()
  const { info, child } = await startServer<{ address: string; token: string; dataDir: string; words: string[] }>('cairn', ['knowledge', String(passages)])
  console.log(`seeded ${passages} passages in ${((Date.now() - t0) / 1000).toFixed(0)} s`)
  const random = rng(99)
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]
  // realistic searches: words of middling frequency, fragments of words, two-word phrases
  const long = Array.from({ length: 60 }, (_, i) => i % 3 === 0 ? pick(info.words.slice(30, 3000)) : i % 3 === 1
    ? pick(info.words.slice(100, 5000)).slice(0, 4).padEnd(3, 'a') : `${pick(info.words.slice(0, 200))} ${pick(info.words.slice(0, 200))}`)
  const short = ['ka', 'lo', 'é', 'ñ', 'mi', 'z', 'ta', 'ru', 'qu', 'sh']
  const url = `${info.address}/api/knowledge/search`
  const headers = { authorization: `Bearer ${info.token}`, 'content-type': 'application/json' }

  async function http(queries: string[], rounds: number) {
    const times: number[] = []
    let results = 0
    for (let r = 0; r < rounds; r++) {
      for (const query of queries) {
        const start = performance.now()
        const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ query, limit: 10 }) })
        const body = await res.json() as { count: number }
        times.push(performance.now() - start)
        if (res.status !== 200) throw new Error(`search failed: ${res.status}`)
        results += body.count
      }
    }
    return { ...summary(times), avgResults: +(results / times.length).toFixed(1) }
  }

  const fts = await http(long, 3)
  const scanShort = await http(short, 5)
  const absent = await http(['qx', 'ŵ'], 2)

  // the same searches as a LIKE scan over the same rows (every match, as ranking needs), read-only
  const db = new Database(path.join(info.dataDir, 'cairn.db'), { readonly: true })
  const like = db.prepare(`SELECT id FROM knowledge_passages WHERE text LIKE ?`)
  const likeTimes: number[] = []
  for (const q of long.slice(0, 20)) {
    const start = performance.now()
    like.all(`%${q}%`)
    likeTimes.push(performance.now() - start)
  }
  db.close()
  await stopServer(child)
  const scan = summary(likeTimes)
  table([
    { case: 'HTTP search, 3+ chars (FTS5 trigram)', ...fts },
    { case: 'HTTP search, 1–2 chars, common (scan to limit)', ...scanShort },
    { case: 'HTTP search, 1–2 chars, absent (full scan)', ...absent },
    { case: 'SQLite LIKE scan, same 3+ char queries', ...scan, avgResults: '-' }
  ])
  console.log(`3+ chars: p50 ${fts.p50} ms, p99 ${fts.p99} ms (targets 10 / 50); ${(scan.p50 / fts.p50).toFixed(0)}× faster than the LIKE scan at p50 (target 20×)`)
}
