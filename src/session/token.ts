/**
 * The session token checked before it costs anything (docs/behaviour.md "Which routes need a session"): a
 * cookie value that is not a well-formed JWT (three base64url parts, a JSON object as header and as
 * payload), or that carries a control character or anything outside the base64url alphabet, is no
 * session; with the BFF's keys (`JWT_JWKS_URL`, `JWT_PUBLIC_KEY` or `JWT_SECRET`) a token whose
 * signature fails is none either, and one whose `exp` has passed (60 s leeway) is expired, except
 * where a route accepts expired tokens (refresh, logout).
 *
 * The algorithms a key accepts follow the key ({@link KEY_ALGORITHMS}); decoding and verification
 * are jose's (`jwtVerify` with its `algorithms` option, `createLocalJWKSet` over the last key set
 * fetched). Every failure is `invalid_token` but an expiry; only a JWKS never fetched yet lets a
 * token through `unverified`.
 *
 * @module
 */
import type { KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { compactVerify, createLocalJWKSet, decodeJwt, decodeProtectedHeader, type JWTPayload, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { Agent, request } from 'undici';
import { KEY_ALGORITHMS, readTokenPublicKey, type TokenPublicKey } from './token-keys.js';
import { tokenKey } from './hash.js';

/** Longest session cookie value read as a token, in characters (a larger value is no session). */
export const MAX_TOKEN_LENGTH = 8192;

/** Clock leeway of the `exp` (and `nbf`) check, in seconds (docs/behaviour.md "Configuration"). */
export const EXPIRY_LEEWAY_SECONDS = 60;

export { KEY_ALGORITHMS, keyKindOf, type TokenKeyKind } from './token-keys.js';

/**
 * The algorithms a JWKS may be used with: every asymmetric one of {@link KEY_ALGORITHMS} (a published
 * set holds no secret). Which key of the set a token may use is jose's choice by `kid`, `kty`, `crv`
 * and the key's own `alg` (`createLocalJWKSet`), so the algorithm still follows the key.
 */
export const JWKS_ALGORITHMS: readonly string[] = [
  ...new Set(Object.entries(KEY_ALGORITHMS).flatMap(([kind, algs]) => (kind === 'secret' ? [] : algs))),
];

/** How long a fetched JWKS serves before it is fetched again in the background, in milliseconds (10 minutes). */
export const JWKS_MAX_AGE_MS = 10 * 60_000;
/**
 * Shortest time between two JWKS fetches, in milliseconds (30 s): an unknown `kid` causes at most one
 * refetch per period, and a failed fetch is not tried again before it ends.
 */
export const JWKS_COOLDOWN_MS = 30_000;
/** Limit of one JWKS fetch, headers and body, in milliseconds. */
export const JWKS_TIMEOUT_MS = 5_000;
/** Longest time a request waits on a JWKS fetch (an unknown `kid`, or no key set yet), in milliseconds. */
export const JWKS_WAIT_MS = 1_000;
/** Largest JWKS answer read, in bytes (256 KiB); a larger one is a failed fetch. */
export const JWKS_MAX_BYTES = 256 * 1024;

/** Three base64url parts; the signature may be empty. Only these characters: no control character, space or escape. */
const COMPACT_JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * The payload of `value` when its first two parts decode to JSON objects (read with jose, nothing
 * verified), else `undefined`. `value` has passed the length and alphabet checks already.
 */
function decodedPayload(value: string): JWTPayload | undefined {
  try {
    decodeProtectedHeader(value);
    return decodeJwt(value);
  } catch {
    return undefined;
  }
}

/** Whether `value` has the length and the alphabet of a compact JWT (see {@link isWellFormedJwt}). */
function hasJwtShape(value: string): boolean {
  return value.length <= MAX_TOKEN_LENGTH && COMPACT_JWT.test(value);
}

/**
 * Whether `value` is a well-formed JWT: at most {@link MAX_TOKEN_LENGTH} characters of the base64url
 * alphabet in three dot-separated parts, whose first two decode to JSON objects (read with jose,
 * nothing verified). A value with a control character (CR, LF, NUL, U+2028…), a space, a `%` or any
 * other character is not. `key`: the value's {@link tokenKey} when the caller has it already.
 *
 * @example isWellFormedJwt('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln') // true
 * @example isWellFormedJwt('abc\r\nX-Injected: yes') // false
 */
export function isWellFormedJwt(value: string, key?: string): boolean {
  if (!hasJwtShape(value)) return false;
  key ??= tokenKey(value);
  const known = wellFormed.get(key);
  if (known !== undefined) return known;
  const verdict = decodedPayload(value) !== undefined;
  wellFormed.set(key, verdict);
  return verdict;
}

/** Tokens whose form {@link isWellFormedJwt} remembers (the least recently used forgotten first). */
export const WELL_FORMED_CACHE_SIZE = 4_096;

/**
 * The verdicts of {@link isWellFormedJwt} on recent tokens (a session sends its token with every
 * request; decoding it again each time was 2-3% of a request's CPU), keyed by the token's SHA-256
 * (64 hexadecimal characters): the cache never holds a token, nor a slice of the `Cookie` header it
 * came in, so its memory stays bounded (about 0.5 MB) whatever the tokens sent.
 */
const wellFormed = new LRUCache<string, boolean>({ max: WELL_FORMED_CACHE_SIZE });

/** Most token strings one {@link TokenChecks} remembers. */
export const TOKEN_CHECKS_MAX_ENTRIES = 4_096;

/**
 * Most characters of token text one {@link TokenChecks} holds (4 MiB; a token is one byte a
 * character): 4,096 tokens of 1 KB, fewer when they are longer, whatever the tokens sent.
 */
export const TOKEN_CHECKS_MAX_CHARS = 4 * 1024 * 1024;

/**
 * What the checks of one session token string found, remembered by {@link TokenChecks}: only what
 * depends on the string alone, and, once a {@link TokenVerifier} verified it, the key it verified
 * with. What depends on the clock (`exp`, `nbf`) is checked again on every request.
 */
export interface CheckedToken {
  /** The token's {@link tokenKey} (SHA-256, 64 hexadecimal characters). */
  readonly key: string;
  /** The payload's `exp` when it is a number (epoch seconds), else `undefined`. */
  readonly exp: number | undefined;
  /** The payload's `nbf` when it is a number (epoch seconds), else `undefined`. */
  readonly nbf: number | undefined;
  /**
   * The key, or the JWKS key set, the token's signature held with (set by {@link TokenVerifier.verify}
   * after jose verified it); `undefined` until then, and after a check that failed.
   */
  signedWith: object | undefined;
  /**
   * Whether jose's checks of the claims that do not depend on the clock passed (a payload that is a
   * JSON object, numeric `iat`, `nbf` and `exp`): set once a full verification said `valid` or
   * `token_expired`, which jose only says after those checks.
   */
  claimsChecked: boolean;
}

/**
 * The checks of session token strings that depend on the string alone (docs/behaviour.md "Which
 * routes need a session": well-formed, decoded, its digest), made once per token rather than once per
 * request: a session sends the same token with every request. Remembered by the exact string (a
 * lookup hashes and compares the whole string; no prefix, no digest match), in a least-recently-used
 * cache of at most {@link TOKEN_CHECKS_MAX_ENTRIES} tokens and {@link TOKEN_CHECKS_MAX_CHARS}
 * characters. A value that is too long or outside the base64url alphabet is refused before any
 * lookup and never remembered. Each remembered token is a copy of its own, never a slice of the
 * `Cookie` header it was cut from (which would keep the whole header alive).
 */
export class TokenChecks {
  readonly #cache = new LRUCache<string, CheckedToken | false>({
    max: TOKEN_CHECKS_MAX_ENTRIES,
    maxSize: TOKEN_CHECKS_MAX_CHARS,
    sizeCalculation: (_checked, token) => token.length,
  });

  /**
   * The checks of `value`, remembered or made now: `undefined` when `value` is not a well-formed JWT
   * (the verdict of {@link isWellFormedJwt}).
   */
  of(value: string): CheckedToken | undefined {
    if (value.length > MAX_TOKEN_LENGTH) return undefined;
    const known = this.#cache.get(value);
    if (known !== undefined) return known === false ? undefined : known;
    if (!COMPACT_JWT.test(value)) return undefined;
    const payload = decodedPayload(value);
    const checked: CheckedToken | false =
      payload === undefined
        ? false
        : { key: tokenKey(value), exp: numeric(payload.exp), nbf: numeric(payload.nbf), signedWith: undefined, claimsChecked: false };
    // A copy: `value` is a slice of the request's `Cookie` header. Base64url text is one byte a character.
    this.#cache.set(Buffer.from(value, 'latin1').toString('latin1'), checked);
    return checked === false ? undefined : checked;
  }
}

/** `value` when it is a number, else `undefined`. */
function numeric(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

/**
 * The outcome of checking a session cookie value:
 * - `valid`: well-formed, and verified when keys are configured;
 * - `unverified`: well-formed, but no JWKS was ever fetched (the JWKS did not answer since the start):
 *   it is used as a session and the BFF decides;
 * - `malformed` / `invalid_token`: no session (a bad signature, an unknown key, an algorithm the key
 *   does not accept, any other failure);
 * - `token_expired`: the signature holds but `exp` has passed beyond the leeway.
 */
export type TokenCheck = 'valid' | 'unverified' | 'malformed' | 'invalid_token' | 'token_expired';

/** The BFF's token-signing keys, as the configuration holds them (exactly one is set). */
export interface TokenKeys {
  /** URL of the BFF's JWKS (`JWT_JWKS_URL`). */
  readonly jwksUrl?: string | undefined;
  /** The BFF's public key in PEM (`JWT_PUBLIC_KEY`). */
  readonly publicKeyPem?: string | undefined;
  /** The BFF's HMAC secret (`JWT_SECRET`, at least 32 bytes of UTF-8). */
  readonly secret?: string | undefined;
}

/** What a {@link TokenVerifier} reports, for its log lines. */
export interface TokenVerifierEvents {
  /** A token passed `unverified`: no JWKS was ever fetched. */
  unverified?: (cause: unknown) => void;
  /** A JWKS fetch failed (`keysHeld`: whether an older key set keeps serving). */
  jwksFailed?: (cause: unknown, keysHeld: boolean) => void;
}

/**
 * Reads a PEM public key for verification ({@link readTokenPublicKey}: SPKI `-----BEGIN PUBLIC KEY-----`,
 * PKCS#1 RSA or an X.509 certificate; an RSA-PSS key as the RSA key jose verifies PS algorithms with).
 * Literal `\n` sequences count as line breaks (a PEM written on one line of an environment file).
 * @throws Error saying why when the text is not a public key a token may be signed with (a private key among them).
 */
export function readPublicKey(pem: string): TokenPublicKey {
  const read = readTokenPublicKey(pem.includes('\\n') ? pem.replaceAll('\\n', '\n') : pem);
  if ('problem' in read) throw new Error(`JWT_PUBLIC_KEY: ${read.problem}`);
  return read;
}

/** Waits for `promise` at most `ms` milliseconds; `undefined` when the time ran out first. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, ms, undefined);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The BFF's JWKS, fetched by the proxy itself: the last good set serves while a refetch runs, fails
 * or hangs. A fetch has {@link JWKS_TIMEOUT_MS} (headers and body) and {@link JWKS_MAX_BYTES}; after
 * the first, fetches are at least {@link JWKS_COOLDOWN_MS} apart whatever asks for them (staleness
 * after {@link JWKS_MAX_AGE_MS}, an unknown `kid`, a failure); one runs at a time.
 */
export class JwksKeys {
  readonly #url: URL;
  readonly #events: TokenVerifierEvents;
  readonly #now: () => number;
  /** Its own connection (closed with the verifier), never the upstream pools. */
  readonly #agent = new Agent({ connections: 1, keepAliveTimeout: 30_000, headersTimeout: JWKS_TIMEOUT_MS, bodyTimeout: JWKS_TIMEOUT_MS });
  readonly #closing = new AbortController();
  #keys: JWTVerifyGetKey | undefined;
  #fetchedAt = Number.NEGATIVE_INFINITY;
  #startedAt = Number.NEGATIVE_INFINITY;
  #pending: Promise<void> | undefined;
  /** Why the last fetch failed (`undefined` after a good one). */
  lastError: unknown;

  /**
   * @param url - the JWKS URL (`JWT_JWKS_URL`).
   * @param events - told of each failed fetch.
   * @param now - clock in epoch milliseconds.
   */
  constructor(url: string, events: TokenVerifierEvents = {}, now: () => number = () => Date.now()) {
    this.#url = new URL(url);
    this.#events = events;
    this.#now = now;
  }

  /**
   * The last good key set (`undefined` before any fetch succeeded). When it is older than
   * {@link JWKS_MAX_AGE_MS}, a refetch starts in the background; the caller never waits for it.
   */
  current(): JWTVerifyGetKey | undefined {
    if (this.#now() - this.#fetchedAt > JWKS_MAX_AGE_MS) void this.refresh();
    return this.#keys;
  }

  /**
   * Starts a fetch unless one runs (it is joined) or the last one started less than
   * {@link JWKS_COOLDOWN_MS} ago (nothing is started). Never rejects.
   * @returns the running fetch, or `undefined` when none runs.
   */
  refresh(): Promise<void> | undefined {
    if (this.#pending) return this.#pending;
    const now = this.#now();
    if (now - this.#startedAt < JWKS_COOLDOWN_MS || this.#closing.signal.aborted) return undefined;
    this.#startedAt = now;
    this.#pending = this.#fetch().then(
      (keys) => {
        this.#keys = keys;
        this.#fetchedAt = this.#now();
        this.lastError = undefined;
      },
      (error: unknown) => {
        this.lastError = error;
        if (!this.#closing.signal.aborted) this.#events.jwksFailed?.(error, this.#keys !== undefined);
      },
    );
    void this.#pending.finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /**
   * Asks for a newer key set (a token named a `kid` the set lacks, or no set was ever fetched) and
   * waits for it until {@link JWKS_WAIT_MS} after the fetch started (a request that comes later while
   * it runs does not wait).
   * @returns the key set then held (possibly the same, or none).
   */
  async renewed(): Promise<JWTVerifyGetKey | undefined> {
    const running = this.refresh();
    // Waited for until JWKS_WAIT_MS after the fetch started: a request arriving later does not wait.
    const left = this.#startedAt + JWKS_WAIT_MS - this.#now();
    if (running && left > 0) await within(running, left);
    return this.#keys;
  }

  /** Cancels a running fetch and closes the connection. */
  async close(): Promise<void> {
    this.#closing.abort();
    await this.#agent.close();
  }

  /**
   * One fetch: `GET` the URL (no redirect followed), a 200 JSON answer of at most
   * {@link JWKS_MAX_BYTES} that jose accepts as a key set.
   * @throws Error on a transport failure, the time limit, another status, an oversized or invalid answer.
   */
  async #fetch(): Promise<JWTVerifyGetKey> {
    const signal = AbortSignal.any([this.#closing.signal, AbortSignal.timeout(JWKS_TIMEOUT_MS)]);
    const { statusCode, body } = await request(this.#url, {
      method: 'GET',
      headers: { accept: 'application/json, application/jwk-set+json' },
      dispatcher: this.#agent,
      signal,
    });
    if (statusCode !== 200) {
      // Read and dropped (a destroyed body would raise an error event of its own).
      await body.dump({ limit: JWKS_MAX_BYTES, signal });
      throw new Error(`the JWKS answered ${statusCode}`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > JWKS_MAX_BYTES) throw new Error(`the JWKS is over ${JWKS_MAX_BYTES} bytes`);
      chunks.push(chunk);
    }
    return createLocalJWKSet(JSON.parse(Buffer.concat(chunks).toString('utf8')));
  }
}

/**
 * Verifies session tokens with the BFF's keys (docs/behaviour.md "Which routes need a session"): a PEM
 * public key or an HMAC secret, with the algorithms of {@link KEY_ALGORITHMS} for that key; or a
 * JWKS ({@link JwksKeys}, fetched at once), with {@link JWKS_ALGORITHMS}, each token checked against
 * the key of the set its header names, or against each matching key when several match (a set in
 * rotation: no `kid`, or a shared one). A request waits on the JWKS only when its `kid` is unknown or
 * no set was ever fetched, and then at most {@link JWKS_WAIT_MS}.
 */
export class TokenVerifier {
  readonly #key: KeyObject | Uint8Array | undefined;
  readonly #jwks: JwksKeys | undefined;
  readonly #algorithms: readonly string[];
  readonly #events: TokenVerifierEvents;

  /**
   * @param keys - exactly one of `jwksUrl`, `publicKeyPem`, `secret`.
   * @param events - told when a token passes unverified and when a JWKS fetch fails.
   * @param now - clock of the JWKS's age and of the time between fetches, in epoch milliseconds (not of the tokens' `exp`).
   * @throws Error when none is set, or the PEM is not a public key a token may be signed with ({@link readPublicKey}).
   */
  constructor(keys: TokenKeys, events: TokenVerifierEvents = {}, now: () => number = () => Date.now()) {
    this.#events = events;
    if (keys.publicKeyPem !== undefined) {
      const { key, algorithms } = readPublicKey(keys.publicKeyPem);
      this.#key = key;
      this.#algorithms = algorithms;
    } else if (keys.secret !== undefined) {
      this.#key = new TextEncoder().encode(keys.secret);
      this.#algorithms = KEY_ALGORITHMS.secret;
    } else if (keys.jwksUrl !== undefined) {
      this.#jwks = new JwksKeys(keys.jwksUrl, events, now);
      this.#algorithms = JWKS_ALGORITHMS;
      void this.#jwks.refresh();
    } else throw new Error('TokenVerifier needs jwksUrl, publicKeyPem or secret');
  }

  /** The JWKS behind this verifier, when it verifies with one. */
  get jwks(): JwksKeys | undefined {
    return this.#jwks;
  }

  /**
   * Checks a well-formed token ({@link isWellFormedJwt}): its signature with the keys and, unless
   * `acceptExpired`, its `exp` and `nbf` with {@link EXPIRY_LEEWAY_SECONDS} of leeway.
   *
   * @param token - a cookie value that passed {@link isWellFormedJwt}.
   * @param acceptExpired - `true` on the routes that take an expired token (refresh, logout): only the signature counts.
   * @param checked - the token's {@link TokenChecks} entry: told what this check found, for {@link remembered}.
   * @returns `valid`, `token_expired`, `invalid_token` for every other failure, or `unverified` only
   *   while no JWKS was ever fetched. Never rejects.
   */
  async verify(token: string, acceptExpired: boolean, checked?: CheckedToken): Promise<TokenCheck> {
    if (this.#jwks === undefined) {
      const key = this.#key as KeyObject | Uint8Array;
      return remember(checked, key, acceptExpired, settled(await this.#attempt(token, acceptExpired, key)));
    }
    const keys = this.#jwks.current() ?? (await this.#jwks.renewed());
    if (keys === undefined) {
      // Nothing to check the signature with; an algorithm no JWKS key may use is still refused.
      if (!this.#algorithms.includes(headerAlgorithm(token))) return 'invalid_token';
      this.#events.unverified?.(this.#jwks.lastError ?? new Error('no JWKS fetched yet'));
      return 'unverified';
    }
    const first = await this.#attempt(token, acceptExpired, keys);
    if (first !== NO_MATCHING_KEY) return remember(checked, keys, acceptExpired, first);
    // The header names a key the set lacks: the BFF may have rotated its keys.
    const renewed = await this.#jwks.renewed();
    if (renewed === undefined || renewed === keys) return remember(checked, keys, acceptExpired, 'invalid_token');
    return remember(checked, renewed, acceptExpired, settled(await this.#attempt(token, acceptExpired, renewed)));
  }

  /**
   * The verdict on a token from what an earlier {@link verify} of the same string found, without
   * verifying it again: when its signature held with the key this verifier holds now (for a JWKS,
   * the very key set {@link JwksKeys.current} serves: a refetched set, whatever it holds, verifies
   * every token again), `valid` where `acceptExpired`, else the clock's checks of `nbf` and `exp`
   * made now, as jose makes them ({@link EXPIRY_LEEWAY_SECONDS} of leeway, whole seconds of
   * `Date.now()`): `invalid_token` before `nbf`, `token_expired` from `exp`, `valid` between.
   * `undefined` when nothing is remembered that settles it: the caller runs {@link verify}.
   */
  remembered(checked: CheckedToken, acceptExpired: boolean): TokenCheck | undefined {
    const signedWith = checked.signedWith;
    if (signedWith === undefined) return undefined;
    if (signedWith !== (this.#jwks === undefined ? this.#key : this.#jwks.current())) return undefined;
    if (acceptExpired) return 'valid';
    if (!checked.claimsChecked) return undefined;
    const now = Math.floor(Date.now() / 1000);
    if (checked.nbf !== undefined && checked.nbf > now + EXPIRY_LEEWAY_SECONDS) return 'invalid_token';
    if (checked.exp !== undefined && checked.exp <= now - EXPIRY_LEEWAY_SECONDS) return 'token_expired';
    return 'valid';
  }

  /** Closes the JWKS connection and cancels a running fetch. */
  async close(): Promise<void> {
    await this.#jwks?.close();
  }

  /**
   * One check with jose: the verdict, or {@link NO_MATCHING_KEY} when a key set holds no key for the
   * token's header. When several keys of the set match the header (no `kid`, or a `kid` shared while
   * keys rotate), jose names them all (`ERR_JWKS_MULTIPLE_MATCHING_KEYS`, whose error iterates over the
   * matching keys of the algorithm's key type): each is tried in the set's order, at most
   * {@link MAX_MATCHING_KEYS}; the token is `valid` when one verifies it, `token_expired` when one
   * verifies its signature but `exp` has passed, `invalid_token` when none does.
   */
  async #attempt(
    token: string,
    acceptExpired: boolean,
    key: KeyObject | Uint8Array | JWTVerifyGetKey,
  ): Promise<TokenCheck | typeof NO_MATCHING_KEY> {
    try {
      return await this.#check(token, acceptExpired, key);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ERR_JWKS_NO_MATCHING_KEY') return NO_MATCHING_KEY;
      if (code !== 'ERR_JWKS_MULTIPLE_MATCHING_KEYS' || !isAsyncIterable(error)) return verdictOf(code);
      let verdict: TokenCheck = 'invalid_token';
      let tried = 0;
      for await (const candidate of error) {
        if (++tried > MAX_MATCHING_KEYS) break;
        try {
          return await this.#check(token, acceptExpired, candidate as CryptoKey);
        } catch (failure) {
          if (verdictOf(errorCode(failure)) === 'token_expired') verdict = 'token_expired';
        }
      }
      return verdict;
    }
  }

  /**
   * jose's verification with one key or key set: resolves `valid`.
   * @throws jose's error (an expiry is `ERR_JWT_EXPIRED`, thrown only once the signature held).
   */
  async #check(token: string, acceptExpired: boolean, key: KeyObject | CryptoKey | Uint8Array | JWTVerifyGetKey): Promise<'valid'> {
    const algorithms = this.#algorithms as string[];
    if (acceptExpired) await compactVerify(token, key as KeyObject, { algorithms });
    else await jwtVerify(token, key as KeyObject, { algorithms, clockTolerance: EXPIRY_LEEWAY_SECONDS });
    return 'valid';
  }
}

/**
 * Most keys of a JWKS tried for one token when several match its header (a set in rotation holds
 * two or three): a token cannot make the proxy run more signature checks than this, whatever the
 * size of the published set.
 */
export const MAX_MATCHING_KEYS = 8;

/** The `code` of a jose error (`undefined` for anything else). */
function errorCode(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}

/** The verdict of a failed check: an expiry (the signature held) or `invalid_token`. */
function verdictOf(code: unknown): TokenCheck {
  return code === 'ERR_JWT_EXPIRED' ? 'token_expired' : 'invalid_token';
}

/** Whether `value` can be read with `for await` (jose's `JWKSMultipleMatchingKeys` can). */
function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] === 'function';
}

/** The `alg` of a token's header ('' when it has none or cannot be read). */
function headerAlgorithm(token: string): string {
  try {
    const { alg } = decodeProtectedHeader(token);
    return typeof alg === 'string' ? alg : '';
  } catch {
    return '';
  }
}

/** jose found no key of the set for the token's `kid`, `alg` and key type. */
const NO_MATCHING_KEY = Symbol('no matching key');

/**
 * Records in `checked` what a verification with `key` found, and gives its verdict back: the
 * signature held when jose said `valid`, or `token_expired` (an expiry is only found once the
 * signature held); a full check (not `acceptExpired`) that said either also passed the claims' checks
 * that do not depend on the clock. Any other verdict forgets the key: nothing but a signature that
 * held is ever remembered.
 */
function remember(checked: CheckedToken | undefined, key: object, acceptExpired: boolean, verdict: TokenCheck): TokenCheck {
  if (checked === undefined) return verdict;
  if (verdict === 'valid' || verdict === 'token_expired') {
    checked.signedWith = key;
    if (!acceptExpired) checked.claimsChecked = true;
  } else {
    checked.signedWith = undefined;
  }
  return verdict;
}

/** A verdict, with a key still missing after the refetch counted as `invalid_token`. */
function settled(check: TokenCheck | typeof NO_MATCHING_KEY): TokenCheck {
  return check === NO_MATCHING_KEY ? 'invalid_token' : check;
}
