/**
 * Pipeline step **auth gate** (`onRequest`, after the CSRF defence, before the body is read;
 * CONTRACT.md "Which routes need a session"): parses the cookies, then reads the route's declared
 * need (`config.auth`, never the URL): `required` without the session cookie answers 401
 * `{ "reason": "no_token" }`; `operator` needs `Authorization: Bearer <CACHE_PURGE_TOKEN>` (401
 * `operator_credential_required`; 503 `not_configured` without the variable); `none` passes. Nothing
 * is sent upstream for a refused request.
 *
 * @module
 */
import { timingSafeEqual } from 'node:crypto';
import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { envelope } from '../envelope.js';
import { readSessionToken } from '../session/cookie.js';

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Options of the {@link authGate} plugin. */
export interface AuthGateOptions {
  config: Pick<Config, 'sessionCookieName' | 'cachePurgeToken'>;
}

/** Refuses requests without the credential their route needs (see the module documentation). */
export const authGate = fp(
  async (app: FastifyInstance, { config }: AuthGateOptions) => {
    // Cookies are parsed here (one hook for both); the plugin still serialises `setCookie`.
    await app.register(cookie, { hook: false });
    app.addHook('onRequest', (request, reply, done) => {
      const cookieHeader = request.headers.cookie;
      request.cookies = cookieHeader ? app.parseCookie(cookieHeader) : {};
      const auth = request.routeOptions.config.auth;
      if (auth === 'required' && readSessionToken(request, config) === undefined) {
        reply.code(401).send({ reason: 'no_token' });
        return;
      }
      if (auth === 'operator') {
        if (!config.cachePurgeToken) {
          reply.code(503).send(envelope('not_configured', 'CACHE_PURGE_TOKEN is not set'));
          return;
        }
        const header = request.headers.authorization ?? '';
        const given = header.startsWith('Bearer ') ? header.slice(7) : '';
        if (!sameSecret(given, config.cachePurgeToken)) {
          reply.code(401).send(envelope('operator_credential_required', 'A valid operator credential is required'));
          return;
        }
      }
      done();
    });
  },
  { name: 'auth-gate' },
);
