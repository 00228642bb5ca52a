/**
 * Pipeline step **CSRF defence** (`onRequest`, after the request context, before the auth gate and
 * before the body is read; docs/behaviour.md "CSRF defence"): a request with a state-changing method (POST,
 * PUT, PATCH, DELETE) is refused with 403 `csrf_rejected`, and calls nothing upstream, when its
 * `Sec-Fetch-Site` is `cross-site` or its `Origin` is not allowed (`ALLOWED_ORIGINS`; by default an
 * origin whose host and port equal the request's `Host`, whatever its scheme). A `GET` (or its `HEAD`)
 * whose route declares upstream side effects (`config.sideEffects`: game start, sports launch,
 * partner and support-desk tokens, KYC start) is refused the same way, since a top-level navigation
 * from another site carries a `Lax` session cookie. Requests with neither header (server-to-server,
 * curl) pass.
 *
 * @module
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { envelope } from '../envelope.js';

/** The methods that change state. */
export const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Whether the CSRF defence applies to a request: a state-changing method, or a route that declares
 * upstream side effects (`config.sideEffects`, whatever its method).
 *
 * @param request - the request, after routing.
 */
export function csrfGuarded(request: FastifyRequest): boolean {
  return STATE_CHANGING.has(request.method) || request.routeOptions.config.sideEffects === true;
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

/** Options of the {@link csrf} plugin. */
export interface CsrfOptions {
  config: Pick<Config, 'allowedOrigins'>;
}

/** Refuses cross-site state-changing requests and side-effecting reads (see the module documentation). */
export const csrf = fp(
  async (app: FastifyInstance, { config }: CsrfOptions) => {
    app.addHook('onRequest', (request, reply, done) => {
      if (csrfGuarded(request)) {
        if (request.headers['sec-fetch-site'] === 'cross-site') {
          reply.code(403).send(envelope('csrf_rejected', 'Cross-site requests are not allowed'));
          return;
        }
        const origin = request.headers.origin;
        if (origin !== undefined && !originAllowed(origin, request, config.allowedOrigins)) {
          reply.code(403).send(envelope('csrf_rejected', 'This origin may not send this request'));
          return;
        }
      }
      done();
    });
  },
  { name: 'csrf' },
);
