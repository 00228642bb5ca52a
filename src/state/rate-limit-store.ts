/**
 * The counters of the rate limits (docs/behaviour.md "Rate limits and client address"), as a store of
 * `@fastify/rate-limit`: fixed windows, counted in the shared state for the limits every instance
 * must share (pre-authentication, beacon: a route's `shared: true`), in process memory for the others
 * (the general API limit stays off the shared hot path), and in process memory too while the shared
 * state cannot be reached (per-process counting until it is back).
 *
 * @module
 */
import { LRUCache } from 'lru-cache';
import { KEY_PREFIX, type SharedStore } from './store.js';

/** Most keys counted in process memory. */
export const LOCAL_COUNTER_MAX_KEYS = 50_000;

/** What `@fastify/rate-limit` expects of its store's answer: hits so far and milliseconds left. */
interface Hits {
  current: number;
  ttl: number;
}
type Callback = (error: Error | null, hits: Hits) => void;

/** The per-route options the store reads (a route's `config.rateLimit`). */
export interface CounterOptions {
  /** Count in the shared state (every instance together). */
  shared?: boolean;
}

/** The store class `@fastify/rate-limit` takes as its `store` option. */
export type RateLimitStoreClass = new (options: CounterOptions) => {
  incr(key: string, callback: Callback, timeWindow: number, max: number): void;
  child(routeOptions: CounterOptions): unknown;
};

/**
 * A store class over `shared` (see the module documentation). Every route's store shares one
 * in-process counter map, so that routes grouped by `groupId` count together.
 */
export function rateLimitStore(shared: SharedStore): RateLimitStoreClass {
  const local = new LRUCache<string, { count: number; resetAt: number }>({ max: LOCAL_COUNTER_MAX_KEYS });
  const countLocally = (key: string, windowMs: number): Hits => {
    const now = Date.now();
    const entry = local.get(key);
    if (!entry || entry.resetAt <= now) {
      local.set(key, { count: 1, resetAt: now + windowMs });
      return { current: 1, ttl: windowMs };
    }
    entry.count++;
    return { current: entry.count, ttl: entry.resetAt - now };
  };
  return class SharedRateLimitStore {
    readonly #shared: boolean;
    constructor(options: CounterOptions) {
      this.#shared = options.shared === true && shared.kind === 'redis';
    }
    incr(key: string, callback: Callback, timeWindow: number): void {
      if (!this.#shared) {
        callback(null, countLocally(key, timeWindow));
        return;
      }
      shared.countHit(`${KEY_PREFIX}rate:${key}`, timeWindow).then(
        ({ count, ttlMs }) => callback(null, { current: count, ttl: ttlMs }),
        () => callback(null, countLocally(key, timeWindow)),
      );
    }
    child(routeOptions: CounterOptions): SharedRateLimitStore {
      return new SharedRateLimitStore(routeOptions);
    }
  };
}
