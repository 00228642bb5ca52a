/**
 * The registry of the proxy's own caches (profile, catalogue, sticker handshakes…), by name, so that
 * the purge routes (spec 4.10 `/api/cache/purge`, the dev-only purge) empty them together and the
 * debug route can list their sizes.
 *
 * @module
 */

/** A cache the purge can empty. */
export interface ClearableCache {
  clear(): void;
  readonly size: number;
}

/**
 * How a cache read was answered (docs/behaviour.md "Operations", `cache_requests_total`): `hit` without an
 * upstream call of its own (a read that joined a load already in progress included), `miss` when it
 * loaded, `stale` when an expired entry was answered while it refreshes.
 */
export type CacheResult = 'hit' | 'miss' | 'stale';

/** Told of each read of a named cache (the metrics); the cache names are those of {@link CacheRegistry}. */
export interface CacheReadObserver {
  /** One read of the cache `cache` (`profile`, `catalogue`, `catalogue-index`). */
  cacheRead(cache: string, result: CacheResult): void;
}

/** The caches of one app, by name. */
export type CacheRegistry = Map<string, ClearableCache>;

/**
 * Empties every registered cache.
 * @returns the number of entries each cache held before, by name.
 */
export function clearCaches(caches: CacheRegistry): Record<string, number> {
  const cleared: Record<string, number> = {};
  for (const [name, cache] of caches) {
    cleared[name] = cache.size;
    cache.clear();
  }
  return cleared;
}
