/**
 * `<ProxySessionProvider client>`: follows the client's session state, keeps the session's profile
 * and the forced-logout notice, and asks the session route once when the state is unknown.
 *
 * @module
 */
import type { ErrorRef, ProxyClient, ProxyError, SessionSnapshot } from '@front-proxy/browser';
import { createElement, type ReactNode, useCallback, useEffect, useMemo, useState } from 'react';
import { type ForcedLogoutNotice, ProxySessionContext, type ProxySessionContextValue } from './context.js';
import { ProfileStore } from './profile-store.js';

const UNKNOWN: SessionSnapshot = Object.freeze({ status: 'unknown', expiresAt: null, error: null });

/** Props of {@link ProxySessionProvider}. */
export interface ProxySessionProviderProps {
  /** The client of the page (`createProxyClient()`), created once, in the browser. */
  readonly client: ProxyClient;
  /**
   * Also told of each forced logout (after the notice is set): e.g. to route to the login page.
   * The notice itself is read with `useSession().forcedLogout`.
   */
  readonly onForcedLogout?: (ref: ErrorRef, error: ProxyError) => void;
  readonly children?: ReactNode;
}

/**
 * Provides the session to {@link useSession} and {@link useProfile}. Mount it once, around the app,
 * with the page's client. Effects only (nothing runs while rendering on a server):
 * - the state `unknown` and no check started by the client: `client.session.check()` once;
 * - a forced logout sets the notice (`useSession().forcedLogout`) and calls `onForcedLogout`;
 * - a login, a logout, a forced logout or a change in another tab forgets the profile, so the next
 *   session loads its own.
 */
export function ProxySessionProvider(props: ProxySessionProviderProps): ReactNode {
  const { client, onForcedLogout, children } = props;
  const profiles = useMemo(() => new ProfileStore(client), [client]);
  const [notice, setNotice] = useState<ForcedLogoutNotice | null>(null);

  useEffect(() => {
    const offForced = client.onForcedLogout((ref, error, _beacon, info) => {
      setNotice({ ref, message: error.message, at: info.at, cause: info.cause });
      onForcedLogout?.(ref, error);
    });
    return offForced;
  }, [client, onForcedLogout]);

  useEffect(() => {
    const offSession = client.onSessionChange((event) => {
      profiles.reset();
      if (event.type === 'established') setNotice(null);
    });
    if (client.session.status === 'unknown' && client.session.initialCheck === null) void client.session.check();
    return offSession;
  }, [client, profiles]);

  const dismiss = useCallback(() => setNotice(null), []);
  const value = useMemo<ProxySessionContextValue>(
    () => ({ client, serverSession: UNKNOWN, profiles, notice, dismiss }),
    [client, profiles, notice, dismiss],
  );
  return createElement(ProxySessionContext.Provider, { value }, children);
}
