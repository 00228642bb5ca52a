/**
 * Key-value storage for the SDK's small persistent facts (the refresh state, the "has a session"
 * flag, the refresh lease): `localStorage` when the page may use it, else memory. The token is
 * never stored: it lives in the HttpOnly cookie.
 *
 * @module
 */

/** The part of the Web Storage API the SDK uses (`localStorage` satisfies it). */
export interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/** Storage keys of the SDK. */
export const STORAGE_KEYS = {
  /** The refresh state of spec 3.1 (JSON, see `serializeRefreshState`). */
  refreshState: 'front-proxy:refresh-state',
  /** `'1'` while the client believes it has a session (set on login/refresh success). */
  session: 'front-proxy:session',
  /** The refresh lease used when the Web Locks API is missing (JSON `{ owner, until }`). */
  refreshLease: 'front-proxy:refresh-lease',
} as const;

/** A storage that lives in memory only (one page, lost on reload). */
export function memoryStorage(): KeyValueStorage {
  const map = new Map<string, string>();
  return {
    getItem: (key) => map.get(key) ?? null,
    setItem: (key, value) => {
      map.set(key, String(value));
    },
    removeItem: (key) => {
      map.delete(key);
    },
  };
}

/**
 * `localStorage` in a page (where `document` exists) when it accepts writes (it throws in some
 * private modes and sandboxed frames), else a {@link memoryStorage}: a server rendering many users'
 * pages (Node 22 and later may have a global `localStorage`) never shares one storage between them.
 */
export function defaultStorage(): KeyValueStorage {
  try {
    if (typeof (globalThis as { document?: unknown }).document === 'undefined') return memoryStorage();
    const ls = (globalThis as { localStorage?: KeyValueStorage }).localStorage;
    if (ls) {
      const probe = '__front-proxy-probe__';
      ls.setItem(probe, '1');
      ls.removeItem(probe);
      return ls;
    }
  } catch {
    // not usable: fall through
  }
  return memoryStorage();
}

/** Reads a key; a storage that throws reads as empty. */
export function safeGet(storage: KeyValueStorage, key: string): string | null {
  try {
    return storage.getItem(key);
  } catch {
    return null;
  }
}

/** Writes a key; a storage that throws (quota, privacy mode) is ignored. */
export function safeSet(storage: KeyValueStorage, key: string, value: string | null): void {
  try {
    if (value === null) storage.removeItem(key);
    else storage.setItem(key, value);
  } catch {
    // ignored: the SDK keeps working without persistence
  }
}
