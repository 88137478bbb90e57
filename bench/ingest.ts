// `npm run bench -- ingest`: upload a 50 MB text file; time to `indexed` and the worst event-loop delay meanwhile.
import { startServer, stopServer, table } from './lib.js'
import { rng, zipfVocabulary } from './seed.js'

export async function run() {
  const random = rng(3)
  const vocab = zipfVocabulary(20_000, random)
  const target = 50 * 1024 * 1024 - 1024
  const parts: string[] = []
  let size = 0
  while (size < target) {
    const line = Array.from({ length: 12 }, () => vocab.sample()).join(' ') + '.\n'
    parts.push(line)
    size += Buffer.byteLength(line)
  }
  const text = parts.join('').slice(0, target)
  const { info, child } = await startServer<{ address: string; token: string }>('cairn')
  const auth = { authorization: `Bearer ${info.token}` }
  await fetch(`${info.address}/bench/loop-delay`)

  // a neighbour keeps asking for health while the upload is indexed
  let probing = true
  const probeTimes: number[] = []
  const probe = (async () => {
    while (probing) {
      const s = performance.now()
      await fetch(`${info.address}/api/health`)
      probeTimes.push(performance.now() - s)
      await new Promise((r) => setTimeout(r, 20))
    }
  })()

  const form = new FormData()
  form.append('file', new Blob([text], { type: 'text/plain' }), 'big.txt')
  const start = performance.now()
  const res = await fetch(`${info.address}/api/knowledge/upload`, { method: 'POST', headers: auth, body: form })
  const uploaded = performance.now() - start
  const body = await res.json() as { document: { id: string; chunkCount: number } }
  if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${JSON.stringify(body)}`)
  let status = ''
  while (status !== 'indexed') {
    await new Promise((r) => setTimeout(r, 200))
    status = ((await (await fetch(`${info.address}/api/knowledge/documents/${body.document.id}/status`, { headers: auth })).json()) as { status: string }).status
  }
  const indexed = performance.now() - start
  probing = false
  await probe
  const loop = await (await fetch(`${info.address}/bench/loop-delay`)).json() as { maxMs: number; p99Ms: number }
  await stopServer(child)
  probeTimes.sort((a, b) => a - b)
  table([{
    'file MB': +(Buffer.byteLength(text) / 1048576).toFixed(1), passages: body.document.chunkCount,
    'upload answered s': +(uploaded / 1000).toFixed(1), 'indexed s': +(indexed / 1000).toFixed(1),
    'max loop delay ms': +loop.maxMs.toFixed(1), 'p99 loop delay ms': +loop.p99Ms.toFixed(1),
    'health p99 ms': +probeTimes[Math.floor(probeTimes.length * 0.99)].toFixed(1), 'health max ms': +probeTimes[probeTimes.length - 1].toFixed(1)
  }])
  console.log('targets: indexed <= 30 s, worst event-loop delay <= 100 ms')
}
