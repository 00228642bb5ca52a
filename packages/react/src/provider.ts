/**
 * `<ProxySessionProvider client>`: follows the client's session state, runs the refresh driver of
 * spec 3.1, keeps the session's profile and the forced-logout notice, and asks the session route
 * once when the state is unknown.
 *
 * @module
 */
import type { ErrorRef, ProxyClient, ProxyError, RefreshDriverOptions, SessionSnapshot } from '@front-proxy/browser';
import { startRefreshDriver } from '@front-proxy/browser/core';
import { createElement, type ReactNode, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { type ForcedLogoutNotice, ProxySessionContext, type ProxySessionContextValue } from './context.js';
import { ProfileStore } from './profile-store.js';

const UNKNOWN: SessionSnapshot = Object.freeze({ status: 'unknown', expiresAt: null, error: null });

/** The snapshot an `initialSession` stands for (`error` and nothing read the same: `unknown`). */
function sessionOf(status: SessionSnapshot['status'] | undefined, expiresAt: number | null): SessionSnapshot {
  if (status === 'signedIn') return { status, expiresAt, error: null };
  if (status === 'signedOut') return { status, expiresAt: null, error: null };
  return UNKNOWN;
}

/** Settings of the provider's refresh driver (`startRefreshDriver`'s options but the client). */
export type RefreshSettings = Omit<RefreshDriverOptions, 'client'>;

/** Props of {@link ProxySessionProvider}. */
export interface ProxySessionProviderProps {
  /** The client of the page (`createProxyClient()`), created once, in the browser. */
  readonly client: ProxyClient;
  /**
   * The refresh driver of spec 3.1 (`POST /api/auth/refresh` every 6 h, one tab at a time): `true`
   * (default) runs it with its defaults, settings run it with those (read once per client: give a
   * stable object), `false` does not run it (the page runs its own, or none).
   */
  readonly refresh?: boolean | RefreshSettings;
  /**
   * The session state the server already knows (`readSession` of `@front-proxy/browser/core`, from
   * a server component or loader), so that the server's HTML is already signed in or out: the hooks
   * read it while rendering on the server, while hydrating, and until the client knows better (its
   * own check, a login, another tab). Default `unknown`.
   */
  readonly initialSession?: Pick<SessionSnapshot, 'status' | 'expiresAt'> | null;
  /**
   * Also told of each forced logout (after the notice is set): e.g. to route to the login page.
   * The notice itself is read with `useSession().forcedLogout`.
   */
  readonly onForcedLogout?: (ref: ErrorRef, error: ProxyError) => void;
  readonly children?: ReactNode;
}

/**
 * Provides the session to `useSession` and `useProfile`. Mount it once, around the app, with the
 * page's client. Effects only (nothing runs while rendering on a server):
 * - the state `unknown` and no check started by the client: `client.session.check()` once;
 * - the refresh driver runs while the provider is mounted (unless `refresh={false}`);
 * - a forced logout sets the notice (`useSession().forcedLogout`) and calls `onForcedLogout`;
 * - the profile is forgotten when the identity may change (a login, a logout, a forced logout, a
 *   change in another tab), so the next session loads its own; a refresh keeps it.
 */
export function ProxySessionProvider(props: ProxySessionProviderProps): ReactNode {
  const { client, onForcedLogout, children, initialSession } = props;
  const initialStatus = initialSession?.status;
  const initialExpiresAt = initialSession?.expiresAt ?? null;
  // The same object while the prop says the same (useSyncExternalStore compares snapshots by identity).
  const serverSession = useMemo(() => sessionOf(initialStatus, initialExpiresAt), [initialStatus, initialExpiresAt]);
  // One store per client, created while rendering (never in an effect) and kept in state.
  const [store, setStore] = useState(() => ({ client, profiles: new ProfileStore(client) }));
  let profiles = store.profiles;
  if (store.client !== client) {
    profiles = new ProfileStore(client);
    setStore({ client, profiles });
  }
  const [notice, setNotice] = useState<ForcedLogoutNotice | null>(null);
  const refresh = props.refresh ?? true;
  const refreshSettings = useRef<RefreshSettings>({});
  if (typeof refresh === 'object') refreshSettings.current = refresh;
  const refreshOn = refresh !== false;

  useEffect(() => {
    const offForced = client.onForcedLogout((ref, error, _beacon, info) => {
      setNotice({ ref, message: error.message, at: info.at, cause: info.cause });
      onForcedLogout?.(ref, error);
    });
    return offForced;
  }, [client, onForcedLogout]);

  useEffect(() => {
    const offSession = client.onSessionChange((event) => {
      // A refresh renews the same user's token: the profile on screen stays.
      if (!(event.type === 'established' && event.cause === 'refresh')) profiles.reset();
      if (event.type === 'established') setNotice(null);
    });
    if (client.session.status === 'unknown' && client.session.initialCheck === null) void client.session.check();
    return offSession;
  }, [client, profiles]);

  useEffect(() => {
    if (!refreshOn) return undefined;
    const driver = startRefreshDriver({ ...refreshSettings.current, client });
    return () => driver.stop();
  }, [client, refreshOn]);

  const dismiss = useCallback(() => setNotice(null), []);
  const value = useMemo<ProxySessionContextValue>(
    () => ({ client, serverSession, profiles, notice, dismiss }),
    [client, serverSession, profiles, notice, dismiss],
  );
  return createElement(ProxySessionContext.Provider, { value }, children);
}
