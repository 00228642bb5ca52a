/**
 * The typed proxy client: one function per route of spec part 4 (generated from `ROUTES`), JSON in
 * and out, `credentials: 'include'` (the session is the HttpOnly cookie), failures as
 * {@link ProxyError}, and the forced logout of spec 5.7 / 6 when a session-ending 401 comes back.
 *
 * @example
 * import { createProxyClient, ProxyError } from '@front-proxy/browser';
 * const client = createProxyClient({ onForcedLogout: (ref) => showLoggedOut(ref) });
 * await client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } });
 * const { user } = await client.auth.profile();
 * const deposit = await client.payments.deposit({
 *   body: { userId: user.id, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' },
 * });
 * await client.payments.depositStatus({ query: { transactionId: '…' } });
 * await client.games.category({ params: { slug: 'slots' }, query: { page: 2 } });
 *
 * @module
 */
import type { ErrorRef } from '../errors/index.js';
import {
  buildForcedLogoutBeacon,
  DEFAULT_INITIATOR,
  FORCED_LOGOUT_BEACON_PATH,
  type ForcedLogoutBeacon,
  type SendBeacon,
  sendForcedLogoutBeacon,
} from './beacon.js';
import {
  FORCED_LOGOUT_CALL_TIMEOUT_MS,
  FORCED_LOGOUT_ENDED_HOLD_MS,
  FORCED_LOGOUT_LOCK_LINGER_MS,
  FORCED_LOGOUT_LOCK_NAME,
  FORCED_LOGOUT_LOCK_WAIT_MS,
  forcedLogoutEndedLockName,
  ForcedLogoutGate,
  type ForcedLogoutLocks,
  SESSION_EXPIRY_INITIATOR,
  shouldForceLogout,
} from './forced-logout.js';
import { type LiveFeeds, liveFeeds } from './live.js';
import { type Locale, type LocaleMessages, pickMessages } from './messages.js';
import { ProxyError } from './proxy-error.js';
import { type RetryAfterPolicy, retryDelayMs } from './retry-after.js';
import { type ClientRoute, matchRoute, ROUTES, type Route, type RouteArea, type RoutesOf } from './routes.js';
import {
  type ClientSession,
  type ForcedLogoutRecord,
  nextCheckDelayMs,
  SESSION_CHANNEL_NAME,
  type SessionChangeCause,
  type SessionChannel,
  type SessionSnapshot,
  SessionStore,
} from './session.js';
import { defaultStorage, type KeyValueStorage } from './storage.js';
import type { paths } from './openapi.gen.js';
import type {
  AttributionEventPayload,
  DepositPayload,
  JsonObject,
  LoginPayload,
  LoginResult,
  PostalCodeLookupPayload,
  RecoveryPayload,
  RegisterSimplifiedPayload,
  SessionStateResult,
  SocialLoginPayload,
  ValidateDocumentPayload,
} from './types.js';

// ---------------------------------------------------------------------------------------------
// Types of the generated functions
// ---------------------------------------------------------------------------------------------

/** A query-string value; arrays repeat the key, `null`/`undefined` are left out. */
export type QueryValue = string | number | boolean | null | undefined | readonly (string | number | boolean)[];

/** Query-string parameters of a call. */
export type Query = Readonly<Record<string, QueryValue>>;

/** The parameter names of a path pattern: `{slug}` → `'slug'`, a final `*` → `'subPath'`. */
export type ParamNames<P extends string> = P extends `${string}{${infer K}}${infer Rest}`
  ? K | ParamNames<Rest>
  : P extends `${string}*`
    ? 'subPath'
    : never;

/** The path parameters of a pattern, e.g. `{ slug: string | number }`. */
export type PathParams<P extends string> = { readonly [K in ParamNames<P>]: string | number };

/**
 * Request bodies the SDK types itself, by route key: where its own type says more than the route
 * table's schema (the recovery steps as a union, the deposit's documented fields, the beacon). Every
 * other JSON route takes the body of its schema ({@link RouteBody}).
 */
export interface RouteBodies {
  'auth.login': LoginPayload;
  'auth.register': RegisterSimplifiedPayload;
  'auth.recovery': RecoveryPayload;
  'auth.social': SocialLoginPayload;
  'auth.validateDocument': ValidateDocumentPayload;
  'logs.authLogout': ForcedLogoutBeacon;
  'address.lookupByPostalCode': PostalCodeLookupPayload;
  'payments.deposit': DepositPayload;
  'tracking.attribution': AttributionEventPayload;
}

/**
 * Success answers the SDK types itself, by route key: the logins as a union on `type`. Every other
 * route answers what its schema says ({@link RouteAnswer}), a `Blob` for the raw routes.
 */
export interface RouteResults {
  'auth.login': LoginResult;
  'auth.register': LoginResult;
  'auth.social': LoginResult;
  'auth.session': SessionStateResult;
}

type KeyOf<R extends ClientRoute> = `${R['area']}.${R['name']}`;

/** The OpenAPI operation of a route (`openapi.gen.ts`), or `never` for a path the document does not have. */
type OperationOf<R extends ClientRoute> = R['path'] extends keyof paths
  ? Lowercase<R['method']> extends keyof paths[R['path']]
    ? Exclude<paths[R['path']][Lowercase<R['method']>], undefined>
    : never
  : never;

type JsonContentOf<A> = A extends { content: { 'application/json': infer T } } ? T : undefined;

type SuccessOf<O> = O extends { responses: infer S }
  ? 200 extends keyof S
    ? JsonContentOf<S[200]>
    : 201 extends keyof S
      ? JsonContentOf<S[201]>
      : 204 extends keyof S
        ? undefined
        : unknown
  : unknown;

/**
 * The success answer of a route from the route table's schema (the one `GET /openapi.json` gives):
 * the 200 (else 201) JSON body, `undefined` for a 204, `unknown` for a path the document does not
 * have (the raw passthrough `/api/core-sportbook/*`). An answer the specification does not show is
 * an open JSON object.
 */
export type RouteAnswer<R extends ClientRoute> = [OperationOf<R>] extends [never] ? unknown : SuccessOf<OperationOf<R>>;

/** The JSON request body of a route from the route table's schema, `never` when it has none. */
export type RouteBody<R extends ClientRoute> =
  OperationOf<R> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

type BodyRequired<R extends ClientRoute> = OperationOf<R> extends { requestBody: object } ? true : false;

/**
 * The money moves (docs/behaviour.md "Money moves: exactly once"): each call sends a fresh `Idempotency-Key`
 * (a random UUID) unless `headers` holds one, and after a network failure (no answer) is sent once
 * more with the same key after {@link MONEY_RETRY_DELAY_MS}.
 */
export const MONEY_MOVES: ReadonlySet<string> = new Set(['payments.deposit', 'payments.withdraw']);
/** Wait before a money move's one retry after a network failure, in milliseconds. */
export const MONEY_RETRY_DELAY_MS = 500;

/** What every call accepts. */
export interface CommonInput {
  /** Query-string parameters. */
  readonly query?: Query;
  /** Extra request headers (e.g. `Authorization` for the operator route). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Aborts the call; an aborted call rejects with the abort error, not a `ProxyError`. */
  readonly signal?: AbortSignal;
  /** `initiator` of the forced-logout beacon if this call ends the session (default: the client's). */
  readonly initiator?: string;
}

type ParamsInput<R extends ClientRoute> = [ParamNames<R['path']>] extends [never]
  ? { readonly params?: undefined }
  : { readonly params: PathParams<R['path']> };

type BodyInput<R extends ClientRoute> = R['body'] extends 'none'
  ? { readonly body?: undefined }
  : R['body'] extends 'form'
    ? { readonly body: FormData }
    : KeyOf<R> extends keyof RouteBodies
      ? { readonly body: RouteBodies[KeyOf<R>] }
      : [RouteBody<R>] extends [never]
        ? { readonly body?: JsonObject | readonly unknown[] }
        : BodyRequired<R> extends true
          ? { readonly body: RouteBody<R> }
          : { readonly body?: RouteBody<R> };

/** The input of a route's function: path parameters, query, body, headers, signal. */
export type CallInput<R extends ClientRoute> = CommonInput & ParamsInput<R> & BodyInput<R>;

/** The success answer of a route's function. */
export type ResultOf<R extends ClientRoute> =
  KeyOf<R> extends keyof RouteResults ? RouteResults[KeyOf<R>] : R['response'] extends 'blob' ? Blob : RouteAnswer<R>;

type InputRequired<R extends ClientRoute> = [ParamNames<R['path']>] extends [never]
  ? R['body'] extends 'form'
    ? true
    : KeyOf<R> extends keyof RouteBodies
      ? true
      : R['body'] extends 'json'
        ? BodyRequired<R>
        : false
  : true;

/** A route's function: resolves with the answer, rejects with a {@link ProxyError}. */
export type RouteFunction<R extends ClientRoute> =
  InputRequired<R> extends true ? (input: CallInput<R>) => Promise<ResultOf<R>> : (input?: CallInput<R>) => Promise<ResultOf<R>>;

/** The generated functions: `client.<area>.<name>(input)`. */
export type TypedRoutes = {
  readonly [A in RouteArea]: { readonly [R in RoutesOf<A> as R['name']]: RouteFunction<R> };
};

// ---------------------------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------------------------

/**
 * A change of the session the client believes it has ({@link ProxyClient.onSessionChange}): every
 * login, registration, social login, refresh, logout and forced logout, and a change of
 * {@link ProxyClient.hasSession} told by the session route, a call or another tab.
 */
export interface SessionEvent {
  /** `established`: the client now believes it has a session; `ended`: it believes it has none. */
  readonly type: 'established' | 'ended';
  readonly cause: SessionChangeCause;
  /** Epoch ms. */
  readonly at: number;
}

/**
 * How this tab learnt of a forced logout: `this-tab` ran it (beacon, logout call); `other-tab`: another
 * tab of the browser ran it, and this one, signed in until then, only tells its user (no second
 * beacon or logout call). `at`: epoch ms of the beacon.
 */
export interface ForcedLogoutInfo {
  readonly cause: 'this-tab' | 'other-tab';
  readonly at: number;
}

/**
 * Told of a forced logout: the reference (e.g. `'EP0702-EM0003'`), the failure, the beacon sent
 * (by this tab or, with `info.cause` `other-tab`, by the tab that ran it) and how this tab learnt it.
 */
export type ForcedLogoutListener = (ref: ErrorRef, error: ProxyError, beacon: ForcedLogoutBeacon, info: ForcedLogoutInfo) => void;

/** Options of {@link createProxyClient}. Every one has a browser default. */
export interface ProxyClientOptions {
  /** Origin of the proxy, e.g. `'https://www.example.com'`; default `''` (same origin). */
  readonly baseUrl?: string;
  /** The fetch implementation; default the global `fetch`. */
  readonly fetch?: typeof fetch;
  /** `navigator.sendBeacon` (bound); `null` to always use `fetch` with `keepalive`. */
  readonly sendBeacon?: SendBeacon | null;
  /** Where the session state persists (shared by the tabs); default `localStorage` (memory when unavailable). */
  readonly storage?: KeyValueStorage;
  /**
   * Called once when a session-ending failure, or the token's expiry, forces a logout (after the
   * beacon is sent and `/api/auth/logout` answered or failed), however many calls fail together;
   * again only after the next successful login. Only for a session the client believed in
   * (`session.status` `signedIn`, or `unknown` with a refused cookie): a guest's 401 `no_token`
   * never calls it. Receives the reference, e.g. `'EP0702-EM0003'`. One tab of the browser runs a
   * forced logout; the others, signed in until then, are called with `info.cause` `other-tab`.
   */
  readonly onForcedLogout?: ForcedLogoutListener;
  /** `initiator` of the beacons; default `'proxy-client'`. */
  readonly initiator?: string;
  /** The page path for the beacon; default `location.pathname`. */
  readonly pathname?: () => string;
  /** The user agent for the beacon; default `navigator.userAgent`. */
  readonly userAgent?: string;
  /** Clock in epoch ms; default `Date.now`. */
  readonly now?: () => number;
  /**
   * The language of the user-facing messages (`ProxyError.message`, `formMessage`): a BCP 47 tag or
   * a list of them, most preferred first (`'pt-BR'`, `'en'`, `'es'`; `'pt-PT'` reads as `pt-BR`,
   * `'es-MX'` as `es`). Default the browser's languages (`navigator.languages`); `pt-BR` when none
   * is one the SDK has.
   */
  readonly locale?: string | readonly string[];
  /**
   * The message tables the client may speak, one or several (`@front-proxy/browser/messages/pt-BR`,
   * `…/en`, `…/es`); `locale` picks among them. From `@front-proxy/browser` the default is all
   * three; from `@front-proxy/browser/core` English only, so a page that imports one table bundles
   * that one.
   */
  readonly messages?: LocaleMessages | readonly LocaleMessages[];
  /**
   * Honouring `Retry-After` on 503 and 429 (`retry-after.ts`): bounds, or `false` to never send a
   * refused call again. Default at most 2 more sends and 10 s of waiting per call.
   */
  readonly retry?: RetryAfterPolicy | false;
  /** Random numbers in [0, 1) for the jitter of the waits; default `Math.random`. */
  readonly random?: () => number;
  /**
   * Ask `GET /api/auth/session` once when the client is created with the session state `unknown`
   * (nothing stored yet). Default `true` in a page (where `document` exists), `false` elsewhere
   * (server-side rendering, tests).
   */
  readonly checkSession?: boolean;
  /**
   * Channel sharing the session state with the other tabs; default a `BroadcastChannel` named
   * `front-proxy:session` in a page; `null` for none. The `storage` event of `window` is listened to
   * as well.
   */
  readonly sessionChannel?: SessionChannel | null;
  /**
   * The Web Locks API that elects the one tab running a forced logout (the others wait for it, then
   * tell their user with cause `other-tab`); default `navigator.locks` in a page, `null` for none
   * (each tab then runs its own, told apart only by the shared state).
   */
  readonly locks?: ForcedLogoutLocks | null;
}

/** Input of {@link ProxyClient.request}, for paths outside `ROUTES`. */
export interface RawRequestInput extends CommonInput {
  /** A JSON value, or a `FormData`. */
  readonly body?: unknown;
  /**
   * Treat the call as needing a session (a session-ending 401 then forces a logout); default
   * `false`. Ignored for a pre-authentication path (`/api/auth/login`, …): never a forced logout.
   */
  readonly session?: boolean;
}

/**
 * The client: the generated route functions plus session helpers, and the live feeds of the
 * sportsbook passthrough beside its route functions (`client.sports.live`, `client.sports.liveSocket`).
 */
export type ProxyClient = TypedRoutes & {
  readonly sports: LiveFeeds;
  /** The route rows the functions were generated from. */
  readonly routes: readonly ClientRoute[];
  /**
   * Calls any proxy path (e.g. a dev-only route). Same JSON handling and errors as the route
   * functions; forces a logout only when `session: true` is given, never on a
   * pre-authentication path (whose failures get the pre-authentication messages).
   */
  request<T = unknown>(method: string, path: string, input?: RawRequestInput): Promise<T>;
  /**
   * Whether the client believes it has a session (`session.status === 'signedIn'`): set after a
   * successful login, registration, social login or refresh, or by the session route; cleared by a
   * logout. The HttpOnly cookie itself cannot be read.
   */
  readonly hasSession: boolean;
  /** The session state: `status`, `expiresAt`, `error`, `snapshot`, `onChange(listener)`, `check()`, `retry()`. */
  readonly session: ClientSession;
  /**
   * Stops listening to the other tabs (the `storage` event and the channel), to the page's `focus`,
   * `online` and `visibilitychange`, and clears the session check's retry and the expiry timers.
   */
  close(): void;
  /** Whether a forced logout ran since the last successful login. */
  readonly forcedLogoutFired: boolean;
  /** The last beacon sent, if any (for diagnostics). */
  readonly lastBeacon: ForcedLogoutBeacon | null;
  /**
   * Subscribes to forced logouts, like the `onForcedLogout` option (called after it, once per forced
   * logout); returns the unsubscribe function. Bindings (e.g. `@front-proxy/react`) use it.
   */
  onForcedLogout(listener: ForcedLogoutListener): () => void;
  /** Subscribes to session changes; returns the unsubscribe function. */
  onSessionChange(listener: (event: SessionEvent) => void): () => void;
  /** The locale of the client's messages (option `locale`, else the browser's languages, else `pt-BR`). */
  readonly locale: Locale;
};

interface AnyInput extends CommonInput {
  readonly params?: Readonly<Record<string, string | number>>;
  readonly body?: unknown;
}

const LOGIN_OUTCOMES = new Set(['two_factor_code', 'cancelled_account']);

/** The session-state route (beyond the spec): answered from the cookie, never upstream. */
export const SESSION_ROUTE_PATH = '/api/auth/session';

/** The EM code of a 401 `no_token` (no session cookie at all). */
const NO_TOKEN_ERROR_CODE = 'EM0001';

/** The reason the proxy gives an expired token (EM0003); an expiry seen on the page's clock reads so. */
const TOKEN_EXPIRED_REASON = 'token_expired';

/** The longest delay `setTimeout` keeps (2^31 - 1 ms, about 24.8 days); a longer wait is re-armed. */
const MAX_TIMER_MS = 2_147_483_647;

/** Lets Node exit with a timer pending (no-op in a browser, whose timers are numbers). */
function unrefTimer<T>(timer: T): T {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}

/** `AbortSignal.timeout(ms)` where the runtime has it, else `undefined` (no deadline). */
function timeoutSignal(ms: number): AbortSignal | undefined {
  return typeof AbortSignal !== 'undefined' && typeof AbortSignal.timeout === 'function' ? AbortSignal.timeout(ms) : undefined;
}

/** Whether another holder has the lock `name` now (asked without waiting; a failing API says no). */
async function heldElsewhere(locks: ForcedLogoutLocks, name: string): Promise<boolean> {
  try {
    return (await locks.request(name, { ifAvailable: true }, async (lock) => lock === null || lock === undefined)) === true;
  } catch {
    return false;
  }
}

/**
 * Takes the lock `name` (without waiting) and keeps it for `ms` milliseconds; resolves once it is
 * held (or could not be taken), not when it is let go.
 */
function holdFor(locks: ForcedLogoutLocks, name: string, ms: number): Promise<void> {
  return new Promise<void>((held) => {
    locks
      .request(name, { ifAvailable: true }, async (lock) => {
        held();
        if (lock !== null && lock !== undefined) await new Promise((release) => unrefTimer(setTimeout(release, ms)));
      })
      .catch(() => held());
  });
}

/** `navigator.locks` when the page has the Web Locks API, else `null`. */
function defaultLocks(): ForcedLogoutLocks | null {
  const locks = (globalThis as { navigator?: { locks?: ForcedLogoutLocks } }).navigator?.locks;
  return locks && typeof locks.request === 'function' ? locks : null;
}

/** Waits `ms`, or rejects with the abort reason as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function encodeSegment(value: string | number, name: string): string {
  const text = String(value);
  if (text === '' || text === '.' || text === '..') throw new TypeError(`path parameter ${name} may not be ${JSON.stringify(text)}`);
  return encodeURIComponent(text);
}

/**
 * Fills a path pattern: `{name}` from `params.name` (percent-encoded, one segment), a final `*`
 * from `params.subPath` (each segment percent-encoded; `.` and `..` refused).
 * @throws TypeError when a parameter is missing or unsafe
 */
export function fillPath(pattern: string, params: Readonly<Record<string, string | number>> = {}): string {
  let path = pattern.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const value = params[name];
    if (value === undefined) throw new TypeError(`missing path parameter ${name} for ${pattern}`);
    return encodeSegment(value, name);
  });
  if (path.endsWith('*')) {
    const sub = params.subPath;
    if (sub === undefined) throw new TypeError(`missing path parameter subPath for ${pattern}`);
    const segments = String(sub)
      .split('/')
      .filter((s) => s !== '');
    path = path.slice(0, -1) + segments.map((s) => encodeSegment(s, 'subPath')).join('/');
  }
  return path;
}

/** The query string of a call, with its `?`, or `''`. */
export function queryString(query: Query | undefined): string {
  if (!query) return '';
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const v of value) search.append(key, String(v));
    else search.append(key, String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/** The `error` of an envelope body (`{ ok: false, error }`), else `null`. */
function envelopeErrorOf(data: unknown): string | null {
  if (typeof data !== 'object' || data === null) return null;
  const d = data as { ok?: unknown; error?: unknown };
  return d.ok === false && typeof d.error === 'string' ? d.error : null;
}

function parseBody(text: string, contentType: string | null): unknown {
  if (text === '') return undefined;
  const looksJson = /^\s*[[{"]/.test(text) || (contentType ?? '').includes('json');
  if (!looksJson) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function defaultSendBeacon(): SendBeacon | null {
  const nav = (globalThis as { navigator?: Navigator }).navigator;
  return nav && typeof nav.sendBeacon === 'function' ? (url, data) => nav.sendBeacon(url, data) : null;
}

/**
 * Creates the proxy client.
 *
 * Behaviour of every route function:
 * - `fetch(baseUrl + path + query, { credentials: 'include' })`; a JSON body is sent with
 *   `Content-Type: application/json`, a `FormData` as multipart;
 * - 2xx: the parsed JSON (or a `Blob` for raw routes, `undefined` for an empty body);
 * - 4xx/5xx: rejects with a {@link ProxyError} (status, reason, EP/EM codes, ref) classified with
 *   the proxy route URL (EP07xx codes, spec 7.2); on a pre-authentication route (login, register,
 *   recovery, social login, document validation) its `message` is the EM row's
 *   pre-authentication message (a wrong password does not read as an ended session);
 * - the call's `signal` aborted before a failure was read: rejects with the abort reason;
 * - no response: rejects with a {@link ProxyError} of status 0 (EM0042);
 * - 503 or 429 with `Retry-After`: a read (`GET`) is sent again after the wait it asks for,
 *   jittered; a mutation only when it carries an `Idempotency-Key` and the answer is a refusal that
 *   sent nothing upstream; at most 2 more sends and 10 s of waiting per call (`retry-after.ts`);
 * - messages in the client's `locale` (pt-BR, en, es; `messages.ts`);
 * - a 401 of a session-ending family on a route that needs a session (see `shouldForceLogout`),
 *   for a session the client believed in: before rejecting, the forced logout runs once: beacon
 *   (spec 6.1), `POST /api/auth/logout`, then `onForcedLogout(ref)`; for a guest (no session
 *   believed, or a 401 `no_token` with the state unknown) only `session.status` becomes `signedOut`;
 * - the session state (`client.session`, `session.ts`): set by logins, refreshes, logouts and
 *   `GET /api/auth/session`, which a page asks once at start when the state is unknown.
 */
export function createProxyClient(options: ProxyClientOptions = {}): ProxyClient {
  const baseUrl = (options.baseUrl ?? '').replace(/\/+$/, '');
  const fetchImpl: typeof fetch =
    options.fetch ??
    ((input, init) => {
      if (typeof globalThis.fetch !== 'function') return Promise.reject(new TypeError('fetch is not available'));
      return globalThis.fetch(input, init);
    });
  const sendBeacon = options.sendBeacon === undefined ? defaultSendBeacon() : options.sendBeacon;
  const storage = options.storage ?? defaultStorage();
  const now = options.now ?? Date.now;
  const pathname = options.pathname ?? (() => (globalThis as { location?: { pathname?: string } }).location?.pathname ?? '');
  const userAgent = options.userAgent ?? (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent ?? '';
  const initiator = options.initiator ?? DEFAULT_INITIATOR;
  const table = pickMessages(options.messages, options.locale);
  const locale = table.locale;
  const retryPolicy = options.retry ?? {};
  const random = options.random ?? Math.random;
  const gate = new ForcedLogoutGate();
  const listeners = new Set<(event: SessionEvent) => void>();
  const forcedListeners = new Set<ForcedLogoutListener>();
  let lastBeacon: ForcedLogoutBeacon | null = null;

  const page = typeof (globalThis as { document?: unknown }).document !== 'undefined';
  const BC = (globalThis as { BroadcastChannel?: new (name: string) => SessionChannel }).BroadcastChannel;
  let channel: SessionChannel | null = null;
  if (options.sessionChannel !== undefined) channel = options.sessionChannel;
  else if (page && BC) {
    try {
      channel = new BC(SESSION_CHANNEL_NAME);
    } catch {
      channel = null;
    }
  }
  const windowEvents = page ? (globalThis as { addEventListener?: unknown }).addEventListener : undefined;
  const store = new SessionStore({
    storage,
    now,
    channel,
    events: typeof windowEvents === 'function' ? (globalThis as unknown as EventTarget) : null,
  });

  const hasSession = (): boolean => store.snapshot.status === 'signedIn';

  const notify = (type: SessionEvent['type'], cause: SessionChangeCause): void => {
    const event: SessionEvent = { type, cause, at: now() };
    for (const listener of [...listeners]) {
      try {
        listener(event);
      } catch {
        // a listener's failure does not break the call
      }
    }
  };

  /**
   * Sets the session state. The SessionEvent listeners hear every login, refresh, logout and forced
   * logout, and any other cause only when `hasSession` flips.
   */
  const setState = (
    snapshot: Pick<SessionSnapshot, 'status' | 'expiresAt'>,
    cause: SessionChangeCause,
    record: ForcedLogoutRecord | null = null,
  ): void => {
    const before = hasSession();
    store.set(snapshot, cause, record);
    const active = snapshot.status === 'signedIn';
    if (active && (!before || cause === 'login' || cause === 'refresh')) gate.rearm();
    const always = cause === 'login' || cause === 'refresh' || cause === 'logout' || cause === 'forced-logout';
    if (always || before !== active) notify(active ? 'established' : 'ended', cause);
  };

  const tellForcedLogout = (ref: ErrorRef, error: ProxyError, beacon: ForcedLogoutBeacon, info: ForcedLogoutInfo): void => {
    try {
      options.onForcedLogout?.(ref, error, beacon, info);
    } catch {
      // the callback's failure does not change the outcome
    }
    for (const listener of [...forcedListeners]) {
      try {
        listener(ref, error, beacon, info);
      } catch {
        // a listener's failure does not change the outcome
      }
    }
  };

  // Another tab signing in or out flips this tab's belief too; its forced logout is told here as well.
  store.subscribe((change) => {
    if (change.cause !== 'other-tab') return;
    const active = change.status === 'signedIn';
    if (active && change.previous !== 'signedIn') gate.rearm();
    if (active !== (change.previous === 'signedIn')) notify(active ? 'established' : 'ended', 'other-tab');
    const record = change.forcedLogout;
    if (record && change.previous === 'signedIn') {
      const { beacon } = record;
      // The same failure, classified again in this tab's language.
      const error = new ProxyError({
        status: beacon.status,
        method: record.method,
        url: beacon.url,
        data: beacon.reason === '' ? undefined : { reason: beacon.reason },
        messages: table,
      });
      tellForcedLogout(beacon.ref, error, beacon, { cause: 'other-tab', at: beacon.timestamp });
    }
  });

  /** `expiresAt` from a login answer's `expires_in` (seconds), else `null`. */
  const expiryOf = (data: unknown): number | null => {
    const expiresIn = (data as { expires_in?: unknown } | undefined)?.expires_in;
    return typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0 ? Math.floor(now() / 1000 + expiresIn) : null;
  };

  const locks = options.locks === undefined ? (page ? defaultLocks() : null) : options.locks;

  /** Resolves when the state is `signedOut` (told by another tab, read now or later), or after `ms`. */
  const signedOutWithin = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      let timer: ReturnType<typeof setTimeout> | null = null;
      const off = store.subscribe((change) => {
        if (change.status === 'signedOut') done();
      });
      const done = (): void => {
        off();
        if (timer !== null) clearTimeout(timer);
        resolve();
      };
      timer = unrefTimer(setTimeout(done, ms));
      store.sync('other-tab');
      if (store.snapshot.status === 'signedOut') done();
    });

  /**
   * The forced logout: beacon, `POST /api/auth/logout` (at most {@link FORCED_LOGOUT_CALL_TIMEOUT_MS}),
   * the state `signedOut` with the beacon stored for the other tabs, then the callbacks. With Web
   * Locks one tab of the browser runs it at a time; a tab that got the lock after another tab's run
   * finds the state `signedOut`, or the session's "ended" lock held while its storage has not heard
   * that state yet, and only tells its user (`other-tab`, from the storage event).
   */
  const forceLogout = (error: ProxyError, callInitiator: string): Promise<void> => {
    const context = {
      initiator: callInitiator,
      pathname: pathname(),
      timestamp: now(),
      hadCookie: hasSession(),
      userAgent,
    };
    /** Runs it unless the state already says `signedOut`; resolves to whether it ran. */
    const run = async (): Promise<boolean> => {
      // Another tab may have run it while this one waited for the lock: read the shared state first.
      store.sync('other-tab');
      if (store.snapshot.status === 'signedOut') return false;
      const beacon = buildForcedLogoutBeacon(error, context);
      lastBeacon = beacon;
      sendForcedLogoutBeacon(beacon, { url: baseUrl + FORCED_LOGOUT_BEACON_PATH, sendBeacon, fetch: fetchImpl });
      try {
        await fetchImpl(`${baseUrl}/api/auth/logout`, {
          method: 'POST',
          credentials: 'include',
          headers: { accept: 'application/json' },
          signal: timeoutSignal(FORCED_LOGOUT_CALL_TIMEOUT_MS),
        });
      } catch {
        // the cookie may survive a failed logout; the page is logged out anyway
      }
      setState({ status: 'signedOut', expiresAt: null }, 'forced-logout', { beacon, method: error.method });
      tellForcedLogout(error.ref, error, beacon, { cause: 'this-tab', at: beacon.timestamp });
      return true;
    };
    // The tab that gets the lock runs it, takes the session's "ended" lock before it lets the first
    // one go, and keeps the first a moment after; a tab that finds the first taken, or the session's
    // "ended" lock held (its storage has not heard the new state yet), waits for that tab's state to
    // arrive (storage event or channel), and runs it itself only past the deadline.
    const elected = (held: NonNullable<typeof locks>): Promise<boolean> =>
      new Promise<boolean>((resolve, reject) => {
        held
          .request(FORCED_LOGOUT_LOCK_NAME, { ifAvailable: true }, async (lock) => {
            if (lock === null || lock === undefined) {
              resolve(false);
              return;
            }
            let ranHere = true;
            try {
              store.sync('other-tab');
              const ended = forcedLogoutEndedLockName(store.snapshot.expiresAt);
              if (store.snapshot.status !== 'signedOut' && (await heldElsewhere(held, ended))) ranHere = false;
              else if (await run()) await holdFor(held, ended, FORCED_LOGOUT_ENDED_HOLD_MS);
            } finally {
              resolve(ranHere);
            }
            if (ranHere) await new Promise((linger) => unrefTimer(setTimeout(linger, FORCED_LOGOUT_LOCK_LINGER_MS)));
          })
          .catch(reject);
      });
    return gate.run(async () => {
      if (!locks) {
        await run();
        return;
      }
      let ranHere: boolean;
      try {
        ranHere = await elected(locks);
      } catch {
        // the Web Locks API failed: this tab runs it alone
        await run();
        return;
      }
      if (ranHere) return;
      await signedOutWithin(FORCED_LOGOUT_LOCK_WAIT_MS);
      await run();
    }).done;
  };

  const call = async (route: ClientRoute, input: AnyInput = {}): Promise<unknown> => {
    // A state that changed while this call was under way is not overwritten by the session route's answer.
    const generation = store.generation;
    const path = fillPath(route.path, input.params) + queryString(input.query);
    const url = baseUrl + path;
    const headers: Record<string, string> = { accept: 'application/json', ...input.headers };
    // A money move carries a fresh Idempotency-Key per action (unless the caller gives its own, to span
    // its own retries), reused on this client's one retry after a network failure.
    const moneyMove = MONEY_MOVES.has(`${route.area}.${route.name}`);
    if (moneyMove && !Object.keys(headers).some((name) => name.toLowerCase() === 'idempotency-key')) {
      headers['idempotency-key'] = globalThis.crypto.randomUUID();
    }
    let body: BodyInit | undefined;
    if (input.body !== undefined && route.method !== 'GET') {
      if (typeof FormData !== 'undefined' && input.body instanceof FormData) {
        body = input.body;
      } else {
        body = JSON.stringify(input.body);
        headers['content-type'] = 'application/json';
      }
    }
    const hasKey = Object.keys(headers).some((name) => name.toLowerCase() === 'idempotency-key');
    const fail = (init: { status: number; cause?: unknown; data?: unknown; rawBody?: string }) =>
      new ProxyError({ ...init, method: route.method, url: path, preAuth: route.preAuth, messages: table });
    let retries = 0;
    let waitedMs = 0;
    let res: Response;
    let text: string;
    let data: unknown;
    for (;;) {
      for (let attempt = 1; ; attempt++) {
        try {
          res = await fetchImpl(url, { method: route.method, credentials: 'include', headers, body, signal: input.signal });
          break;
        } catch (cause) {
          if (input.signal?.aborted) throw cause;
          if (!moneyMove || attempt > 1) throw fail({ status: 0, cause });
          // The outcome is unknown: the same key lets the proxy replay it, or say it is still in progress (409).
          await sleep(MONEY_RETRY_DELAY_MS, input.signal);
        }
      }
      if (res.ok && route.response === 'blob') return res.blob();
      try {
        text = await res.text();
      } catch (cause) {
        if (input.signal?.aborted) throw cause;
        throw fail({ status: 0, cause });
      }
      data = parseBody(text, res.headers.get('content-type'));
      if (res.ok) break;
      // Aborted while the failure was read (e.g. the page logged out meanwhile): no ProxyError, no forced logout.
      input.signal?.throwIfAborted();
      const delay =
        retryPolicy === false
          ? null
          : retryDelayMs(
              {
                method: route.method,
                idempotencyKey: hasKey,
                status: res.status,
                retryAfter: res.headers.get('retry-after'),
                envelopeError: envelopeErrorOf(data),
                retries,
                waitedMs,
              },
              retryPolicy,
              random,
              now(),
            );
      if (delay === null) {
        const error = fail({ status: res.status, data, rawBody: text });
        if (shouldForceLogout(route, error)) {
          // Only a session the client believed in is logged out (spec 6.1: a guest never was). With the
          // state unknown, a refused cookie (expired, revoked, invalid) shows a session existed; a
          // missing one (no_token) does not.
          const status = store.snapshot.status;
          const unknown = status === 'unknown' || status === 'error';
          if (status === 'signedIn' || (unknown && error.errorCode !== NO_TOKEN_ERROR_CODE)) {
            await forceLogout(error, input.initiator ?? initiator);
          } else if (status !== 'signedOut') {
            setState({ status: 'signedOut', expiresAt: null }, 'call');
          }
        }
        throw error;
      }
      await sleep(delay, input.signal);
      retries++;
      waitedMs += delay;
    }
    if (route.effect === 'establish') {
      const type = (data as { type?: unknown } | undefined)?.type;
      if (!(typeof type === 'string' && LOGIN_OUTCOMES.has(type))) {
        const refresh = route.name === 'refresh';
        // A refresh answers { ok: true }: the old exp no longer holds (a timer on it would end the
        // renewed session), and the new one is asked from the session route, after a check already
        // under way (whose answer, from before the refresh, is dropped).
        setState({ status: 'signedIn', expiresAt: refresh ? null : expiryOf(data) }, refresh ? 'refresh' : 'login');
        if (refresh) void (checking ? checking.then(() => checkSession()) : checkSession());
      }
    } else if (route.effect === 'end') {
      setState({ status: 'signedOut', expiresAt: null }, 'logout');
    } else if (route.path === SESSION_ROUTE_PATH && route.method === 'GET' && generation === store.generation) {
      const answer = data as { signedIn?: unknown; expiresAt?: unknown } | undefined;
      if (answer && typeof answer.signedIn === 'boolean') {
        const expiresAt = typeof answer.expiresAt === 'number' ? answer.expiresAt : null;
        setState(answer.signedIn ? { status: 'signedIn', expiresAt } : { status: 'signedOut', expiresAt: null }, 'session-check');
      }
    } else if (route.session && store.snapshot.status !== 'signedIn') {
      // A success on a route that needs a session shows there is one.
      setState({ status: 'signedIn', expiresAt: null }, 'call');
    }
    return data === undefined && text !== '' ? text : data;
  };

  const sessionRoute = (ROUTES as readonly ClientRoute[]).find((r) => r.path === SESSION_ROUTE_PATH && r.method === 'GET') as ClientRoute;
  let closed = false;
  let checking: Promise<SessionSnapshot> | null = null;
  let checkFailures = 0;
  let checkTimer: ReturnType<typeof setTimeout> | null = null;
  const clearCheckTimer = (): void => {
    if (checkTimer !== null) clearTimeout(checkTimer);
    checkTimer = null;
  };
  /**
   * `GET /api/auth/session`; the state is set by `call`. A failure (no answer, 5xx, 429) leaves a
   * known state as it was; with nothing known it is `error`, asked again after a backoff
   * (`nextCheckDelayMs`: 1 s doubling to 30 s, jittered) until an answer comes. Calls made while one
   * runs share it.
   */
  const checkSession = (): Promise<SessionSnapshot> => {
    if (checking) return checking;
    clearCheckTimer();
    const run = (async (): Promise<SessionSnapshot> => {
      try {
        await call(sessionRoute);
        checkFailures = 0;
        store.failCheck(null);
      } catch (error) {
        const status = store.snapshot.status;
        if (error instanceof ProxyError && (status === 'unknown' || status === 'error')) {
          store.failCheck(error);
          if (!closed) checkTimer = unrefTimer(setTimeout(() => void checkSession(), nextCheckDelayMs(checkFailures++, random)));
        }
      }
      return store.snapshot;
    })();
    checking = run.finally(() => {
      checking = null;
    });
    return checking;
  };
  const retrySession = (): Promise<SessionSnapshot> => {
    checkFailures = 0;
    return checkSession();
  };

  // The token's expiry ends the session at that moment, with the forced logout the next call's 401
  // would have caused: a timer on the known `exp`, checked again when the page comes back (timers of
  // a hidden or sleeping page run late).
  let expiryTimer: ReturnType<typeof setTimeout> | null = null;
  const expiryError = (): ProxyError =>
    new ProxyError({ status: 401, method: 'GET', url: SESSION_ROUTE_PATH, data: { reason: TOKEN_EXPIRED_REASON }, messages: table });
  const checkExpiry = (): void => {
    if (expiryTimer !== null) clearTimeout(expiryTimer);
    expiryTimer = null;
    const { status, expiresAt } = store.snapshot;
    if (closed || status !== 'signedIn' || expiresAt === null) return;
    const left = expiresAt * 1000 - now();
    if (left <= 0) {
      void forceLogout(expiryError(), SESSION_EXPIRY_INITIATOR);
      return;
    }
    expiryTimer = unrefTimer(setTimeout(checkExpiry, Math.min(left, MAX_TIMER_MS)));
  };
  store.subscribe(() => checkExpiry());

  // Coming back (focus, online, visible) asks the session route again after a failed check.
  const onComeBack = (): void => {
    const doc = (globalThis as { document?: { visibilityState?: string } }).document;
    if (doc?.visibilityState === 'hidden') return;
    checkExpiry();
    if (store.snapshot.status === 'error') void retrySession();
  };
  const target = page && typeof windowEvents === 'function' ? (globalThis as unknown as EventTarget) : null;
  const docTarget = page ? ((globalThis as { document?: EventTarget }).document ?? null) : null;
  target?.addEventListener('focus', onComeBack);
  target?.addEventListener('online', onComeBack);
  docTarget?.addEventListener?.('visibilitychange', onComeBack);

  let initialCheck: Promise<SessionSnapshot> | null = null;
  const session: ClientSession = {
    get status() {
      return store.snapshot.status;
    },
    get expiresAt() {
      return store.snapshot.expiresAt;
    },
    get error() {
      return store.snapshot.error;
    },
    get snapshot() {
      return store.snapshot;
    },
    onChange: (listener) => store.subscribe(listener),
    check: checkSession,
    retry: retrySession,
    get initialCheck() {
      return initialCheck;
    },
  };
  if ((options.checkSession ?? page) && store.snapshot.status === 'unknown') initialCheck = checkSession();
  checkExpiry();

  const areas: Record<string, Record<string, (input?: AnyInput) => Promise<unknown>>> = {};
  for (const route of ROUTES as readonly ClientRoute[]) {
    areas[route.area] ??= {};
    const area = areas[route.area] as Record<string, (input?: AnyInput) => Promise<unknown>>;
    area[route.name] = (input) => call(route, input);
  }
  // The live feeds run the forced-logout flow through this client's own session call.
  Object.assign(
    (areas.sports ??= {}),
    liveFeeds({
      request: (method, path, input) => client.request(method, path, input),
      get hasSession() {
        return client.hasSession;
      },
    }),
  );

  const client = {
    ...areas,
    routes: ROUTES as readonly ClientRoute[],
    request: <T>(method: string, path: string, input: RawRequestInput = {}): Promise<T> => {
      const m = method.toUpperCase() as ClientRoute['method'];
      // A pre-authentication path stays one whatever `session` says (spec 7.4.4).
      const preAuth = matchRoute(m, path)?.preAuth === true;
      const route: ClientRoute = {
        area: 'raw',
        name: 'request',
        method: m,
        path: path.replace(/[{}*]/g, encodeURIComponent),
        access: preAuth ? 'pre-auth' : input.session ? 'session' : 'public',
        session: input.session === true && !preAuth,
        preAuth,
        body: input.body === undefined ? 'none' : 'json',
        response: 'json',
        effect: 'none',
        spec: '',
      };
      return call(route, input as AnyInput) as Promise<T>;
    },
    get hasSession() {
      return hasSession();
    },
    session,
    close: () => {
      closed = true;
      clearCheckTimer();
      if (expiryTimer !== null) clearTimeout(expiryTimer);
      expiryTimer = null;
      target?.removeEventListener('focus', onComeBack);
      target?.removeEventListener('online', onComeBack);
      docTarget?.removeEventListener?.('visibilitychange', onComeBack);
      store.close();
    },
    get forcedLogoutFired() {
      return gate.fired;
    },
    get lastBeacon() {
      return lastBeacon;
    },
    get locale() {
      return locale;
    },
    onForcedLogout(listener: ForcedLogoutListener) {
      forcedListeners.add(listener);
      return () => {
        forcedListeners.delete(listener);
      };
    },
    onSessionChange(listener: (event: SessionEvent) => void) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
  return client as unknown as ProxyClient;
}

/** The route row type, re-exported for typing helpers built on the client. */
export type { Route };
