/**
 * The hooks of the bindings: {@link useSession}, {@link useProfile}, {@link useProxyClient}.
 *
 * @module
 */
import type { LoginPayload, LoginResult, OkAnswer, ProxyClient, SessionStatus } from '@front-proxy/browser';
import { useCallback, useContext, useEffect, useMemo, useSyncExternalStore } from 'react';
import { type ForcedLogoutNotice, ProxySessionContext, type ProxySessionContextValue } from './context.js';
import type { ProfileState } from './profile-store.js';

export type { ForcedLogoutNotice, ProfileState };

function useProxyContext(hook: string): ProxySessionContextValue {
  const value = useContext(ProxySessionContext);
  if (value === null) throw new Error(`${hook} must be used inside <ProxySessionProvider client={client}>`);
  return value;
}

/** The session state as a string (`useSyncExternalStore` compares snapshots by identity). */
function snapshotKey(client: ProxyClient): string {
  return `${client.session.status}|${client.session.expiresAt ?? ''}`;
}

const SERVER_SNAPSHOT = 'unknown|';

/** The client's session state, re-rendering on each change (this tab's and other tabs'). */
function useSessionState(client: ProxyClient): { status: SessionStatus; expiresAt: number | null } {
  const subscribe = useCallback((onChange: () => void) => client.session.onChange(onChange), [client]);
  const key = useSyncExternalStore(
    subscribe,
    () => snapshotKey(client),
    () => SERVER_SNAPSHOT,
  );
  return useMemo(() => {
    const [status, expiresAt] = key.split('|');
    return { status: status as SessionStatus, expiresAt: expiresAt ? Number(expiresAt) : null };
  }, [key]);
}

/** What {@link useSession} returns. */
export interface SessionView {
  /** `unknown` (before the first answer, and on the server), `signedIn` or `signedOut`. */
  readonly status: SessionStatus;
  /** Epoch seconds of the session token's `exp` when known, else `null`. */
  readonly expiresAt: number | null;
  /**
   * `POST /api/auth/login` with the payload of spec 2.1; resolves with the LoginResult (a
   * `type: 'two_factor_code'` answer asks for the second step), rejects with a `ProxyError`
   * (`formMessage ?? message` is what a form shows).
   */
  readonly signIn: (payload: LoginPayload) => Promise<LoginResult>;
  /** `POST /api/auth/logout` (always answers 200; the cookie is cleared). */
  readonly signOut: () => Promise<OkAnswer>;
  /** The forced logout not dismissed yet (show it once, e.g. a banner), or `null`. Cleared by the next login. */
  readonly forcedLogout: ForcedLogoutNotice | null;
  /** Dismisses {@link forcedLogout}. */
  readonly dismissForcedLogout: () => void;
}

/**
 * The session: status, expiry, sign-in and sign-out, and the forced-logout notice.
 * @throws Error outside a {@link ProxySessionProvider}
 */
export function useSession(): SessionView {
  const { client, notice, dismiss } = useProxyContext('useSession');
  const { status, expiresAt } = useSessionState(client);
  const signIn = useCallback((payload: LoginPayload) => client.auth.login({ body: payload }), [client]);
  const signOut = useCallback(() => client.auth.logout(), [client]);
  return useMemo(
    () => ({ status, expiresAt, signIn, signOut, forcedLogout: notice, dismissForcedLogout: dismiss }),
    [status, expiresAt, signIn, signOut, notice, dismiss],
  );
}

/**
 * The profile of the session (`GET /api/auth/profile`): loaded when the session is `signedIn`, once
 * per session however many components ask (one request, shared), forgotten when the session ends and
 * loaded again after the next login. `reload()` asks afresh.
 * @throws Error outside a {@link ProxySessionProvider}
 */
export function useProfile(): ProfileState & { readonly reload: () => Promise<void> } {
  const { client, profiles } = useProxyContext('useProfile');
  const { status } = useSessionState(client);
  const state = useSyncExternalStore(
    profiles.subscribe,
    () => profiles.state,
    () => profiles.state,
  );
  useEffect(() => {
    if (status === 'signedIn' && state.status === 'idle') void profiles.load();
  }, [status, state.status, profiles]);
  const reload = useCallback(() => profiles.load(true), [profiles]);
  return useMemo(() => ({ ...state, reload }), [state, reload]);
}

/**
 * The client given to the provider, for the other routes (`client.wallet.refresh()`, …).
 * @throws Error outside a {@link ProxySessionProvider}
 */
export function useProxyClient(): ProxyClient {
  return useProxyContext('useProxyClient').client;
}
