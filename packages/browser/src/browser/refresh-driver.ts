/**
 * The refresh driver: runs the cycle of spec 3.1 in a page. It checks whether a refresh is due at
 * start, at each navigation (`pageshow`, `popstate`, the tab becoming visible, or an explicit
 * {@link RefreshDriver.check} from a router) and on an interval, and when due calls
 * `POST /api/auth/refresh` through the proxy client (the proxy renews the HttpOnly cookie).
 *
 * The refresh state is kept in `localStorage` (never the token), so every tab sees the same saved
 * time. Tabs do not refresh at once:
 * - with the Web Locks API (`navigator.locks`), the refresh runs inside
 *   `navigator.locks.request(name, { ifAvailable: true })`: a tab that does not get the lock skips
 *   the refresh (another tab is doing it);
 * - without it, a lease in `localStorage` (`{ owner, until }`, 30 s) is written, read back after a
 *   short settle delay (the last writer wins), and released at the end;
 * - in both cases the state marks the refresh in progress (see `markRefreshStarted`), and a
 *   `BroadcastChannel` tells the other tabs the new saved time (useful when `localStorage` is not
 *   shared, e.g. partitioned storage).
 *
 * @example
 * const client = createProxyClient();
 * const driver = startRefreshDriver({ client });
 * router.afterEach(() => driver.check());
 *
 * @module
 */
import type { ProxyClient, SessionEvent } from './proxy-client.js';
import {
  initialRefreshState,
  markRefreshCompleted,
  markRefreshStarted,
  markTokenSaved,
  parseRefreshState,
  type RefreshState,
  serializeRefreshState,
  shouldRefreshToken,
} from './refresh-cycle.js';
import { defaultStorage, type KeyValueStorage, STORAGE_KEYS, safeGet, safeSet } from './storage.js';

/** Default time between interval checks: 1 minute, in milliseconds. */
export const DEFAULT_CHECK_INTERVAL_MS = 60 * 1000;

/** Name of the Web Lock and of the BroadcastChannel. */
export const REFRESH_LOCK_NAME = 'front-proxy:refresh';

/** Lifetime of the `localStorage` lease: 30 seconds (above the proxy's 15 s upstream limit). */
export const REFRESH_LEASE_MS = 30 * 1000;

/** Initiator of beacons caused by the driver's refresh. */
export const REFRESH_DRIVER_INITIATOR = 'refresh-driver';

/** A mutual exclusion between tabs for the refresh. */
export interface RefreshLock {
  /** `web-locks`, `lease` or `none`. */
  readonly kind: string;
  /** Runs `fn` when the lock is free right now, else does not run it. */
  tryRun<T>(fn: () => Promise<T>): Promise<{ acquired: true; value: T } | { acquired: false }>;
}

/** The part of `navigator.locks` the driver uses. */
export interface LockManagerLike {
  request(name: string, options: { ifAvailable: boolean }, callback: (lock: unknown) => Promise<unknown>): Promise<unknown>;
}

/** A lock over the Web Locks API with `ifAvailable: true` (never waits). */
export function webLocksLock(locks: LockManagerLike, name: string = REFRESH_LOCK_NAME): RefreshLock {
  return {
    kind: 'web-locks',
    async tryRun<T>(fn: () => Promise<T>) {
      let result: { acquired: true; value: T } | { acquired: false } = { acquired: false };
      await locks.request(name, { ifAvailable: true }, async (lock) => {
        if (lock === null || lock === undefined) return;
        result = { acquired: true, value: await fn() };
      });
      return result;
    },
  };
}

/** Options of {@link leaseLock}. */
export interface LeaseLockOptions {
  readonly storage: KeyValueStorage;
  /** Lease lifetime in ms; default {@link REFRESH_LEASE_MS}. */
  readonly leaseMs?: number;
  /** Delay in ms between writing the lease and reading it back; default 50. */
  readonly settleMs?: number;
  /** This tab's id; default random. */
  readonly owner?: string;
  /** Clock in epoch ms; default `Date.now`. */
  readonly now?: () => number;
}

interface Lease {
  owner: string;
  until: number;
}

function readLease(storage: KeyValueStorage): Lease | null {
  try {
    const data = JSON.parse(safeGet(storage, STORAGE_KEYS.refreshLease) ?? 'null') as Partial<Lease> | null;
    return data && typeof data.owner === 'string' && typeof data.until === 'number' ? (data as Lease) : null;
  } catch {
    return null;
  }
}

function randomId(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  return c?.randomUUID ? c.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

/**
 * A best-effort lock for browsers without Web Locks: a lease `{ owner, until }` in storage. A live
 * lease of another tab means "busy"; otherwise this tab writes its lease, waits `settleMs`, and
 * holds the lock only if the lease read back is still its own. A crashed tab's lease expires
 * after `leaseMs`.
 */
export function leaseLock(options: LeaseLockOptions): RefreshLock {
  const { storage } = options;
  const leaseMs = options.leaseMs ?? REFRESH_LEASE_MS;
  const settleMs = options.settleMs ?? 50;
  const owner = options.owner ?? randomId();
  const now = options.now ?? Date.now;
  return {
    kind: 'lease',
    async tryRun<T>(fn: () => Promise<T>) {
      const current = readLease(storage);
      if (current && current.owner !== owner && current.until > now()) return { acquired: false };
      safeSet(storage, STORAGE_KEYS.refreshLease, JSON.stringify({ owner, until: now() + leaseMs }));
      if (settleMs > 0) await new Promise((resolve) => setTimeout(resolve, settleMs));
      if (readLease(storage)?.owner !== owner) return { acquired: false };
      try {
        return { acquired: true, value: await fn() };
      } finally {
        if (readLease(storage)?.owner === owner) safeSet(storage, STORAGE_KEYS.refreshLease, null);
      }
    },
  };
}

/** No mutual exclusion (one tab only, or tests). */
export const noLock: RefreshLock = {
  kind: 'none',
  async tryRun<T>(fn: () => Promise<T>) {
    return { acquired: true, value: await fn() };
  },
};

/** Web Locks when `navigator.locks` exists, else a {@link leaseLock} on `storage`. */
export function defaultRefreshLock(storage: KeyValueStorage): RefreshLock {
  const locks = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks;
  return locks && typeof locks.request === 'function' ? webLocksLock(locks) : leaseLock({ storage });
}

/** The part of `BroadcastChannel` the driver uses. */
export interface ChannelLike {
  postMessage(message: unknown): void;
  onmessage: ((event: { data: unknown }) => void) | null;
  close(): void;
}

/** Messages between tabs. */
type ChannelMessage = { type: 'saved'; at: number } | { type: 'started'; at: number } | { type: 'ended' };

/** What one check did. */
export type RefreshOutcome = 'not-due' | 'refreshed' | 'failed' | 'busy' | 'stopped';

/** Options of {@link startRefreshDriver}. */
export interface RefreshDriverOptions {
  /** The proxy client: the driver calls `client.auth.refresh()` and follows its session events. */
  readonly client: Pick<ProxyClient, 'auth' | 'onSessionChange' | 'hasSession'>;
  /** Where the refresh state persists; default `localStorage` (memory when unavailable). */
  readonly storage?: KeyValueStorage;
  /** Milliseconds between interval checks; default {@link DEFAULT_CHECK_INTERVAL_MS}; `0` = no timer. */
  readonly interval?: number;
  /** Mutual exclusion between tabs; default {@link defaultRefreshLock}. */
  readonly lock?: RefreshLock;
  /** Channel to other tabs; default a `BroadcastChannel` named {@link REFRESH_LOCK_NAME} when available; `null` = none. */
  readonly channel?: ChannelLike | null;
  /** Listen to navigation events (`pageshow`, `popstate`, `visibilitychange`); default `true`. */
  readonly listenToNavigation?: boolean;
  /** Clock in epoch ms; default `Date.now`. */
  readonly now?: () => number;
  /** Called after each refresh attempt. */
  readonly onRefresh?: (outcome: 'refreshed' | 'failed', state: RefreshState) => void;
}

/** A running driver. */
export interface RefreshDriver {
  /** Checks now (e.g. after an in-app navigation) and refreshes when due. Never rejects. */
  check(): Promise<RefreshOutcome>;
  /** The current refresh state (read from storage). */
  readonly state: RefreshState;
  /** Which lock the driver uses: `web-locks`, `lease` or `none`. */
  readonly lockKind: string;
  /** Stops timers and listeners. */
  stop(): void;
}

function defaultChannel(): ChannelLike | null {
  const BC = (globalThis as { BroadcastChannel?: new (name: string) => ChannelLike }).BroadcastChannel;
  if (typeof BC !== 'function') return null;
  try {
    return new BC(REFRESH_LOCK_NAME);
  } catch {
    return null;
  }
}

/**
 * Starts the refresh driver. It checks once right away (asynchronously), then on navigation and
 * every `interval` ms.
 *
 * - A successful login (or refresh) seen on the client records the saved time
 *   (`markTokenSaved`); a logout resets the state.
 * - When a check finds a refresh due, it takes the lock, re-reads the state (another tab may have
 *   refreshed meanwhile), marks the refresh started, calls `POST /api/auth/refresh`, and marks it
 *   completed: success saves the new time; failure schedules a retry after the back-off
 *   (30 s doubling to 10 min, `refreshBackoffMs`). A session-ending 401 on the refresh forces the
 *   logout through the client, which resets the state.
 * - If the client believes it has a session but no saved time is known (first start), the saved
 *   time is taken as now.
 */
export function startRefreshDriver(options: RefreshDriverOptions): RefreshDriver {
  const { client } = options;
  const storage = options.storage ?? defaultStorage();
  const now = options.now ?? Date.now;
  const lock = options.lock ?? defaultRefreshLock(storage);
  const channel = options.channel === undefined ? defaultChannel() : options.channel;
  const interval = options.interval ?? DEFAULT_CHECK_INTERVAL_MS;
  let stopped = false;
  let running: Promise<RefreshOutcome> | null = null;

  const load = (): RefreshState => parseRefreshState(safeGet(storage, STORAGE_KEYS.refreshState));
  const save = (state: RefreshState): void => safeSet(storage, STORAGE_KEYS.refreshState, serializeRefreshState(state));
  const post = (message: ChannelMessage): void => {
    try {
      channel?.postMessage(message);
    } catch {
      // a closed channel is ignored
    }
  };

  // Align the stored state with the client's belief.
  const initial = load();
  if (client.hasSession && initial.tokenSavedAt === null) save(markTokenSaved(initial, now()));
  else if (!client.hasSession && initial.tokenSavedAt !== null) save(initialRefreshState());

  const unsubscribe = client.onSessionChange((event: SessionEvent) => {
    if (event.type === 'established') {
      save(markTokenSaved(load(), event.at));
      post({ type: 'saved', at: event.at });
    } else {
      save(initialRefreshState());
      post({ type: 'ended' });
    }
  });

  if (channel) {
    channel.onmessage = (event) => {
      const message = event.data as Partial<ChannelMessage> | null;
      if (!message || typeof message !== 'object') return;
      const state = load();
      if (message.type === 'saved' && typeof message.at === 'number') {
        if (state.tokenSavedAt === null || state.tokenSavedAt < message.at) save(markTokenSaved(state, message.at));
      } else if (message.type === 'started' && typeof message.at === 'number') {
        if (state.tokenSavedAt !== null && state.refreshStartedAt === null) save(markRefreshStarted(state, message.at));
      } else if (message.type === 'ended') {
        save(initialRefreshState());
      }
    };
  }

  const attempt = async (): Promise<RefreshOutcome> => {
    const result = await lock.tryRun(async (): Promise<RefreshOutcome> => {
      const fresh = load();
      const startedAt = now();
      if (stopped || !shouldRefreshToken(fresh, startedAt)) return 'not-due';
      save(markRefreshStarted(fresh, startedAt));
      post({ type: 'started', at: startedAt });
      let success = false;
      try {
        await client.auth.refresh({ initiator: REFRESH_DRIVER_INITIATOR });
        success = true;
      } catch {
        success = false;
      }
      const after = load();
      const state = client.hasSession ? markRefreshCompleted(after, success, now()) : initialRefreshState();
      save(state);
      if (success && state.tokenSavedAt !== null) post({ type: 'saved', at: state.tokenSavedAt });
      options.onRefresh?.(success ? 'refreshed' : 'failed', state);
      return success ? 'refreshed' : 'failed';
    });
    return result.acquired ? result.value : 'busy';
  };

  const check = async (): Promise<RefreshOutcome> => {
    if (stopped) return 'stopped';
    if (!shouldRefreshToken(load(), now())) return 'not-due';
    if (running) return 'busy';
    running = attempt().catch((): RefreshOutcome => 'failed');
    try {
      return await running;
    } finally {
      running = null;
    }
  };

  const onNavigation = (): void => {
    void check();
  };
  type EventTargetLike = {
    addEventListener?: (type: string, listener: () => void) => void;
    removeEventListener?: (type: string, listener: () => void) => void;
  };
  const win = globalThis as EventTargetLike & { document?: EventTargetLike & { visibilityState?: string } };
  const doc = win.document;
  const onVisibility = (): void => {
    if (doc?.visibilityState !== 'hidden') void check();
  };
  const listen = options.listenToNavigation !== false && typeof win.addEventListener === 'function';
  if (listen) {
    win.addEventListener?.('pageshow', onNavigation);
    win.addEventListener?.('popstate', onNavigation);
    doc?.addEventListener?.('visibilitychange', onVisibility);
  }
  const timer = interval > 0 ? setInterval(onNavigation, interval) : null;
  setTimeout(onNavigation, 0);

  return {
    check,
    get state() {
      return load();
    },
    lockKind: lock.kind,
    stop() {
      if (stopped) return;
      stopped = true;
      if (timer !== null) clearInterval(timer);
      if (listen) {
        win.removeEventListener?.('pageshow', onNavigation);
        win.removeEventListener?.('popstate', onNavigation);
        doc?.removeEventListener?.('visibilitychange', onVisibility);
      }
      unsubscribe();
      if (channel) {
        channel.onmessage = null;
        if (options.channel === undefined) channel.close();
      }
    },
  };
}
