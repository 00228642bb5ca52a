/**
 * The session cookie of docs/behaviour.md "Session cookie": `<SESSION_COOKIE_NAME>=<jwt>; Path=/;
 * HttpOnly; SameSite=Lax; Max-Age=<expires_in>`, plus `Secure` in production.
 *
 * @module
 */
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { UpstreamError } from '../upstream/errors.js';
import { tokenKey } from './hash.js';
import { isWellFormedJwt } from './token.js';

/** Lifetime used when neither `expires_in` nor the JWT's `exp` tells one: 6 hours, in seconds (spec 3.1). */
export const DEFAULT_SESSION_SECONDS = 6 * 60 * 60;
/** Longest cookie lifetime accepted from upstream: 30 days, in seconds. */
const MAX_SESSION_SECONDS = 30 * 24 * 60 * 60;

/**
 * The session JWT of a request as the auth gate accepted it (`pipeline/auth-gate.ts`, docs/behaviour.md
 * "Which routes need a session"), or `undefined` when the cookie is absent, empty, not a well-formed
 * JWT, or (with the BFF's keys) not verified: such a cookie counts as no session and is never
 * forwarded as a Bearer.
 */
export function readSessionToken(request: FastifyRequest): string | undefined {
  return request.sessionToken;
}

/**
 * The digest ({@link tokenKey}) of `token`: the one the auth gate made, kept on the request, when
 * `token` is the request's own session token (the gate, the rate limit, the profile cache and the
 * route all key by it); else made now. `request`: the Fastify request, or `undefined`. The request carries the digest no longer than itself.
 */
export function sessionTokenKey(request: object | undefined, token: string): string {
  const held = request as Partial<Pick<FastifyRequest, 'sessionToken' | 'sessionTokenKey'>> | undefined;
  if (held !== undefined && held.sessionToken === token && held.sessionTokenKey !== undefined) return held.sessionTokenKey;
  return tokenKey(token);
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The accepted session token (see {@link readSessionToken}); set by the auth gate before any other step reads it. */
    sessionToken: string | undefined;
    /** The digest of {@link sessionToken} ({@link tokenKey}), set with it by the auth gate; read it through {@link sessionTokenKey}. */
    sessionTokenKey: string | undefined;
    /** Whether the auth gate verified {@link sessionToken}'s signature with the BFF's keys (`JWT_*`); `false` without keys or while it passes unverified. */
    sessionTokenVerified: boolean;
  }
}

/**
 * The cookie lifetime in seconds: `expires_in` when it is a positive number, else the time left
 * until the JWT's `exp` claim (read, not verified: the BFF verifies), else {@link DEFAULT_SESSION_SECONDS}.
 */
export function sessionMaxAge(jwt: string, expiresIn?: unknown, nowMs = Date.now()): number {
  if (typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0) {
    return Math.min(Math.floor(expiresIn), MAX_SESSION_SECONDS);
  }
  const payload = jwt.split('.')[1];
  if (payload) {
    try {
      const exp = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown }).exp;
      if (typeof exp === 'number' && exp * 1000 > nowMs) {
        return Math.min(Math.floor(exp - nowMs / 1000), MAX_SESSION_SECONDS);
      }
    } catch {
      // not a readable JWT payload: fall through to the default
    }
  }
  return DEFAULT_SESSION_SECONDS;
}

/** A session cookie waiting for its answer: written only if the answer turns out a success. */
interface PendingSession {
  readonly name: string;
  readonly jwt: string;
  readonly maxAgeSeconds: number;
  readonly secure: boolean;
}

declare module 'fastify' {
  interface FastifyReply {
    /** The session cookie {@link setSessionCookie} asked for, written by {@link commitSessionCookie}. */
    pendingSession: PendingSession | undefined;
  }
}

/**
 * Asks for the session cookie of a new JWT (login, registration, social login, refresh). It is
 * written by {@link commitSessionCookie} when the answer is sent, and only if that answer is a
 * success: an answer that fails after this call (an error, a body that cannot be written) never
 * carries the session (docs/behaviour.md "Upstream answers", "A session comes only from a whole, valid
 * answer").
 */
export function setSessionCookie(reply: FastifyReply, config: Config, jwt: string, maxAgeSeconds: number): void {
  reply.pendingSession = { name: config.sessionCookieName, jwt, maxAgeSeconds, secure: config.production };
}

/**
 * The one place that writes a new session cookie (an `onSend` hook, `pipeline/auth-gate.ts`): the
 * cookie {@link setSessionCookie} asked for, when the answer's status is below 400; nothing otherwise.
 */
export function commitSessionCookie(reply: FastifyReply): void {
  const pending = reply.pendingSession;
  if (pending === undefined) return;
  reply.pendingSession = undefined;
  if (reply.statusCode >= 400) return;
  reply.setCookie(pending.name, pending.jwt, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: pending.secure,
    maxAge: pending.maxAgeSeconds,
  });
}

/** The attributes of the cleared session cookie (same name and path as the session's, `Max-Age=0`). */
export function clearedCookieOptions(config: Pick<Config, 'production'>): CookieSerializeOptions & { secure: boolean } {
  return { path: '/', httpOnly: true, sameSite: 'lax', secure: config.production, maxAge: 0 };
}

/** Clears the session cookie (same name and path, `Max-Age=0`): logout and logout-auto. */
export function clearSessionCookie(reply: FastifyReply, config: Pick<Config, 'sessionCookieName' | 'production'>): void {
  reply.setCookie(config.sessionCookieName, '', clearedCookieOptions(config));
}

/**
 * Whether `value` can be the session cookie's value: a well-formed JWT (three base64url parts, a JSON
 * header and payload; `session/token.ts`), so without `;`, `,`, spaces, quotes or control characters.
 */
export function isSessionTokenValue(value: string): boolean {
  return isWellFormedJwt(value);
}

/**
 * Reads the JWT of a LoginResponse / RefreshTokenResponse body (spec 2.5): `undefined` when the body
 * has no `access_token` (absent, `null` or empty: a login outcome without a session, such as a second
 * factor), the token when it is one that {@link isSessionTokenValue} accepts.
 * @throws UpstreamError `upstream_bad_response` when `access_token` is there but is not a well-formed
 *   JWT or cannot be a cookie value (docs/behaviour.md "Upstream answers": 502, no cookie).
 */
export function tokenOf(body: unknown): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const token = (body as Record<string, unknown>).access_token;
  if (token === undefined || token === null || token === '') return undefined;
  if (typeof token === 'string' && isSessionTokenValue(token)) return token;
  throw new UpstreamError('upstream_bad_response', { detail: 'The service sent a session token that is not a well-formed JWT' });
}
