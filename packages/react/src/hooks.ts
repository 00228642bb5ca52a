/**
 * The hooks of the bindings: {@link useSession}, {@link useProfile}, {@link useProxyClient}.
 *
 * @module
 */
import type { LoginPayload, LoginResult, OkAnswer, ProxyClient, SessionSnapshot } from '@front-proxy/browser';
import { useCallback, useContext, useEffect, useMemo, useSyncExternalStore } from 'react';
import { type ForcedLogoutNotice, ProxySessionContext, type ProxySessionContextValue } from './context.js';
import type { ProfileState } from './profile-store.js';

export type { ForcedLogoutNotice, ProfileState };

function useProxyContext(hook: string): ProxySessionContextValue {
  const value = useContext(ProxySessionContext);
  if (value === null) throw new Error(`${hook} must be used inside <ProxySessionProvider client={client}>`);
  return value;
}

/**
 * The client's session state, re-rendering on each change (this tab's and other tabs'). The
 * snapshot is the client's own object, the same until the state changes; on the server, and while
 * the client knows nothing yet, the provider's `initialSession` stands in for it.
 */
function useSessionState(value: ProxySessionContextValue): SessionSnapshot {
  const { client, serverSession } = value;
  const subscribe = useCallback((onChange: () => void) => client.session.onChange(onChange), [client]);
  const getSnapshot = useCallback(() => {
    const snapshot = client.session.snapshot;
    return snapshot.status === 'unknown' ? serverSession : snapshot;
  }, [client, serverSession]);
  return useSyncExternalStore(subscribe, getSnapshot, () => serverSession);
}

/** The actions and the forced-logout notice of {@link useSession}. */
export interface SessionActions {
  /**
   * `POST /api/auth/login` with the payload of spec 2.1; resolves with the LoginResult (a
   * `type: 'two_factor_code'` answer asks for the second step), rejects with a `ProxyError`
   * (`formMessage ?? message` is what a form shows).
   */
  readonly signIn: (payload: LoginPayload) => Promise<LoginResult>;
  /** `POST /api/auth/logout` (always answers 200; the cookie is cleared). */
  readonly signOut: () => Promise<OkAnswer>;
  /**
   * Asks `GET /api/auth/session` again now (a "try again" button while `status` is `error`; the
   * client also retries by itself with backoff, and on focus, online and visibility).
   */
  readonly retry: () => Promise<void>;
  /** The forced logout not dismissed yet (show it once, e.g. a banner), or `null`. Cleared by the next login. */
  readonly forcedLogout: ForcedLogoutNotice | null;
  /** Dismisses {@link forcedLogout}. */
  readonly dismissForcedLogout: () => void;
}

/**
 * What {@link useSession} returns: the session state, a union on `status` (`unknown` before the
 * first answer; `signedIn` with `expiresAt`, epoch seconds of the token's `exp` when known;
 * `signedOut`; `error` with the `ProxyError` of the session check that failed), and the actions.
 */
export type SessionView = SessionSnapshot & SessionActions;

/**
 * The session: status, expiry or error, sign-in, sign-out, retry, and the forced-logout notice.
 * @throws Error outside a {@link ProxySessionProvider}
 */
export function useSession(): SessionView {
  const context = useProxyContext('useSession');
  const { client, notice, dismiss } = context;
  const state = useSessionState(context);
  const signIn = useCallback((payload: LoginPayload) => client.auth.login({ body: payload }), [client]);
  const signOut = useCallback(() => client.auth.logout(), [client]);
  const retry = useCallback(async () => {
    await client.session.retry();
  }, [client]);
  return useMemo(
    () => ({ ...state, signIn, signOut, retry, forcedLogout: notice, dismissForcedLogout: dismiss }),
    [state, signIn, signOut, retry, notice, dismiss],
  );
}

/**
 * The profile of the session (`GET /api/auth/profile`): loaded when the session is `signedIn`, once
 * per session however many components ask (one request, shared), forgotten when the session ends and
 * loaded again after the next login. `reload()` asks afresh.
 * @throws Error outside a {@link ProxySessionProvider}
 */
export function useProfile(): ProfileState & { readonly reload: () => Promise<void> } {
  const context = useProxyContext('useProfile');
  const { profiles } = context;
  const { status } = useSessionState(context);
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
