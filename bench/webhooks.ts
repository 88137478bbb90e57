// `npm run bench -- webhooks`: what webhook fan-out costs the request that causes it, and how fast it delivers.
// Each round starts a fresh server and measures, neighbours in time:
//  - `POST /api/v2/messages` at a steady 50 msg/s with no webhook and with 10 webhooks subscribed (each message
//    fans out to 10 deliveries), in BENCH_WEBHOOK_SEGMENTS (15) alternate segments of each (the webhooks switched
//    off and on between two, once their deliveries have arrived), so that both meet the same moments of the
//    machine's load: p50/p99 of the pooled latencies and their ratio, with the server's CPU time per message
//    (the whole process, and its main thread: the request thread);
//  - a burst of BENCH_WEBHOOK_BURST messages (x 10 webhooks; 0: no burst) posted as fast as 10 connections allow,
//    quiet and while the 50 msg/s stream runs: deliveries per second, from the first post to the last delivery
//    received.
// The steady stream sends one message every 20 ms and times each from the moment it was due (a late send counts
// against the server, never for it). The receiver runs in a process of its own. Both conditions follow a 2 s
// warm-up of their own, and report the server's event-loop delay (the worst segment's p99, and the max).
// BENCH_WEBHOOK_SECONDS (default 60: 3,000 messages per condition; with 1,000 the p99 ratio of one round moved
// by ±0.15 between rounds of the same code) per condition, BENCH_WEBHOOK_ROUNDS (default 3).
// BENCH_WEBHOOK_CLIENT=autocannon paces the stream with autocannon instead (its
// overallRate: each connection sends its 10 messages of a second back to back, and latencies are recorded with
// its coordinated-omission correction for an expected interval of 1 ms), for comparison.
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import { spawn } from 'node:child_process'
import autocannon from 'autocannon'
import { serverEntry, startServer, stopServer, table } from './lib.js'

const HOOKS = 10
const RATE = 50

interface Steady {
  p50: number; p99: number; count: number; non2xx: number; cpuMs: number; mainCpuMs: number
  /** the server's event-loop delay during the run (ms): its own stalls, and the machine's load too */
  loopP99: number; loopMax: number
  /** p99 of how late the client sent a message (ms): part of every latency, the client's and not the server's */
  lateP99: number
  /** p99 of the messages' time inside the server, from their parsed headers to the end of the response (ms) */
  serverP99: number
  /** the main thread's GC pauses per message (ms), and what the slowest 1 % inside the server met (`slowest`) */
  gcPerMsg: number; slowest: string
  /**
   * per thread of the server, per message (ms): CPU, and time runnable but waiting for a core (the request thread's
   * is what other threads and processes cost its requests)
   */
  threads: ThreadCost[]
}

/** the fields of a /proc stat file after the command name (the state is [0], utime [11], stime [12], nice [16]) */
const statFields = (file: string) => fs.readFileSync(file, 'utf8').split(') ')[1].split(' ')
/** user + system CPU time (ms) of stat fields: clock ticks of 1/100 s */
const statCpuMs = (fields: string[]) => (Number(fields[11]) + Number(fields[12])) * 10

/** CPU time (user + system, ms) of a process, or of one of its threads, from /proc (Linux; NaN elsewhere). */
function cpuMs(pid: number, tid = pid): number {
  try { return statCpuMs(statFields(`/proc/${pid}/task/${tid}/stat`)) } catch { return NaN }
}
function processCpuMs(pid: number): number {
  try { return statCpuMs(statFields(`/proc/${pid}/stat`)) } catch { return NaN }
}

/** what a thread spent (ms): CPU time, and time runnable but waiting for a core (its run delay) */
interface ThreadCost { tid: number; cpu: number; waited: number; nice: number }
/** every thread of a process, as spent so far */
function threadTimes(pid: number): Map<number, ThreadCost> {
  const out = new Map<number, ThreadCost>()
  let tids: string[] = []
  try { tids = fs.readdirSync(`/proc/${pid}/task`) } catch { return out }
  for (const tid of tids) {
    try {
      const fields = statFields(`/proc/${pid}/task/${tid}/stat`)
      // schedstat: ns on a core, ns runnable and waiting for one, timeslices
      const waited = Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[1]) / 1e6
      out.set(Number(tid), { tid: Number(tid), cpu: statCpuMs(fields), waited, nice: Number(fields[16]) })
    } catch { /* the thread ended */ }
  }
  return out
}
/** what each thread spent between two snapshots */
function threadDeltas(before: Map<number, ThreadCost>, after: Map<number, ThreadCost>): ThreadCost[] {
  return [...after.values()].map((a) => {
    const b = before.get(a.tid)
    return { ...a, cpu: a.cpu - (b?.cpu ?? 0), waited: a.waited - (b?.waited ?? 0) }
  })
}
/** the deltas of several runs of one server, summed by thread, per message: the request thread (tid = pid) first,
 * then by CPU */
function threadSums(runs: ThreadCost[][], count: number, pid: number): ThreadCost[] {
  const by = new Map<number, ThreadCost>()
  for (const t of runs.flat()) {
    const s = by.get(t.tid) ?? { ...t, cpu: 0, waited: 0 }
    s.cpu += t.cpu / count
    s.waited += t.waited / count
    by.set(t.tid, s)
  }
  return [...by.values()].sort((x, y) => Number(y.tid === pid) - Number(x.tid === pid) || y.cpu - x.cpu)
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]

/**
 * A 95 % interval of the pooled p99 ratio: the pairs of neighbouring segments (one without webhooks, the next
 * with) drawn with replacement, 2,000 times (a fixed seed). Segments, not messages, are drawn: the machine's slow
 * moments last seconds, so messages near each other are not independent, and a pair shares its moment.
 */
function pairedInterval(pairs: Array<{ bare: number[]; hooked: number[] }>,
  stat: (xs: number[]) => number): [number, number] {
  let seed = 0x9e3779b9
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const ratios: number[] = []
  for (let i = 0; i < 2000; i++) {
    const drawn = pairs.map(() => pairs[Math.floor(random() * pairs.length)])
    ratios.push(stat(drawn.flatMap((x) => x.hooked)) / stat(drawn.flatMap((x) => x.bare)))
  }
  ratios.sort((a, b) => a - b)
  return [percentile(ratios, 2.5), percentile(ratios, 97.5)]
}

/**
 * POSTs `body` at exactly `rate` per second for `seconds`: message i is due at start + i / rate and timed from
 * then until its response ends. Latencies in ms.
 */
async function paced(url: string, headers: Record<string, string>, body: string, seconds: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 })
  const interval = 1000 / RATE
  const total = Math.round(RATE * seconds)
  const latencies: number[] = []
  /** how late the client sent each message (its own timer's delay, counted in the latency) */
  const late: number[] = []
  let non2xx = 0
  const start = performance.now() + 5
  const sends: Array<Promise<void>> = []
  const send = (due: number) => new Promise<void>((resolve) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers,
      'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      res.resume()
      res.on('end', () => {
        latencies.push(performance.now() - due)
        if (res.statusCode! < 200 || res.statusCode! >= 300) non2xx++
        resolve()
      })
    })
    req.on('error', () => { non2xx++; resolve() })
    req.end(body)
  })
  for (let i = 0; i < total; i++) {
    const due = start + i * interval
    const wait = due - performance.now()
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
    late.push(performance.now() - due)
    sends.push(send(due))
  }
  await Promise.all(sends)
  agent.destroy()
  return { latencies, late, non2xx }
}

export async function run() {
  const seconds = Number(process.env.BENCH_WEBHOOK_SECONDS ?? 60)
  const rounds = Number(process.env.BENCH_WEBHOOK_ROUNDS ?? 3)
  const burst = Number(process.env.BENCH_WEBHOOK_BURST ?? 300)
  const useAutocannon = process.env.BENCH_WEBHOOK_CLIENT === 'autocannon'
  // autocannon reports percentiles, not latencies to pool: one segment each
  const segments = useAutocannon ? 1 : Number(process.env.BENCH_WEBHOOK_SEGMENTS ?? 15)

  const receiver = spawn(process.execPath, serverEntry('webhook-receiver'),
    { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
  const port = await new Promise<number>((resolve, reject) => {
    let out = ''
    receiver.stdout!.on('data', (c: Buffer) => {
      out += c.toString()
      const nl = out.indexOf('\n')
      if (nl >= 0) resolve((JSON.parse(out.slice(0, nl)) as { port: number }).port)
    })
    receiver.on('exit', (code) => reject(new Error(`webhook receiver exited with ${code}`)))
  })
  // The receiver stands for machines elsewhere, yet its 500 requests/s take the server's cores in the runs with
  // webhooks only: the ratio is an upper bound. BENCH_WEBHOOK_RECEIVER_NICE=n lowers its priority by n steps; not by
  // default: at 19 it starved whenever the machine had other load (bursts of 155 deliveries/s at load average 8).
  const receiverNice = Number(process.env.BENCH_WEBHOOK_RECEIVER_NICE ?? 0)
  if (receiverNice > 0) os.setPriority(receiver.pid!, Math.min(19, os.getPriority(receiver.pid!) + receiverNice))
  const hookUrl = `http://127.0.0.1:${port}/`
  const ask = <T>(message: object, answer: (m: T) => boolean) => new Promise<T>((resolve) => {
    const on = (m: T) => { if (answer(m)) { receiver.off('message', on); resolve(m) } }
    receiver.on('message', on)
    receiver.send(message)
  })
  const delivered = async () => (await ask<{ delivered?: number }>({ count: true },
    (m) => m.delivered !== undefined)).delivered!
  /**
   * the receiver's count once it has reached `atLeast` (every delivery of the messages sent is in; at most 60 s)
   * and stopped growing for 100 ms
   */
  const settled = async (atLeast = 0) => {
    const deadline = performance.now() + 60_000
    for (let last = -1; ;) {
      const now = await delivered()
      if (now === last && (now >= atLeast || performance.now() > deadline)) return now
      last = now
      await new Promise((r) => setTimeout(r, 100))
    }
  }

  const rows: Array<Record<string, string | number>> = []
  const ratios: number[] = []
  const p50Ratios: number[] = []
  const serverRatios: number[] = []
  const gcLines: string[] = []
  /** each segment's latencies with its neighbour of the other condition, over all rounds */
  const pairs: Array<{ bare: number[]; hooked: number[] }> = []
  const waited: { bare: number[]; hooked: number[] } = { bare: [], hooked: [] }
  const threadLines: string[] = []
  const rates: { quiet: number[]; loaded: number[] } = { quiet: [], loaded: [] }
  const cpu: { bare: number[]; hooked: number[]; bareMain: number[]; hookedMain: number[] } =
    { bare: [], hooked: [], bareMain: [], hookedMain: [] }
  for (let round = 1; round <= rounds; round++) {
    const { info, child } = await startServer<{ address: string; token: string; workspaceId: string }>('cairn')
    const pid = child.pid!
    const headers = { authorization: `Bearer ${info.token}`, 'content-type': 'application/json',
      'x-workspace-id': info.workspaceId }
    const post = async (url: string,
      body: object) => (await fetch(info.address + url,
      { method: 'POST', headers, body: JSON.stringify(body) })).json() as Promise<{ data: { id: string } }>
    const channel = (await post('/api/v2/channels', { name: 'bench', type: 'public' })).data.id
    const messageUrl = `${info.address}/api/v2/messages`
    const messageBody = (content: string) => JSON.stringify({ channel_id: channel, content })
    const messages = (opts: Partial<autocannon.Options>, content = 'steady message') => autocannon({
      url: messageUrl, method: 'POST', headers, body: messageBody(content), ...opts
    })
    const loopDelay = async () => (await fetch(`${info.address}/bench/loop-delay`)).json() as
      Promise<{ maxMs: number; p99Ms: number }>
    /** one steady run, or the sum of several: latencies, CPU and loop delays of each */
    interface Part { latencies: number[]; late: number[]; p50?: number; p99?: number; non2xx: number;
      cpuMs: number; mainCpuMs: number; loopP99: number; loopMax: number
      /** each message's time inside the server (ms), and the main thread's GC pauses within it (ms) */
      inServer: number[]
      gcIn: number[]
      /** with BENCH_SCHEDSTAT=1: each message's time on a core and waiting for one (ms) */
      sched: Array<[number, number]>
      /** each message's waits for another thread's write lock (ms) */
      lockWaits: number[]
      /** the main thread's GC pauses in all (ms) */
      gcMs: number
      threads: ThreadCost[] }
    const serverTimes = async () => {
      const t = (await (await fetch(`${info.address}/bench/request-times`)).json()) as
        { ms: number[]; starts: number[]; gc: Array<[number, number]>; sched: Array<[number, number]>
          lockWaits: number[] }
      const gcIn = t.ms.map((ms, i) => t.gc.reduce((sum, [at, d]) =>
        sum + Math.max(0, Math.min(at + d, t.starts[i] + ms) - Math.max(at, t.starts[i])), 0))
      return { inServer: t.ms, gcIn, gcMs: t.gc.reduce((sum, [, d]) => sum + d, 0), sched: t.sched,
        lockWaits: t.lockWaits }
    }
    const stream = async (duration: number): Promise<Part> => {
      await loopDelay()
      await serverTimes()
      const cpuBefore = processCpuMs(pid)
      const mainBefore = cpuMs(pid)
      const threadsBefore = threadTimes(pid)
      let r: Pick<Part, 'latencies' | 'late' | 'p50' | 'p99' | 'non2xx'>
      if (useAutocannon) {
        const a = await messages({ connections: 5, overallRate: RATE, duration })
        r = { latencies: new Array<number>(a.requests.total).fill(NaN), late: [], p50: a.latency.p50,
          p99: a.latency.p99, non2xx: a.non2xx }
      } else r = await paced(messageUrl, headers, messageBody('steady message'), duration)
      const loop = await loopDelay()
      const times = await serverTimes()
      return { ...r, cpuMs: processCpuMs(pid) - cpuBefore, mainCpuMs: cpuMs(pid) - mainBefore,
        loopP99: loop.p99Ms, loopMax: loop.maxMs, ...times,
        threads: threadDeltas(threadsBefore, threadTimes(pid)) }
    }
    const summed = (parts: Part[]): Steady => {
      const sorted = parts.flatMap((x) => x.latencies).sort((a, b) => a - b)
      const count = sorted.length
      const sum = (f: (x: Part) => number) => parts.reduce((a, x) => a + f(x), 0)
      return { count, non2xx: sum((x) => x.non2xx),
        p50: parts.length === 1 && parts[0].p50 !== undefined ? parts[0].p50 : percentile(sorted, 50),
        p99: parts.length === 1 && parts[0].p99 !== undefined ? parts[0].p99 : percentile(sorted, 99),
        cpuMs: sum((x) => x.cpuMs) / count, mainCpuMs: sum((x) => x.mainCpuMs) / count,
        loopP99: Math.max(...parts.map((x) => x.loopP99)), loopMax: Math.max(...parts.map((x) => x.loopMax)),
        lateP99: percentile(parts.flatMap((x) => x.late).sort((a, b) => a - b), 99) ?? NaN,
        serverP99: percentile(parts.flatMap((x) => x.inServer).sort((a, b) => a - b), 99) ?? NaN,
        gcPerMsg: sum((x) => x.gcMs) / count, slowest: slowest(parts),
        threads: threadSums(parts.map((x) => x.threads), count, pid) }
    }
    /**
     * of the slowest 1 % inside the server: how many met a GC pause of the main thread (its mean, ms) and how many
     * waited for a write lock (beside the waits of all messages); with BENCH_SCHEDSTAT=1, their mean time inside
     * the server, on a core, waiting for one, and blocked (the rest)
     */
    const slowest = (parts: Part[]) => {
      const all = parts.flatMap((x) => x.inServer.map((ms, i) => ({ ms, gc: x.gcIn[i], sched: x.sched[i],
        lock: x.lockWaits[i] })))
        .sort((a, b) => b.ms - a.ms).slice(0, Math.max(1, Math.round(parts.reduce((a, x) => a + x.inServer.length,
          0) / 100)))
      const met = all.filter((x) => x.gc > 0)
      const mean = (f: (x: typeof all[number]) => number) => (all.reduce((a, x) => a + f(x), 0) / all.length)
        .toFixed(2)
      const locked = all.filter((x) => x.lock > 0)
      const waits = parts.flatMap((x) => x.lockWaits).filter((ms) => ms > 0)
      return `${met.length} of ${all.length}` +
        (met.length ? ` (${(met.reduce((a, x) => a + x.gc, 0) / met.length).toFixed(2)} ms)` : '') +
        `; waited for a write lock: ${locked.length} of them (${mean((x) => x.lock)} ms a message over all of them), ${
          waits.length} messages of all (${(waits.reduce((a, ms) => a + ms, 0) / (waits.length || 1)).toFixed(2)
        } ms on average)` +
        (all[0]?.sched ? `; their mean ${mean((x) => x.ms)} ms: on a core ${mean((x) => x.sched[0])}, waiting ${
          mean((x) => x.sched[1])}, blocked ${mean((x) => x.ms - x.sched[0] - x.sched[1])}` : '')
    }
    const steady = async (duration: number) => summed([await stream(duration)])

    await steady(2) // warm-up
    const hooks: string[] = []
    for (let i = 0; i < HOOKS; i++) hooks.push((await post('/api/v2/developer/webhooks',
      { url: hookUrl, events: ['message.created'] })).data.id)
    const subscribe = async (active: boolean) => {
      for (const id of hooks) await fetch(`${info.address}/api/v2/developer/webhooks/${id}`,
        { method: 'PUT', headers, body: JSON.stringify({ active }) })
    }
    // the same warm-up with webhooks: the delivery thread starts, and the fan-out's code is compiled, before the
    // measured runs (a cold first round had a p99 three times its neighbours')
    const start = await delivered()
    const warm = await steady(2)
    await settled(start + warm.count * HOOKS)
    // Without and with webhooks in alternate segments (their webhooks switched off and on between two, once every
    // delivery has arrived): both conditions meet the same moments of the machine's load
    const bareParts: Part[] = []
    const hookedParts: Part[] = []
    let deliveredInRuns = 0
    for (let i = 0; i < segments; i++) {
      await subscribe(false)
      bareParts.push(await stream(seconds / segments))
      await subscribe(true)
      const before = await delivered()
      const part = await stream(seconds / segments)
      hookedParts.push(part)
      deliveredInRuns += (await settled(before + part.latencies.length * HOOKS)) - before
    }
    const bare = summed(bareParts)
    const hooked = summed(hookedParts)
    const ratio = hooked.p99 / bare.p99
    bareParts.forEach((x, i) => pairs.push({ bare: x.latencies, hooked: hookedParts[i].latencies }))
    ratios.push(ratio)
    p50Ratios.push(hooked.p50 / bare.p50)
    serverRatios.push(hooked.serverP99 / bare.serverP99)
    cpu.bare.push(bare.cpuMs)
    cpu.hooked.push(hooked.cpuMs)
    cpu.bareMain.push(bare.mainCpuMs)
    cpu.hookedMain.push(hooked.mainCpuMs)
    waited.bare.push(bare.threads[0]?.waited ?? NaN)
    waited.hooked.push(hooked.threads[0]?.waited ?? NaN)
    // the busiest threads: µs of CPU and of waiting for a core per message (the first is the request thread)
    const busiest = (x: Steady) => x.threads.filter((t) => t.cpu > 0.005).slice(0, 6)
      .map((t) => `${Math.round(t.cpu * 1000)}/${Math.round(t.waited * 1000)}${t.nice ? ` (nice ${t.nice})` : ''}`)
      .join(', ')
    threadLines.push(`round ${round}: no webhook ${busiest(bare)}; ${HOOKS} webhooks ${busiest(hooked)}`)
    gcLines.push(`round ${round}: no webhook ${(bare.gcPerMsg * 1000).toFixed(0)} µs, slowest ${bare.slowest}; ` +
      `${HOOKS} webhooks ${(hooked.gcPerMsg * 1000).toFixed(0)} µs, slowest ${hooked.slowest}`)
    const ms = (x: number) => Number(x.toFixed(2))
    rows.push({ round, case: 'no webhook', messages: bare.count, 'p50 ms': ms(bare.p50), 'p99 ms': ms(bare.p99),
      non2xx: bare.non2xx, 'CPU ms/msg': ms(bare.cpuMs), 'main thread': ms(bare.mainCpuMs),
      'main waited': ms(bare.threads[0]?.waited ?? NaN), 'in server p99': ms(bare.serverP99),
      'loop p99/max ms': `${ms(bare.loopP99)}/${ms(bare.loopMax)}`, 'send late p99': ms(bare.lateP99) })
    rows.push({ round, case: `${HOOKS} webhooks`, messages: hooked.count, 'p50 ms': ms(hooked.p50),
      'p99 ms': ms(hooked.p99), non2xx: hooked.non2xx, 'CPU ms/msg': ms(hooked.cpuMs),
      'main thread': ms(hooked.mainCpuMs), 'main waited': ms(hooked.threads[0]?.waited ?? NaN),
      'in server p99': ms(hooked.serverP99),
      'loop p99/max ms': `${ms(hooked.loopP99)}/${ms(hooked.loopMax)}`,
      'send late p99': ms(hooked.lateP99),
      'p99 ratio': ratio.toFixed(2), deliveries: deliveredInRuns })

    // bursts: quiet, then under the steady stream (BENCH_WEBHOOK_BURST=0: none)
    for (const loaded of burst > 0 ? [false, true] : []) {
      const background = loaded ? steady(seconds) : undefined
      if (loaded) await new Promise((r) => setTimeout(r, 1000))
      const allDelivered = ask<{ burstDone?: true }>({ burst: burst * HOOKS }, (m) => m.burstDone === true)
      const started = performance.now()
      await messages({ connections: 10, amount: burst }, 'burst')
      await allDelivered
      const rate = (burst * HOOKS) / ((performance.now() - started) / 1000)
      rates[loaded ? 'loaded' : 'quiet'].push(rate)
      rows.push({ round, case: `burst ${burst} x ${HOOKS}${loaded ? ` + ${RATE} msg/s` : ''}`,
        'deliveries/s': Math.round(rate) })
      await background
    }
    await stopServer(child)
  }
  receiver.disconnect()
  table(rows)
  const summary = (xs: number[], digits: number) => {
    const s = [...xs].sort((a, b) => a - b)
    if (s.length === 0) return 'not measured'
    return `min ${s[0].toFixed(digits)}, median ${s[Math.floor(s.length / 2)].toFixed(digits)}, ` +
      `max ${s[s.length - 1].toFixed(digits)}`
  }
  console.log(`${useAutocannon ? 'autocannon overallRate' : 'paced'} stream of ${RATE} msg/s, ` +
    `${seconds} s per condition in ${segments} segment(s)`)
  console.log(`p99 with ${HOOKS} webhooks / without (target ≤ 1.1): ${summary(ratios, 2)}`)
  // one p99 of all the rounds' messages per condition (3 × 3,000 by default): the 90th worst of 9,000 rather than
  // the 30th of 3,000, so one round's few slow moments weigh less
  const p99Of = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 99)
  if (!useAutocannon && rounds > 1) {
    const pooled = { bare: pairs.flatMap((x) => x.bare), hooked: pairs.flatMap((x) => x.hooked) }
    // BENCH_WEBHOOK_SAVE=file: the segments' latencies as JSON, to pool several runs (an A/B of two builds)
    if (process.env.BENCH_WEBHOOK_SAVE) fs.writeFileSync(process.env.BENCH_WEBHOOK_SAVE, JSON.stringify({ pairs }))
    const [low, high] = pairedInterval(pairs, p99Of)
    console.log(`p99 of all rounds' messages: ${p99Of(pooled.hooked).toFixed(2)} ms with ${HOOKS} webhooks, ${
      p99Of(pooled.bare).toFixed(2)} ms without: ratio ${(p99Of(pooled.hooked) / p99Of(pooled.bare)).toFixed(2)} (${
      pooled.hooked.length} and ${pooled.bare.length} messages; 95 % interval ${low.toFixed(2)}–${high.toFixed(2)}, ${
      pairs.length} pairs of neighbouring segments resampled)`)
  }
  // on a loaded machine the p99s are the machine's (see `send late p99`); the median moves far less with it
  console.log(`p50 with ${HOOKS} webhooks / without: ${summary(p50Ratios, 2)}`)
  console.log(`p99 of the time inside the server with ${HOOKS} webhooks / without: ${summary(serverRatios, 2)}`)
  console.log(`server CPU ms per message without webhooks: ${summary(cpu.bare, 2)} (main thread ${
    summary(cpu.bareMain, 2)}); with: ${summary(cpu.hooked, 2)} (main thread ${summary(cpu.hookedMain, 2)})`)
  console.log(`request thread runnable but waiting for a core, ms per message: without webhooks ${
    summary(waited.bare, 3)}; with: ${summary(waited.hooked, 3)}`)
  console.log('server threads, µs per message of CPU / of waiting for a core (request thread first):')
  for (const line of threadLines) console.log(`  ${line}`)
  console.log('main-thread GC pauses per message; of the slowest 1 % inside the server, those with a pause (mean):')
  for (const line of gcLines) console.log(`  ${line}`)
  console.log(`deliveries/s in a burst, quiet: ${summary(rates.quiet, 0)}; ` +
    `under ${RATE} msg/s (target ≥ 1,000): ${summary(rates.loaded, 0)}`)
  console.log(`load average at the end ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`)
}
