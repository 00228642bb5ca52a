/**
 * The state every instance of the proxy shares (docs/behaviour.md "Several instances", "Money moves: exactly
 * once"): one small key-value interface with two implementations — in process memory
 * (`memory.ts`, one process only) and Redis (`redis.ts`, every instance behind any load balancer).
 * The idempotency records of the money moves, the shared catalogue entries and their locks, the purge
 * generation and the fan-out events go through it.
 *
 * Values are text or bytes; times are milliseconds. Every method rejects with
 * {@link StateUnavailableError} when the store cannot be reached: money moves then fail closed, caches
 * fall back to process memory.
 *
 * @module
 */

/** Thrown when the shared state cannot be reached (Redis down, timed out, not connected yet). */
export class StateUnavailableError extends Error {
  constructor(message = 'The shared state cannot be reached', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StateUnavailableError';
  }
}

/** A fan-out event: every instance (this one included) receives it. */
export type StateEvent =
  /** The purge generation moved to `generation`: empty the proxy caches. */
  | { readonly type: 'purge'; readonly generation: number }
  /** A session's profile entry is void (logout, profile update, refresh): `key` is the token's SHA-256 hex digest. */
  | { readonly type: 'evict'; readonly key: string }
  /**
   * A session ended (logout, or its token refused by the BFF): `key` is the token's SHA-256 hex digest;
   * the live streams it holds end on every instance (docs/behaviour.md "Live streams").
   */
  | { readonly type: 'session-end'; readonly key: string; readonly reason: 'logout' | 'refused' }
  /**
   * Money moves' answers an instance that is stopping could not store (`state/idempotency.ts`): the
   * other instances take them into their own queue; `from` names the sender, which ignores its own.
   */
  | { readonly type: 'answers'; readonly from: string; readonly answers: readonly HandedAnswer[] };

/** A money move's answer handed from one instance to the others (see {@link StateEvent}). */
export interface HandedAnswer {
  /** The record's store key (`front-proxy:idem:<SHA-256 hex>`). */
  readonly key: string;
  /** The done record's text. */
  readonly record: string;
  /** The pending marker's text as last written (the record replaces it, or a free key). */
  readonly marker: string;
  /** How long the record is kept once stored, in milliseconds. */
  readonly ttlMs: number;
}

/** How a write must be kept (Redis with replicas; the memory store ignores it). */
export interface WriteOptions {
  /**
   * Acknowledged by every replica that could be promoted and by at least the `REDIS_MIN_REPLICAS_ACK`
   * floor (a money move's records; `state/replicas.ts`), never by what the primary reports at the moment.
   */
  readonly replicated?: boolean;
}

/** When {@link SharedStore.replaceIf} writes. */
export interface ReplaceCondition {
  /** The values the key may hold now for the write to happen. */
  readonly ifEquals: readonly string[];
  /** The write also happens when the key is absent. */
  readonly ifAbsent?: boolean;
}

/** The shared key-value store (see the module documentation). */
export interface SharedStore {
  /** `memory` (this process only) or `redis` (shared by every instance). */
  readonly kind: 'memory' | 'redis';
  /** True while the store can be reached (always for memory). */
  readonly up: boolean;
  /** Why money moves' records are refused now (Redis: unreachable, or not acknowledged), or `undefined`. */
  readonly refusal?: string | undefined;
  /**
   * Sets `key` to `value` for `ttlMs` unless it exists (Redis `SET NX PX … GET`, one round trip).
   * With `replicated`, the write must also be acknowledged by the replicas (`WAIT`, bounded; see
   * {@link WriteOptions}): when they do not in time, or the call gives up before its write answered, the
   * key is deleted again (when it still holds `value`) and the call rejects with
   * {@link StateUnavailableError}. `value` must be unique to the attempt (the delete compares it).
   * @returns `null` when this call set it, else the value already there.
   */
  setIfAbsent(key: string, value: string, ttlMs: number, options?: WriteOptions): Promise<string | null>;
  /**
   * Sets `key` to `value` for `ttlMs`, whatever was there. With `replicated`, waits (bounded) for the
   * replicas to acknowledge it; not in time rejects with
   * {@link StateUnavailableError} (the value may be written on the primary alone: write it again).
   */
  set(key: string, value: string | Buffer, ttlMs: number, options?: WriteOptions): Promise<void>;
  /**
   * Sets `key` to `value` for `ttlMs` only when its value now is one of `condition.ifEquals`, or it
   * is absent and `condition.ifAbsent` is true (one atomic step: Redis runs it as one script). With
   * `replicated`, waits (bounded) for the replicas as {@link set} does; fewer in time rejects with
   * {@link StateUnavailableError} (the value may be written on the primary alone: try it again, with
   * `value` among `ifEquals` so that the retry recognises its own write).
   * @returns `true` when `key` holds `value` after the call, `false` when another value kept it.
   */
  replaceIf(key: string, value: string, ttlMs: number, condition: ReplaceCondition, options?: WriteOptions): Promise<boolean>;
  /** The text value of `key`, or `null`. */
  get(key: string): Promise<string | null>;
  /** The bytes of `key`, or `null`. */
  getBytes(key: string): Promise<Buffer | null>;
  /** Deletes `key` when its value is still `value` (a lock's owner releases only its own lock). */
  deleteIfEquals(key: string, value: string): Promise<void>;
  /** Adds one to the integer at `key` (0 when absent) and returns the new value. */
  increment(key: string): Promise<number>;
  /**
   * Counts one more hit in the fixed window of `key`: the window starts with the first hit and lasts
   * `windowMs` (Redis `INCR` + `PEXPIRE NX` + `PTTL`, one round trip).
   * @returns the hits so far in the window and the milliseconds left of it.
   */
  countHit(key: string, windowMs: number): Promise<{ count: number; ttlMs: number }>;
  /** Reads the hits of the window of `key` without counting one (0 when none). */
  hits(key: string): Promise<{ count: number; ttlMs: number }>;
  /** Sends an event to every instance, this one included. */
  publish(event: StateEvent): Promise<void>;
  /**
   * Receives every event, and `resync` after the store was unreachable (events may have been missed
   * meanwhile: the listener should drop what they would have voided).
   */
  subscribe(listener: { event(event: StateEvent): void; resync(): void }): void;
  /** Closes the connections (at app close). */
  close(): Promise<void>;
}

/** The key prefix of everything the proxy keeps in the shared store. */
export const KEY_PREFIX = 'front-proxy:';
