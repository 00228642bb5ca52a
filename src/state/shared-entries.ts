/**
 * Cache entries shared by every instance (docs/behaviour.md "Several instances": "catalogue cache: one
 * shared entry per key; a cold or stale key is fetched by one instance while the others wait for it
 * or serve the stale entry"). It sits behind each instance's own in-process cache: a miss or a
 * refresh there asks {@link SharedEntries.load}, which answers
 *
 * | shared entry | answer | upstream |
 * |---|---|---|
 * | fresh (younger than the time to live) | the entry | none |
 * | stale or absent, lock taken here (`SET NX PX`) | fetched now, stored for every instance | one call |
 * | stale or absent, another instance holds the lock | its entry once stored (waiting up to {@link SHARED_WAIT_MS}), else the stale entry | none |
 * | the store cannot be reached, or the wait ran out with nothing stale | fetched here | one call |
 *
 * Only cacheable answers are stored (the caller says which). Entries live twice the time to live in
 * the store (so that a stale one can still be served while one instance refreshes it) and their key
 * holds the purge generation (`fleet.ts`), so a purge voids them. With the in-memory store the
 * in-process cache is already the only one: `load` fetches.
 *
 * @module
 */
import { hash } from 'node:crypto';
import type { Fleet } from './fleet.js';
import { KEY_PREFIX, type SharedStore } from './store.js';

/** How long one instance may hold a key's refresh lock, in milliseconds. */
export const SHARED_LOCK_MS = 5_000;
/** Longest wait for the instance holding the lock, in milliseconds. */
export const SHARED_WAIT_MS = 1_000;

/** A shared entry: an upstream answer and when it was fetched (epoch milliseconds). */
export interface SharedEntry {
  readonly status: number;
  readonly body: Buffer;
  readonly fetchedAt: number;
}

/** How a load was answered. */
export type SharedOutcome = 'shared' | 'fetched' | 'stale';

function encode(entry: SharedEntry): Buffer {
  return Buffer.concat([Buffer.from(`${JSON.stringify({ status: entry.status, fetchedAt: entry.fetchedAt })}\n`), entry.body]);
}

function decode(bytes: Buffer | null): SharedEntry | undefined {
  if (!bytes) return undefined;
  const newline = bytes.indexOf(10);
  if (newline < 0) return undefined;
  try {
    const head = JSON.parse(bytes.subarray(0, newline).toString()) as { status?: unknown; fetchedAt?: unknown };
    if (typeof head.status !== 'number' || typeof head.fetchedAt !== 'number') return undefined;
    return { status: head.status, fetchedAt: head.fetchedAt, body: bytes.subarray(newline + 1) };
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** See the module documentation. */
export class SharedEntries {
  readonly #store: SharedStore;
  readonly #fleet: Fleet;
  readonly #name: string;
  readonly #ttlMs: number;

  /**
   * @param name - names the entries in the store (`catalogue`).
   * @param ttlMs - how long an entry is fresh, in milliseconds.
   */
  constructor(store: SharedStore, fleet: Fleet, name: string, ttlMs: number) {
    this.#store = store;
    this.#fleet = fleet;
    this.#name = name;
    this.#ttlMs = ttlMs;
  }

  /**
   * The entry of `key` (see the module documentation).
   *
   * @param fetch - the upstream call; its rejection reaches the caller.
   * @param cacheable - whether a fetched answer may be stored for every instance.
   */
  async load(
    key: string,
    fetch: () => Promise<{ status: number; body: Buffer }>,
    cacheable: (answer: { status: number; body: Buffer }) => boolean,
  ): Promise<{ entry: SharedEntry; outcome: SharedOutcome }> {
    const fetchHere = async () => ({ entry: { ...(await fetch()), fetchedAt: Date.now() }, outcome: 'fetched' as const });
    if (this.#store.kind === 'memory') return fetchHere();
    this.#fleet.checkGeneration();
    const entryKey = `${KEY_PREFIX}${this.#name}:${this.#fleet.generation}:${hash('sha256', key, 'hex')}`;
    let stale: SharedEntry | undefined;
    let owner: string | undefined;
    try {
      stale = decode(await this.#store.getBytes(entryKey));
      if (stale && Date.now() - stale.fetchedAt < this.#ttlMs) return { entry: stale, outcome: 'shared' };
      const lockValue = `${process.pid}:${Math.random()}`;
      if ((await this.#store.setIfAbsent(`${entryKey}:lock`, lockValue, SHARED_LOCK_MS)) === null) owner = lockValue;
    } catch {
      return fetchHere();
    }
    if (owner !== undefined) {
      try {
        const fetched = await fetchHere();
        if (cacheable(fetched.entry)) await this.#store.set(entryKey, encode(fetched.entry), 2 * this.#ttlMs).catch(() => {});
        return fetched;
      } finally {
        await this.#store.deleteIfEquals(`${entryKey}:lock`, owner).catch(() => {});
      }
    }
    const since = stale?.fetchedAt ?? 0;
    const deadline = Date.now() + SHARED_WAIT_MS;
    for (let pause = 20; Date.now() < deadline; pause = Math.min(pause * 2, 200)) {
      if (stale) return { entry: stale, outcome: 'stale' };
      await sleep(pause);
      try {
        const entry = decode(await this.#store.getBytes(entryKey));
        if (entry && entry.fetchedAt > since) return { entry, outcome: 'shared' };
      } catch {
        break;
      }
    }
    return fetchHere();
  }
}
