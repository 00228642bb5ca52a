/**
 * React bindings of the front proxy's browser SDK (`@front-proxy/browser`):
 *
 * - `<ProxySessionProvider client={client}>`: one per page, around the app; it follows the client's
 *   session state (`client.session`, shared between tabs), asks `GET /api/auth/session` once when
 *   the state is unknown, keeps the profile of the session, and holds the forced-logout notice;
 * - {@link useSession}: `status` (`unknown` | `signedIn` | `signedOut`), `expiresAt`, `signIn`,
 *   `signOut`, the forced-logout notice (`forcedLogout`, `dismissForcedLogout`): one place to show
 *   "you were logged out";
 * - {@link useProfile}: `GET /api/auth/profile` loaded once per session and shared by every
 *   component that asks, loaded again after the next login;
 * - {@link useProxyClient}: the client itself, for the other routes;
 * - {@link useLiveFeed}: a live feed of the sportsbook passthrough (status, last event, why it ended).
 *
 * Server-side rendering safe: nothing here touches `window`, `document` or storage when imported or
 * rendered; the provider reads the client only in effects and through `useSyncExternalStore`, whose
 * server snapshot is `unknown`. Create the client in the browser only (see docs/browser-sdk.md
 * "React" for Next.js).
 *
 * @example
 * import { createProxyClient } from '@front-proxy/browser';
 * import { ProxySessionProvider, useSession, useProfile } from '@front-proxy/react';
 * const client = createProxyClient({ locale: 'pt-BR' });
 * root.render(createElement(ProxySessionProvider, { client }, createElement(App)));
 *
 * @module
 */
export { ProxySessionProvider, type ProxySessionProviderProps, type RefreshSettings } from './provider.js';
export {
  type ForcedLogoutNotice,
  type ProfileState,
  type SessionActions,
  type SessionView,
  useProfile,
  useProxyClient,
  useSession,
} from './hooks.js';
export { type LiveFeedState, useLiveFeed } from './live.js';
