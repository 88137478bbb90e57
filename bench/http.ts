// `npm run bench -- http`: requests/s of an authenticated JSON GET (JWT and API key) against bare Fastify.
//
// Both servers run at once, each in its own process, and the cases take turns in short rounds (bare, then
// each Cairn case): a machine whose speed drifts (a shared VM) slows a whole round, not one case, so each
// round's ratio to its own bare run is fair. Every round starts fresh server processes (see run()). The
// table gives the medians over the rounds.
import { startServer, stopServer, load, table, type Load } from './lib.js'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

export async function run() {
  const runs: Load[][] = []
  const ratios: number[][] = []
  let names: string[] = []
  for (let round = 0; round < ROUNDS; round++) {
    // fresh processes every round: now and then a Node process (bare Fastify's too) settles into a state
    // where request objects survive young-generation GCs and the whole process runs slower; one such
    // process then costs one round, not the run
    const bare = await startServer<{ address: string }>('bare')
    const cairn = await startServer<{ address: string; token: string; keyId: string; apiKey: string }>('cairn')
    try {
      const { address, token, keyId, apiKey } = cairn.info
      const cases: Array<{ name: string; url: string; headers?: Record<string, string> }> = [
        { name: 'bare Fastify GET /hello', url: `${bare.info.address}/hello` },
        { name: 'Cairn public GET /api/health', url: `${address}/api/health` },
        { name: 'Cairn JWT GET /api/v2/auth/me', url: `${address}/api/v2/auth/me`, headers: { authorization: `Bearer ${token}` } },
        { name: 'Cairn API key GET .../usage', url: `${address}/api/v2/developer/api-keys/${keyId}/usage`, headers: { 'x-api-key': apiKey } }
      ]
      names = cases.map((c) => c.name)
      for (const c of cases) await load(c.url, c.headers, 1, 10, false) // warm-up: JIT, caches
      const results: Load[] = []
      for (const c of cases) results.push(await load(c.url, c.headers, SECONDS, 10, false))
      results.forEach((r, i) => {
        ;(runs[i] ??= []).push(r)
        ;(ratios[i] ??= []).push(r.requestsPerSec / results[0].requestsPerSec)
      })
    } finally {
      await stopServer(cairn.child)
      await stopServer(bare.child)
    }
  }
  table(names.map((name, i) => ({
    case: name,
    'req/s (median)': Math.round(median(runs[i].map((r) => r.requestsPerSec))),
    'p50 ms': median(runs[i].map((r) => r.p50)),
    'p99 ms': median(runs[i].map((r) => r.p99)),
    non2xx: runs[i].reduce((n, r) => n + r.non2xx, 0),
    'ratio to bare (median)': median(ratios[i]).toFixed(2),
    'ratio per round': ratios[i].map((x) => x.toFixed(2)).join(' ')
  })))
  const worst = Math.min(median(ratios[2]), median(ratios[3]))
  console.log(`${ROUNDS} rounds of ${SECONDS} s per case, fresh servers each round; worst authenticated median ratio to bare Fastify: ${worst.toFixed(2)} (target >= 0.5)`)
}
