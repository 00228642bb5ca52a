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
