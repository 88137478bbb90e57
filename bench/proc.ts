import fs from 'node:fs'

/**
 * CPU time (user + system, µs, every thread) a process has used, from /proc (Linux; undefined elsewhere): the http
 * bench's CPU per request, steadier than requests/s when other work shares the machine's cores, and the bench
 * server's wait for its background work to settle.
 */
export function cpuMicros(pid: number | undefined): number | undefined {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) * (1e6 / 100) // clock ticks of 1/100 s
  } catch {
    return undefined
  }
}
