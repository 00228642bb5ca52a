/**
 * The session holds its streams (docs/behaviour.md "Live streams", "The session holds the stream"): a
 * stream opened with a session ends at the token's `exp`, at a logout on any instance and when the
 * BFF refused the token (both announced through the fleet's channel, `state/fleet.ts`, within 1 s).
 *
 * @module
 */
import { decodeJwt } from 'jose';
import type { SessionEndReason } from './sse.js';

/** What a session's end ends: one stream. */
export interface SessionHolder {
  endSession(reason: SessionEndReason): void;
}

/** Longest delay a Node.js timer takes, in milliseconds (about 24.8 days); a later `exp` is checked again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The token's `exp` in epoch milliseconds, or `undefined` when it has none (read, not verified: the
 * auth gate verified it, when keys are configured).
 */
export function expiryOf(token: string): number | undefined {
  try {
    const exp = decodeJwt(token).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/** See the module documentation. */
export class SessionHolds {
  readonly #bySession = new Map<string, Set<SessionHolder>>();
  readonly #now: () => number;

  /** @param now - the clock of the tokens' `exp`, in epoch milliseconds. */
  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /**
   * Holds `holder` for the session of `key` (the token's SHA-256 hex digest) until the token's `exp`
   * (`expiresAt`, epoch milliseconds; `undefined`: no end of its own) or the session's announced end.
   * A token already expired ends the holder at once.
   * @param endsWithinMs - how long the holder lives at most anyway (its stream's `STREAM_MAX_LIFETIME_MS`),
   *   in milliseconds: an `exp` after that needs no timer (the stream has ended before); default: no limit.
   * @returns the function that lets go of it (the stream ended otherwise).
   */
  hold(key: string, expiresAt: number | undefined, holder: SessionHolder, endsWithinMs = Number.POSITIVE_INFINITY): () => void {
    let holders = this.#bySession.get(key);
    if (holders === undefined) {
      holders = new Set();
      this.#bySession.set(key, holders);
    }
    holders.add(holder);
    let timer: NodeJS.Timeout | undefined;
    const endsBy = this.#now() + endsWithinMs;
    const arm = () => {
      if (expiresAt === undefined) return;
      const left = expiresAt - this.#now();
      if (left <= 0) {
        release();
        holder.endSession('expired');
        return;
      }
      // A token that outlives the stream: its lifetime ends it first, no timer of its own is needed.
      if (expiresAt > endsBy) return;
      timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
    };
    const release = () => {
      clearTimeout(timer);
      const set = this.#bySession.get(key);
      if (set === undefined) return;
      set.delete(holder);
      if (set.size === 0) this.#bySession.delete(key);
    };
    arm();
    return release;
  }

  /** Ends every stream the session of `key` holds on this instance (an announced logout or refusal). */
  end(key: string, reason: 'logout' | 'refused'): void {
    const holders = this.#bySession.get(key);
    if (holders === undefined) return;
    this.#bySession.delete(key);
    for (const holder of holders) holder.endSession(reason);
  }

  /** Sessions holding streams now. */
  get sessions(): number {
    return this.#bySession.size;
  }
}
