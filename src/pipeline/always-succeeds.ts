/**
 * Pipeline step **always succeeds** (`onSend`, after the error handler, before `X-Error-Ref`; spec 5.5,
 * docs/behaviour.md "Session cookie"): a route declared `alwaysSucceeds` (`/api/auth/logout`,
 * `/api/auth/logout-auto`) answers success and clears the session cookie whatever the proxy refused on
 * the way. A refusal of the proxy's own — the rate limits (429 `rate_limited`), the request body
 * (400 `invalid_request`, 413 `payload_too_large`) or its media type (415 `unsupported_media_type`) —
 * comes before the handler, so nothing was sent upstream; its answer is replaced here by
 * `200 { "ok": true }` with the cleared session cookie and `Cache-Control: no-store`. The refusal is
 * still logged and counted where it was made.
 *
 * @module
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { JSON_CONTENT_TYPE } from '../envelope.js';
import { clearedCookieOptions } from '../session/cookie.js';

/** The statuses of the proxy's refusals before a handler runs that an always-succeeding route turns into its success. */
const REFUSED = new Set([400, 413, 415, 429]);

/** The success answer of a logout (spec 5.5). */
const SUCCESS = JSON.stringify({ ok: true });

/** Headers a refusal may carry that its replacement must not: its reference is added later, only to errors. */
const REFUSAL_HEADERS = ['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'content-length'];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers success whatever the proxy refused before its handler (logout; spec 5.5). */
    alwaysSucceeds?: boolean;
  }
}

/** Options of the {@link alwaysSucceeds} plugin. */
export interface AlwaysSucceedsOptions {
  config: Pick<Config, 'sessionCookieName' | 'production'>;
  /**
   * Told the accepted session token of a logout whose refusal became its success: the session's live
   * streams end all the same (docs/behaviour.md "Live streams").
   */
  onSessionEnd?: ((token: string) => void) | undefined;
}

/** Turns the proxy's refusals on `alwaysSucceeds` routes into their success (see the module documentation). */
export const alwaysSucceeds = fp(
  async (app: FastifyInstance, { config, onSessionEnd }: AlwaysSucceedsOptions) => {
    // Written as a header: the cookie plugin's own onSend hook has already run.
    const cleared = app.serializeCookie(config.sessionCookieName, '', clearedCookieOptions(config));
    app.addHook('onSend', (request, reply, payload, done) => {
      // The status first: most answers are no refusal, and the route's options are an object built per read.
      if (!REFUSED.has(reply.statusCode) || request.routeOptions.config.alwaysSucceeds !== true) {
        done(null, payload);
        return;
      }
      const token = request.sessionToken;
      if (token !== undefined) onSessionEnd?.(token);
      for (const name of REFUSAL_HEADERS) reply.removeHeader(name);
      reply.code(200).type(JSON_CONTENT_TYPE).header('cache-control', 'no-store');
      reply.header('set-cookie', cleared);
      done(null, SUCCESS);
    });
  },
  { name: 'always-succeeds' },
);
