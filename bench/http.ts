// `npm run bench -- http`: requests/s of an authenticated JSON GET (JWT and API key) against bare Fastify.
import { startServer, stopServer, load, table } from './lib.js'

export async function run() {
  const bare = await startServer<{ address: string }>('bare')
  const hello = await load(`${bare.info.address}/hello`)
  await stopServer(bare.child)

  const cairn = await startServer<{ address: string; token: string; keyId: string; apiKey: string }>('cairn')
  const { address, token, keyId, apiKey } = cairn.info
  const health = await load(`${address}/api/health`)
  const jwt = await load(`${address}/api/v2/auth/me`, { authorization: `Bearer ${token}` })
  const key = await load(`${address}/api/v2/developer/api-keys/${keyId}/usage`, { 'x-api-key': apiKey })
  await stopServer(cairn.child)

  const row = (name: string, l: typeof hello) => ({
    case: name, 'req/s': Math.round(l.requestsPerSec), 'p50 ms': l.p50, 'p99 ms': l.p99, non2xx: l.non2xx,
    'ratio to bare': (l.requestsPerSec / hello.requestsPerSec).toFixed(2)
  })
  table([row('bare Fastify GET /hello', hello), row('Cairn public GET /api/health', health), row('Cairn JWT GET /api/v2/auth/me', jwt), row('Cairn API key GET .../usage', key)])
  const worst = Math.min(jwt.requestsPerSec, key.requestsPerSec) / hello.requestsPerSec
  console.log(`worst ratio to bare Fastify: ${worst.toFixed(2)} (target >= 0.5)`)
}
