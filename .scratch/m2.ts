import Database from 'better-sqlite3'
import fs from 'node:fs'
import { queryTerms } from '/work/wt/search/src/knowledge/query.ts'
const db = new Database('/work/wt/search/data/bench/search-1000000/cairn.db', { readonly: true })
const seeded = JSON.parse(fs.readFileSync('/work/wt/search/data/bench/search-1000000/seeded.json','utf8'))
const big = db.prepare("select customer_id from knowledge_documents group by customer_id order by count(*) desc").all().map((r: any)=>r.customer_id)
const tok = 'o'+big[0].replace(/-/g,'')+'z'
const v: string[] = seeded.vocabulary
const t = (label: string, f: () => any) => { const s = performance.now(); const r = f(); console.log(label, (performance.now()-s).toFixed(1), 'ms', Array.isArray(r)? r.length : r) ; return r}
const ph = (x: string[]) => `"${x.join(' ')}"`
const cnt = db.prepare("select count(*) c from knowledge_passages_words where knowledge_passages_words match ?")
const ids = db.prepare("select rowid from knowledge_passages_words where knowledge_passages_words match ?").pluck()
let r = 7
const rnd = () => { r = (r * 16807) % 2147483647; return r / 2147483647 }
for (let i = 0; i < 3; i++) {
  const q = `How do I ${Array.from({ length: 4 }, () => v[50 + Math.floor(rnd() * 3950)]).join(' ')}?`
  const terms = queryTerms(q)
  console.log(q, terms)
  const dfs = terms.map((x) => t('df ' + x, () => cnt.get(`{text}: ${ph(x)}`).c))
  t('full bm25', () => db.prepare("select rowid, bm25(knowledge_passages_words,1.0,0.0) bm from knowledge_passages_words where knowledge_passages_words match ? order by bm limit 100").all(`{text}: (${terms.map(ph).join(' OR ')})`))
  const order = terms.map((x, i) => [x, dfs[i]] as const).sort((a, b) => a[1] - b[1])
  const rare = [order[0][0]]
  let sum = order[0][1]
  for (const [x, d] of order.slice(1)) if (sum + d <= 20000) { rare.push(x); sum += d }
  const cand = t('cand ids ' + sum, () => ids.all(`{text}: (${rare.map(ph).join(' OR ')})`))
  const one = db.prepare("select rowid, bm25(knowledge_passages_words,1.0,0.0) bm from knowledge_passages_words where knowledge_passages_words match ? and rowid = ?")
  const full = `{text}: (${terms.map(ph).join(' OR ')})`
  t('per-row bm25 x' + Math.min(cand.length, 2000), () => cand.slice(0, 2000).map((id: number) => one.get(full, id)))
  t('IN bm25', () => db.prepare("select rowid, bm25(knowledge_passages_words,1.0,0.0) bm from knowledge_passages_words where knowledge_passages_words match ? and rowid in (select value from json_each(?)) order by bm limit 100").all(full, JSON.stringify(cand.slice(0, 2000))))
  t('rare bm25', () => db.prepare("select rowid, bm25(knowledge_passages_words,1.0,0.0) bm from knowledge_passages_words where knowledge_passages_words match ? order by bm limit 100").all(`{text}: (${rare.map(ph).join(' OR ')})`))
}
console.log(fs.readFileSync('/proc/loadavg','utf8'))
