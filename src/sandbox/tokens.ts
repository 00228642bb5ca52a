/**
 * Session JWTs of the sandbox BFF (spec 5.1): HS256 with a random secret per process, claims
 * `sub` (user id, as a string), `jti` (session id), `iat` and `exp` (epoch seconds).
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import type { SandboxSession } from './types.js';

/** The claims the sandbox reads back. */
export interface SandboxClaims {
  /** User id. */
  userId: number;
  /** Session id (`jti`). */
  sessionId: string;
  /** Epoch seconds. */
  iat: number;
  /** Epoch seconds. */
  exp: number;
}

/** Outcome of {@link SandboxTokens.verify}. */
export type TokenCheck =
  | { ok: true; claims: SandboxClaims }
  | { ok: false; reason: 'invalid_token' }
  /** Signature good, `exp` passed; claims kept so the caller still knows the session. */
  | { ok: false; reason: 'token_expired'; claims: SandboxClaims };

const ALGORITHM = 'HS256';

/** Process-wide secret: sandboxes of one process accept each other's tokens, no other process does. */
const PROCESS_SECRET = randomBytes(32);

/** Signs and verifies session tokens on a given clock. */
export class SandboxTokens {
  readonly #secret: Uint8Array;
  readonly #now: () => number;

  /**
   * @param now clock in epoch milliseconds
   * @param secret HS256 key; default a random 32-byte key drawn once per process
   */
  constructor(now: () => number, secret: Uint8Array = PROCESS_SECRET) {
    this.#now = now;
    this.#secret = secret;
  }

  /** Signs the JWT of a session (`exp` = the session's `expiresAt`). */
  async sign(session: SandboxSession): Promise<string> {
    return new SignJWT({})
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(String(session.userId))
      .setJti(session.id)
      .setIssuedAt(Math.floor(session.issuedAt / 1000))
      .setExpirationTime(Math.floor(session.expiresAt / 1000))
      .sign(this.#secret);
  }

  /** Checks signature, shape and expiry of a token. Never throws. */
  async verify(token: string): Promise<TokenCheck> {
    try {
      const { payload } = await jwtVerify(token, this.#secret, {
        algorithms: [ALGORITHM],
        currentDate: new Date(this.#now()),
        requiredClaims: ['sub', 'jti', 'iat', 'exp'],
      });
      const claims = toClaims(payload);
      return claims ? { ok: true, claims } : { ok: false, reason: 'invalid_token' };
    } catch (error) {
      if (error instanceof errors.JWTExpired) {
        const claims = toClaims(error.payload);
        if (claims) return { ok: false, reason: 'token_expired', claims };
      }
      return { ok: false, reason: 'invalid_token' };
    }
  }
}

function toClaims(payload: { sub?: unknown; jti?: unknown; iat?: unknown; exp?: unknown }): SandboxClaims | null {
  const userId = Number(payload.sub);
  if (!Number.isInteger(userId) || typeof payload.jti !== 'string') return null;
  if (typeof payload.iat !== 'number' || typeof payload.exp !== 'number') return null;
  return { userId, sessionId: payload.jti, iat: payload.iat, exp: payload.exp };
}
