// `npm run bench -- artifacts`: list and chain latency with 100,000 artifacts in one workspace.
import { startServer, stopServer, load, table } from './lib.js'

export async function run() {
  const total = Number(process.env.BENCH_ARTIFACTS ?? 100_000)
  const t0 = Date.now()
  const { info, child } = await startServer<{ address: string; token: string; workspaceId: string;
    longChainHead: string; runId: string; conversationId: string }>('cairn', ['artifacts', String(total)])
  console.log(`seeded ${total} artifacts in ${((Date.now() - t0) / 1000).toFixed(1)} s`)
  const headers = { authorization: `Bearer ${info.token}`, 'x-workspace-id': info.workspaceId }
  const base = `${info.address}/api/v2/artifacts`
  const cases: Array<[string, string]> = [
    ['list, first page (50)', `${base}`],
    ['list, type filter', `${base}?type=code_change`],
    ['list, status + page 100', `${base}?status=approved&limit=100&offset=5000`],
    ['list, workflow run', `${base}?workflow_run_id=${info.runId}`],
    ['by conversation', `${base}/conversation/${info.conversationId}`],
    ['chain of 1,000 from the root', `${base}/${info.longChainHead}/chain`],
    ['single artifact', `${base}/${info.longChainHead}`]
  ]
  const rows = []
  for (const [name, url] of cases) {
    const r = await load(url, headers, 5, 4)
    rows.push({ case: name, 'req/s': Math.round(r.requestsPerSec), 'p50 ms': r.p50, 'p99 ms': r.p99, non2xx: r.non2xx })
  }
  await stopServer(child)
  table(rows)
}
