/**
 * Pipeline step **auth gate** (`onRequest`, after the CSRF defence, before the body is read;
 * CONTRACT.md "Which routes need a session"): parses the cookies, checks the session cookie
 * (`session/token.ts`), then reads the route's declared need (`config.auth`, never the URL):
 *
 * | session cookie | `required` | `none` |
 * |---|---|---|
 * | absent or empty | 401 `{ "reason": "no_token" }` | passes, no session |
 * | not a well-formed JWT, or with a control character | 401 `{ "reason": "invalid_token" }` | passes, no session |
 * | with `JWT_JWKS_URL` / `JWT_PUBLIC_KEY`: signature fails, unknown key, algorithm not allowed | 401 `{ "reason": "invalid_token" }` | passes, no session |
 * | with keys: expired beyond 60 s (not on a route that `acceptsExpiredToken`: refresh, logout) | 401 `{ "reason": "token_expired" }` | passes, no session |
 * | well-formed (and verified, or the JWKS could not be fetched) | passes with the session | passes with the session |
 *
 * The accepted token is `request.sessionToken` (read through `readSessionToken`): a refused cookie is
 * never forwarded as a Bearer nor counted as a session by the rate limits. `operator` needs
 * `Authorization: Bearer <CACHE_PURGE_TOKEN>` (401 `operator_credential_required`; 503
 * `not_configured` without the variable). Nothing is sent upstream for a refused request.
 *
 * @module
 */
import { timingSafeEqual } from 'node:crypto';
import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { envelope, JSON_CONTENT_TYPE } from '../envelope.js';
import { isWellFormedJwt, type TokenCheck, TokenVerifier } from '../session/token.js';

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Options of the {@link authGate} plugin. */
export interface AuthGateOptions {
  config: Pick<Config, 'sessionCookieName' | 'cachePurgeToken' | 'tokenKeys'>;
}

/** Shortest time between two warnings that the JWKS could not be fetched, in milliseconds. */
const KEYS_WARNING_INTERVAL_MS = 60_000;

/** The 401 bodies of the gate (spec 7.3), serialised once: a refusal must stay cheap. */
const REFUSALS = {
  no_token: JSON.stringify({ reason: 'no_token' }),
  invalid_token: JSON.stringify({ reason: 'invalid_token' }),
  token_expired: JSON.stringify({ reason: 'token_expired' }),
} as const;

/** The 401 body of a session cookie the gate refuses on a route that needs a session. */
function refusal(check: Exclude<TokenCheck, 'valid' | 'unverified'>): string {
  return check === 'token_expired' ? REFUSALS.token_expired : REFUSALS.invalid_token;
}

/** Refuses requests without the credential their route needs (see the module documentation). */
export const authGate = fp(
  async (app: FastifyInstance, { config }: AuthGateOptions) => {
    // Cookies are parsed here (one hook for both); the plugin still serialises `setCookie`.
    await app.register(cookie, { hook: false });
    let lastKeysWarning = Number.NEGATIVE_INFINITY;
    const verifier =
      config.tokenKeys === undefined
        ? undefined
        : new TokenVerifier(config.tokenKeys, (error) => {
            const now = Date.now();
            if (now - lastKeysWarning < KEYS_WARNING_INTERVAL_MS) return;
            lastKeysWarning = now;
            app.log.warn({ code: 'jwks_unavailable', cause: (error as Error | undefined)?.message }, 'token keys could not be fetched; tokens pass unverified');
          });
    app.decorateRequest('sessionToken', undefined);
    app.addHook('onRequest', (request, reply, done) => {
      const cookieHeader = request.headers.cookie;
      request.cookies = cookieHeader ? app.parseCookie(cookieHeader) : {};
      const routeConfig = request.routeOptions.config;
      const auth = routeConfig.auth;
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
        done();
        return;
      }
      const value = request.cookies[config.sessionCookieName];
      if (!value) {
        if (auth === 'required') reply.code(401).type(JSON_CONTENT_TYPE).send(REFUSALS.no_token);
        else done();
        return;
      }
      if (!isWellFormedJwt(value)) {
        if (auth === 'required') reply.code(401).type(JSON_CONTENT_TYPE).send(refusal('malformed'));
        else done();
        return;
      }
      if (verifier === undefined) {
        request.sessionToken = value;
        done();
        return;
      }
      verifier.verify(value, routeConfig.acceptsExpiredToken === true).then((check) => {
        if (check === 'valid' || check === 'unverified') {
          request.sessionToken = value;
          done();
        } else if (auth === 'required') {
          reply.code(401).type(JSON_CONTENT_TYPE).send(refusal(check));
        } else {
          done();
        }
      }, done);
    });
  },
  { name: 'auth-gate' },
);
