/**
 * When a failed call ends the session (spec 5.7, 7.3, 7.4.4; docs/architecture.md "Habits" (habit 9)), and the once-only
 * gate that runs the forced logout a single time however many calls fail together.
 *
 * @module
 */
import { isSessionEndingErrorCode } from '../errors/index.js';

/** Name of the Web Lock that lets one tab of the browser run a forced logout at a time. */
export const FORCED_LOGOUT_LOCK_NAME = 'front-proxy:forced-logout';

/**
 * Longest wait, in milliseconds, of a tab that found the lock taken for the state of the tab running
 * the forced logout to arrive: above one run (the logout call's own deadline); past it, the tab runs
 * the forced logout itself.
 */
export const FORCED_LOGOUT_LOCK_WAIT_MS = 15_000;

/**
 * How long the tab that ran a forced logout keeps the lock after it, in milliseconds: a tab whose
 * copy of `localStorage` has not heard the new state yet finds the lock taken and waits for it.
 */
export const FORCED_LOGOUT_LOCK_LINGER_MS = 1_000;

/**
 * How long the tab that ran a forced logout holds the session's "ended" lock
 * ({@link forcedLogoutEndedLockName}) after it, in milliseconds: a tab elected later whose copy of
 * `localStorage` still says the session is on finds it held and waits for the new state instead of
 * running the forced logout again. A lock is what every tab sees at once; a storage write reaches
 * the other tabs' copies later, how much later depending on the browser and its load.
 */
export const FORCED_LOGOUT_ENDED_HOLD_MS = 15_000;

/**
 * Name of the Web Lock that says a forced logout ran for the session whose token expires at
 * `expiresAt` (epoch seconds; `null` when unknown): held by the tab that ran it for
 * {@link FORCED_LOGOUT_ENDED_HOLD_MS}. Another session (a new login) has another name.
 */
export function forcedLogoutEndedLockName(expiresAt: number | null): string {
  return `${FORCED_LOGOUT_LOCK_NAME}:ended:${expiresAt ?? 'unknown'}`;
}

/** Deadline of the forced logout's `POST /api/auth/logout`, in milliseconds. */
export const FORCED_LOGOUT_CALL_TIMEOUT_MS = 10_000;

/** `initiator` of the beacon when the token's expiry, seen on the page's clock, ended the session. */
export const SESSION_EXPIRY_INITIATOR = 'session-expiry';

/** The part of the Web Locks API (`navigator.locks`) the forced logout uses. */
export interface ForcedLogoutLocks {
  request(name: string, options: { ifAvailable?: boolean }, callback: (lock: unknown) => Promise<unknown>): Promise<unknown>;
}

/** The route facts the rule needs (a row of `ROUTES` satisfies it). */
export interface ForcedLogoutRoute {
  /** The route needs the session cookie. */
  readonly session: boolean;
  /** A pre-authentication route (spec 5.5). */
  readonly preAuth: boolean;
}

/** The failure facts the rule needs (a `ProxyError` satisfies it). */
export interface ForcedLogoutFailure {
  readonly status: number;
  readonly errorCode: string;
}

/**
 * Whether a failed call forces a logout: the route needs a session, is not a pre-authentication
 * route (spec 7.4.4), the status is 401, and its EM family ends the session
 * (`isSessionEndingErrorCode`: EM0001-EM0014 except EM0011). Never for a network failure
 * (status 0, EM0042), 403, 409, 429 or 5xx.
 */
export function shouldForceLogout(route: ForcedLogoutRoute, failure: ForcedLogoutFailure): boolean {
  return route.session && !route.preAuth && failure.status === 401 && isSessionEndingErrorCode(failure.errorCode);
}

/**
 * Runs an action once until it is re-armed: the first {@link ForcedLogoutGate.run} starts it;
 * calls made while it runs, or after it finished, share its promise and do not run it again.
 * {@link ForcedLogoutGate.rearm} (after a successful login) lets the next failure run it again.
 */
export class ForcedLogoutGate {
  #pending: Promise<void> | null = null;

  /** Whether the action ran (or runs) since the last re-arm. */
  get fired(): boolean {
    return this.#pending !== null;
  }

  /**
   * Runs `action` unless it already ran since the last re-arm.
   * @returns `true` when this call started it, and a promise of its end (errors are swallowed)
   */
  run(action: () => Promise<void>): { started: boolean; done: Promise<void> } {
    if (this.#pending) return { started: false, done: this.#pending };
    this.#pending = Promise.resolve()
      .then(action)
      .catch(() => undefined);
    return { started: true, done: this.#pending };
  }

  /** Arms the gate again (a new session exists). */
  rearm(): void {
    this.#pending = null;
  }
}
