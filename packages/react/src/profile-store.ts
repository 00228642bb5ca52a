/**
 * The profile of the current session, loaded once and shared: every component that asks while a
 * load runs gets the same request; a new session (a login) or an ended one starts afresh.
 *
 * @module
 */
import type { ProfileResponse, ProxyClient } from '@front-proxy/browser';
import { isProxyError, ProxyError } from '@front-proxy/browser/core';

/**
 * What {@link useProfile} returns (see `hooks.ts`), a union on `status`: `idle` (nothing asked: no
 * session), `loading` (with the profile of the last load while it is asked again, else `null`),
 * `ready` (`profile`: the spec 2.5 `ProfileResponse`, `user` and `userInfo`), `error` (the
 * `ProxyError` of the failed load).
 */
export type ProfileState =
  | { readonly status: 'idle'; readonly profile: null; readonly error: null }
  | { readonly status: 'loading'; readonly profile: ProfileResponse | null; readonly error: null }
  | { readonly status: 'ready'; readonly profile: ProfileResponse; readonly error: null }
  | { readonly status: 'error'; readonly profile: null; readonly error: ProxyError };

/** A failure of the profile call as a `ProxyError` (the client rejects with one; anything else reads as no answer, status 0). */
function proxyErrorOf(error: unknown): ProxyError {
  return isProxyError(error) ? error : new ProxyError({ status: 0, method: 'GET', url: '/api/auth/profile', cause: error });
}

const IDLE: ProfileState = Object.freeze({ status: 'idle', profile: null, error: null });

/** The shared profile of one provider. */
export class ProfileStore {
  readonly #client: Pick<ProxyClient, 'auth'>;
  readonly #listeners = new Set<() => void>();
  #state: ProfileState = IDLE;
  /** Counts sessions: a load started for an older one is dropped when it settles. */
  #epoch = 0;
  #pending: Promise<void> | null = null;

  constructor(client: Pick<ProxyClient, 'auth'>) {
    this.#client = client;
  }

  /** The current state (the same object until it changes). */
  get state(): ProfileState {
    return this.#state;
  }

  /** Adds a listener of changes; returns its removal. */
  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  };

  #set(state: ProfileState): void {
    this.#state = state;
    for (const listener of [...this.#listeners]) listener();
  }

  /**
   * Loads the profile unless it is loaded or loading for this session (`force`: load again).
   * @returns the running load, shared by every caller.
   */
  load(force = false): Promise<void> {
    if (this.#pending) return this.#pending;
    if (!force && this.#state.status === 'ready') return Promise.resolve();
    const epoch = this.#epoch;
    this.#set({ status: 'loading', profile: this.#state.profile, error: null });
    const run = this.#client.auth.profile().then(
      (profile) => {
        if (epoch === this.#epoch) this.#set({ status: 'ready', profile, error: null });
      },
      (error: unknown) => {
        if (epoch === this.#epoch) this.#set({ status: 'error', profile: null, error: proxyErrorOf(error) });
      },
    );
    this.#pending = run.finally(() => {
      if (this.#pending === tracked) this.#pending = null;
    });
    const tracked = this.#pending;
    return tracked;
  }

  /** Forgets the profile (a session ended or a new one began); a running load is dropped. */
  reset(): void {
    this.#epoch++;
    this.#pending = null;
    if (this.#state !== IDLE) this.#set(IDLE);
  }
}
