/**
 * Live feeds through the front proxy (the server's docs/behaviour.md "Live streams"): a sub-path of
 * the raw sportsbook passthrough (`/api/core-sportbook/<subPath>`) followed as Server-Sent Events
 * ({@link liveFeed}, over `EventSource`) or as a WebSocket ({@link liveSocket}). The typed client
 * offers both bound to itself as `client.sports.live(subPath, options)` and
 * `client.sports.liveSocket(subPath, options)` ({@link LiveFeeds}).
 *
 * - The browser's `EventSource` resumes by itself after a clean end (the proxy's `retry:` hint spreads
 *   the reconnections), sending `Last-Event-ID`. When it gives up (an HTTP error, a refusal), the feed
 *   opens a new one after a backoff with full jitter, from 1 s doubling up to 30 s; with a session it
 *   first asks the session (the refusal may be the session's end, which the page cannot read), and a
 *   forced logout that answer causes ends the feed with `session_ended`.
 * - `event: session-ended` (WebSocket: close 4001 `session_ended`) ends the feed for good and runs
 *   the client's forced-logout flow: one session call (`GET /api/auth/profile?check_spa_again=1`,
 *   afresh from the BFF, never the proxy's cache), whose refusal the client turns into its forced
 *   logout once per browser (its gate), and which does nothing when the session is in fact still
 *   valid.
 * - Server-side rendering safe: without `EventSource` (or `WebSocket`) the feed ends at once with
 *   `unsupported`, and nothing is touched at import.
 *
 * @example
 * const feed = client.sports.live('live/odds?sport=football', {
 *   onEvent: (event) => render(JSON.parse(event.data)),
 *   onEnd: (reason) => reason === 'session_ended' && showSignedOut(),
 *   signal: controller.signal,
 * });
 *
 * @module
 */
import type { ProxyClient } from './proxy-client.js';

/** The passthrough prefix the feeds are opened under. */
export const LIVE_PREFIX = '/api/core-sportbook/';

/** One event of a feed: its `event:` type (`message` by default), `data` and `id`. */
export interface LiveEvent {
  readonly type: string;
  readonly data: string;
  readonly id: string;
}

/**
 * Why a feed ended: `aborted` (its signal), `session_ended` (the proxy ended the session's streams),
 * `unsupported` (no `EventSource` / `WebSocket` here, e.g. during server-side rendering).
 */
export type LiveEndReason = 'aborted' | 'session_ended' | 'unsupported';

/** Options of {@link liveFeed} and {@link liveSocket}. */
export interface LiveOptions {
  /** Each event (each WebSocket message, as `{ type: 'message', data, id: '' }`). */
  readonly onEvent: (event: LiveEvent) => void;
  /** Told once when the feed ends for good. */
  readonly onEnd?: ((reason: LiveEndReason) => void) | undefined;
  /** Told each time the feed is (re)connected (`open`) or lost and waiting to reconnect (`retrying`, with the delay in ms). */
  readonly onStatus?: ((status: 'open' | 'retrying', delayMs?: number) => void) | undefined;
  /** Ends the feed. */
  readonly signal?: AbortSignal | undefined;
  /** Event types to listen to besides `message` (an `EventSource` only delivers the named types it is asked for). */
  readonly types?: readonly string[] | undefined;
  /** The proxy's origin; default: the page's own (`''`). */
  readonly baseUrl?: string | undefined;
  /** The `EventSource` constructor (tests); default `globalThis.EventSource`. */
  readonly EventSource?: EventSourceConstructor | undefined;
  /** The `WebSocket` constructor (tests); default `globalThis.WebSocket`. */
  readonly WebSocket?: WebSocketConstructor | undefined;
  /** Random source in [0, 1) of the backoff's jitter; default `Math.random`. */
  readonly random?: (() => number) | undefined;
}

/** The part of `EventSource` the feed uses. */
export interface EventSourceLike {
  readonly readyState: number;
  onopen: ((event: unknown) => void) | null;
  onerror: ((event: unknown) => void) | null;
  addEventListener(type: string, listener: (event: { data: string; lastEventId?: string }) => void): void;
  close(): void;
}
export type EventSourceConstructor = new (url: string, init?: { withCredentials?: boolean }) => EventSourceLike;

/** The part of `WebSocket` the feed uses. */
export interface WebSocketLike {
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  close(code?: number, reason?: string): void;
  send(data: string): void;
}
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocketLike;

/** What a feed gives back: `close()` ends it (as its signal would). */
export interface LiveHandle {
  close(): void;
}

/** What a WebSocket feed gives back: `close()`, and `send(text)` (false when the socket is not open). */
export interface LiveSocketHandle extends LiveHandle {
  send(data: string): boolean;
}

/**
 * The live feeds of the typed client, `client.sports.live` and `client.sports.liveSocket`: the
 * functions {@link liveFeed} and {@link liveSocket} with the client bound (its session call runs
 * the forced-logout flow on `session-ended`).
 */
export interface LiveFeeds {
  /**
   * Follows `subPath` (below `/api/core-sportbook/`, with its query) as Server-Sent Events.
   * @throws TypeError when `subPath` would leave the passthrough (`..`, encoded dots or slashes).
   */
  live(subPath: string, options: LiveOptions): LiveHandle;
  /**
   * Follows `subPath` as a WebSocket; each text message an event of type `message`.
   * @throws TypeError as {@link LiveFeeds.live}.
   */
  liveSocket(subPath: string, options: LiveOptions): LiveSocketHandle;
}

/** {@link LiveFeeds} bound to `client` (what `createProxyClient` puts on `client.sports`). */
export function liveFeeds(client: LiveClient): LiveFeeds {
  return {
    live: (subPath, options) => liveFeed(client, subPath, options),
    liveSocket: (subPath, options) => liveSocket(client, subPath, options),
  };
}

/** `EventSource.CLOSED`: the browser gave up on the stream and will not reconnect by itself. */
const CLOSED = 2;
/** The WebSocket close code the proxy ends a session's sockets with. */
export const SESSION_ENDED_CLOSE = 4001;
/** The session call a `session-ended` asks (the forced-logout flow): the profile, fetched afresh from the BFF. */
export const SESSION_QUESTION = '/api/auth/profile?check_spa_again=1';
/** The backoff after a feed was lost for good: the first delay and the longest, in milliseconds. */
export const LIVE_BACKOFF_MS = { min: 1_000, max: 30_000 } as const;

/** The feed's URL: `subPath` below the passthrough, which may not climb out of it. */
export function liveUrl(subPath: string, baseUrl = ''): string {
  const path = subPath.replace(/^\/+/, '');
  const bare = path.split(/[?#]/)[0] ?? '';
  if (bare === '' || bare.split('/').some((segment) => segment === '.' || segment === '..' || /%2e|%2f/i.test(segment))) {
    throw new TypeError(`a live feed's sub-path may not be ${JSON.stringify(subPath)}`);
  }
  return `${baseUrl}${LIVE_PREFIX}${path}`;
}

/** The delay before attempt `attempt` (0 first), full jitter: random in [0, min(max, min·2^attempt)]. */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const cap = Math.min(LIVE_BACKOFF_MS.max, LIVE_BACKOFF_MS.min * 2 ** attempt);
  return Math.round(cap * random());
}

/** What a feed needs of the client: its session call, and whether it believes it has a session (read when present). */
export type LiveClient = Pick<ProxyClient, 'request'> & Partial<Pick<ProxyClient, 'hasSession'>>;

/** Shared by both kinds: the end, the backoff, the forced-logout flow. */
function feedControl(client: LiveClient, options: LiveOptions, open: () => void, close: () => void) {
  let ended = false;
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const end = (reason: LiveEndReason, asked = false) => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    close();
    options.signal?.removeEventListener('abort', onAbort);
    if (reason === 'session_ended' && !asked) {
      // The client decides from the answer: a refused session is its forced logout (once per browser).
      // Asked afresh of the BFF: the proxy's profile cache may still hold the ended session's profile.
      client.request('GET', SESSION_QUESTION, { session: true }).catch(() => undefined);
    }
    options.onEnd?.(reason);
  };
  const onAbort = () => end('aborted');
  options.signal?.addEventListener('abort', onAbort, { once: true });
  return {
    get ended() {
      return ended;
    },
    end,
    opened() {
      attempt = 0;
      options.onStatus?.('open');
    },
    /**
     * The stream was refused (an `EventSource` that gave up, a WebSocket handshake that failed). With
     * a session the refusal may be the session's end, which says nothing the page can read: the
     * session is asked first, and a forced logout it causes ends the feed (`session_ended`).
     */
    refused() {
      if (ended) return;
      if (client.hasSession !== true) return this.retry();
      close();
      const retry = () => (client.hasSession === false ? end('session_ended', true) : this.retry());
      client.request('GET', SESSION_QUESTION, { session: true }).then(retry, retry);
    },
    retry() {
      if (ended) return;
      close();
      const delay = backoffDelay(attempt++, options.random);
      options.onStatus?.('retrying', delay);
      timer = setTimeout(() => {
        if (!ended) open();
      }, delay);
    },
    start() {
      if (options.signal?.aborted) end('aborted');
      else open();
    },
  };
}

/**
 * Follows `subPath` (below `/api/core-sportbook/`, with its query) as Server-Sent Events, with the
 * session cookie (same origin, or `withCredentials` for another `baseUrl`).
 * @throws TypeError when `subPath` would leave the passthrough (`..`, encoded slashes).
 */
export function liveFeed(client: LiveClient, subPath: string, options: LiveOptions): LiveHandle {
  const url = liveUrl(subPath, options.baseUrl);
  const Source = options.EventSource ?? (globalThis as { EventSource?: EventSourceConstructor }).EventSource;
  let source: EventSourceLike | undefined;
  const control = feedControl(
    client,
    options,
    () => {
      if (Source === undefined) return;
      const current = new Source(url, { withCredentials: options.baseUrl !== undefined && options.baseUrl !== '' });
      source = current;
      current.onopen = () => control.opened();
      current.onerror = () => {
        // A clean end or a dropped connection: the browser reconnects by itself (CONNECTING). A refusal: it gave up (CLOSED).
        if (current.readyState === CLOSED && source === current) control.refused();
      };
      for (const type of ['message', ...(options.types ?? [])]) {
        current.addEventListener(type, (event) => {
          if (!control.ended) options.onEvent({ type, data: event.data, id: event.lastEventId ?? '' });
        });
      }
      current.addEventListener('session-ended', () => control.end('session_ended'));
    },
    () => {
      source?.close();
      source = undefined;
    },
  );
  if (Source === undefined) {
    control.end('unsupported');
    return { close: () => undefined };
  }
  control.start();
  return { close: () => control.end('aborted') };
}

/**
 * Follows `subPath` as a WebSocket through the proxy: each text message is an event of type
 * `message`; a close 4001 `session_ended` ends the feed (forced-logout flow), any other close
 * reconnects with the backoff (a handshake that failed, with a session, asks the session first, as
 * {@link liveFeed} does). `send` sends a text message while it is open.
 */
export function liveSocket(client: LiveClient, subPath: string, options: LiveOptions): LiveSocketHandle {
  const url = liveUrl(subPath, options.baseUrl);
  const Socket = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  const origin = options.baseUrl || (globalThis as { location?: { origin: string } }).location?.origin || '';
  const wsUrl = `${origin.replace(/^http/, 'ws')}${url.slice(options.baseUrl?.length ?? 0)}`;
  let socket: WebSocketLike | undefined;
  let open = false;
  const control = feedControl(
    client,
    options,
    () => {
      if (Socket === undefined) return;
      const current = new Socket(wsUrl);
      socket = current;
      let opened = false;
      current.onopen = () => {
        open = true;
        opened = true;
        control.opened();
      };
      current.onmessage = (event) => {
        if (!control.ended && typeof event.data === 'string') options.onEvent({ type: 'message', data: event.data, id: '' });
      };
      current.onclose = (event) => {
        open = false;
        if (socket !== current) return;
        if (event.code === SESSION_ENDED_CLOSE) control.end('session_ended');
        // A handshake that failed may be a refused session (a browser's WebSocket shows no status).
        else if (!opened) control.refused();
        else control.retry();
      };
    },
    () => {
      const current = socket;
      socket = undefined;
      open = false;
      current?.close(1000);
    },
  );
  if (Socket === undefined) {
    control.end('unsupported');
    return { close: () => undefined, send: () => false };
  }
  control.start();
  return {
    close: () => control.end('aborted'),
    send: (data) => {
      if (!open || socket === undefined) return false;
      socket.send(data);
      return true;
    },
  };
}
