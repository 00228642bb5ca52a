/**
 * The session cookie of CONTRACT.md ("Session cookie"): `<SESSION_COOKIE_NAME>=<jwt>; Path=/;
 * HttpOnly; SameSite=Lax; Max-Age=<expires_in>`, plus `Secure` in production.
 *
 * @module
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';

/** Lifetime used when neither `expires_in` nor the JWT's `exp` tells one: 6 hours, in seconds (spec 3.1). */
export const DEFAULT_SESSION_SECONDS = 6 * 60 * 60;
/** Longest cookie lifetime accepted from upstream: 30 days, in seconds. */
const MAX_SESSION_SECONDS = 30 * 24 * 60 * 60;

/**
 * The session JWT of a request as the auth gate accepted it (`pipeline/auth-gate.ts`, CONTRACT.md
 * "Which routes need a session"), or `undefined` when the cookie is absent, empty, not a well-formed
 * JWT, or (with the BFF's keys) not verified: such a cookie counts as no session and is never
 * forwarded as a Bearer.
 */
export function readSessionToken(request: FastifyRequest): string | undefined {
  return request.sessionToken;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The accepted session token (see {@link readSessionToken}); set by the auth gate before any other step reads it. */
    sessionToken: string | undefined;
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

/** Sets the session cookie for a new JWT (login, registration, social login, refresh). */
export function setSessionCookie(reply: FastifyReply, config: Config, jwt: string, maxAgeSeconds: number): void {
  reply.setCookie(config.sessionCookieName, jwt, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: config.production,
    maxAge: maxAgeSeconds,
  });
}

/** Clears the session cookie (same name and path, `Max-Age=0`): logout and logout-auto. */
export function clearSessionCookie(reply: FastifyReply, config: Config): void {
  reply.setCookie(config.sessionCookieName, '', {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: config.production,
    maxAge: 0,
  });
}

/** Reads the JWT of a LoginResponse / RefreshTokenResponse body, if it has a non-empty one. */
export function tokenOf(body: unknown): string | undefined {
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const token = (body as Record<string, unknown>).access_token;
    if (typeof token === 'string' && token.length > 0 && token.length < 8192) return token;
  }
  return undefined;
}
