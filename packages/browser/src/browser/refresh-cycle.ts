/**
 * The token refresh cycle of spec 3.1 as pure functions over an explicit, serialisable state.
 *
 * The session JWT lives in an HttpOnly cookie that scripts cannot read, so the state records only
 * *when* things happened (epoch milliseconds), never a token. Every function returns a new state
 * and never mutates its argument; `now` defaults to `Date.now()`.
 *
 * | phase | state | `shouldRefreshToken` |
 * |---|---|---|
 * | no session | `tokenSavedAt: null` | `false` |
 * | token saved | `tokenSavedAt: t` | `true` once `now - t >= REFRESH_INTERVAL_MS` (6 h) |
 * | refresh in progress | `refreshStartedAt: s` | `false` until `now - s >= REFRESH_STUCK_MS` (2 min), then the in-progress mark is ignored |
 * | refresh failed `n` times | `failures: n`, `retryAt: r` | `true` once `now >= r`; `r = end + refreshBackoffMs(n)` (30 s doubling to 10 min) |
 * | refresh succeeded | `tokenSavedAt: end`, `failures: 0` | as "token saved" |
 *
 * @example
 * let state = markTokenSaved(initialRefreshState(), loginTime);
 * shouldRefreshToken(state, loginTime + REFRESH_INTERVAL_MS); // true
 * state = markRefreshStarted(state);
 * // … POST /api/auth/refresh …
 * state = markRefreshCompleted(state, true);
 *
 * @module
 */

/** Interval between token refreshes (spec 3.1, 5.4, 8): 6 hours, in milliseconds. */
export const REFRESH_INTERVAL_MS = 6 * 60 * 60 * 1000;

/**
 * How long a refresh may stay "in progress" before the mark is considered stale (a tab closed or
 * crashed mid-refresh): 2 minutes, in milliseconds. It is well above the proxy's upstream limit
 * (`UPSTREAM_TIMEOUT_MS`, 15 s by default), so a live refresh is never duplicated.
 */
export const REFRESH_STUCK_MS = 2 * 60 * 1000;

/** First retry delay after a failed refresh: 30 seconds, in milliseconds. */
export const REFRESH_RETRY_BASE_MS = 30 * 1000;

/** Longest retry delay after repeated failures: 10 minutes, in milliseconds. */
export const REFRESH_RETRY_MAX_MS = 10 * 60 * 1000;

/**
 * The refresh state: plain data (numbers and `null`), safe to `JSON.stringify` and keep in
 * `localStorage`. All times are epoch milliseconds.
 */
export interface RefreshState {
  /** Format version of the stored state. */
  readonly version: 1;
  /** When the current token was saved (login or successful refresh); `null` = no session known. */
  readonly tokenSavedAt: number | null;
  /** When the running refresh started; `null` = no refresh in progress. */
  readonly refreshStartedAt: number | null;
  /** Consecutive failed refreshes since the token was saved. */
  readonly failures: number;
  /** After a failure: the earliest time of the next attempt; otherwise `null`. */
  readonly retryAt: number | null;
  /** When the last refresh ended (success or failure); `null` = none yet. */
  readonly lastCompletedAt: number | null;
  /** Outcome of the last refresh: `true` success, `false` failure, `null` none yet. */
  readonly lastSuccess: boolean | null;
}

/**
 * The retry delay after the `failures`-th consecutive failure: 30 s, 60 s, 2 min, 4 min, 8 min,
 * then 10 min (capped).
 * @param failures - consecutive failures, 1 or more (values below 1 count as 1)
 * @returns milliseconds
 */
export function refreshBackoffMs(failures: number): number {
  const n = Math.max(1, Math.floor(failures));
  // 2 ** 20 already exceeds the cap; avoid huge exponents.
  return Math.min(REFRESH_RETRY_BASE_MS * 2 ** Math.min(n - 1, 20), REFRESH_RETRY_MAX_MS);
}

/**
 * The initial state (spec 3.1 `initialRefreshState`): no token saved, nothing in progress.
 * @returns a new state
 */
export function initialRefreshState(): RefreshState {
  return {
    version: 1,
    tokenSavedAt: null,
    refreshStartedAt: null,
    failures: 0,
    retryAt: null,
    lastCompletedAt: null,
    lastSuccess: null,
  };
}

/**
 * Records that a token has just been saved (spec 3.1 `markTokenSaved`): after a login, a
 * registration or a successful refresh. Clears any refresh in progress and any failure count.
 * @param state - the current state
 * @param now - epoch ms; default `Date.now()`
 * @returns a new state with `tokenSavedAt = now`
 */
export function markTokenSaved(state: RefreshState, now: number = Date.now()): RefreshState {
  return { ...state, version: 1, tokenSavedAt: now, refreshStartedAt: null, failures: 0, retryAt: null };
}

/**
 * Whether the mark of a refresh in progress is live at `now`: set, and less than
 * {@link REFRESH_STUCK_MS} away from `now` (in either direction, so a clock moved backwards
 * cannot freeze the cycle).
 */
export function isRefreshInProgress(state: RefreshState, now: number = Date.now()): boolean {
  const started = state.refreshStartedAt;
  return started !== null && Math.abs(now - started) < REFRESH_STUCK_MS;
}

/**
 * Whether a refresh is due (spec 3.1 `shouldRefreshToken`), checked at each navigation and on an
 * interval:
 * - no token saved → `false`;
 * - a refresh in progress (see {@link isRefreshInProgress}) → `false`;
 * - after a failure → `true` once `now >= retryAt`;
 * - otherwise → `true` once 6 hours have elapsed since the token was saved
 *   (`now - tokenSavedAt >= REFRESH_INTERVAL_MS`), or when the saved time lies more than 6 hours
 *   in the future (the clock was moved back).
 * @param state - the current state
 * @param now - epoch ms; default `Date.now()`
 */
export function shouldRefreshToken(state: RefreshState, now: number = Date.now()): boolean {
  const saved = state.tokenSavedAt;
  if (saved === null) return false;
  if (isRefreshInProgress(state, now)) return false;
  if (state.failures > 0 && state.retryAt !== null) return now >= state.retryAt;
  const elapsed = now - saved;
  return elapsed >= REFRESH_INTERVAL_MS || elapsed <= -REFRESH_INTERVAL_MS;
}

/**
 * Marks a refresh as in progress (spec 3.1 `markRefreshStarted`). While the mark is live,
 * {@link shouldRefreshToken} answers `false`, so a second refresh does not start.
 * @param state - the current state
 * @param now - epoch ms; default `Date.now()`
 * @returns a new state with `refreshStartedAt = now`
 */
export function markRefreshStarted(state: RefreshState, now: number = Date.now()): RefreshState {
  return { ...state, refreshStartedAt: now };
}

/**
 * Marks the refresh as finished (spec 3.1 `markRefreshCompleted`).
 * - `success: true`: the new token was saved at `now` (as {@link markTokenSaved}).
 * - `success: false`: the old token stays; the failure count grows by one and the next attempt is
 *   due at `now + refreshBackoffMs(failures)`.
 * @param state - the current state
 * @param success - the outcome of `POST /api/auth/refresh`
 * @param now - epoch ms; default `Date.now()`
 * @returns a new state, no refresh in progress
 */
export function markRefreshCompleted(state: RefreshState, success: boolean, now: number = Date.now()): RefreshState {
  if (success) {
    return { ...markTokenSaved(state, now), lastCompletedAt: now, lastSuccess: true };
  }
  const failures = state.failures + 1;
  return {
    ...state,
    refreshStartedAt: null,
    failures,
    retryAt: now + refreshBackoffMs(failures),
    lastCompletedAt: now,
    lastSuccess: false,
  };
}

function isTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function timeOrNull(value: unknown): number | null | undefined {
  if (value === null) return null;
  return isTime(value) ? value : undefined;
}

/**
 * Reads a state back from its JSON text (as stored by {@link serializeRefreshState}). Anything
 * malformed (absent, not JSON, wrong field types, unknown version) gives the initial state.
 * @param text - the stored text, or `null`
 * @returns a valid state. Never throws.
 */
export function parseRefreshState(text: string | null | undefined): RefreshState {
  if (typeof text !== 'string' || text === '') return initialRefreshState();
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return initialRefreshState();
  }
  if (typeof data !== 'object' || data === null) return initialRefreshState();
  const d = data as Record<string, unknown>;
  const tokenSavedAt = timeOrNull(d.tokenSavedAt);
  const refreshStartedAt = timeOrNull(d.refreshStartedAt);
  const retryAt = timeOrNull(d.retryAt);
  const lastCompletedAt = timeOrNull(d.lastCompletedAt);
  const failures = d.failures;
  const lastSuccess = d.lastSuccess;
  if (
    d.version !== 1 ||
    tokenSavedAt === undefined ||
    refreshStartedAt === undefined ||
    retryAt === undefined ||
    lastCompletedAt === undefined ||
    typeof failures !== 'number' ||
    !Number.isInteger(failures) ||
    failures < 0 ||
    !(lastSuccess === null || typeof lastSuccess === 'boolean')
  ) {
    return initialRefreshState();
  }
  return { version: 1, tokenSavedAt, refreshStartedAt, failures, retryAt, lastCompletedAt, lastSuccess };
}

/** The JSON text of a state, for `localStorage`. */
export function serializeRefreshState(state: RefreshState): string {
  return JSON.stringify(state);
}
