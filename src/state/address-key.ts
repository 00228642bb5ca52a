/**
 * The key every per-address count groups a client address under (docs/behaviour.md "Rate limits and
 * client address": the pre-authentication, login-failure, beacon and address-ceiling limits). An IPv6
 * client picks its address freely inside its /64 (privacy extensions, one prefix per subscriber), so
 * an IPv6 address counts by that network.
 *
 * @module
 */
import ipaddr from 'ipaddr.js';

/** Leading 16-bit groups of an IPv6 address that name its /64. */
const IPV6_NETWORK_GROUPS = 4;

/**
 * The key a client address is counted under: an IPv4 address as it is; an IPv6 address by its /64
 * network, written `2001:db8:1:2::/64` (zone and interface bits dropped); an IPv4-mapped IPv6 address
 * (`::ffff:192.0.2.1`) as its IPv4 address. A text that is no address is its own key.
 *
 * @example addressKey('2001:db8:1:2:aaaa::1') // '2001:db8:1:2::/64'
 * @example addressKey('::ffff:192.0.2.1') // '192.0.2.1'
 */
export function addressKey(ip: string): string {
  if (!ip.includes(':') || !ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const network = (address as ipaddr.IPv6).parts.map((part, i) => (i < IPV6_NETWORK_GROUPS ? part : 0));
  return `${new ipaddr.IPv6(network).toString()}/64`;
}
