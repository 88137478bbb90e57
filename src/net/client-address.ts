import type { Config } from '../config.js'

/**
 * Fastify's `trustProxy` for CAIRN_TRUST_PROXY. A number of proxies becomes proxy-addr's rule for it (trust the
 * first `hops` peers, counted from the socket), as Fastify itself does; its types take no number.
 */
export function trustProxyOption(trust: Config['trustProxy']):
  false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust !== 'number') return trust
  return (_address, hop) => hop < trust
}
