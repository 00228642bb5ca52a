/**
 * A stale-while-revalidate cache with single flight, over lru-cache's `fetchMethod`: concurrent misses
 * for one key share one load; an expired entry is answered at once while one refresh runs behind it;
 * a failed load is never stored.
 *
 * How a read of key `k` goes ({@link SwrCache.get}):
 *
 * | state of `k` | answer | upstream |
 * |---|---|---|
 * | fresh (younger than `ttlMs`) | the entry | none |
 * | loading | the same promise as the first caller | none more |
 * | stale, younger than `ttlMs + maxStaleMs` | the stale entry, at once | one refresh in the background |
 * | stale, older than that | waits for the refresh | one refresh |
 * | absent | waits for the load | one load |
 *
 * A refresh that fails keeps the stale entry (stale-if-error) and tries again after `retryMs`; a load
 * with nothing stale behind it rejects for every waiter and leaves nothing behind. lru-cache's
 * `allowStaleOnFetchRejection` is not used because it resolves a failed miss to `undefined`, which
 * would lose the upstream's answer; the stale-if-error rule lives in the fetch method instead.
 *
 * @module
 */
import { LRUCache } from 'lru-cache';

/** What a cache entry carries: when it was loaded, in epoch milliseconds. */
export interface SwrEntry {
  readonly fetchedAt: number;
}

/** Settings of a {@link SwrCache}. Times in milliseconds. */
export interface SwrCacheOptions<V> {
  /** Time to live of an entry; `0` disables the cache (every read loads). */
  ttlMs: number;
  /** Most entries kept. */
  max: number;
  /** Most bytes kept, as measured by `sizeOf` (both or neither). */
  maxSize?: number;
  /** Size of an entry in bytes (at least 1). */
  sizeOf?: (value: V) => number;
  /** How long an expired entry may still be answered at once while it refreshes; default `ttlMs`. */
  maxStaleMs?: number;
  /** After a failed refresh, the stale entry is kept this long before the next try; default `min(5000, ttlMs)`. */
  retryMs?: number;
  /** Clock, epoch milliseconds; default `Date.now`. */
  now?: () => number;
}

/** Loads the value of a key; gets the stale value when there is one. Rejects to leave nothing cached. */
export type SwrLoader<V> = (stale: V | undefined) => Promise<V>;

/** How a read was answered (for logs and tests). */
export type SwrOutcome = 'hit' | 'miss' | 'stale' | 'inflight' | 'bypass';

/** See the module documentation. */
export class SwrCache<V extends SwrEntry> {
  /** The time to live, in milliseconds. */
  readonly ttlMs: number;
  /** Most entries kept. */
  readonly max: number;
  readonly #lru: LRUCache<string, V, SwrLoader<V>> | undefined;
  readonly #now: () => number;
  readonly #maxStaleMs: number;

  constructor(options: SwrCacheOptions<V>) {
    this.ttlMs = options.ttlMs;
    this.max = options.max;
    this.#now = options.now ?? Date.now;
    this.#maxStaleMs = options.maxStaleMs ?? options.ttlMs;
    const retryMs = Math.max(1, options.retryMs ?? Math.min(5_000, options.ttlMs));
    if (options.ttlMs <= 0) {
      this.#lru = undefined;
      return;
    }
    this.#lru = new LRUCache<string, V, SwrLoader<V>>({
      max: options.max,
      ttl: options.ttlMs,
      ttlAutopurge: false,
      updateAgeOnGet: false,
      allowStale: true,
      noDeleteOnStaleGet: true,
      // A delete or clear during a load must not fail its waiters with lru-cache's abort (a 500): the
      // load finishes for them and is not stored (see `clear`).
      ignoreFetchAbort: true,
      ...(options.maxSize && options.sizeOf
        ? { maxSize: options.maxSize, sizeCalculation: (value: V) => Math.max(1, options.sizeOf?.(value) ?? 1) }
        : {}),
      fetchMethod: async (_key, stale, { context, options: setOptions }) => {
        try {
          const value = await context(stale);
          // A value loaded elsewhere earlier (an entry shared by another instance) lives out its own time.
          const age = this.#now() - value.fetchedAt;
          if (age > 0) setOptions.ttl = Math.max(Math.min(retryMs, 1_000), options.ttlMs - age);
          return value;
        } catch (error) {
          if (stale === undefined) throw error;
          // stale-if-error: keep answering the old entry, try again soon.
          setOptions.ttl = retryMs;
          return stale;
        }
      },
    });
  }

  /** True when the cache keeps entries (`ttlMs > 0`). */
  get enabled(): boolean {
    return this.#lru !== undefined;
  }

  /**
   * The value of `key`: cached, shared with a load in progress, stale while refreshing, or loaded.
   *
   * @param load - called at most once at a time per key; its rejection reaches every waiter and is not cached.
   * @param outcome - receives how the read was answered.
   */
  async get(key: string, load: SwrLoader<V>, outcome?: (how: SwrOutcome) => void): Promise<V> {
    const lru = this.#lru;
    if (!lru) {
      outcome?.('bypass');
      return load(undefined);
    }
    const current = lru.peek(key, { allowStale: true });
    const tooOld = current !== undefined && this.#now() - current.fetchedAt > this.ttlMs + this.#maxStaleMs;
    const status: LRUCache.Status<string, V, SwrLoader<V>> = {};
    const value = await lru.fetch(key, { context: load, allowStale: !tooOld, status });
    if (value === undefined) throw new Error('cache load resolved without a value');
    if (outcome) {
      if (status.returnedStale) outcome('stale');
      else if (status.fetch === 'hit') outcome('hit');
      else if (status.fetch === 'inflight') outcome('inflight');
      else outcome('miss');
    }
    return value;
  }

  /** The entry of `key` without loading, expired or not; `undefined` when absent. */
  peek(key: string): V | undefined {
    return this.#lru?.peek(key, { allowStale: true });
  }

  /** Forgets one key. */
  delete(key: string): void {
    this.#lru?.delete(key);
  }

  /** Empties the cache (loads in progress finish but are answered only to their waiters). */
  clear(): void {
    this.#lru?.clear();
  }

  /** Entries held now, loads in progress included. */
  get size(): number {
    return this.#lru?.size ?? 0;
  }
}
