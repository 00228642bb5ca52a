/**
 * The counters of the rate limits (docs/behaviour.md "Rate limits and client address"): fixed windows,
 * counted in the shared state for the limits every instance must share (pre-authentication, beacon: a
 * route's `shared: true`), in process memory for the others (the general API limit and the address
 * ceiling stay off the shared hot path), and in process memory too while the shared state cannot be
 * reached (per-process counting until it is back).
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

/**
 * One key's window in process memory. The counter hands out its own entry (no answer object per
 * hit): read it at once, the next hit of the key changes it.
 */
export interface LocalWindow {
  /** Hits so far in the window, this one included. */
  count: number;
  /** When the window ends, in `Date.now()` milliseconds. */
  resetAt: number;
}

/**
 * The in-process counters: one map for every limit counted in process memory (keys of different
 * limits must differ: each limit prefixes or suffixes its own), the least recently counted key
 * forgotten first past {@link LOCAL_COUNTER_MAX_KEYS}.
 */
export class LocalCounters {
  readonly #windows = new LRUCache<string, LocalWindow>({ max: LOCAL_COUNTER_MAX_KEYS });

  /**
   * Counts one hit of `key` in its window of `windowMs` milliseconds (a new window from `now` when
   * none is running), synchronously.
   * @returns the key's window after the hit (see {@link LocalWindow}).
   */
  hit(key: string, windowMs: number, now: number = Date.now()): LocalWindow {
    const entry = this.#windows.get(key);
    if (entry === undefined || entry.resetAt <= now) {
      const fresh = { count: 1, resetAt: now + windowMs };
      this.#windows.set(key, fresh);
      return fresh;
    }
    entry.count++;
    return entry;
  }
}

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
 * A store class over `shared` (see the module documentation), counting in process memory in `local`.
 * Every route's store shares `local`, so that routes grouped by `groupId` count together.
 */
export function rateLimitStore(shared: SharedStore, local: LocalCounters): RateLimitStoreClass {
  const countLocally = (key: string, windowMs: number): Hits => {
    const now = Date.now();
    const window = local.hit(key, windowMs, now);
    return { current: window.count, ttl: window.resetAt - now };
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
