/**
 * The core of the browser SDK, `@front-proxy/browser/core`: everything of the main entry but the
 * message tables other than English. `createProxyClient` here speaks the tables it is given
 * (`messages`, from `@front-proxy/browser/messages/<locale>`), English when none, so a page bundles
 * only the locales it imports. The main entry (`index.ts`) adds every table.
 *
 * The browser SDK of the front proxy, the package `@front-proxy/browser` (also the server's
 * `./browser` subpath): the token refresh cycle of spec 3.1 (pure functions and a driver), the
 * typed proxy client of spec part 4 with {@link ProxyError} and `Retry-After` honoured on 503 and
 * 429, the forced-logout beacon of spec 5.7 / 6, and its user-facing messages in pt-BR, en and es.
 *
 * It runs in the browser only through `fetch`, `navigator.sendBeacon`, `localStorage`,
 * `navigator.locks`, `navigator.languages` and `BroadcastChannel`, each optional or injectable: no
 * Node built-ins, no server code, no runtime dependency (imports stay inside the package: `browser/`,
 * the registry `errors/`, and the types-only shapes `contracts/shapes.ts`, erased from the bundle).
 *
 * @example
 * import { createProxyClient, startRefreshDriver } from '@front-proxy/browser/core';
 * import { ptBR } from '@front-proxy/browser/messages/pt-BR';
 * const client = createProxyClient({ messages: ptBR, onForcedLogout: (ref) => showLoggedOut(ref) });
 * startRefreshDriver({ client });
 * await client.auth.login({ body: { login, password } });
 *
 * @module
 */

export {
  BEACON_LIMITS,
  type BeaconContext,
  type BeaconFailure,
  type BeaconResult,
  type BeaconTransport,
  buildForcedLogoutBeacon,
  DEFAULT_INITIATOR,
  FORCED_LOGOUT_BEACON_PATH,
  type ForcedLogoutBeacon,
  type SendBeacon,
  sendForcedLogoutBeacon,
  shortUserAgent,
} from './beacon.js';
export {
  FORCED_LOGOUT_CALL_TIMEOUT_MS,
  FORCED_LOGOUT_ENDED_HOLD_MS,
  FORCED_LOGOUT_LOCK_LINGER_MS,
  FORCED_LOGOUT_LOCK_NAME,
  FORCED_LOGOUT_LOCK_WAIT_MS,
  type ForcedLogoutFailure,
  ForcedLogoutGate,
  type ForcedLogoutLocks,
  type ForcedLogoutRoute,
  SESSION_EXPIRY_INITIATOR,
  shouldForceLogout,
} from './forced-logout.js';
export {
  type CallInput,
  type CommonInput,
  createProxyClient,
  fillPath,
  type ForcedLogoutInfo,
  type ForcedLogoutListener,
  type ParamNames,
  type PathParams,
  type ProxyClient,
  type ProxyClientOptions,
  type Query,
  type QueryValue,
  queryString,
  type RawRequestInput,
  type ResultOf,
  type RouteBodies,
  type RouteFunction,
  type RouteResults,
  SESSION_ROUTE_PATH,
  type SessionEvent,
  type TypedRoutes,
} from './proxy-client.js';
export {
  browserLanguages,
  DEFAULT_LOCALE,
  EN_MESSAGES,
  type ErrorMessages,
  FORM_ERROR_CODES,
  type FormErrorCode,
  formMessageIn,
  isFormErrorCode,
  type Locale,
  LOCALES,
  type LocaleMessages,
  messageIn,
  pickMessages,
  resolveLocale,
} from './messages.js';
export {
  type ClientSession,
  type ForcedLogoutRecord,
  nextCheckDelayMs,
  parseSessionSnapshot,
  SESSION_CHANNEL_NAME,
  SESSION_CHECK_RETRY_FIRST_MS,
  SESSION_CHECK_RETRY_MAX_MS,
  serializeSessionSnapshot,
  type SessionChange,
  type SessionChangeCause,
  type SessionChannel,
  type SessionSnapshot,
  type SessionState,
  type SessionStatus,
  type StoredSessionStatus,
  UNKNOWN_SESSION,
} from './session.js';
export { isProxyError, NETWORK_FAILURE_REASON, ProxyError, type ProxyErrorInit } from './proxy-error.js';
export { READ_SESSION_TIMEOUT_MS, type ReadSessionOptions, readSession, sessionFromAnswer } from './server-session.js';
export {
  initialRefreshState,
  isRefreshInProgress,
  markRefreshCompleted,
  markRefreshStarted,
  markTokenSaved,
  parseRefreshState,
  REFRESH_INTERVAL_MS,
  REFRESH_RETRY_BASE_MS,
  REFRESH_RETRY_MAX_MS,
  REFRESH_STUCK_MS,
  type RefreshState,
  refreshBackoffMs,
  serializeRefreshState,
  shouldRefreshToken,
} from './refresh-cycle.js';
export {
  mayRetry,
  NOTHING_SENT_ERRORS,
  parseRetryAfter,
  type RefusedCall,
  RETRY_AFTER_MAX_RETRIES,
  RETRY_AFTER_MAX_WAIT_MS,
  RETRY_AFTER_MIN_JITTER_MS,
  RETRY_AFTER_STATUSES,
  type RetryAfterPolicy,
  retryDelayMs,
} from './retry-after.js';
export {
  type ChannelLike,
  DEFAULT_CHECK_INTERVAL_MS,
  defaultRefreshLock,
  type LeaseLockOptions,
  type LockManagerLike,
  leaseLock,
  noLock,
  REFRESH_DRIVER_INITIATOR,
  REFRESH_LEASE_MS,
  REFRESH_LOCK_NAME,
  type RefreshDriver,
  type RefreshDriverOptions,
  type RefreshLock,
  type RefreshOutcome,
  startRefreshDriver,
  webLocksLock,
} from './refresh-driver.js';
export {
  type BodyKind,
  type ClientRoute,
  findRoute,
  matchRoute,
  type ResponseKind,
  ROUTES,
  type Route,
  type RouteAccess,
  type RouteArea,
  type RouteKey,
  type RouteMethod,
  type RoutesOf,
  routeKey,
  type SessionEffect,
} from './routes.js';
export { defaultStorage, type KeyValueStorage, memoryStorage, STORAGE_KEYS } from './storage.js';
export type * from './types.js';
export { classifyError, type ErrorRef, explainRef, formatRef, isSessionEndingErrorCode, parseRef } from '../errors/index.js';
export {
  backoffDelay,
  type EventSourceConstructor,
  type EventSourceLike,
  LIVE_BACKOFF_MS,
  LIVE_PREFIX,
  type LiveEndReason,
  type LiveEvent,
  type LiveClient,
  liveFeed,
  liveFeeds,
  type LiveFeeds,
  type LiveHandle,
  type LiveOptions,
  liveSocket,
  type LiveSocketHandle,
  liveUrl,
  SESSION_ENDED_CLOSE,
  type WebSocketConstructor,
  type WebSocketLike,
} from './live.js';
