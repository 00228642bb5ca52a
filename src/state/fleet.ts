/**
 * What one instance must tell the others (docs/behaviour.md "Several instances"):
 *
 * - **purge**: `POST /api/cache/purge` on any instance empties the proxy caches of every instance
 *   within 1 s. The purge generation is a counter in the shared store (`INCR`); a purge moves it and
 *   announces it by pub/sub. Each instance also reads it again on a catalogue read at most every
 *   {@link GENERATION_CHECK_MS}, so a missed announcement cannot leave an instance stale. Shared
 *   catalogue entries carry the generation in their key, so a purge voids them too.
 * - **evictions**: a profile-cache eviction (logout, profile update, refresh) is announced with the
 *   token's SHA-256 digest; every instance evicts that entry (and the session's sticker handshake).
 * - **session ends**: a logout (or a token the BFF refused) is announced with the token's SHA-256
 *   digest; every instance ends the live streams that session holds (docs/behaviour.md "Live streams").
 * - **resync**: after the store was unreachable, announcements may have been missed: the session
 *   caches are emptied and the generation read again.
 *
 * With the in-memory store the same calls serve one process.
 *
 * @module
 */
import { type CacheRegistry, clearCaches } from './caches.js';
import { KEY_PREFIX, type SharedStore } from './store.js';

/** The key of the purge generation. */
export const GENERATION_KEY = `${KEY_PREFIX}purge-generation`;
/** Longest time between two reads of the purge generation by a catalogue read, in milliseconds. */
export const GENERATION_CHECK_MS = 500;

/** Why a session ended: a logout, or its token refused by the BFF. */
export type SessionEnd = 'logout' | 'refused';

/** See the module documentation. */
export class Fleet {
  readonly #store: SharedStore;
  readonly #caches: CacheRegistry;
  readonly #evictors: ((key: string) => void)[] = [];
  readonly #sessionEnders: ((key: string, reason: SessionEnd) => void)[] = [];
  readonly #sessionCaches: string[] = [];
  #generation = 0;
  #checkedAt = 0;
  #checking = false;

  constructor(store: SharedStore, caches: CacheRegistry) {
    this.#store = store;
    this.#caches = caches;
    store.subscribe({
      event: (event) => {
        if (event.type === 'purge') this.#moveTo(event.generation);
        else if (event.type === 'session-end') for (const end of this.#sessionEnders) end(event.key, event.reason);
        else if (event.type === 'evict') for (const evict of this.#evictors) evict(event.key);
      },
      resync: () => {
        for (const name of this.#sessionCaches) this.#caches.get(name)?.clear();
        this.#checkedAt = 0;
        this.checkGeneration();
      },
    });
  }

  /** Reads the purge generation once (at start); a store that cannot be reached leaves it at 0 until the next check. */
  async init(): Promise<void> {
    try {
      this.#moveTo(Number((await this.#store.get(GENERATION_KEY)) ?? '0'));
      this.#checkedAt = Date.now();
    } catch {
      // read again by the next catalogue read
    }
  }

  /** The purge generation as this instance knows it. */
  get generation(): number {
    return this.#generation;
  }

  /**
   * Registers what an announced eviction evicts here (`key`: the token's SHA-256 hex digest), and the
   * registry name of the cache to empty on a resync.
   */
  onEvict(cacheName: string, evict: (key: string) => void): void {
    this.#sessionCaches.push(cacheName);
    this.#evictors.push(evict);
  }

  /** Announces an eviction to every instance; a store that cannot be reached is ignored (the entry's own lifetime bounds it). */
  announceEvict(key: string): void {
    this.#store.publish({ type: 'evict', key }).catch(() => {});
  }

  /** Registers what an announced session end ends here (`key`: the token's SHA-256 hex digest): the session's live streams. */
  onSessionEnd(end: (key: string, reason: SessionEnd) => void): void {
    this.#sessionEnders.push(end);
  }

  /**
   * Announces to every instance, this one included, that the session of `key` (the token's SHA-256
   * hex digest) ended; a store that cannot be reached is ignored here (the streams' own end at the
   * token's `exp` bounds them), but this instance is told all the same.
   */
  announceSessionEnd(key: string, reason: SessionEnd): void {
    this.#store.publish({ type: 'session-end', key, reason }).catch(() => {
      for (const end of this.#sessionEnders) end(key, reason);
    });
  }

  /**
   * Empties this instance's caches, moves the generation and announces it.
   * @returns the entries each cache held here, by name, and the new generation — `undefined` when the
   *   store could not be reached (this instance's caches are emptied all the same; the others are not).
   */
  async purge(): Promise<{ cleared: Record<string, number>; generation: number | undefined }> {
    const cleared = clearCaches(this.#caches);
    let generation: number;
    try {
      generation = await this.#store.increment(GENERATION_KEY);
    } catch {
      return { cleared, generation: undefined };
    }
    this.#generation = Math.max(this.#generation, generation);
    await this.#store.publish({ type: 'purge', generation }).catch(() => {});
    return { cleared, generation };
  }

  /**
   * Reads the generation again, in the background, when it was last read more than
   * {@link GENERATION_CHECK_MS} ago; a higher one empties the caches. Never waits and never throws.
   */
  checkGeneration(now = Date.now()): void {
    if (this.#checking || now - this.#checkedAt < GENERATION_CHECK_MS) return;
    this.#checking = true;
    this.#checkedAt = now;
    this.#store
      .get(GENERATION_KEY)
      .then((text) => this.#moveTo(Number(text ?? '0')))
      .catch(() => {})
      .finally(() => {
        this.#checking = false;
      });
  }

  #moveTo(generation: number): void {
    if (!Number.isSafeInteger(generation) || generation <= this.#generation) return;
    this.#generation = generation;
    clearCaches(this.#caches);
  }
}
