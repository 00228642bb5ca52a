/**
 * Failed logins per login identifier and client address (docs/behaviour.md "Rate limits and client
 * address": `RATE_LIMIT_LOGIN_FAILURES` per 15 minutes), so that password guessing stops at the limit
 * and nobody can lock a user out from another address. The identifier is kept only as an HMAC-SHA-256
 * with one random secret shared through the state (created once with `SET NX`), so every instance
 * counts alike and no login is stored in clear. While the shared state cannot be reached the counts
 * are kept in process memory.
 *
 * @module
 */
import { createHmac, randomBytes } from 'node:crypto';
import { MemoryStore } from './memory.js';
import { KEY_PREFIX, type SharedStore } from './store.js';

/** The counting window, in milliseconds (15 minutes). */
export const LOGIN_FAILURE_WINDOW_MS = 15 * 60_000;
/** How long the shared secret lives in the store, in milliseconds (one year; made again after). */
const SECRET_TTL_MS = 365 * 24 * 60 * 60_000;
const SECRET_KEY = `${KEY_PREFIX}login-failures-secret`;

/** See the module documentation. */
export class LoginFailures {
  readonly #store: SharedStore;
  readonly #fallback = new MemoryStore();
  readonly #max: number;
  #secret: string | undefined;
  #localSecret: string | undefined;

  /** @param max - failures allowed per window; `0` turns the check off. */
  constructor(store: SharedStore, max: number) {
    this.#store = store;
    this.#max = max;
  }

  /** True when the check is on. */
  get enabled(): boolean {
    return this.#max > 0;
  }

  async #key(login: string, address: string): Promise<string> {
    if (this.#secret === undefined) {
      const mine = randomBytes(32).toString('hex');
      try {
        this.#secret = (await this.#store.setIfAbsent(SECRET_KEY, mine, SECRET_TTL_MS)) ?? mine;
      } catch {
        this.#localSecret ??= mine;
      }
    }
    const secret = this.#secret ?? (this.#localSecret as string);
    const id = createHmac('sha256', secret).update(login.normalize('NFKC').trim().toLowerCase()).digest('hex');
    return `${KEY_PREFIX}login-failures:${id}:${address}`;
  }

  /**
   * Whether `login` from `address` has reached the limit.
   * @returns the seconds until the window ends when it has, else `undefined`.
   */
  async refused(login: string, address: string): Promise<number | undefined> {
    if (!this.enabled) return undefined;
    const key = await this.#key(login, address);
    const { count, ttlMs } = await this.#store.hits(key).catch(() => this.#fallback.hits(key));
    return count >= this.#max ? Math.max(1, Math.ceil(ttlMs / 1000)) : undefined;
  }

  /** Counts one failed login of `login` from `address`. */
  async failed(login: string, address: string): Promise<void> {
    if (!this.enabled) return;
    const key = await this.#key(login, address);
    await this.#store.countHit(key, LOGIN_FAILURE_WINDOW_MS).catch(() => this.#fallback.countHit(key, LOGIN_FAILURE_WINDOW_MS));
  }
}
