// `npm run bench` runs every benchmark; `npm run bench -- NAME [NAME...]` runs the named ones.
const available: Record<string, () => Promise<{ run: () => Promise<void> }>> = {
  http: () => import('./http.js'),
  artifacts: () => import('./artifacts.js'),
  search: () => import('./search.js'),
  'search-fairness': () => import('./search-fairness.js'),
  'tenant-fairness': () => import('./tenant-fairness.js'),
  retrieval: () => import('./retrieval.js'),
  scoring: () => import('./scoring.js'),
  ingest: () => import('./ingest.js'),
  load: () => import('./load.js'),
  webhooks: () => import('./webhooks.js'),
  statements: () => import('./statements.js')
}

const names = process.argv.slice(2)
for (const name of names.length ? names : Object.keys(available)) {
  const loader = available[name]
  if (!loader) {
    console.error(`unknown benchmark "${name}"; available: ${Object.keys(available).join(', ')}`)
    process.exit(2)
  }
  console.log(`\n== ${name} ==`)
  await (await loader()).run()
}
