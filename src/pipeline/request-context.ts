/**
 * Pipeline step **request context** (first `onRequest` hook; the id is made before any hook): every
 * request gets an id — the caller's `X-Request-Id` when it is a safe token of at most 64 characters,
 * else a random UUID — which is answered as `X-Request-Id`, sent upstream and bound to the request's
 * logger; its time is Fastify's `reply.elapsedTime`. Every answer carries `X-Content-Type-Options:
 * nosniff`, and every `/api` answer `Cache-Control: no-store` unless its route declares otherwise
 * (docs/behaviour.md "Session cookie"). Whether an answer is an `/api` answer is decided on the matched
 * route's pattern, never on the raw request target: an absolute-form target
 * (`GET http://host/api/... HTTP/1.1`) reaches the same route and gets the same header. A request no
 * route matches (the 404) is judged on the path of its target, absolute form included.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest, FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** The path and query of a request target, origin-form or absolute-form (`http://host/p?q` → `/p?q`). */
export function targetPath(url: string): string {
  if (url.startsWith('/')) return url;
  try {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  } catch {
    return url;
  }
}

/** A route's `config`: its declarations, and Fastify's `url` (the route's pattern) and `method`. */
export type MatchedRouteConfig = Readonly<FastifyRequest['routeOptions']['config']>;

/** The config of a request no route matched: no declarations, and a pattern no request target equals. */
const NO_ROUTE: MatchedRouteConfig = Object.freeze({ url: '', method: '' });

declare module 'fastify' {
  interface FastifyRequest {
    /** The matched route's `config` as {@link routeConfigOf} read it; `undefined` until then. */
    matchedRouteConfig: MatchedRouteConfig | undefined;
  }
}

/**
 * The `config` of the route a request was routed to (its declarations, and Fastify's `url`, the
 * route's pattern, and `method`; none and an empty pattern for a request no route matched), read once per request: the
 * `onRequest` steps each ask for it (the CSRF defence, load shedding, the auth gate, the body step),
 * and Fastify's `request.routeOptions` builds a new object of a dozen fields on every read. For the
 * `onRequest` steps only: a later step reads `request.routeOptions`, which follows a request that a
 * handler sends to the not-found handler.
 *
 * @param request - the request, after routing.
 */
export function routeConfigOf(request: FastifyRequest): MatchedRouteConfig {
  let config = request.matchedRouteConfig;
  if (config === undefined) {
    config = request.routeOptions.config ?? NO_ROUTE;
    request.matchedRouteConfig = config;
  }
  return config;
}

/**
 * Whether the answer to a request is an `/api` answer (`Cache-Control: no-store`): the matched
 * route's pattern starts with `/api/`; with no matched route (404), the target's path does. Read in
 * the `onRequest` steps ({@link routeConfigOf}).
 *
 * @param request - the request, after routing.
 */
export function isApiRequest(request: FastifyRequest): boolean {
  const pattern = (routeConfigOf(request) as { url?: string }).url;
  if (pattern !== undefined && pattern !== '') return pattern.startsWith('/api/');
  return targetPath(request.url).startsWith('/api/');
}

/** Fastify constructor options of this step: the request id. */
export const requestIdOptions: Pick<FastifyServerOptions, 'genReqId' | 'requestIdHeader'> = {
  genReqId: (req) => {
    const given = req.headers['x-request-id'];
    return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
  },
  requestIdHeader: false,
};

/** The headers every answer starts with. */
export const requestContext = fp(
  async (app: FastifyInstance) => {
    // Where the client address (session/client.ts) and the route's config are kept once read: fields
    // of every request, not ones added later.
    app.decorateRequest('clientHops', undefined);
    app.decorateRequest('matchedRouteConfig', undefined);
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('x-request-id', request.id);
      reply.header('x-content-type-options', 'nosniff');
      if (isApiRequest(request)) reply.header('cache-control', 'no-store');
      done();
    });
  },
  { name: 'request-context' },
);
