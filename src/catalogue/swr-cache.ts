/**
 * A stale-while-revalidate cache with single flight, over lru-cache's `fetchMethod`: concurrent misses
 * for one key share one load; an expired entry is answered at once while one refresh runs behind it;
 * a failed load is never stored; an entry whose refresh fails keeps being answered (docs/behaviour.md
 * "Resilience": "Outage").
 *
 * How a read of key `k` goes ({@link SwrCache.get}; ages from the entry's `fetchedAt`):
 *
 * | state of `k` | answer | upstream |
 * |---|---|---|
 * | fresh (younger than `ttlMs`) | the entry | none |
 * | loading, nothing stored yet | the same promise as the first caller | none more |
 * | stale, younger than `ttlMs + maxStaleMs` | the stale entry, at once | one refresh in the background |
 * | stale, its last refresh failed less than `retryMs` ago | the stale entry, at once | none |
 * | stale, older than `ttlMs + maxStaleMs` | the refreshed entry if the refresh settles within `refreshWaitMs` of its start, else the stale entry then (at once once the refresh is that old) | one refresh, running on behind the answer |
 * | absent | waits for the load | one load |
 *
 * And how a refresh ends:
 *
 * | refresh | entry |
 * |---|---|
 * | succeeds | replaced; fresh for `ttlMs` from its `fetchedAt` |
 * | fails, and `keepStale(error)` (default: every failure) | kept (stale-if-error); the next refresh after `retryMs` |
 * | fails, and not `keepStale(error)` (the catalogue: the BFF answered 404 or 410) | dropped; a read waiting for it gets the failure |
 *
 * So when the whole upstream hangs, a read of a cached key answers within `refreshWaitMs` at worst
 * (once per `retryMs` and key; at once otherwise), never after the upstream's time limit. There is no
 * upper age past which a stale entry is refused: an entry is only ever replaced by a successful
 * refresh or dropped by a definitive answer, a delete or clear (the purge), or the size bounds; while
 * its refresh fails, the old answer beats an error page, and every `retryMs` a read still tries again.
 *
 * lru-cache's `allowStaleOnFetchRejection` is not used because it resolves a failed miss to
 * `undefined`, which would lose the upstream's answer; the stale-if-error rule lives in the fetch
 * method instead.
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
  /**
   * How long a read of an entry older than `ttlMs + maxStaleMs` waits for its refresh, counted from
   * the refresh's start, before it answers the stale entry; default {@link DEFAULT_REFRESH_WAIT_MS}.
   */
  refreshWaitMs?: number;
  /** Whether a failed refresh keeps the stale entry (else it is dropped); default: always. */
  keepStale?: (error: unknown) => boolean;
  /** Clock, epoch milliseconds; default `Date.now`. */
  now?: () => number;
}

/** Default {@link SwrCacheOptions.refreshWaitMs}, in milliseconds. */
export const DEFAULT_REFRESH_WAIT_MS = 500;

/** What a bounded wait for a refresh resolves to when the bound passed first. */
const WAITED_TOO_LONG = Symbol('waited too long');

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
  readonly #refreshWaitMs: number;
  /** When each load in progress started (epoch ms), by key; an object per load, so a later one is told apart. */
  readonly #loading = new Map<string, { readonly at: number }>();

  constructor(options: SwrCacheOptions<V>) {
    this.ttlMs = options.ttlMs;
    this.max = options.max;
    this.#now = options.now ?? Date.now;
    this.#maxStaleMs = options.maxStaleMs ?? options.ttlMs;
    this.#refreshWaitMs = Math.max(0, options.refreshWaitMs ?? DEFAULT_REFRESH_WAIT_MS);
    const retryMs = Math.max(1, options.retryMs ?? Math.min(5_000, options.ttlMs));
    const keepStale = options.keepStale ?? (() => true);
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
      // A clock given in the options drives the times to live too (tests), read on every check.
      ...(options.now ? { perf: { now: options.now }, ttlResolution: 0 } : {}),
      ...(options.maxSize && options.sizeOf
        ? { maxSize: options.maxSize, sizeCalculation: (value: V) => Math.max(1, options.sizeOf?.(value) ?? 1) }
        : {}),
      fetchMethod: async (key, stale, { context, options: setOptions }) => {
        const started = { at: this.#now() };
        this.#loading.set(key, started);
        try {
          const value = await context(stale);
          // A value loaded elsewhere earlier (an entry shared by another instance) lives out its own time.
          const age = this.#now() - value.fetchedAt;
          if (age > 0) setOptions.ttl = Math.max(Math.min(retryMs, 1_000), options.ttlMs - age);
          return value;
        } catch (error) {
          if (stale === undefined || !keepStale(error)) throw error;
          // stale-if-error: keep answering the old entry, try again soon.
          setOptions.ttl = retryMs;
          return stale;
        } finally {
          if (this.#loading.get(key) === started) this.#loading.delete(key);
        }
      },
    });
  }

  /** True when the cache keeps entries (`ttlMs > 0`). */
  get enabled(): boolean {
    return this.#lru !== undefined;
  }

  /**
   * The value of `key`: cached, shared with a load in progress, stale while refreshing, or loaded (see
   * the module's table).
   *
   * @param load - called at most once at a time per key; its rejection reaches every waiter and is not cached.
   * @param outcome - receives how the read was answered: `stale` whenever the value answered is older
   *   than `ttlMs`.
   * @throws the load's rejection when nothing is stored for `key`, or when a refresh the read waited
   *   for failed and `keepStale` refused the stale entry.
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
    const pending = lru.fetch(key, { context: load, allowStale: !tooOld, status });
    let value: V | undefined;
    if (current !== undefined && tooOld && status.fetch !== 'hit') {
      // Too old to answer at once: wait for the refresh, but only until it is `refreshWaitMs` old.
      const started = this.#loading.get(key)?.at ?? this.#now();
      const waited = await waitAtMost(pending, started + this.#refreshWaitMs - this.#now());
      value = waited === WAITED_TOO_LONG ? current : waited;
    } else {
      value = await pending;
    }
    if (value === undefined) throw new Error('cache load resolved without a value');
    if (outcome) {
      if (status.returnedStale || this.#now() - value.fetchedAt > this.ttlMs) outcome('stale');
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

/**
 * `pending`'s value, or {@link WAITED_TOO_LONG} when it has not settled within `ms` milliseconds (at
 * once when `ms` ≤ 0); a rejection within the wait is thrown, a later one is ignored.
 */
async function waitAtMost<T>(pending: Promise<T>, ms: number): Promise<T | typeof WAITED_TOO_LONG> {
  if (ms <= 0) {
    pending.catch(() => undefined);
    return WAITED_TOO_LONG;
  }
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<typeof WAITED_TOO_LONG>((resolve) => {
    timer = setTimeout(resolve, ms, WAITED_TOO_LONG);
  });
  try {
    return await Promise.race([pending, bound]);
  } finally {
    clearTimeout(timer);
  }
}
