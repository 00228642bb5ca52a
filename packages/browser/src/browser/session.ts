/**
 * The session state the client believes in: `unknown` (nothing said yet), `signedIn` (a login,
 * registration, social login or refresh succeeded, or `GET /api/auth/session` said so) or
 * `signedOut` (a logout, a forced logout, a 401 `no_token`, or the session route said so). The
 * session cookie is HttpOnly, so this belief is all a page can know; it decides whether a failure
 * forces a logout (spec 5.7, 6.1: a guest was never logged in, so a guest is never logged out).
 *
 * The state persists in storage (`front-proxy:session`, JSON, never the token) and is shared
 * between the tabs of an origin through the `storage` event and a `BroadcastChannel`.
 *
 * @module
 */
import { type KeyValueStorage, safeGet, safeSet, STORAGE_KEYS } from './storage.js';

/** What the client believes about the session. */
export type SessionStatus = 'unknown' | 'signedIn' | 'signedOut';

/** Why the session state changed. */
export type SessionChangeCause =
  /** A login, registration or social login succeeded. */
  | 'login'
  /** `POST /api/auth/refresh` succeeded. */
  | 'refresh'
  /** `POST /api/auth/logout` or `logout-auto` succeeded. */
  | 'logout'
  /** A session-ending failure forced a logout (beacon, logout call, callback). */
  | 'forced-logout'
  /** `GET /api/auth/session` answered. */
  | 'session-check'
  /** A call told it: a 401 `no_token` (no cookie), or a success on a route that needs a session. */
  | 'call'
  /** Another tab of the same origin changed it. */
  | 'other-tab';

/** The session state at one moment. */
export interface SessionSnapshot {
  readonly status: SessionStatus;
  /** The token's `exp` in epoch seconds when known (from the session route or a login's `expires_in`), else `null`. */
  readonly expiresAt: number | null;
}

/** A change of the session state, as {@link ClientSession.onChange} reports it. */
export interface SessionChange extends SessionSnapshot {
  readonly cause: SessionChangeCause;
  /** The state before the change. */
  readonly previous: SessionStatus;
}

/** The session state of a client: `client.session`. */
export interface ClientSession {
  /** `unknown` until a call, the session route or another tab says; then `signedIn` or `signedOut`. */
  readonly status: SessionStatus;
  /** Epoch seconds of the token's `exp` when known, else `null` (always `null` unless `signedIn`). */
  readonly expiresAt: number | null;
  /**
   * Subscribes to changes (this tab's and other tabs'); called only when the status or `expiresAt`
   * changes. Returns the unsubscribe function.
   */
  onChange(listener: (change: SessionChange) => void): () => void;
  /**
   * Asks `GET /api/auth/session` (answered from the cookie, never upstream) and sets the state from
   * its answer, unless the state changed while it was under way. A failed call leaves the state as it
   * was. Resolves with the state afterwards; never rejects.
   */
  check(): Promise<SessionSnapshot>;
  /** The check started when the client was created with status `unknown`, or `null` when none was. */
  readonly initialCheck: Promise<SessionSnapshot> | null;
}

/** The state with no information. */
export const UNKNOWN_SESSION: SessionSnapshot = Object.freeze({ status: 'unknown', expiresAt: null });

/**
 * Reads the stored state: absent or unreadable → `unknown`; the old flag `'1'` → `signedIn` with no
 * known expiry; JSON `{ status, expiresAt }` otherwise. A `signedIn` state whose `expiresAt` has
 * passed (epoch ms `nowMs`) reads as `unknown`: the cookie has expired with it.
 */
export function parseSessionSnapshot(text: string | null, nowMs: number): SessionSnapshot {
  if (text === null) return UNKNOWN_SESSION;
  if (text === '1') return { status: 'signedIn', expiresAt: null };
  try {
    const data = JSON.parse(text) as { status?: unknown; expiresAt?: unknown };
    if (data.status === 'signedOut') return { status: 'signedOut', expiresAt: null };
    if (data.status !== 'signedIn') return UNKNOWN_SESSION;
    const expiresAt = typeof data.expiresAt === 'number' && Number.isFinite(data.expiresAt) ? Math.floor(data.expiresAt) : null;
    if (expiresAt !== null && expiresAt * 1000 <= nowMs) return UNKNOWN_SESSION;
    return { status: 'signedIn', expiresAt };
  } catch {
    return UNKNOWN_SESSION;
  }
}

/** The stored form of a state (`null`: the key is removed, for `unknown`). */
export function serializeSessionSnapshot(snapshot: SessionSnapshot): string | null {
  if (snapshot.status === 'unknown') return null;
  return JSON.stringify(snapshot.status === 'signedIn' ? { status: 'signedIn', expiresAt: snapshot.expiresAt } : { status: 'signedOut' });
}

/** Whether two states are the same. */
export function sameSession(a: SessionSnapshot, b: SessionSnapshot): boolean {
  return a.status === b.status && a.expiresAt === b.expiresAt;
}

/** Name of the `BroadcastChannel` the session state is shared on. */
export const SESSION_CHANNEL_NAME = 'front-proxy:session';

/** The part of `BroadcastChannel` the session state uses. */
export interface SessionChannel {
  postMessage(message: unknown): void;
  onmessage: ((event: { data: unknown }) => void) | null;
  close?(): void;
}

/** Options of {@link SessionStore}. */
export interface SessionStoreOptions {
  readonly storage: KeyValueStorage;
  readonly now: () => number;
  /** Channel to the other tabs; `null` for none. */
  readonly channel: SessionChannel | null;
  /** Where the `storage` event is listened to (the page's `window`); `null` for nowhere. */
  readonly events: Pick<EventTarget, 'addEventListener' | 'removeEventListener'> | null;
}

/**
 * The state, persisted and shared between tabs. Storage is the source of truth (so clients sharing
 * one storage agree); the last state reported is kept to tell a change from a repeat.
 */
export class SessionStore {
  readonly #storage: KeyValueStorage;
  readonly #now: () => number;
  readonly #channel: SessionChannel | null;
  readonly #events: SessionStoreOptions['events'];
  readonly #listeners = new Set<(change: SessionChange) => void>();
  #last: SessionSnapshot;
  /** Counts changes, so that an answer started before a change does not overwrite it. */
  generation = 0;

  readonly #onStorage = (event: Event): void => {
    const key = (event as StorageEvent).key;
    if (key === null || key === STORAGE_KEYS.session) this.#sync('other-tab');
  };

  constructor(options: SessionStoreOptions) {
    this.#storage = options.storage;
    this.#now = options.now;
    this.#channel = options.channel;
    this.#events = options.events;
    const stored = safeGet(this.#storage, STORAGE_KEYS.session);
    this.#last = parseSessionSnapshot(stored, this.#now());
    // A signed-in state that has expired is forgotten (the cookie expired with it).
    if (stored !== null && this.#last.status === 'unknown') safeSet(this.#storage, STORAGE_KEYS.session, null);
    if (this.#channel) {
      this.#channel.onmessage = (event) => {
        const data = event.data as Partial<SessionSnapshot> | null;
        if (!data || typeof data !== 'object' || typeof data.status !== 'string') return;
        const snapshot = parseSessionSnapshot(serializeSessionSnapshot(data as SessionSnapshot), this.#now());
        // Storage may be partitioned from the sender's: write what it said, then report it.
        safeSet(this.#storage, STORAGE_KEYS.session, serializeSessionSnapshot(snapshot));
        this.#sync('other-tab');
      };
    }
    this.#events?.addEventListener('storage', this.#onStorage);
  }

  /** The current state (read from storage, so another client on the same storage is seen at once). */
  get snapshot(): SessionSnapshot {
    return parseSessionSnapshot(safeGet(this.#storage, STORAGE_KEYS.session), this.#now());
  }

  /** Sets the state, stores it, tells the other tabs and the listeners (when it changed). */
  set(snapshot: SessionSnapshot, cause: SessionChangeCause): void {
    const value: SessionSnapshot = snapshot.status === 'signedIn' ? snapshot : { status: snapshot.status, expiresAt: null };
    this.generation++;
    safeSet(this.#storage, STORAGE_KEYS.session, serializeSessionSnapshot(value));
    try {
      this.#channel?.postMessage(value);
    } catch {
      // a closed channel: the storage event still tells the other tabs
    }
    this.#sync(cause);
  }

  /** Reports the stored state to the listeners when it differs from the last one reported. */
  #sync(cause: SessionChangeCause): void {
    const current = this.snapshot;
    const previous = this.#last;
    if (sameSession(current, previous)) return;
    this.#last = current;
    if (cause === 'other-tab') this.generation++;
    const change: SessionChange = { ...current, cause, previous: previous.status };
    for (const listener of [...this.#listeners]) {
      try {
        listener(change);
      } catch {
        // a listener's failure does not break the others
      }
    }
  }

  /** Adds a listener; returns its removal. */
  subscribe(listener: (change: SessionChange) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Stops listening to the other tabs. */
  close(): void {
    this.#events?.removeEventListener('storage', this.#onStorage);
    if (this.#channel) {
      this.#channel.onmessage = null;
      this.#channel.close?.();
    }
  }
}
