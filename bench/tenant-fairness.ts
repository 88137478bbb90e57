// `npm run bench -- tenant-fairness`: what hostile organizations' uploads, searches and webhook receivers cost another
// organization. The victim works one request at a time: it uploads a small Markdown file and waits until it is
// indexed, searches, and posts a channel message whose webhook (to a receiver that answers at once) is timed from the
// post to its arrival; GET /api/health is probed every 50 ms. Five phases of BENCH_FAIRNESS_SECONDS (default 20):
//  - alone;
//  - hostile uploads: BENCH_HOSTILE_ORGS (default 3) organizations from open sign-up, BENCH_HOSTILE (default 2)
//    connections each, uploading PDF and DOCX decompression bombs, a 300-page PDF and a 2 MB text file in turn;
//  - hostile searches: the same organizations, each with a document of BENCH_HOSTILE_MB (default 2) MB, search it on
//    BENCH_HOSTILE connections each with the costly shapes (a 2-character scan, 1000-character repeated tokens and
//    questions), a quarter of them through unified search;
//  - hostile webhooks: the same organizations hold BENCH_HOSTILE_HOOKS (default 20) webhooks each, half to a receiver
//    that accepts connections and never answers, half to one that answers 500 at once (retried on a one-second
//    schedule), and each posts ten messages a second (one caller's default rate limit) that fan out to all of them;
//  - all three at once.
// The table gives p50/p99 of each victim measurement per phase, the health probe's times (from a process of its own,
// as a load balancer's checker; it shares the two cores with the server and the attackers), the server's event-loop
// delay (monitorEventLoopDelay's intervals: its 10 ms resolution included), and what the hostile side got done.
import http from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import { pct, probeHealth, startServer, stopServer, table } from './lib.js'
import { pdfWithStream, zlibWithWindow } from '../test/ingest/hostile-pdf.js'
import { manyPagePdf } from '../test/pdf-helper.js'
import { docxBomb } from '../test/zip-helper.js'

interface Info { address: string; token: string; workspaceId: string }
interface Who { token: string; workspaceId: string }

const listen = (server: http.Server | net.Server) => new Promise<number>((resolve) =>
  server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)))

export async function run() {
  const seconds = Number(process.env.BENCH_FAIRNESS_SECONDS ?? 20)
  const hostileOrgs = Number(process.env.BENCH_HOSTILE_ORGS ?? 3)
  const connections = Number(process.env.BENCH_HOSTILE ?? 2)
  const hooksPerOrg = Number(process.env.BENCH_HOSTILE_HOOKS ?? 20)
  const hostileMb = Number(process.env.BENCH_HOSTILE_MB ?? 2)

  // the victim's receiver: resolves the waiter of each message's marker when its delivery arrives
  const waiting = new Map<string, () => void>()
  const good = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const marker = /victim-\d+/.exec(Buffer.concat(chunks).toString())?.[0]
      if (marker) waiting.get(marker)?.()
      res.writeHead(204).end()
    })
  })
  // the hostile receivers: one never answers (its sockets are held open until the end), one fails at once
  const held: net.Socket[] = []
  const silent = net.createServer((socket) => { held.push(socket); socket.on('error', () => {}) })
  let failedAttempts = 0
  const failing = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => { failedAttempts++; res.writeHead(500).end('no') })
  })
  const [goodPort, silentPort, failingPort] = await Promise.all([listen(good), listen(silent), listen(failing)])

  const { info, child } = await startServer<Info>('cairn', [], { CAIRN_WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1' })
  const base = info.address
  try {
    const headers = (who?: Who) => (who ? { authorization: `Bearer ${who.token}`, 'x-workspace-id': who.workspaceId }
      : {}) as Record<string, string>
    const post = async (who: Who | undefined, url: string, body: object) => {
      const res = await fetch(base + url, { method: 'POST',
        headers: { ...headers(who), 'content-type': 'application/json' }, body: JSON.stringify(body) })
      return { status: res.status,
        body: (await res.json()) as { data: { id: string; token?: string; workspaceId?: string } } }
    }
    const signup = async (email: string): Promise<Who> => {
      const { data } = (await post(undefined, '/api/v2/auth/signup', { email, password: 'benchmark password' })).body
      return { token: data.token!, workspaceId: data.workspaceId! }
    }
    const upload = async (who: Who, name: string, type: string, content: Buffer | string) => {
      const form = new FormData()
      form.append('file', new Blob([content], { type }), name)
      const res = await fetch(`${base}/api/knowledge/upload`, { method: 'POST', headers: headers(who), body: form })
      const body = (await res.json()) as { document?: { id: string } }
      return { status: res.status, id: body.document?.id }
    }
    const indexed = async (who: Who, id: string, every = 20) => {
      for (;;) {
        const s = (await (await fetch(`${base}/api/knowledge/documents/${id}/status`,
          { headers: headers(who) })).json()) as { status: string }
        if (s.status === 'indexed' || s.status === 'failed') return s.status
        await new Promise((r) => setTimeout(r, every))
      }
    }

    const victim = await signup('victim@example.test')
    const victimChannel = (await post(victim, '/api/v2/channels', { name: 'team', type: 'public' })).body.data.id
    await post(victim, '/api/v2/developer/webhooks', { url: `http://127.0.0.1:${goodPort}/hook`,
      events: ['message.created'] })
    const hostile = await Promise.all(Array.from({ length: hostileOrgs }, (_, i) => signup(`hostile${i}@example.test`)))
    const hostileChannels = await Promise.all(hostile.map(async (who) =>
      (await post(who, '/api/v2/channels', { name: 'noise', type: 'public' })).body.data.id))

    const bombs: Array<[string, string, Buffer | string]> = [
      ['bomb.pdf', 'application/pdf', pdfWithStream('/Filter /FlateDecode', zlibWithWindow(200 * 1048576))],
      ['bomb.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', docxBomb(300 * 1048576)],
      ['pages.pdf', 'application/pdf', manyPagePdf(300, 'The quarterly ledger lists every shipment by harbour.')],
      ['large.txt', 'text/plain', 'grain barley oats rye wheat millet sorghum '.repeat(50_000)]
    ]

    // each hostile organization's document for its searches: words, with "zz" rare (a 2-character scan reads nearly all
    // of it)
    const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet']
    let big = ''
    for (let i = 0; big.length < hostileMb * 1048576; i++) {
      big += words[(i * 7 + (i >> 3)) % words.length] + (i % 50_000 === 49_999 ? ' zz\n' : ' ')
    }
    const t0 = performance.now()
    await Promise.all(hostile.map(async (who) => {
      const { id } = await upload(who, 'hostile.txt', 'text/plain', big)
      if (id) await indexed(who, id, 500)
    }))
    console.log(`${hostileOrgs} hostile documents of ${hostileMb} MB indexed in ` +
      `${((performance.now() - t0) / 1000).toFixed(0)} s`)
    const hostileQueries = ['zz', 'zq', words.join(' ').repeat(3).slice(0, 900),
      'how do alpha and juliet relate to the hotel in india '.repeat(12).slice(0, 1000), 'zz '.repeat(300)]

    type Attack = 'uploads' | 'searches' | 'webhooks'
    let marker = 0
    async function phase(name: string, attacks: Attack[], duration = seconds) {
      let running = true
      const uploadMs: number[] = []
      const searchMs: number[] = []
      const deliveryMs: number[] = []
      const healthMs: number[] = []
      const hostileDone = { requests: 0, statuses: new Map<number, number>(), partial: 0 }
      const count = (status: number) => {
        hostileDone.requests++
        hostileDone.statuses.set(status, (hostileDone.statuses.get(status) ?? 0) + 1)
      }
      // the server's own event-loop delay over the phase (reset here)
      await fetch(`${base}/bench/loop-delay`)
      const attackers: Array<Promise<void>> = []
      if (attacks.includes('uploads')) {
        attackers.push(...hostile.flatMap((who) => Array.from({ length: connections }, async (_, c) => {
          for (let i = c; running; i++) {
            const [file, type, content] = bombs[i % bombs.length]
            count((await upload(who, file, type, content)).status)
          }
        })))
      }
      if (attacks.includes('searches')) {
        attackers.push(...hostile.flatMap((who) => Array.from({ length: connections }, async (_, c) => {
          for (let i = c; running; i++) {
            const url = base + (i % 4 === 3 ? '/api/v2/search' : '/api/knowledge/search')
            const res = await fetch(url, { method: 'POST',
              headers: { ...headers(who), 'content-type': 'application/json' },
              body: JSON.stringify({ query: hostileQueries[i % hostileQueries.length], limit: 10 }) })
            if (((await res.json()) as { partial?: boolean }).partial === true) hostileDone.partial++
            count(res.status)
          }
        })))
      }
      // messages at the default rate limit of one caller (600 a minute), each fanning out to every hook
      if (attacks.includes('webhooks')) {
        attackers.push(...hostile.map(async (who, org) => {
          for (let i = 0; running; i++) {
            const next = performance.now() + 100
            count((await post(who, '/api/v2/messages', { channel_id: hostileChannels[org], content: `noise ${i}` }))
              .status)
            await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())))
          }
        }))
      }
      const probe = probeHealth(base, healthMs, () => running)
      const measured = (async () => {
        // (a second to let the attack fill the queues)
        await new Promise((r) => setTimeout(r, 1000))
        const end = performance.now() + duration * 1000
        while (performance.now() < end) {
          let start = performance.now()
          const up = await upload(victim, `notes-${marker}.md`, 'text/markdown',
            `# Harbour notes ${marker}\n\nThe brass lantern hangs in the harbour office.\n`)
          if (up.id && await indexed(victim, up.id) === 'indexed') uploadMs.push(performance.now() - start)
          start = performance.now()
          const found = await post(victim, '/api/knowledge/search', { query: 'brass lantern', limit: 10 })
          if (found.status === 200) searchMs.push(performance.now() - start)
          const id = `victim-${++marker}`
          const arrived = new Promise<void>((resolve) => waiting.set(id, resolve))
          start = performance.now()
          await post(victim, '/api/v2/messages', { channel_id: victimChannel, content: `standup ${id}` })
          await arrived
          waiting.delete(id)
          deliveryMs.push(performance.now() - start)
        }
        running = false
      })()
      await measured
      await Promise.all([...attackers, probe])
      const loop = await (await fetch(`${base}/bench/loop-delay`)).json() as { maxMs: number; p99Ms: number;
        gcMaxMs: number; lockWaits: number; lockWaitMs: number }
      return { phase: name, rounds: deliveryMs.length,
        'upload→indexed p50/p99 ms': `${pct(uploadMs, 50)} / ${pct(uploadMs, 99)}`,
        'search p50/p99 ms': `${pct(searchMs, 50)} / ${pct(searchMs, 99)}`,
        'webhook p50/p99 ms': `${pct(deliveryMs, 50)} / ${pct(deliveryMs, 99)}`,
        'health p50/p99/max ms': `${pct(healthMs, 50)} / ${pct(healthMs, 99)} / ${pct(healthMs, 100)}`,
        'server loop delay p99/max ms': `${loop.p99Ms.toFixed(1)} / ${loop.maxMs.toFixed(1)}`,
        'longest GC ms': loop.gcMaxMs.toFixed(1),
        'lock waits (n, total ms)': `${loop.lockWaits}, ${loop.lockWaitMs.toFixed(0)}`,
        'hostile requests (by status)': `${hostileDone.requests} (${[...hostileDone.statuses]
          .map(([status, n]) => `${status}: ${n}`).join(', ')}${hostileDone.partial ? `; partial searches: ${
          hostileDone.partial}` : ''})` }
    }

    // untimed: the threads a first upload, search and delivery start, and their code compiled
    await phase('warm-up', [], 2)
    const rows = [await phase('alone', [])]
    rows.push(await phase(`hostile uploads (${hostileOrgs} orgs x ${connections})`, ['uploads']))
    rows.push(await phase(`hostile searches (${hostileOrgs} orgs x ${connections})`, ['searches']))
    for (const who of hostile) {
      for (let i = 0; i < hooksPerOrg; i++) {
        const port = i % 2 === 0 ? silentPort : failingPort
        await post(who, '/api/v2/developer/webhooks', { url: `http://127.0.0.1:${port}/hook`,
          events: ['message.created'] })
      }
    }
    rows.push(await phase(`hostile webhooks (${hostileOrgs} orgs x ${hooksPerOrg} hooks)`, ['webhooks']))
    rows.push(await phase('all three at once', ['uploads', 'searches', 'webhooks']))
    table(rows)
    console.log(`hostile webhook attempts answered 500: ${failedAttempts}; sockets held open: ${held.length}`)
  } finally {
    await stopServer(child)
    for (const socket of held) socket.destroy()
    good.close()
    silent.close()
    failing.close()
  }
}
