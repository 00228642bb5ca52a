/**
 * The lifetimes of the open live streams (docs/behaviour.md "Live streams": `STREAM_MAX_LIFETIME_MS`).
 * Every stream of a process lives the same time from its opening, so streams reach their end in the
 * order they opened: {@link Lifetimes} keeps them in that order and one timer, armed for the oldest,
 * instead of a timer per stream (a process holds thousands of open streams for minutes each).
 *
 * @module
 */

/** A stream whose lifetime is kept: told once, when its lifetime is over. */
export interface LifetimeHolder {
  expire(): void;
}

/** See the module documentation. */
export class Lifetimes {
  readonly #lifetimeMs: number;
  readonly #now: () => number;
  /** Each holder's end (`now()` milliseconds), in the order they started: the order they end. */
  readonly #ends = new Map<LifetimeHolder, number>();
  #timer: NodeJS.Timeout | undefined;

  /**
   * @param lifetimeMs - `STREAM_MAX_LIFETIME_MS`: how long each stream lives, in milliseconds (at
   *   most 2^31 - 1, the longest delay of a Node.js timer).
   * @param now - the clock, in milliseconds; default `performance.now`.
   */
  constructor(lifetimeMs: number, now: () => number = () => performance.now()) {
    this.#lifetimeMs = lifetimeMs;
    this.#now = now;
  }

  /** Holders whose lifetime runs now. */
  get size(): number {
    return this.#ends.size;
  }

  /** Starts the lifetime of `holder`: its `expire` runs `lifetimeMs` from now, unless it is {@link stop}ped before. */
  start(holder: LifetimeHolder): void {
    this.#ends.set(holder, this.#now() + this.#lifetimeMs);
    if (this.#timer === undefined) this.#timer = setTimeout(this.#sweep, this.#lifetimeMs);
  }

  /** Stops the lifetime of `holder` (its stream ended otherwise); nothing when it is not running. */
  stop(holder: LifetimeHolder): void {
    if (!this.#ends.delete(holder) || this.#ends.size > 0) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Expires every holder whose end has come, oldest first, and arms the timer for the next one. */
  readonly #sweep = (): void => {
    this.#timer = undefined;
    const now = this.#now();
    for (const [holder, endsAt] of this.#ends) {
      if (endsAt > now) {
        // (A stream started by an `expire` has armed a timer for a whole lifetime: the oldest comes first.)
        clearTimeout(this.#timer);
        this.#timer = setTimeout(this.#sweep, endsAt - now);
        return;
      }
      this.#ends.delete(holder);
      holder.expire();
    }
  };
}
