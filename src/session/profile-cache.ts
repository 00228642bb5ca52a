/**
 * Profile de-duplication (spec 4.1 "Profile caching rule", spec 8): successful `GET /auth/user-profile`
 * answers cached per token, keyed by the SHA-256 hex digest of the token (never the raw token), time
 * to live 10 s from the fetch, at most 100 entries; concurrent reads with one token share one upstream
 * call. Failures (a 401 included) are never cached. An evict (logout, a mutation of the user) or a
 * clear during a fetch lets that fetch's waiters finish with its answer but keeps nothing.
 *
 * Also the refresh de-duplication: concurrent `POST /api/auth/refresh` with one token share one
 * upstream refresh, and its result is reused for 10 s so that a second tab does not present the
 * token the first refresh just replaced.
 *
 * @module
 */
import { LRUCache } from 'lru-cache';
import type { UpstreamResponse } from '../upstream/client.js';
import { tokenKey } from './hash.js';

/** Time to live of a profile entry, in milliseconds (spec 8). */
export const PROFILE_TTL_MS = 10_000;
/** Most profile entries kept (spec 8). */
export const PROFILE_MAX_ENTRIES = 100;

/** Carries a non-2xx upstream answer through the shared fetch so that every waiter gets it. */
export class UpstreamAnswerError extends Error {
  /** The answer; not enumerable, so that a logged error never carries the upstream's headers and body. */
  declare readonly response: UpstreamResponse;
  constructor(response: UpstreamResponse) {
    super(`upstream answered ${response.status}`);
    this.name = 'UpstreamAnswerError';
    Object.defineProperty(this, 'response', { value: response, enumerable: false });
  }
}

type Fetcher<V, C> = (token: string, context: C) => Promise<V>;

/**
 * A token-scoped cache with single flight: `get(token, fetch)` answers from the cache, joins a fetch in
 * progress for the same token, or starts one. Only resolved values are kept; a rejected fetch (for
 * example an {@link UpstreamAnswerError}) reaches every waiter and leaves nothing behind.
 */
export class TokenCache<V extends object, C = undefined> {
  readonly #cache: LRUCache<string, V, { token: string; context: C }>;
  readonly #onEvict: ((key: string) => void) | undefined;
  readonly #onRead: ((result: 'hit' | 'miss') => void) | undefined;
  /**
   * @param options.onEvict - told the key (SHA-256 hex digest of the token) of each {@link evict}, so that
   *   other instances can evict it too (docs/behaviour.md "Several instances").
   * @param options.onRead - told how each {@link get} was answered (the metrics): `hit` from the cache
   *   or by joining a fetch in flight, `miss` when it started the fetch.
   */
  constructor(options: {
    ttlMs: number;
    max: number;
    fetch: Fetcher<V, C>;
    onEvict?: ((key: string) => void) | undefined;
    onRead?: ((result: 'hit' | 'miss') => void) | undefined;
  }) {
    this.#onEvict = options.onEvict;
    this.#onRead = options.onRead;
    this.#cache = new LRUCache<string, V, { token: string; context: C }>({
      max: options.max,
      ttl: options.ttlMs,
      ttlAutopurge: false,
      updateAgeOnGet: false,
      allowStale: false,
      // An evict or clear while a fetch is in flight must not fail its waiters (lru-cache would abort
      // them): they get the fetched value, which is then not stored, since the entry was removed.
      ignoreFetchAbort: true,
      fetchMethod: (_key, _stale, { context }) => options.fetch(context.token, context.context),
    });
  }
  /**
   * The cached value for `token`, or the result of the (shared) fetch, which gets `context` (the first
   * caller's). `key`: the token's {@link tokenKey} when the caller has it. Rejects with the fetch's error.
   */
  async get(token: string, context: C, key: string = tokenKey(token)): Promise<V> {
    // A fresh entry is answered at once; `fetch` (which also joins a fetch in flight) only on a miss.
    const cached = this.#cache.get(key);
    if (cached !== undefined) {
      this.#onRead?.('hit');
      return cached;
    }
    const onRead = this.#onRead;
    if (onRead === undefined) return this.#fetch(key, token, context);
    const status: LRUCache.Status<string, V, { token: string; context: C }> = {};
    try {
      return await this.#fetch(key, token, context, status);
    } finally {
      onRead(status.fetch === 'inflight' ? 'hit' : 'miss');
    }
  }
  async #fetch(key: string, token: string, context: C, status?: LRUCache.Status<string, V, { token: string; context: C }>): Promise<V> {
    const value = await this.#cache.fetch(key, status ? { context: { token, context }, status } : { context: { token, context } });
    if (value === undefined) throw new Error('token cache fetch resolved without a value');
    return value;
  }
  /** Stores a value fetched elsewhere (the profile loaded by login). */
  set(token: string, value: V): void {
    this.#cache.set(tokenKey(token), value);
  }
  /** Evicts the token's entry at once (logout, mutation of the user). */
  evict(token: string): void {
    const key = tokenKey(token);
    this.#cache.delete(key);
    this.#onEvict?.(key);
  }
  /** Evicts an entry by its key (the token's SHA-256 hex digest): an eviction announced by another instance. */
  evictKey(key: string): void {
    this.#cache.delete(key);
  }
  /** Empties the cache. */
  clear(): void {
    this.#cache.clear();
  }
  /** Entries held now, in-flight fetches included. */
  get size(): number {
    return this.#cache.size;
  }
}
