import { BlockList, isIP } from 'node:net'
import dns from 'node:dns'
import type { LookupFunction } from 'node:net'

/** A URL the service refuses to contact: not http(s), credentials inside, or a non-public address. */
export class UrlNotAllowedError extends Error {
  override name = 'UrlNotAllowedError'
}

const blocked = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4]
] as const) blocked.addSubnet(net, prefix, 'ipv4')
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32],
  ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8]
] as const) blocked.addSubnet(net, prefix, 'ipv6')

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or IPv4-compatible IPv6 address, if any. */
function embeddedIpv4(ip: string): string | undefined {
  const m = /^::(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  if (m) return m[1]
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip)
  if (hex) {
    const hi = parseInt(hex[1], 16)
    const lo = parseInt(hex[2], 16)
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
  }
  return undefined
}

/** True for a public unicast address; private, loopback, link-local, CGNAT, multicast, reserved are not. */
export function isPublicAddress(ip: string): boolean {
  const family = isIP(ip)
  if (family === 4) return !blocked.check(ip, 'ipv4')
  if (family === 6) {
    const v4 = embeddedIpv4(ip)
    if (v4) return false // IPv4-mapped and -compatible forms are never accepted: they only serve to disguise
    return !blocked.check(ip, 'ipv6')
  }
  return false
}

export interface GuardOptions {
  allowPrivate: boolean
  /** name resolution; tests may pass their own */
  resolve?: (hostname: string) => Promise<string[]>
}

const systemResolve = async (hostname: string) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address)

/**
 * Checks a URL before the service stores or contacts it: http(s) only, no credentials, and every
 * address its host resolves to must be public unicast (unless private URLs are allowed).
 * The WHATWG parser already turns decimal, octal and hex IPv4 forms into dotted quads.
 */
export async function checkPublicUrl(raw: string, opts: GuardOptions): Promise<URL> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UrlNotAllowedError('Not a valid URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UrlNotAllowedError('Only http and https URLs are allowed')
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
  const bad = addresses.find((a) => !isPublicAddress(a))
  if (bad) throw new UrlNotAllowedError(`The host ${host} resolves to a non-public address (${bad})`)
  return url
}

/**
 * A `lookup` for http(s).request that repeats the address check at connect time, so a name that
 * resolved publicly at creation and privately now (DNS rebinding) is refused.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, '', 0)
      const list = addresses as unknown as dns.LookupAddress[]
      const bad = allowPrivate ? undefined : list.find((a) => !isPublicAddress(a.address))
      if (bad) return callback(new UrlNotAllowedError(`${hostname} resolves to a non-public address (${bad.address})`), '', 0)
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list)
      callback(null, list[0].address, list[0].family)
    })
  }
}
