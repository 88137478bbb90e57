import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'

/**
 * CAIRN_WEBHOOK_ALLOW: private destinations an operator lets webhooks and audio URLs reach (a LAN's n8n or Home
 * Assistant). Entries are comma-separated:
 * - an address or CIDR range (`10.0.0.0/8`, `192.168.1.20`, `fd00::/8`): any host resolving inside it is allowed;
 *   the only way to allow loopback or link-local addresses;
 * - a host name (`homeassistant.lan`) or every name under a domain (`*.lan`): that name may resolve to a private
 *   LAN address (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7), never to loopback, link-local (cloud
 *   metadata), multicast or reserved ones, unless a range above allows them.
 * Addresses are checked where the name is resolved, both when a URL is stored and when a connection is made.
 */
export interface AllowList {
  entries: readonly string[]
  hosts: ReadonlySet<string>
  /** `*.lan` as `.lan` */
  suffixes: readonly string[]
  ranges: ReadonlyArray<[ipaddr.IPv4 | ipaddr.IPv6, number]>
}

/** the LAN ranges an allowed host name may resolve to */
const LAN_RANGES = new Set(['private', 'carrierGradeNat', 'uniqueLocal'])

const LABEL = '[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?'
const HOST_NAME = new RegExp(`^(\\*\\.)?${LABEL}(\\.${LABEL})*$`, 'i')

export const ALLOW_HINT = 'an operator can allow private receivers with CAIRN_WEBHOOK_ALLOW (comma-separated ' +
  'hosts and CIDR ranges, e.g. 10.0.0.0/8,homeassistant.lan)'

const normalHost = (host: string) => host.toLowerCase().replace(/\.$/, '')

/** the range an entry names, or undefined when it names none (a host name, or nothing valid) */
function rangeOf(entry: string): [ipaddr.IPv4 | ipaddr.IPv6, number] | undefined {
  const [address, prefix, ...rest] = entry.replace(/^\[(.*)\](\/\d+)?$/, '$1$2').split('/')
  const family = isIP(address)
  if (family === 0 || rest.length > 0) return undefined
  const bits = family === 4 ? 32 : 128
  if (prefix !== undefined && !(/^\d+$/.test(prefix) && Number(prefix) <= bits)) return undefined
  return [ipaddr.parse(address), prefix === undefined ? bits : Number(prefix)]
}

/** What is wrong with one entry (undefined when it is valid). */
export function allowEntryProblem(entry: string): string | undefined {
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(entry)
  if (url || (/[/:@?#]/.test(entry) && !rangeOf(entry) && !isIP(entry))) {
    return 'is not a host name, address or CIDR range (no scheme, port or path)'
  }
  if (rangeOf(entry)) return undefined
  if (entry.includes('/')) return 'is not a valid CIDR range'
  if (!HOST_NAME.test(normalHost(entry))) return 'is not a valid host name'
  return undefined
}

/** The entries of a CAIRN_WEBHOOK_ALLOW value, with a problem for each invalid one. */
export function parseAllowList(value: string | undefined): { entries: string[]; problems: string[] } {
  const entries = (value ?? '').split(',').map((s) => s.trim()).filter(Boolean)
  const problems: string[] = []
  for (const entry of entries) {
    const problem = allowEntryProblem(entry)
    if (problem) {
      problems.push(`CAIRN_WEBHOOK_ALLOW: ${JSON.stringify(entry)} ${problem}: expected comma-separated host names ` +
        '(homeassistant.lan, *.lan), addresses and CIDR ranges (10.0.0.0/8, fd00::/8)')
    }
  }
  return { entries, problems }
}

const compiled = new Map<string, AllowList>()

/** The allow list of valid entries (invalid ones are refused at start, by the configuration); cached. */
export function allowList(entries: readonly string[] = []): AllowList {
  const key = entries.join(',')
  let list = compiled.get(key)
  if (list) return list
  const hosts = new Set<string>()
  const suffixes: string[] = []
  const ranges: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = []
  for (const entry of entries) {
    if (allowEntryProblem(entry)) continue
    const range = rangeOf(entry)
    if (range) ranges.push(range)
    else if (entry.startsWith('*.')) suffixes.push(normalHost(entry.slice(1)))
    else hosts.add(normalHost(entry))
  }
  list = { entries: [...entries], hosts, suffixes, ranges }
  compiled.set(key, list)
  return list
}

/** whether the list names this host (by name; addresses are judged by allowsAddress) */
export function allowsHost(list: AllowList, hostname: string): boolean {
  const host = normalHost(hostname)
  return list.hosts.has(host) || list.suffixes.some((s) => host.endsWith(s))
}

/**
 * Whether the list lets a connection reach this (non-public) address: inside one of its ranges, or a LAN address
 * of a host the list names (`named`). An IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
 */
export function allowsAddress(list: AllowList, ip: string, named: boolean): boolean {
  if (list.ranges.length === 0 && !named) return false
  let a: ipaddr.IPv4 | ipaddr.IPv6
  try {
    a = ipaddr.process(ip.replace(/%.*$/, ''))
  } catch {
    return false
  }
  if (list.ranges.some(([base, bits]) => base.kind() === a.kind() && a.match(base, bits))) return true
  return named && LAN_RANGES.has(a.range())
}
