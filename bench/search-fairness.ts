// `npm run bench -- search-fairness`: one organization searches with hostile queries continuously (a 2-character
// query over its large document, long questions, a repeated token) on BENCH_HOSTILE connections (default 4), while
// another organization's small searches, one at a time, are timed (p50/p99), and GET /api/health is probed every
// 50 ms; first without the hostile load, then with it. BENCH_FAIRNESS_SECONDS (default 20) per phase;
// BENCH_HOSTILE_MB (default 8) the hostile organization's document.
import { pct, probeHealth, startServer, stopServer, table } from './lib.js'

interface Info { address: string; token: string; workspaceId: string }

export async function run() {
  const seconds = Number(process.env.BENCH_FAIRNESS_SECONDS ?? 20)
  const hostileConnections = Number(process.env.BENCH_HOSTILE ?? 4)
  const hostileMb = Number(process.env.BENCH_HOSTILE_MB ?? 8)
  const { info, child } = await startServer<Info>('cairn')
  const base = info.address
  try {
    const json = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' })
    const signup = async (email: string) => ((await (await fetch(`${base}/api/v2/auth/signup`, { method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'benchmark password' }) })).json()) as { data: { token: string } })
      .data.token
    const hostile = info.token
    const victim = await signup('victim@example.test')
    const upload = async (token: string, name: string, text: string) => {
      const form = new FormData()
      form.append('file', new Blob([text], { type: 'text/plain' }), name)
      const res = await fetch(`${base}/api/knowledge/upload`, { method: 'POST',
        headers: { authorization: `Bearer ${token}` }, body: form })
      const id = ((await res.json()) as { document: { id: string } }).document.id
      // larger documents are indexed in the background
      for (;;) {
        const s = (await (await fetch(`${base}/api/knowledge/documents/${id}/status`,
          { headers: { authorization: `Bearer ${token}` } })).json()) as { status: string }
        if (s.status === 'indexed') return
        await new Promise((r) => setTimeout(r, 500))
      }
    }
    // the hostile document: words, with "zz" rare (a 2-character scan reads nearly all of it)
    const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet']
    let big = ''
    for (let i = 0; big.length < hostileMb * 1048576; i++) {
      big += words[(i * 7 + (i >> 3)) % words.length] + (i % 50_000 === 49_999 ? ' zz\n' : ' ')
    }
    const t0 = performance.now()
    await upload(hostile, 'hostile.txt', big)
    console.log(`hostile document of ${hostileMb} MB indexed in ${((performance.now() - t0) / 1000).toFixed(0)} s`)
    await upload(victim, 'lantern.txt', 'The brass lantern hangs in the hallway. '.repeat(20))

    const search = async (token: string, query: string, url = '/api/knowledge/search') => {
      const start = performance.now()
      const res = await fetch(base + url, { method: 'POST', headers: json(token),
        body: JSON.stringify({ query, limit: 10 }) })
      const body = (await res.json()) as { partial?: boolean }
      return { ms: performance.now() - start, status: res.status, partial: body.partial === true }
    }
    const hostileQueries = ['zz', 'zq', words.join(' ').repeat(3).slice(0, 900),
      'how do alpha and juliet relate to the hotel in india '.repeat(12).slice(0, 1000), 'zz '.repeat(300)]

    async function phase(name: string, attack: boolean) {
      let running = true
      const victimMs: number[] = []
      const unifiedMs: number[] = []
      const healthMs: number[] = []
      const hostileStats = { done: 0, partial: 0, refused: 0 }
      const attackers = attack ? Array.from({ length: hostileConnections }, async (_, c) => {
        for (let i = c; running; i++) {
          const q = hostileQueries[i % hostileQueries.length]
          const r = await search(hostile, q, i % 4 === 3 ? '/api/v2/search' : '/api/knowledge/search')
          hostileStats.done++
          if (r.partial) hostileStats.partial++
          if (r.status === 400) hostileStats.refused++
        }
      }) : []
      const probe = probeHealth(base, healthMs, () => running)
      const measured = (async () => {
        // (a second to let the attack fill the workers)
        await new Promise((r) => setTimeout(r, 1000))
        const end = performance.now() + seconds * 1000
        for (let i = 0; performance.now() < end; i++) {
          if (i % 4 === 3) unifiedMs.push((await search(victim, 'brass lantern', '/api/v2/search')).ms)
          else victimMs.push((await search(victim, 'brass lantern')).ms)
        }
        running = false
      })()
      await measured
      await Promise.all([...attackers, probe])
      return { phase: name, 'victim n': victimMs.length, 'victim p50 ms': pct(victimMs, 50),
        'victim p99 ms': pct(victimMs, 99), 'unified p50 ms': pct(unifiedMs, 50), 'unified p99 ms': pct(unifiedMs, 99),
        'health p50 ms': pct(healthMs, 50), 'health p99 ms': pct(healthMs, 99),
        'health max ms': pct(healthMs, 100), 'hostile searches': hostileStats.done,
        'hostile partial': hostileStats.partial, 'hostile refused': hostileStats.refused }
    }
    // untimed: both workers started (their first search waits for the thread to load) and their caches warmed
    await Promise.all(Array.from({ length: 4 }, () => search(victim, 'brass lantern')))
    for (const q of hostileQueries) await search(hostile, q)
    const rows = [await phase('alone', false), await phase(`hostile x${hostileConnections}`, true)]
    table(rows)
  } finally {
    await stopServer(child)
  }
}
