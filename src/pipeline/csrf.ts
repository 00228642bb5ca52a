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
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { envelopeText, JSON_CONTENT_TYPE } from '../envelope.js';
import { answerBody, fixedErrorRef } from './error-ref.js';
import { originAllowed } from '../session/client.js';
import { routeConfigOf } from './request-context.js';

/** The methods that change state. */
export const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Whether the CSRF defence applies to a request: a state-changing method, or a route that declares
 * upstream side effects (`config.sideEffects`, whatever its method).
 *
 * @param request - the request, after routing.
 */
export function csrfGuarded(request: FastifyRequest): boolean {
  return STATE_CHANGING.has(request.method) || routeConfigOf(request).sideEffects === true;
}

/** The two 403 bodies, serialised once: a refusal must stay cheap. */
const CROSS_SITE = envelopeText('csrf_rejected', 'Cross-site requests are not allowed');
const FOREIGN_ORIGIN = envelopeText('csrf_rejected', 'This origin may not send this request');

/** Answers 403 with `body`; its `X-Error-Ref` is remembered per route, method and body (`fixedErrorRef`). */
function refuse(request: FastifyRequest, reply: FastifyReply, body: string): void {
  const route = request.routeOptions.config;
  reply.knownErrorRef = fixedErrorRef(route, route.url, request, 403, JSON_CONTENT_TYPE, answerBody(request, body));
  reply.code(403).type(JSON_CONTENT_TYPE).send(body);
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
          refuse(request, reply, CROSS_SITE);
          return;
        }
        const origin = request.headers.origin;
        if (origin !== undefined && !originAllowed(origin, request, config.allowedOrigins)) {
          refuse(request, reply, FOREIGN_ORIGIN);
          return;
        }
      }
      done();
    });
  },
  { name: 'csrf' },
);
