/**
 * What a request says of its client: its address (docs/behaviour.md "Rate limits and client
 * address"), read once per request, and whether its `Origin` is the site's own (docs/behaviour.md "CSRF
 * defence"), behind a trusted proxy too. Shared by the pipeline (rate limits, CSRF defence), the
 * routes' upstream headers and the WebSocket handshake of the live streams (docs/behaviour.md "Live
 * streams").
 *
 * @module
 */
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyRequest } from 'fastify';

/** Most socket peers whose trust {@link trustedProxyCheck} remembers (load balancers: a handful); then it starts afresh. */
const REMEMBERED_PEERS = 64;

/**
 * Fastify's `trustProxy` for `TRUSTED_PROXIES` (`list`: addresses and CIDR ranges): the check
 * `@fastify/proxy-addr` compiles from the list, as Fastify compiles it from the same list written as
 * text, with the verdict on the socket's peer (hop 0) remembered by its address: behind a load
 * balancer every request comes from one of a few peers, and parsing the peer's address again on each
 * request (and each read of `request.ip`, `host` or `protocol`) is work with the same answer. The
 * addresses of `X-Forwarded-For` (hops 1 and more) are checked each time: the client writes them.
 *
 * @returns `(address, hop) => boolean`: whether `address`, `hop` hops from the socket, is a trusted proxy.
 */
export function trustedProxyCheck(list: readonly string[]): (address: string, hop: number) => boolean {
  const trusted = proxyAddr.compile([...list]);
  const peers = new Map<string, boolean>();
  return (address, hop) => {
    if (hop !== 0) return trusted(address, hop);
    let verdict = peers.get(address);
    if (verdict === undefined) {
      verdict = trusted(address, hop);
      if (peers.size >= REMEMBERED_PEERS) peers.clear();
      peers.set(address, verdict);
    }
    return verdict;
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's hops as {@link clientHops} read them once; `undefined` until then. */
    clientHops: readonly string[] | undefined;
  }
}

/**
 * The request's addresses (docs/behaviour.md "Rate limits and client address"): the socket's peer, then
 * with `TRUSTED_PROXIES` the addresses of `X-Forwarded-For` from the right, up to the first untrusted
 * one (Fastify's `request.ips`); without it, the socket's peer alone. Read once and kept on the
 * request: Fastify's `request.ip` and `request.ips` split the header and check each hop on every read,
 * and a request reads its client address in several steps (the rate limits, the upstream headers).
 */
export function clientHops(request: FastifyRequest): readonly string[] {
  let hops = request.clientHops;
  if (hops === undefined) {
    hops = request.ips ?? [request.ip];
    request.clientHops = hops;
  }
  return hops;
}

/**
 * The client address (docs/behaviour.md "Rate limits and client address"): the last of
 * {@link clientHops}, the same as Fastify's `request.ip`, read once per request.
 */
export function clientAddress(request: FastifyRequest): string {
  const hops = clientHops(request);
  return hops[hops.length - 1] as string;
}

/**
 * The request's own host and port, as an origin's `host` reads (`www.example.com`, `127.0.0.1:5173`;
 * a port that is the default of the scheme left out): from `X-Forwarded-Host` and `X-Forwarded-Proto`
 * when the socket's peer is in `TRUSTED_PROXIES` (Fastify's `request.host` and `request.protocol`
 * under `trustProxy`; the last value of a repeated header), else from `Host`. `null` when none is
 * usable.
 *
 * @param request - the request.
 */
export function ownHost(request: FastifyRequest): string | null {
  const host = request.host;
  if (!host) return null;
  const scheme = request.protocol === 'https' ? 'https' : 'http';
  try {
    const url = new URL(`${scheme}://${host}`);
    // A host header carrying a path, credentials or a query is not a host.
    return url.username === '' && url.password === '' && url.pathname === '/' && url.search === '' && url.hash === '' ? url.host : null;
  } catch {
    return null;
  }
}

/**
 * Whether `origin` may send a guarded request: one of `allowed` (`ALLOWED_ORIGINS`) when set, else an
 * origin whose host and port are the request's own ({@link ownHost}), whatever its scheme (TLS may
 * end at a load balancer).
 *
 * @param origin - the `Origin` header.
 * @param request - the request.
 * @param allowed - `ALLOWED_ORIGINS`, or `undefined` for the own-origin rule.
 */
export function originAllowed(origin: string, request: FastifyRequest, allowed: readonly string[] | undefined): boolean {
  if (allowed) return allowed.includes(origin);
  const own = ownHost(request);
  if (own === null) return false;
  try {
    const url = new URL(origin);
    // Compared as the request's scheme would write the port: `https://h` equals `h:443` behind TLS.
    return url.host === own || new URL(`${request.protocol === 'https' ? 'https' : 'http'}://${url.host}`).host === own;
  } catch {
    return false;
  }
}
