/**
 * The {@link SharedStore} in process memory: what one process needs when there is no `REDIS_URL`
 * (docs/behaviour.md "Configuration": only one process may then serve). Bounded by entries and bytes
 * (lru-cache); each entry has its own time to live. Events are delivered to this process's listeners.
 *
 * Values of {@link MEMORY_STORE_BYTES_FROM} characters or more (the exactly-once guard's stored
 * answers) are kept as UTF-8 bytes, outside the JavaScript heap, and decoded when read: each outlives
 * the young generation, and as strings they would grow V8's old generation to several times the live
 * set under a burst of deposits.
 *
 * @module
 */
import { LRUCache } from 'lru-cache';
import type { ReplaceCondition, SharedStore, StateEvent, WriteOptions } from './store.js';

/** Most entries kept in memory. */
export const MEMORY_STORE_MAX_ENTRIES = 20_000;
/** Most bytes of values kept in memory (32 MiB). */
export const MEMORY_STORE_MAX_BYTES = 32 * 1024 * 1024;
/** Length, in characters, from which a value is kept as bytes (see the module documentation). */
export const MEMORY_STORE_BYTES_FROM = 256;

type Listener = Parameters<SharedStore['subscribe']>[0];

/** See the module documentation. */
export class MemoryStore implements SharedStore {
  readonly kind = 'memory';
  readonly up = true;
  readonly #entries: LRUCache<string, string | Buffer>;
  readonly #listeners: Listener[] = [];

  /** @param options.now - the clock of the entries' lifetimes, in milliseconds (tests); default `performance.now`. */
  constructor(options: { now?: () => number } = {}) {
    this.#entries = new LRUCache<string, string | Buffer>({
      max: MEMORY_STORE_MAX_ENTRIES,
      maxSize: MEMORY_STORE_MAX_BYTES,
      sizeCalculation: (value, key) => Math.max(1, value.length + key.length),
      ttlAutopurge: false,
      ...(options.now === undefined ? {} : { perf: { now: options.now }, ttlResolution: 0 }),
    });
  }

  /** One process has no replica: `options` changes nothing. */
  async setIfAbsent(key: string, value: string, ttlMs: number, _options?: WriteOptions): Promise<string | null> {
    const existing = this.#entries.get(key);
    if (existing !== undefined) return existing.toString();
    this.#entries.set(key, value, { ttl: ttlMs });
    return null;
  }
  async set(key: string, value: string | Buffer, ttlMs: number, _options?: WriteOptions): Promise<void> {
    const kept = typeof value === 'string' && value.length >= MEMORY_STORE_BYTES_FROM ? Buffer.from(value, 'utf8') : value;
    this.#entries.set(key, kept, { ttl: ttlMs });
  }
  async replaceIf(key: string, value: string, ttlMs: number, condition: ReplaceCondition, _options?: WriteOptions): Promise<boolean> {
    const existing = this.#entries.get(key)?.toString();
    if (existing === undefined ? condition.ifAbsent !== true : !condition.ifEquals.includes(existing)) return false;
    await this.set(key, value, ttlMs);
    return true;
  }
  async get(key: string): Promise<string | null> {
    return this.#entries.get(key)?.toString() ?? null;
  }
  async getBytes(key: string): Promise<Buffer | null> {
    const value = this.#entries.get(key);
    if (value === undefined) return null;
    return Buffer.isBuffer(value) ? value : Buffer.from(value);
  }
  async deleteIfEquals(key: string, value: string): Promise<void> {
    if (this.#entries.get(key)?.toString() === value) this.#entries.delete(key);
  }
  async increment(key: string): Promise<number> {
    const next = Number(this.#entries.get(key)?.toString() ?? '0') + 1;
    this.#entries.set(key, String(next));
    return next;
  }
  async countHit(key: string, windowMs: number): Promise<{ count: number; ttlMs: number }> {
    const ttlMs = this.#entries.getRemainingTTL(key);
    if (!this.#entries.has(key) || ttlMs <= 0) {
      this.#entries.set(key, '1', { ttl: windowMs });
      return { count: 1, ttlMs: windowMs };
    }
    const count = Number(this.#entries.get(key)?.toString() ?? '0') + 1;
    this.#entries.set(key, String(count), { ttl: ttlMs });
    return { count, ttlMs };
  }
  async hits(key: string): Promise<{ count: number; ttlMs: number }> {
    const value = this.#entries.get(key);
    return value === undefined
      ? { count: 0, ttlMs: 0 }
      : { count: Number(value.toString()), ttlMs: Math.max(0, this.#entries.getRemainingTTL(key)) };
  }
  async publish(event: StateEvent): Promise<void> {
    for (const listener of this.#listeners) listener.event(event);
  }
  subscribe(listener: Listener): void {
    this.#listeners.push(listener);
  }
  async close(): Promise<void> {
    this.#entries.clear();
  }
}
