/**
 * When the client sends a refused call again, and after how long: it honours `Retry-After` on
 * 503 and 429, so that browsers back off instead of coming straight back, jittered and bounded.
 *
 * | call | 503 or 429 with `Retry-After` |
 * |---|---|
 * | `GET` (a read) | sent again |
 * | any other method with an `Idempotency-Key` (the money moves always carry one) | sent again only when the envelope's `error` is a refusal that sent nothing upstream: 503 `upstream_busy`, `upstream_circuit_open`, `overloaded`, 429 `rate_limited` (docs/behaviour.md "Error envelope") |
 * | any other method without an `Idempotency-Key` | never |
 *
 * Why a key even for a refusal that sent nothing: the envelope's `error` of an upstream failure
 * is the upstream's own reason, so a BFF that did the work and then answered 503 `overloaded`
 * would read the same; with the key, the proxy replays the first answer or refuses with 409
 * instead of sending the move twice.
 *
 * Bounds: at most {@link RETRY_AFTER_MAX_RETRIES} more sends per call, at most
 * {@link RETRY_AFTER_MAX_WAIT_MS} of waiting per call in all; a `Retry-After` that would pass the
 * bound is not waited for at all (the call fails at once with the refusal). Each wait is the
 * `Retry-After` plus a random part of up to half of it (at least up to
 * {@link RETRY_AFTER_MIN_JITTER_MS}), so that browsers refused together do not come back together.
 * No `Retry-After` (or one that cannot be read): no retry.
 *
 * @module
 */

/** Statuses whose `Retry-After` the client honours. */
export const RETRY_AFTER_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/** Envelope `error`s of the proxy's refusals that sent nothing upstream (docs/behaviour.md "Error envelope"). */
export const NOTHING_SENT_ERRORS: ReadonlySet<string> = new Set(['upstream_busy', 'upstream_circuit_open', 'overloaded', 'rate_limited']);

/** At most this many more sends of one call after a refusal. */
export const RETRY_AFTER_MAX_RETRIES = 2;

/** At most this much waiting per call in all, in milliseconds (10 s). */
export const RETRY_AFTER_MAX_WAIT_MS = 10_000;

/** The random part of a wait is up to half the `Retry-After`, and at least up to this, in milliseconds. */
export const RETRY_AFTER_MIN_JITTER_MS = 250;

/** The bounds of the retries; `createProxyClient`'s `retry` option. */
export interface RetryAfterPolicy {
  /** More sends per call; default {@link RETRY_AFTER_MAX_RETRIES}. */
  readonly maxRetries?: number;
  /** Total wait per call in milliseconds; default {@link RETRY_AFTER_MAX_WAIT_MS}. */
  readonly maxWaitMs?: number;
}

/** The facts of a refused answer the decision needs. */
export interface RefusedCall {
  /** The call's HTTP method. */
  readonly method: string;
  /** Whether the request carried an `Idempotency-Key`. */
  readonly idempotencyKey: boolean;
  /** The answer's status. */
  readonly status: number;
  /** The answer's `Retry-After` header, or `null`. */
  readonly retryAfter: string | null;
  /** The envelope's `error`, or `null`. */
  readonly envelopeError: string | null;
  /** Sends of this call already repeated. */
  readonly retries: number;
  /** Milliseconds this call already waited. */
  readonly waitedMs: number;
}

/**
 * The wait a `Retry-After` value asks for, in milliseconds: delay-seconds (`"3"` → 3000) or an
 * HTTP date (its distance from `now`, at least 0); `null` when absent or unreadable (RFC 9110
 * §10.2.3).
 * @param now - epoch milliseconds
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return Number(text) * 1000;
  if (!/[A-Za-z]/.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Whether a refused call may be sent again at all (the table of the module notes). */
export function mayRetry(call: Pick<RefusedCall, 'method' | 'idempotencyKey' | 'status' | 'envelopeError'>): boolean {
  if (!RETRY_AFTER_STATUSES.has(call.status)) return false;
  if (call.method.toUpperCase() === 'GET') return true;
  return call.idempotencyKey && call.envelopeError !== null && NOTHING_SENT_ERRORS.has(call.envelopeError);
}

/**
 * How long to wait before sending a refused call again, in milliseconds, or `null` for no retry:
 * not retryable ({@link mayRetry}), no readable `Retry-After`, retries used up, or a wait that would
 * pass the total bound.
 * @param random - a number in [0, 1), for the jitter
 * @param now - epoch milliseconds (for a `Retry-After` date)
 */
export function retryDelayMs(call: RefusedCall, policy: RetryAfterPolicy, random: () => number, now: number): number | null {
  const maxRetries = policy.maxRetries ?? RETRY_AFTER_MAX_RETRIES;
  const maxWaitMs = policy.maxWaitMs ?? RETRY_AFTER_MAX_WAIT_MS;
  if (call.retries >= maxRetries || !mayRetry(call)) return null;
  const asked = parseRetryAfter(call.retryAfter, now);
  if (asked === null) return null;
  const left = maxWaitMs - call.waitedMs;
  if (asked > left) return null;
  const jitter = Math.max(RETRY_AFTER_MIN_JITTER_MS, asked / 2) * Math.min(Math.max(random(), 0), 1);
  return Math.min(asked + jitter, left);
}
