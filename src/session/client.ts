/**
 * Who a request comes from, as the limits and the origin checks see it: the key its client address
 * is counted under (IPv6 by its /64, docs/behaviour.md "Rate limits and client address") and whether
 * its `Origin` is the site's own (docs/behaviour.md "CSRF defence"). Shared by the pipeline's rate
 * limits and CSRF defence and by the live streams (docs/behaviour.md "Live streams").
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http';
import ipaddr from 'ipaddr.js';

/** Leading 16-bit groups of an IPv6 address that name its /64. */
const IPV6_NETWORK_GROUPS = 4;

/**
 * The key the per-address ceiling counts a client address under (docs/behaviour.md "Rate limits and client
 * address"): an IPv4 address as it is; an IPv6 address by its /64 network, written
 * `2001:db8:1:2::/64` (zone and interface bits dropped); an IPv4-mapped IPv6 address
 * (`::ffff:192.0.2.1`) as its IPv4 address. A text that is no address is its own key.
 *
 * @example addressCeilingKey('2001:db8:1:2:aaaa::1') // '2001:db8:1:2::/64'
 * @example addressCeilingKey('::ffff:192.0.2.1') // '192.0.2.1'
 */
export function addressCeilingKey(ip: string): string {
  if (!ip.includes(':') || !ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const network = (address as ipaddr.IPv6).parts.map((part, i) => (i < IPV6_NETWORK_GROUPS ? part : 0));
  return `${new ipaddr.IPv6(network).toString()}/64`;
}

/**
 * Whether an `Origin` may send a request the CSRF defence guards, or open a WebSocket
 * (docs/behaviour.md "CSRF defence"): one of `allowed` (`ALLOWED_ORIGINS`) when it is set, else an
 * origin whose host and port equal the request's own `Host`, whatever its scheme.
 *
 * @param headers - the request's headers (its `host`).
 * @example originAllowed('https://shop.example', { host: 'shop.example' }, undefined) // true
 */
export function originAllowed(origin: string, headers: IncomingHttpHeaders, allowed: readonly string[] | undefined): boolean {
  if (allowed) return allowed.includes(origin);
  try {
    return new URL(origin).host === headers.host;
  } catch {
    return false;
  }
}
