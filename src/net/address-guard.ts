import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import dns from 'node:dns'
import type { LookupFunction } from 'node:net'
import { ALLOW_HINT, allowList, allowsAddress, allowsHost, type AllowList } from './allow-list.js'

/** A URL the service refuses to contact: not http(s), credentials inside, or a non-public address. */
export class UrlNotAllowedError extends Error {
  override name = 'UrlNotAllowedError'
}

/**
 * Ranges that are not public whatever the library's table says (older tables call some of them unicast). `::/8` is
 * reserved by the IETF as a whole: past the forms `embeddedIpv4` judges first, nothing in it is a public address
 * (ipaddr.js calls `::ffff:0:0:7f00:1` unicast).
 */
const NOT_PUBLIC_V6: Array<[ipaddr.IPv6,
  number]> = (['::/8', '3fff::/20', '5f00::/16', '2001:db8::/32', '64:ff9b:1::/48'] as const)
  .map((cidr) => ipaddr.IPv6.parseCIDR(cidr))

const v4FromParts = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 255, lo >> 8, lo & 255])

/**
 * The IPv4 address an IPv6 address carries, for the forms judged by it (docs/api/webhooks.md#rules): IPv4-compatible
 * `::a.b.c.d` (::/96, but not `::` and `::1`), `::ffff:0:a.b.c.d` (SIIT), NAT64 `64:ff9b::/96`, 6to4 `2002::/16`.
 */
function embeddedIpv4(a: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = a.parts
  const zero = (from: number, to: number) => p.slice(from, to).every((x) => x === 0)
  if (zero(0, 6) && !(p[6] === 0 && p[7] <= 1)) return v4FromParts(p[6], p[7])
  if (zero(0, 4) && p[4] === 0xffff && p[5] === 0) return v4FromParts(p[6], p[7])
  if (p[0] === 0x64 && p[1] === 0xff9b && zero(2, 6)) return v4FromParts(p[6], p[7])
  if (p[0] === 0x2002) return v4FromParts(p[1], p[2])
  return undefined
}

/**
 * A dotted IPv4 tail as two hex groups: ipaddr.js reads `::a.b.c.d` (IPv4-compatible) as `::ffff:a.b.c.d`,
 * and system resolvers print ::/96 addresses in the dotted form.
 */
function hexTail(ip: string): string {
  return ip.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)(%.*)?$/, (_m, a: string, b: string, c: string, d: string, zone = '') =>
    `${((+a << 8) | +b).toString(16)}:${((+c << 8) | +d).toString(16)}${zone}`)
}

/**
 * True for a public unicast address, classified by ipaddr.js's range table: only `unicast` is public
 * (private, loopback, link-local, CGNAT, multicast, reserved, documentation, Teredo… are not). IPv4-mapped
 * `::ffff:a.b.c.d` is never accepted; the forms of `embeddedIpv4` are judged by the address they carry.
 */
export function isPublicAddress(ip: string): boolean {
  const family = isIP(ip)
  if (family === 4) return ipaddr.IPv4.parse(ip).range() === 'unicast'
  if (family !== 6) return false
  let a: ipaddr.IPv6
  try {
    a = ipaddr.IPv6.parse(hexTail(ip))
  } catch {
    return false
  }
  if (a.isIPv4MappedAddress()) return false
  const v4 = embeddedIpv4(a)
  if (v4) return v4.range() === 'unicast'
  if (NOT_PUBLIC_V6.some((cidr) => a.match(cidr))) return false
  return a.range() === 'unicast'
}

export interface GuardOptions {
  allowPrivate: boolean
  /** CAIRN_WEBHOOK_ALLOW's entries: private destinations allowed (allow-list.ts) */
  allow?: readonly string[]
  /** name resolution; tests may pass their own */
  resolve?: (hostname: string) => Promise<string[]>
}

const systemResolve = async (hostname: string) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address)

/** the first address of `addresses` that `host` may not reach: neither public nor allowed by the list */
function refused(list: AllowList, host: string, addresses: readonly string[]): string | undefined {
  const named = !isIP(host) && allowsHost(list, host)
  return addresses.find((a) => !isPublicAddress(a) && !allowsAddress(list, a, named))
}

/**
 * Checks a URL before the service stores or contacts it: http(s) only, no credentials, and every
 * address its host resolves to must be public unicast or allowed by the operator's list (unless private URLs
 * are allowed).
 * The WHATWG parser already turns decimal, octal and hex IPv4 forms into dotted quads.
 */
export async function checkPublicUrl(raw: string, opts: GuardOptions): Promise<URL> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UrlNotAllowedError('Not a valid URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UrlNotAllowedError('Only http and https URLs are allowed')
  }
  if (url.username || url.password) throw new UrlNotAllowedError('URLs must not carry credentials')
  if (!url.hostname) throw new UrlNotAllowedError('The URL has no host')
  if (opts.allowPrivate) return url
  const host = url.hostname.replace(/^\[|\]$/g, '')
  let addresses: string[]
  if (isIP(host)) addresses = [host]
  else {
    try {
      addresses = await (opts.resolve ?? systemResolve)(host)
    } catch {
      throw new UrlNotAllowedError(`The host ${host} cannot be resolved`)
    }
  }
  if (addresses.length === 0) throw new UrlNotAllowedError(`The host ${host} cannot be resolved`)
  const bad = refused(allowList(opts.allow), host, addresses)
  if (bad) {
    throw new UrlNotAllowedError(`${isIP(host) ? `The address ${host} is not public`
      : `The host ${host} resolves to a non-public address (${bad})`}; ${ALLOW_HINT}`)
  }
  return url
}

/**
 * A `lookup` for http(s).request that repeats the address check at connect time, so a name that
 * resolved publicly (or to an allowed address) at creation and otherwise now (DNS rebinding) is refused.
 * `resolve` stands for the system's resolver in tests.
 */
export function guardedLookup(allowPrivate: boolean, allow?: readonly string[],
  resolve: typeof dns.lookup = dns.lookup): LookupFunction {
  const list = allowList(allow)
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, '', 0)
      const found = addresses as unknown as dns.LookupAddress[]
      const bad = allowPrivate ? undefined : refused(list, hostname, found.map((a) => a.address))
      if (bad) {
        return callback(new UrlNotAllowedError(`${hostname} resolves to a non-public address (${bad}); ${ALLOW_HINT}`),
          '', 0)
      }
      if ((options as { all?: boolean }).all) {
        return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, found)
      }
      callback(null, found[0].address, found[0].family)
    })
  }
}
