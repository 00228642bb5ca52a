/**
 * Failed logins per login identifier and client address (docs/behaviour.md "Rate limits and client
 * address": `RATE_LIMIT_LOGIN_FAILURES` per 15 minutes), so that password guessing stops at the limit
 * and nobody can lock a user out from another address; and per login identifier over all addresses
 * (`RATE_LIMIT_LOGIN_FAILURES_PER_LOGIN`), so that a guess spread over many addresses stops too. The
 * address counts by {@link addressKey} (IPv6: its /64). The identifier counts in its canonical form
 * ({@link canonicalLogin}): the BFF reads `529.982.247-25` and `52998224725` as one document number,
 * so they are one count here. The identifier is kept only as an HMAC-SHA-256
 * with one random secret shared through the state (created once with `SET NX`), so every instance
 * counts alike and no login is stored in clear. While the shared state cannot be reached the counts
 * are kept in process memory.
 *
 * @module
 */
import { createHmac, randomBytes } from 'node:crypto';
import { addressKey } from './address-key.js';
import { MemoryStore } from './memory.js';
import { KEY_PREFIX, type SharedStore } from './store.js';

/** The counting window, in milliseconds (15 minutes). */
export const LOGIN_FAILURE_WINDOW_MS = 15 * 60_000;
/** How long the shared secret lives in the store, in milliseconds (one year; made again after). */
const SECRET_TTL_MS = 365 * 24 * 60 * 60_000;
const SECRET_KEY = `${KEY_PREFIX}login-failures-secret`;

/** A login made only of digits and the punctuation a document number is written with (`529.982.247-25`, `12.345.678/0001-95`). */
const DOCUMENT_NUMBER = /^[\d\s./-]*\d[\d\s./-]*$/;

/**
 * The canonical form of a login identifier, under which its failures count: a document number (a
 * CPF or CNPJ, in any of its spellings) is its digits only; anything else (an e-mail, a user name)
 * is NFKC-normalised, trimmed and lower-cased. NFKC first, so full-width digits are digits.
 *
 * @example canonicalLogin('529.982.247-25') // '52998224725'
 * @example canonicalLogin('  Victim@Example.COM ') // 'victim@example.com'
 */
export function canonicalLogin(login: string): string {
  const normal = login.normalize('NFKC').trim();
  if (DOCUMENT_NUMBER.test(normal)) return normal.replace(/\D/g, '');
  return normal.toLowerCase();
}

/** The limits of {@link LoginFailures}; `0` turns one off. */
export interface LoginFailureLimits {
  /** Failures per identifier and client address per window (`RATE_LIMIT_LOGIN_FAILURES`). */
  readonly perAddress: number;
  /** Failures per identifier over all addresses per window (`RATE_LIMIT_LOGIN_FAILURES_PER_LOGIN`). */
  readonly perLogin: number;
}

/** See the module documentation. */
export class LoginFailures {
  readonly #store: SharedStore;
  readonly #fallback = new MemoryStore();
  readonly #limits: LoginFailureLimits;
  #secret: string | undefined;
  #localSecret: string | undefined;

  constructor(store: SharedStore, limits: LoginFailureLimits) {
    this.#store = store;
    this.#limits = limits;
  }

  /** True when a check is on. */
  get enabled(): boolean {
    return this.#limits.perAddress > 0 || this.#limits.perLogin > 0;
  }

  /** The keys of `login`'s two counts: from `address`, and over all addresses. */
  async #keys(login: string, address: string): Promise<{ address: string; login: string }> {
    if (this.#secret === undefined) {
      const mine = randomBytes(32).toString('hex');
      try {
        this.#secret = (await this.#store.setIfAbsent(SECRET_KEY, mine, SECRET_TTL_MS)) ?? mine;
      } catch {
        this.#localSecret ??= mine;
      }
    }
    const secret = this.#secret ?? (this.#localSecret as string);
    const id = createHmac('sha256', secret).update(canonicalLogin(login)).digest('hex');
    return { address: `${KEY_PREFIX}login-failures:${id}:${addressKey(address)}`, login: `${KEY_PREFIX}login-failures-all:${id}` };
  }

  /** Seconds until the window of `key` ends when its count has reached `max` (not `0`), else `undefined`. */
  async #over(key: string, max: number): Promise<number | undefined> {
    if (max === 0) return undefined;
    const { count, ttlMs } = await this.#store.hits(key).catch(() => this.#fallback.hits(key));
    return count >= max ? Math.max(1, Math.ceil(ttlMs / 1000)) : undefined;
  }

  async #count(key: string, max: number): Promise<void> {
    if (max === 0) return;
    await this.#store.countHit(key, LOGIN_FAILURE_WINDOW_MS).catch(() => this.#fallback.countHit(key, LOGIN_FAILURE_WINDOW_MS));
  }

  /**
   * Whether `login` has reached a limit: from `address`, or over all addresses.
   * @param address - the client address (an IPv6 one counts by its /64).
   * @returns the seconds until the window ends when it has, else `undefined`.
   */
  async refused(login: string, address: string): Promise<number | undefined> {
    if (!this.enabled) return undefined;
    const keys = await this.#keys(login, address);
    const [fromAddress, overall] = await Promise.all([
      this.#over(keys.address, this.#limits.perAddress),
      this.#over(keys.login, this.#limits.perLogin),
    ]);
    if (fromAddress === undefined) return overall;
    return overall === undefined ? fromAddress : Math.max(fromAddress, overall);
  }

  /** Counts one failed login (or second-factor code) of `login` from `address`, in both counts. */
  async failed(login: string, address: string): Promise<void> {
    if (!this.enabled) return;
    const keys = await this.#keys(login, address);
    await Promise.all([this.#count(keys.address, this.#limits.perAddress), this.#count(keys.login, this.#limits.perLogin)]);
  }
}
