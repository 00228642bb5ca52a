/**
 * Pipeline step **auth gate** (`onRequest`, after the CSRF defence, before the body is read;
 * docs/behaviour.md "Which routes need a session"): parses the cookies, checks the session cookie
 * (`session/token.ts`), then reads the route's declared need (`config.auth`, never the URL):
 *
 * | session cookie | `required` | `none` |
 * |---|---|---|
 * | absent or empty | 401 `{ "reason": "no_token" }` | passes, no session |
 * | not a well-formed JWT, or with a control character | 401 `{ "reason": "invalid_token" }` | passes, no session |
 * | with `JWT_JWKS_URL` / `JWT_PUBLIC_KEY` / `JWT_SECRET`: signature fails, unknown `kid`, an algorithm the key does not accept, any other failure | 401 `{ "reason": "invalid_token" }` | passes, no session |
 * | with keys: expired beyond 60 s (not on a route that `acceptsExpiredToken`: refresh, logout) | 401 `{ "reason": "token_expired" }` | passes, no session |
 * | well-formed (and verified, or with a JWKS never fetched yet) | passes with the session | passes with the session |
 *
 * The accepted token is `request.sessionToken` (read through `readSessionToken`): a refused cookie is
 * never forwarded as a Bearer nor counted as a session by the rate limits. A token whose signature
 * was verified also sets `request.sessionTokenVerified` (the per-address ceiling does not count it,
 * `pipeline/rate-limit.ts`); an `unverified` one does not. `operator` needs
 * `Authorization: Bearer <CACHE_PURGE_TOKEN>` (401 `operator_credential_required`; 503
 * `not_configured` without the variable). Nothing is sent upstream for a refused request.
 *
 * @module
 */
import { timingSafeEqual } from 'node:crypto';
import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { envelope, JSON_CONTENT_TYPE } from '../envelope.js';
import { isWellFormedJwt, type TokenCheck, TokenVerifier } from '../session/token.js';
import { tokenKey } from '../session/hash.js';
import { type MatchedRouteConfig, routeConfigOf } from './request-context.js';
import { answerBody, fixedErrorRef } from './error-ref.js';

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Options of the {@link authGate} plugin. */
export interface AuthGateOptions {
  config: Pick<Config, 'sessionCookieName' | 'cachePurgeToken' | 'tokenKeys'>;
  /** Clock of the JWKS's age and of the time between its fetches, in epoch milliseconds (default `Date.now`). */
  now?: (() => number) | undefined;
}

/** Shortest time between two warnings of one kind about the token keys, in milliseconds (one a minute). */
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

/**
 * Answers 401 with one of the gate's bodies; its `X-Error-Ref` is remembered per route, method and
 * body (`fixedErrorRef`) rather than classified again on every refusal.
 */
function refuse(request: FastifyRequest, reply: FastifyReply, route: MatchedRouteConfig, body: string): void {
  reply.knownErrorRef = fixedErrorRef(route, route.url, request, 401, JSON_CONTENT_TYPE, answerBody(request, body));
  reply.code(401).type(JSON_CONTENT_TYPE).send(body);
}

/**
 * The cookie plugin (cookies are parsed by the gate's own hook, one hook for both; the plugin still
 * serialises `setCookie`) and the request's session fields, before any hook reads them.
 */
async function withSessionFields(app: FastifyInstance): Promise<void> {
  await app.register(cookie, { hook: false });
  app.decorateRequest('sessionToken', undefined);
  app.decorateRequest('sessionTokenKey', undefined);
  app.decorateRequest('sessionTokenVerified', false);
}

/** Parses the request's `Cookie` header into `request.cookies` (none: `{}`). */
function parseCookies(app: FastifyInstance, request: FastifyRequest): void {
  const cookieHeader = request.headers.cookie;
  request.cookies = cookieHeader ? app.parseCookie(cookieHeader) : {};
}

/** Refuses requests without the credential their route needs (see the module documentation). */
export const authGate = fp(
  async (app: FastifyInstance, { config, now }: AuthGateOptions) => {
    await withSessionFields(app);
    const warnings = { unverified: Number.NEGATIVE_INFINITY, jwksFailed: Number.NEGATIVE_INFINITY };
    /** Whether a warning of `kind` may be written now (at most one a minute each). */
    const due = (kind: keyof typeof warnings): boolean => {
      const time = Date.now();
      if (time - warnings[kind] < KEYS_WARNING_INTERVAL_MS) return false;
      warnings[kind] = time;
      return true;
    };
    const causeOf = (error: unknown): string | undefined => (error instanceof Error ? error.message : undefined);
    const verifier =
      config.tokenKeys === undefined
        ? undefined
        : new TokenVerifier(
            config.tokenKeys,
            {
              unverified: (error) => {
                if (due('unverified'))
                  app.log.warn(
                    { code: 'jwks_unavailable', cause: causeOf(error) },
                    'token keys could not be fetched; tokens pass unverified',
                  );
              },
              jwksFailed: (error, keysHeld) => {
                if (!due('jwksFailed')) return;
                if (keysHeld)
                  app.log.warn(
                    { code: 'jwks_refetch_failed', cause: causeOf(error) },
                    'the JWKS could not be fetched again; the last key set serves',
                  );
                else app.log.warn({ code: 'jwks_unavailable', cause: causeOf(error) }, 'the JWKS could not be fetched; no key set yet');
              },
            },
            now,
          );
    if (verifier) app.addHook('onClose', () => verifier.close());
    app.addHook('onRequest', (request, reply, done) => {
      parseCookies(app, request);
      const routeConfig = routeConfigOf(request);
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
        if (auth === 'required') refuse(request, reply, routeConfig, REFUSALS.no_token);
        else done();
        return;
      }
      // One digest per request: the rate limit, the profile cache and the route read it from the request.
      const key = tokenKey(value);
      if (!isWellFormedJwt(value, key)) {
        if (auth === 'required') refuse(request, reply, routeConfig, refusal('malformed'));
        else done();
        return;
      }
      if (verifier === undefined) {
        request.sessionToken = value;
        request.sessionTokenKey = key;
        done();
        return;
      }
      verifier.verify(value, routeConfig.acceptsExpiredToken === true).then((check) => {
        if (check === 'valid' || check === 'unverified') {
          request.sessionToken = value;
          request.sessionTokenKey = key;
          request.sessionTokenVerified = check === 'valid';
          done();
        } else if (auth === 'required') {
          refuse(request, reply, routeConfig, refusal(check));
        } else {
          done();
        }
      }, done);
    });
  },
  { name: 'auth-gate' },
);

/**
 * In place of the {@link authGate}, **for measurement only** (`omitSteps: ['auth-gate']`,
 * `pipeline/steps.ts`): the cookies are parsed and the session cookie's value is taken as the
 * session token as it is — not checked, not verified, no digest made, nothing refused — so that a
 * route's upstream call still carries the session (what the passthrough's check needs); the cookie
 * plugin stays, since later steps serialise cookies with it.
 */
export const sessionFromCookie = fp(
  async (app: FastifyInstance, { config }: AuthGateOptions) => {
    await withSessionFields(app);
    app.addHook('onRequest', (request, _reply, done) => {
      parseCookies(app, request);
      const value = request.cookies[config.sessionCookieName];
      if (value) request.sessionToken = value;
      done();
    });
  },
  { name: 'auth-gate' },
);
