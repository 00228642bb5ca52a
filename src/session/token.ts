/**
 * The session token checked before it costs anything (CONTRACT.md "Which routes need a session"): a
 * cookie value that is not a well-formed JWT (three base64url parts, a JSON object as header and as
 * payload), or that carries a control character or anything outside the base64url alphabet, is no
 * session; with the BFF's keys (`JWT_JWKS_URL` or `JWT_PUBLIC_KEY`) a token whose signature fails is
 * none either, and one whose `exp` has passed (60 s leeway) is expired, except where a route accepts
 * expired tokens (refresh, logout). Decoding and verification are jose's.
 *
 * @module
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { compactVerify, createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JWTVerifyGetKey } from 'jose';

/** Longest session cookie value read as a token, in characters (a larger value is no session). */
export const MAX_TOKEN_LENGTH = 8192;

/** Clock leeway of the `exp` (and `nbf`) check, in seconds (CONTRACT.md "Configuration"). */
export const EXPIRY_LEEWAY_SECONDS = 60;

/** The signature algorithms a session token may use: asymmetric only (never `none`, never an HMAC). */
export const TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** How long a fetched JWKS is used before it is fetched again, in milliseconds (10 minutes). */
export const JWKS_CACHE_MS = 10 * 60_000;
/** Shortest time between two JWKS fetches (an unknown `kid` triggers one), in milliseconds. */
export const JWKS_COOLDOWN_MS = 30_000;
/** Limit of one JWKS fetch, in milliseconds. */
export const JWKS_TIMEOUT_MS = 5_000;

/** Three base64url parts; the signature may be empty. Only these characters: no control character, space or escape. */
const COMPACT_JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Whether `value` is a well-formed JWT: at most {@link MAX_TOKEN_LENGTH} characters of the base64url
 * alphabet in three dot-separated parts, whose first two decode to JSON objects (read with jose,
 * nothing verified). A value with a control character (CR, LF, NUL, U+2028…), a space, a `%` or any
 * other character is not.
 *
 * @example isWellFormedJwt('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln') // true
 * @example isWellFormedJwt('abc\r\nX-Injected: yes') // false
 */
export function isWellFormedJwt(value: string): boolean {
  if (value.length > MAX_TOKEN_LENGTH || !COMPACT_JWT.test(value)) return false;
  const known = wellFormed.get(value);
  if (known !== undefined) return known;
  let verdict: boolean;
  try {
    decodeProtectedHeader(value);
    decodeJwt(value);
    verdict = true;
  } catch {
    verdict = false;
  }
  wellFormed.set(value, verdict);
  return verdict;
}

/**
 * The verdicts of {@link isWellFormedJwt} on recent tokens (a session sends its token with every
 * request; decoding it again each time was 2-3% of a request's CPU): at most 4,096 tokens, the least
 * recently used forgotten first. A verdict depends on the value alone.
 */
const wellFormed = new LRUCache<string, boolean>({ max: 4_096 });

/**
 * The outcome of checking a session cookie value:
 * - `valid`: well-formed, and verified when keys are configured;
 * - `unverified`: well-formed, but the keys could not be fetched (the JWKS did not answer): it is
 *   used as a session and the BFF decides;
 * - `malformed` / `invalid_token`: no session (a bad signature, an unknown key, a disallowed algorithm);
 * - `token_expired`: the signature holds but `exp` has passed beyond the leeway.
 */
export type TokenCheck = 'valid' | 'unverified' | 'malformed' | 'invalid_token' | 'token_expired';

/** The BFF's token-signing keys, as the configuration holds them. */
export interface TokenKeys {
  /** URL of the BFF's JWKS (`JWT_JWKS_URL`). */
  readonly jwksUrl?: string | undefined;
  /** The BFF's public key in PEM (`JWT_PUBLIC_KEY`). */
  readonly publicKeyPem?: string | undefined;
}

/**
 * Reads a PEM public key (SPKI `-----BEGIN PUBLIC KEY-----`, PKCS#1 RSA or an X.509 certificate).
 * Literal `\n` sequences count as line breaks (a PEM written on one line of an environment file).
 * @throws Error when the text is not a public key.
 */
export function readPublicKey(pem: string): KeyObject {
  const key = createPublicKey(pem.includes('\\n') ? pem.replaceAll('\\n', '\n') : pem);
  if (key.type !== 'public') throw new Error('not a public key');
  return key;
}

/**
 * jose error codes that mean the keys could not be had, not that the token is bad: the fetch timed out,
 * the set is invalid, or (the generic code, which only the JWKS fetch uses) its answer was not 200 JSON.
 */
const KEYS_UNAVAILABLE = new Set(['ERR_JWKS_TIMEOUT', 'ERR_JWKS_INVALID', 'ERR_JOSE_GENERIC']);

/**
 * Verifies session tokens with the BFF's keys: a remote JWKS (fetched on first use, cached
 * {@link JWKS_CACHE_MS}, fetched again at most every {@link JWKS_COOLDOWN_MS} for an unknown `kid`,
 * each fetch limited to {@link JWKS_TIMEOUT_MS}) or a PEM key.
 */
export class TokenVerifier {
  readonly #key: KeyObject | JWTVerifyGetKey;
  /** Told when the keys could not be fetched (a JWKS that did not answer); the token is then `unverified`. */
  readonly #onKeysUnavailable: ((error: unknown) => void) | undefined;

  /**
   * @param keys - `jwksUrl` or `publicKeyPem` (one of them must be set).
   * @param onKeysUnavailable - told each time the JWKS could not be fetched.
   * @throws Error when neither is set, or the PEM is not a public key.
   */
  constructor(keys: TokenKeys, onKeysUnavailable?: (error: unknown) => void) {
    if (keys.publicKeyPem !== undefined) this.#key = readPublicKey(keys.publicKeyPem);
    else if (keys.jwksUrl !== undefined) {
      this.#key = createRemoteJWKSet(new URL(keys.jwksUrl), {
        cacheMaxAge: JWKS_CACHE_MS,
        cooldownDuration: JWKS_COOLDOWN_MS,
        timeoutDuration: JWKS_TIMEOUT_MS,
      });
    } else throw new Error('TokenVerifier needs jwksUrl or publicKeyPem');
    this.#onKeysUnavailable = onKeysUnavailable;
  }

  /**
   * Checks a well-formed token ({@link isWellFormedJwt}): its signature with the keys and, unless
   * `acceptExpired`, its `exp` and `nbf` with {@link EXPIRY_LEEWAY_SECONDS} of leeway.
   *
   * @param token - a cookie value that passed {@link isWellFormedJwt}.
   * @param acceptExpired - `true` on the routes that take an expired token (refresh, logout): only the signature counts.
   * @returns `valid`, `invalid_token`, `token_expired`, or `unverified` when the keys could not be fetched. Never rejects.
   */
  async verify(token: string, acceptExpired: boolean): Promise<TokenCheck> {
    try {
      if (acceptExpired) {
        await compactVerify(token, this.#key as KeyObject, { algorithms: TOKEN_ALGORITHMS });
      } else {
        await jwtVerify(token, this.#key as KeyObject, { algorithms: TOKEN_ALGORITHMS, clockTolerance: EXPIRY_LEEWAY_SECONDS });
      }
      return 'valid';
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (code === 'ERR_JWT_EXPIRED') return 'token_expired';
      if (typeof code === 'string' && code.startsWith('ERR_') && !KEYS_UNAVAILABLE.has(code)) return 'invalid_token';
      // No JOSE code: the JWKS fetch itself failed (refused, reset, not JSON); a timeout or an invalid set likewise.
      this.#onKeysUnavailable?.(error);
      return 'unverified';
    }
  }
}
