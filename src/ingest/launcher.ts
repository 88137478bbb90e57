import { spawn, type ChildProcess } from 'node:child_process'
import { EventEmitter, once } from 'node:events'
import { BACKGROUND_NICENESS, lowerPriority } from '../thread-priority.js'

// Starting a process from the service blocks its event loop until the new process has replaced itself: fork copies
// the page tables of the service's few hundred megabytes, and the copy is torn down again at exec (15 ms on a quiet
// 2-core machine at 260 MB resident, 20-50 ms on a loaded one, where every request waits meanwhile). The extraction
// processes are therefore started by a small launcher process of their own (~40 MB: 4 ms a start), itself started
// once, at the first extraction. It relays their messages, keeps the tail of their stderr, and limits their address
// space with prlimit once they are loaded. It runs at the background priority (src/thread-priority.ts): the
// processes it starts inherit it.
const STDERR_TAIL = 4096
const LAUNCHER = `import { spawn, execFile } from 'node:child_process'
const children = new Map()
let prlimitMissing = false
const tell = (m) => { if (process.connected) process.send(m) }
process.on('message', (m) => {
  if (m.op === 'send') return void children.get(m.id)?.send(m.message, () => {})
  if (m.op === 'kill') return void children.get(m.id)?.kill(m.signal)
  if (m.op !== 'start') return
  const child = spawn(process.execPath, m.args, { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] })
  children.set(m.id, child)
  let tail = ''
  let ended = false
  const end = (code, signal) => {
    if (ended) return
    ended = true
    children.delete(m.id)
    tell({ id: m.id, exit: [code, signal], stderr: tail })
  }
  child.stderr.setEncoding('utf8').on('data', (s) => { tail = (tail + s).slice(-${STDERR_TAIL}) })
  child.on('error', (err) => { tail += String(err.message); end(null, null) })
  child.on('exit', end)
  let limited = false
  child.on('message', (message) => {
    if (limited || typeof message?.ready !== 'number') return tell({ id: m.id, message })
    limited = true
    // its address space may grow by m.extraBytes past what it holds once loaded
    const bytes = message.ready * 1024 + m.extraBytes
    if (prlimitMissing) return tell({ id: m.id, message })
    execFile('prlimit', ['--pid', String(child.pid), '--as=' + bytes + ':' + bytes], (err) => {
      if (err?.code === 'ENOENT') {
        prlimitMissing = true
        tell({ id: m.id, noPrlimit: true })
      } else if (err) {
        tail += 'prlimit failed: ' + err.message
        return void child.kill('SIGKILL')
      }
      tell({ id: m.id, message })
    })
  })
  tell({ id: m.id, pid: child.pid })
})
// the service is gone, or stops it: so are the processes started for it
const stop = () => {
  for (const child of children.values()) child.kill('SIGKILL')
  process.exit(0)
}
process.on('disconnect', stop)
process.on('SIGTERM', stop)
process.send({ launcher: 'ready' })`

/** A process started by the launcher: what the extraction pool uses of a ChildProcess. */
export class LaunchedProcess extends EventEmitter {
  pid: number | undefined
  exitCode: number | null = null
  signalCode: NodeJS.Signals | null = null
  connected = true
  /** the last few kilobytes it wrote to stderr, complete once it has exited */
  stderrTail = ''
  private busy = false

  constructor(readonly id: number, private readonly launcher: Launcher) {
    super()
  }

  send(message: unknown) { this.launcher.tell({ op: 'send', id: this.id, message }) }
  kill(signal: NodeJS.Signals = 'SIGTERM') {
    if (this.connected) this.launcher.tell({ op: 'kill', id: this.id, signal })
  }

  /** a process at work keeps the service's event loop alive; one waiting for work does not */
  ref() { this.setBusy(true) }
  unref() { this.setBusy(false) }
  private setBusy(busy: boolean) {
    if (busy === this.busy) return
    this.busy = busy
    this.launcher.busy(busy ? 1 : -1)
  }

  /** @internal the launcher's report of this process */
  report(m: { pid?: number; message?: unknown; exit?: [number | null, NodeJS.Signals | null]; stderr?: string }) {
    if (m.pid !== undefined) this.pid = m.pid
    if (m.message !== undefined) this.emit('message', m.message)
    if (m.exit) {
      this.connected = false
      this.stderrTail = m.stderr ?? this.stderrTail
      ;[this.exitCode, this.signalCode] = m.exit
      this.unref()
      this.emit('exit', this.exitCode, this.signalCode)
    }
  }
}

type Report = { launcher?: string; id?: number; pid?: number; message?: unknown; noPrlimit?: boolean;
  exit?: [number | null, NodeJS.Signals | null]; stderr?: string }

/** Starts processes through one launcher process, itself started at the first call. */
export class Launcher {
  private process: ChildProcess | undefined
  private ready: Promise<void> | undefined
  private nextId = 1
  private busyCount = 0
  private readonly processes = new Map<number, LaunchedProcess>()

  /** `onNoPrlimit`: prlimit is not installed (said once) */
  constructor(private readonly onNoPrlimit: () => void) {}

  /** A Node.js process running `args`, its address space limited to `extraBytes` past its size once it sends `ready` */
  async start(args: string[], extraBytes: number): Promise<LaunchedProcess> {
    await (this.ready ??= this.launch())
    const child = new LaunchedProcess(this.nextId++, this)
    this.processes.set(child.id, child)
    // held while it starts
    child.ref()
    this.tell({ op: 'start', id: child.id, args, extraBytes })
    return child
  }

  private async launch() {
    // (NODE_OPTIONS is the service's own: its preloads are not the launched processes'); few malloc arenas, since
    // each reserves address space
    const launcher = this.process = spawn(process.execPath, ['--input-type=module', '--eval', LAUNCHER],
      { stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        env: { ...process.env, NODE_OPTIONS: '', MALLOC_ARENA_MAX: '2' } })
    if (launcher.pid) lowerPriority(launcher.pid, BACKGROUND_NICENESS)
    launcher.on('error', () => {})
    launcher.on('message', (m: Report) => {
      if (m.noPrlimit) this.onNoPrlimit()
      if (m.id !== undefined) {
        const child = this.processes.get(m.id)
        if (m.exit) this.processes.delete(m.id)
        child?.report(m)
      }
    })
    launcher.once('exit', () => {
      // its processes went with it (it kills them as it goes; a SIGKILL of the launcher leaves them to notice
      // their channel closed, and they exit)
      if (this.process === launcher) { this.process = undefined; this.ready = undefined }
      for (const child of [...this.processes.values()]) {
        this.processes.delete(child.id)
        child.report({ exit: [null, 'SIGKILL'] })
      }
    })
    await new Promise<void>((resolve, reject) => {
      const onMessage = (m: Report) => { if (m.launcher === 'ready') { settle(); resolve() } }
      const onExit = () => { settle(); reject(new Error('The text extraction launcher did not start')) }
      const settle = () => launcher.off('message', onMessage).off('exit', onExit)
      launcher.on('message', onMessage).on('exit', onExit)
    })
    this.refs()
  }

  /** @internal */
  tell(m: object) {
    if (this.process?.connected) this.process.send(m, () => {})
  }

  /** @internal a launched process started or finished work */
  busy(by: number) {
    this.busyCount += by
    this.refs()
  }

  private refs() {
    const p = this.process
    if (!p) return
    if (this.busyCount > 0) { p.ref(); p.channel?.ref() } else { p.unref(); p.channel?.unref() }
  }

  /** Stops the launcher and every process it started. */
  async close() {
    const p = this.process
    this.ready = undefined
    if (!p || p.exitCode !== null || p.signalCode !== null) return
    const gone = once(p, 'exit')
    // held until it is gone: its exit would not be seen otherwise
    p.ref()
    p.kill('SIGTERM')
    await gone
  }
}
