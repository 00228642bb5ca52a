/**
 * The time limits of an upstream call, stated once (docs/behaviour.md "Resilience", "Money moves:
 * exactly once"): a call may wait for its endpoint's slot for at most the queue wait
 * (`UPSTREAM_QUEUE_WAIT_MS`), and from the moment the slot is granted it has one deadline,
 * `UPSTREAM_TIMEOUT_MS` later, that every part of the call reads — the call's own timer, the time
 * left for a retry, and undici's per-dispatch `headersTimeout` / `bodyTimeout`. A money move's lease
 * is taken over {@link longestCallMs}.
 *
 * Deadlines are `performance.now()` values, in milliseconds.
 *
 * @module
 */
import type { GuardLimits } from './endpoint-guard.js';

/** The limits a deadline is made of, in milliseconds. */
export interface CallTimes {
  /** `UPSTREAM_TIMEOUT_MS`: one call's total time, headers and body, from its slot to its whole answer. */
  readonly upstreamTimeoutMs: number;
  /** The endpoint guard's limits (`UPSTREAM_QUEUE_WAIT_MS` in `queueWaitMs`); absent: no guard, no queue. */
  readonly upstreamLimits?: GuardLimits | undefined;
}

/** The longest a connect may take, in milliseconds, whatever the time limit: a dead host fails fast enough to be retried. */
const MAX_CONNECT_MS = 10_000;

/**
 * The longest an upstream call of an endpoint's guard may be queued or running, in milliseconds: the
 * wait for the endpoint's slot, then the call's time limit, which starts when the slot is granted. A
 * money move's lease covers it (docs/behaviour.md "Money moves: exactly once"), so that no move's call
 * can still be queued or running on one instance when its lease ends for another. (A call with a
 * client share, the raw passthrough's, waits for two slots; money moves never have one.)
 */
export function longestCallMs(times: CallTimes): number {
  return (times.upstreamLimits?.queueWaitMs ?? 0) + times.upstreamTimeoutMs;
}

/** The deadline of a call whose slot is granted at `now` (default: now): `timeoutMs` later, on `performance.now()`'s clock. */
export function deadlineAfter(timeoutMs: number, now = performance.now()): number {
  return now + timeoutMs;
}

/** Milliseconds left before `deadline` at `now` (default: now); `0` once it passed. */
export function msLeft(deadline: number, now = performance.now()): number {
  return Math.max(0, deadline - now);
}

/**
 * undici's per-dispatch socket limit for a dispatch sent at `now` (default: now; Dispatcher `headersTimeout`, and
 * `bodyTimeout` where the body has the same deadline), in ms: the time left before `deadline`, at
 * least 1 (undici reads 0 as no limit). It bounds the socket's silences, which then never outlast
 * the call; the call's own timer bounds its total.
 */
export function socketLimitMs(deadline: number, now = performance.now()): number {
  return Math.max(1, Math.ceil(deadline - now));
}

/** A pool's connect limit for calls of `timeoutMs`, in ms: the time limit, at most {@link MAX_CONNECT_MS}. */
export function connectTimeoutMs(timeoutMs: number): number {
  return Math.min(timeoutMs, MAX_CONNECT_MS);
}
