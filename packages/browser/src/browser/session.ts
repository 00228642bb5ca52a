/**
 * The session state the client believes in: `unknown` (nothing said yet), `signedIn` (a login,
 * registration, social login or refresh succeeded, or `GET /api/auth/session` said so),
 * `signedOut` (a logout, a forced logout, a 401 `no_token`, or the session route said so) or
 * `error` (nothing known yet and the session route could not be asked: a network failure, 5xx,
 * 429; retried, see docs/browser-sdk.md "Session state"). The session cookie is HttpOnly, so this
 * belief is all a page can know; it decides whether a failure forces a logout (spec 5.7, 6.1: a
 * guest was never logged in, so a guest is never logged out).
 *
 * The state persists in storage (`front-proxy:session`, JSON, never the token) and is shared
 * between the tabs of an origin through the `storage` event and a `BroadcastChannel`. `error` is
 * this tab's alone: it is never stored.
 *
 * @module
 */
import type { ForcedLogoutBeacon } from './beacon.js';
import type { ProxyError } from './proxy-error.js';
import { type KeyValueStorage, safeGet, safeSet, STORAGE_KEYS } from './storage.js';

/** What the client believes about the session. */
export type SessionStatus = 'unknown' | 'signedIn' | 'signedOut' | 'error';

/** The statuses that are stored and shared between tabs (`error` is one tab's alone). */
export type StoredSessionStatus = Exclude<SessionStatus, 'error'>;

/** Why the session state changed. */
export type SessionChangeCause =
  /** A login, registration or social login succeeded. */
  | 'login'
  /** `POST /api/auth/refresh` succeeded. */
  | 'refresh'
  /** `POST /api/auth/logout` or `logout-auto` succeeded. */
  | 'logout'
  /** A session-ending failure, or the token's expiry, forced a logout (beacon, logout call, callback). */
  | 'forced-logout'
  /** `GET /api/auth/session` answered, or could not be asked (`error`). */
  | 'session-check'
  /** A call told it: a 401 `no_token` (no cookie), or a success on a route that needs a session. */
  | 'call'
  /** Another tab of the same origin changed it. */
  | 'other-tab';

/**
 * The session state at one moment, a union on `status`: `expiresAt` (epoch seconds of the token's
 * `exp`) only when `signedIn` and known; `error` (the failed `GET /api/auth/session`, a
 * {@link ProxyError}) only when `error`.
 */
export type SessionSnapshot =
  | { readonly status: 'unknown'; readonly expiresAt: null; readonly error: null }
  | { readonly status: 'signedIn'; readonly expiresAt: number | null; readonly error: null }
  | { readonly status: 'signedOut'; readonly expiresAt: null; readonly error: null }
  | { readonly status: 'error'; readonly expiresAt: null; readonly error: ProxyError };

/** The session state a server read (see `readSession`), as a provider's `initialSession` takes it. */
export type SessionState = SessionSnapshot;

/**
 * What one tab's forced logout leaves in the shared state, so that the other tabs tell their user
 * the same thing (with cause `other-tab`) instead of silently showing a login form: the beacon it
 * sent (spec 6.1: `ref`, `status`, `reason`, `url`, …) and the method of the failed call.
 */
export interface ForcedLogoutRecord {
  readonly beacon: ForcedLogoutBeacon;
  /** The HTTP method of the call that failed (`GET` for an expiry seen on the page's clock). */
  readonly method: string;
}

/** A change of the session state, as {@link ClientSession.onChange} reports it. */
export type SessionChange = SessionSnapshot & {
  readonly cause: SessionChangeCause;
  /** The state before the change. */
  readonly previous: SessionStatus;
  /** With `signedOut` told by another tab: that tab's forced logout, else `null`. */
  readonly forcedLogout: ForcedLogoutRecord | null;
};

/** The session state of a client: `client.session`. */
export interface ClientSession {
  /**
   * `unknown` until a call, the session route or another tab says; then `signedIn` or `signedOut`;
   * `error` while the session route could not be asked and nothing else said.
   */
  readonly status: SessionStatus;
  /** Epoch seconds of the token's `exp` when known, else `null` (always `null` unless `signedIn`). */
  readonly expiresAt: number | null;
  /** The failure of the last `GET /api/auth/session` while `status` is `error`, else `null`. */
  readonly error: ProxyError | null;
  /** The whole state as one value (the same object until the state changes). */
  readonly snapshot: SessionSnapshot;
  /**
   * Subscribes to changes (this tab's and other tabs'); called only when the status, `expiresAt` or
   * `error` changes. Returns the unsubscribe function.
   */
  onChange(listener: (change: SessionChange) => void): () => void;
  /**
   * Asks `GET /api/auth/session` (answered from the cookie, never upstream) and sets the state from
   * its answer, unless the state changed while it was under way. A failed call leaves a known state
   * as it was, and turns `unknown` into `error` (retried with backoff, and when the page regains
   * focus, comes online or becomes visible). Resolves with the state afterwards; never rejects.
   */
  check(): Promise<SessionSnapshot>;
  /** Asks the session route now, whatever the backoff (a "try again" button); as {@link check}. */
  retry(): Promise<SessionSnapshot>;
  /** The check started when the client was created with status `unknown`, or `null` when none was. */
  readonly initialCheck: Promise<SessionSnapshot> | null;
}

/** The state with no information. */
export const UNKNOWN_SESSION: SessionSnapshot = Object.freeze({ status: 'unknown', expiresAt: null, error: null });

const SIGNED_OUT: SessionSnapshot = Object.freeze({ status: 'signedOut', expiresAt: null, error: null });

/** What storage holds: the stored state and, after a forced logout, its record. */
interface StoredSession {
  readonly snapshot: SessionSnapshot;
  readonly forcedLogout: ForcedLogoutRecord | null;
}

function isRecord(value: unknown): value is ForcedLogoutRecord {
  const r = value as { beacon?: { ref?: unknown; status?: unknown; url?: unknown }; method?: unknown } | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.method === 'string' &&
    typeof r.beacon === 'object' &&
    r.beacon !== null &&
    typeof r.beacon.ref === 'string' &&
    typeof r.beacon.status === 'number' &&
    typeof r.beacon.url === 'string'
  );
}

function parseStored(text: string | null, nowMs: number | null): StoredSession {
  const none: StoredSession = { snapshot: UNKNOWN_SESSION, forcedLogout: null };
  if (text === null) return none;
  if (text === '1') return { snapshot: { status: 'signedIn', expiresAt: null, error: null }, forcedLogout: null };
  try {
    const data = JSON.parse(text) as { status?: unknown; expiresAt?: unknown; forcedLogout?: unknown };
    if (data.status === 'signedOut') return { snapshot: SIGNED_OUT, forcedLogout: isRecord(data.forcedLogout) ? data.forcedLogout : null };
    if (data.status !== 'signedIn') return none;
    const expiresAt = typeof data.expiresAt === 'number' && Number.isFinite(data.expiresAt) ? Math.floor(data.expiresAt) : null;
    if (nowMs !== null && expiresAt !== null && expiresAt * 1000 <= nowMs) return none;
    return { snapshot: { status: 'signedIn', expiresAt, error: null }, forcedLogout: null };
  } catch {
    return none;
  }
}

/**
 * Reads the stored state: absent or unreadable → `unknown`; the old flag `'1'` → `signedIn` with no
 * known expiry; JSON `{ status, expiresAt }` otherwise. With `nowMs` (epoch ms, as when a page
 * starts), a `signedIn` state whose `expiresAt` has passed reads as `unknown`: the cookie has
 * expired with it. A running page does not read it so: its expiry timer ends the session with a
 * forced logout at that moment (see `createProxyClient`).
 */
export function parseSessionSnapshot(text: string | null, nowMs: number | null = null): SessionSnapshot {
  return parseStored(text, nowMs).snapshot;
}

/** The stored form of a state (`null`: the key is removed, for `unknown` and `error`). */
export function serializeSessionSnapshot(
  snapshot: Pick<SessionSnapshot, 'status' | 'expiresAt'>,
  forcedLogout: ForcedLogoutRecord | null = null,
): string | null {
  if (snapshot.status === 'unknown' || snapshot.status === 'error') return null;
  if (snapshot.status === 'signedIn') return JSON.stringify({ status: 'signedIn', expiresAt: snapshot.expiresAt });
  return JSON.stringify(forcedLogout ? { status: 'signedOut', forcedLogout } : { status: 'signedOut' });
}

/** Whether two states are the same. */
export function sameSession(a: SessionSnapshot, b: SessionSnapshot): boolean {
  return a.status === b.status && a.expiresAt === b.expiresAt && a.error === b.error;
}

/** First wait before a failed session check is asked again, in milliseconds. */
export const SESSION_CHECK_RETRY_FIRST_MS = 1_000;

/** Longest wait between session checks while the state is `error`, in milliseconds. */
export const SESSION_CHECK_RETRY_MAX_MS = 30_000;

/**
 * The wait before the next session check after `failures` failed ones in a row (0 for the first):
 * {@link SESSION_CHECK_RETRY_FIRST_MS} doubling up to {@link SESSION_CHECK_RETRY_MAX_MS}, times a
 * jitter in [0.5, 1) from `random` (so that the tabs of many users do not ask together), in ms.
 */
export function nextCheckDelayMs(failures: number, random: () => number): number {
  const base = Math.min(SESSION_CHECK_RETRY_MAX_MS, SESSION_CHECK_RETRY_FIRST_MS * 2 ** Math.min(failures, 30));
  return Math.round(base * (0.5 + random() / 2));
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
 * one storage agree): its text is read on each access and parsed again only when it changed. The
 * last state reported is kept to tell a change from a repeat. `error` is held here, not stored.
 */
export class SessionStore {
  readonly #storage: KeyValueStorage;
  readonly #channel: SessionChannel | null;
  readonly #events: SessionStoreOptions['events'];
  readonly #listeners = new Set<(change: SessionChange) => void>();
  #last: SessionSnapshot;
  /** The stored text last parsed, and what it gave. */
  #text: string | null | undefined = undefined;
  #stored: StoredSession = { snapshot: UNKNOWN_SESSION, forcedLogout: null };
  #error: ProxyError | null = null;
  #errorSnapshot: SessionSnapshot | null = null;
  /** Counts changes, so that an answer started before a change does not overwrite it. */
  generation = 0;

  readonly #onStorage = (event: Event): void => {
    const key = (event as StorageEvent).key;
    if (key === null || key === STORAGE_KEYS.session) this.sync('other-tab');
  };

  constructor(options: SessionStoreOptions) {
    this.#storage = options.storage;
    this.#channel = options.channel;
    this.#events = options.events;
    const stored = safeGet(this.#storage, STORAGE_KEYS.session);
    this.#last = parseStored(stored, options.now()).snapshot;
    // A signed-in state that has expired is forgotten (the cookie expired with it).
    if (stored !== null && this.#last.status === 'unknown') safeSet(this.#storage, STORAGE_KEYS.session, null);
    if (this.#channel) {
      this.#channel.onmessage = (event) => {
        const data = event.data as { status?: unknown; expiresAt?: unknown; forcedLogout?: unknown } | null;
        if (!data || typeof data !== 'object' || typeof data.status !== 'string') return;
        const text = JSON.stringify(data);
        const { snapshot, forcedLogout } = parseStored(text, null);
        // Storage may be partitioned from the sender's: write what it said, then report it.
        safeSet(this.#storage, STORAGE_KEYS.session, serializeSessionSnapshot(snapshot, forcedLogout));
        this.sync('other-tab');
      };
    }
    this.#events?.addEventListener('storage', this.#onStorage);
  }

  #read(): StoredSession {
    const text = safeGet(this.#storage, STORAGE_KEYS.session);
    if (text !== this.#text) {
      this.#text = text;
      this.#stored = parseStored(text, null);
    }
    return this.#stored;
  }

  /**
   * The current state (storage read at each access, so another client on the same storage is seen at
   * once; the same object until it changes): `error` while the stored state is `unknown` and the
   * last session check failed.
   */
  get snapshot(): SessionSnapshot {
    const stored = this.#read().snapshot;
    if (stored.status !== 'unknown' || this.#error === null) return stored;
    this.#errorSnapshot ??= { status: 'error', expiresAt: null, error: this.#error };
    return this.#errorSnapshot;
  }

  /** The forced-logout record stored with a `signedOut` state, else `null`. */
  get forcedLogout(): ForcedLogoutRecord | null {
    const stored = this.#read();
    return stored.snapshot.status === 'signedOut' ? stored.forcedLogout : null;
  }

  /**
   * Sets the state, stores it, tells the other tabs and the listeners (when it changed). A forced
   * logout stores its record with `signedOut`, for the other tabs.
   */
  set(
    snapshot: Pick<SessionSnapshot, 'status' | 'expiresAt'>,
    cause: SessionChangeCause,
    forcedLogout: ForcedLogoutRecord | null = null,
  ): void {
    this.generation++;
    this.#setError(null);
    const text = serializeSessionSnapshot(snapshot, forcedLogout);
    safeSet(this.#storage, STORAGE_KEYS.session, text);
    try {
      this.#channel?.postMessage(text === null ? { status: 'unknown' } : (JSON.parse(text) as unknown));
    } catch {
      // a closed channel: the storage event still tells the other tabs
    }
    this.sync(cause);
  }

  /**
   * Records a failed session check (`error` while nothing is known), or clears it (`null`). A failure
   * with the reference of the one recorded changes nothing (the retries of one outage are one state).
   */
  failCheck(error: ProxyError | null): void {
    if (error !== null && this.#error !== null && error.ref === this.#error.ref) return;
    this.#setError(error);
    this.sync('session-check');
  }

  #setError(error: ProxyError | null): void {
    if (error === this.#error) return;
    this.#error = error;
    this.#errorSnapshot = null;
  }

  /**
   * Reports the state to the listeners when it differs from the last one reported (`other-tab`: on
   * the `storage` event, the channel, or when this tab reads that another tab changed it).
   */
  sync(cause: SessionChangeCause): void {
    const current = this.snapshot;
    const previous = this.#last;
    if (sameSession(current, previous)) return;
    this.#last = current;
    if (cause === 'other-tab') this.generation++;
    const change: SessionChange = {
      ...current,
      cause,
      previous: previous.status,
      forcedLogout: cause === 'other-tab' ? this.forcedLogout : null,
    };
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
