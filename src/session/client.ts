/**
 * Whether a request's `Origin` is the site's own (docs/behaviour.md "CSRF defence"), behind a trusted
 * proxy too. Shared by the pipeline's CSRF defence and the WebSocket handshake of the live streams
 * (docs/behaviour.md "Live streams").
 *
 * @module
 */
import type { FastifyRequest } from 'fastify';

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
