/**
 * The forced-logout beacon of spec 6.1: its body, built from a failed call, and how it is sent
 * (`navigator.sendBeacon` with an `application/json` Blob, else `fetch` with `keepalive`) to
 * `POST /api/logs/auth-logout`, which logs it at warning level as `forced-logout` (spec 6.2).
 *
 * @module
 */
import type { EndpointCode, ErrorCode, ErrorRef } from '../errors/index.js';

/** The proxy route that receives the beacon (spec 4.1, 6.1). */
export const FORCED_LOGOUT_BEACON_PATH = '/api/logs/auth-logout';

/** The `initiator` of beacons sent by the proxy client. */
export const DEFAULT_INITIATOR = 'proxy-client';

/** Longest values the proxy accepts per field (characters); longer values are cut. */
export const BEACON_LIMITS = {
  reason: 512,
  url: 2048,
  initiator: 128,
  pathname: 2048,
  userAgentShort: 256,
} as const;

/** spec 6.1: the body of `POST /api/logs/auth-logout`. */
export interface ForcedLogoutBeacon {
  /** `EP<4 digits>-EM<4 digits>` (spec 7.1). */
  ref: ErrorRef;
  /** EP code (spec 7.2). */
  endpointCode: EndpointCode;
  /** EM code (spec 7.3). */
  errorCode: ErrorCode;
  /** HTTP status of the failed call. */
  status: number;
  /** Reason extracted from the body (spec 7.3); `''` when there was none. */
  reason: string;
  /** The URL that failed: path only, no query string or fragment (values in a query stay out of logs). */
  url: string;
  /** What detected the failure, e.g. `'proxy-client'` or `'refresh-driver'`. */
  initiator: string;
  /** `location.pathname` of the page at the time. */
  pathname: string;
  /** Epoch milliseconds. */
  timestamp: number;
  /**
   * Whether the client believed it had a session. The session cookie is HttpOnly, so a script
   * cannot see it: this is the client's own flag, set after a successful login, registration,
   * social login or refresh and cleared by a logout (see docs/browser-sdk.md).
   */
  hadCookie: boolean;
  /** A shortened user agent (see {@link shortUserAgent}). */
  userAgentShort: string;
}

/** The failed call a beacon describes (a `ProxyError` satisfies it). */
export interface BeaconFailure {
  readonly ref: ErrorRef;
  readonly endpointCode: EndpointCode;
  readonly errorCode: ErrorCode;
  readonly status: number;
  readonly reason: string | null;
  readonly url: string;
}

/** The page context of a beacon. */
export interface BeaconContext {
  readonly initiator: string;
  readonly pathname: string;
  /** Epoch ms. */
  readonly timestamp: number;
  readonly hadCookie: boolean;
  /** The full user agent; it is shortened. */
  readonly userAgent: string;
}

function cut(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) : text;
}

function stripQuery(url: string): string {
  const i = url.search(/[?#]/);
  return i === -1 ? url : url.slice(0, i);
}

const BROWSERS: readonly [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\/(\d+)/, 'Edge'],
  [/\bOPR\/(\d+)/, 'Opera'],
  [/\bSamsungBrowser\/(\d+)/, 'Samsung'],
  [/\bFirefox\/(\d+)/, 'Firefox'],
  [/\bFxiOS\/(\d+)/, 'Firefox'],
  [/\bCriOS\/(\d+)/, 'Chrome'],
  [/\bHeadlessChrome\/(\d+)/, 'HeadlessChrome'],
  [/\bChrom(?:e|ium)\/(\d+)/, 'Chrome'],
  [/\bVersion\/(\d+)[.\d]* (?:Mobile\/\S+ )?Safari\//, 'Safari'],
];

const SYSTEMS: readonly [RegExp, string][] = [
  [/\bAndroid\b/, 'Android'],
  [/\biPhone\b/, 'iOS'],
  [/\biPad\b/, 'iPadOS'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
];

/**
 * A short user agent for logs: browser family and major version plus the system, e.g.
 * `'Chrome/131 Windows'`, `'Safari/17 iOS'`; an unknown agent gives its first 64 characters.
 * @param userAgent - `navigator.userAgent`
 */
export function shortUserAgent(userAgent: string): string {
  const ua = userAgent ?? '';
  let browser = '';
  for (const [pattern, label] of BROWSERS) {
    const m = pattern.exec(ua);
    if (m) {
      browser = `${label}/${m[1]}`;
      break;
    }
  }
  const system = SYSTEMS.find(([pattern]) => pattern.test(ua))?.[1] ?? '';
  const short = [browser, system].filter(Boolean).join(' ');
  return cut(short || ua.slice(0, 64).trim(), BEACON_LIMITS.userAgentShort);
}

/**
 * Builds the beacon of spec 6.1 from a failed call and the page context. Every field is set;
 * strings are cut to the lengths the proxy accepts ({@link BEACON_LIMITS}).
 */
export function buildForcedLogoutBeacon(failure: BeaconFailure, context: BeaconContext): ForcedLogoutBeacon {
  return {
    ref: failure.ref,
    endpointCode: failure.endpointCode,
    errorCode: failure.errorCode,
    status: failure.status,
    reason: cut(failure.reason ?? '', BEACON_LIMITS.reason),
    url: cut(stripQuery(failure.url), BEACON_LIMITS.url),
    initiator: cut(context.initiator, BEACON_LIMITS.initiator),
    pathname: cut(context.pathname, BEACON_LIMITS.pathname),
    timestamp: Math.floor(context.timestamp),
    hadCookie: context.hadCookie,
    userAgentShort: shortUserAgent(context.userAgent),
  };
}

/** `navigator.sendBeacon`'s shape. */
export type SendBeacon = (url: string, data: Blob) => boolean;

/** How {@link sendForcedLogoutBeacon} sends. */
export interface BeaconTransport {
  /** Absolute or relative URL of the beacon route; default {@link FORCED_LOGOUT_BEACON_PATH}. */
  readonly url?: string;
  /** `navigator.sendBeacon` (bound), or `null` to skip it. */
  readonly sendBeacon?: SendBeacon | null;
  /** The fallback. */
  readonly fetch?: typeof fetch | null;
}

/** How a beacon left: `beacon` (queued by `sendBeacon`), `fetch` (keepalive request started), or `none`. */
export type BeaconResult = 'beacon' | 'fetch' | 'none';

/**
 * Sends the beacon: `sendBeacon(url, Blob[application/json])` first (it survives the page being
 * unloaded by the logout that follows); when that is missing or refuses (returns `false`), a
 * `fetch` with `keepalive: true` and `credentials: 'include'`. Never throws and never waits.
 * The proxy accepts only `application/json` bodies, hence the Blob type (a string would be sent
 * as `text/plain` and refused with 415).
 */
export function sendForcedLogoutBeacon(beacon: ForcedLogoutBeacon, transport: BeaconTransport = {}): BeaconResult {
  const url = transport.url ?? FORCED_LOGOUT_BEACON_PATH;
  const json = JSON.stringify(beacon);
  const send = transport.sendBeacon;
  if (send && typeof Blob !== 'undefined') {
    try {
      if (send(url, new Blob([json], { type: 'application/json' }))) return 'beacon';
    } catch {
      // fall back to fetch
    }
  }
  const f = transport.fetch;
  if (f) {
    try {
      f(url, {
        method: 'POST',
        keepalive: true,
        credentials: 'include',
        headers: { 'content-type': 'application/json' },
        body: json,
      }).catch(() => undefined);
      return 'fetch';
    } catch {
      return 'none';
    }
  }
  return 'none';
}
