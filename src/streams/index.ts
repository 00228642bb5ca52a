/**
 * The live streams of the raw passthrough (docs/behaviour.md "Live streams"): {@link LiveStreams} opens a
 * browser's Server-Sent Events stream or WebSocket through `/api/core-sportbook/*` under the proxy's
 * rules — bounds before anything goes upstream (`bounds.ts`), upstream connections of their own
 * (`upstream.ts`), whole events scrubbed of the session cookie's values (`sse-relay.ts`), the session
 * holding the stream (`session-holds.ts`), anonymous viewers sharing one upstream stream (`feeds.ts`),
 * WebSockets relayed with `ws` (`websocket.ts`), and the drain that ends them all between events.
 *
 * The passthrough route hands a request over when {@link liveKind} says it asks for a stream; load
 * shedding stops counting it as a request in flight once it is open ({@link LONG_LIVED_EVENT}).
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { envelope, JSON_CONTENT_TYPE, type ProxyAnswer, upstreamFailureAnswer } from '../envelope.js';
import { clientAddress } from '../session/client.js';
import { sessionTokenKey } from '../session/cookie.js';
import { redactText } from '../session/redact.js';
import { isRefusal, type StreamLease, StreamBounds, type StreamRefusal } from './bounds.js';
import { type FeedOpening, type OpenedFeed, SharedFeeds } from './feeds.js';
import { type LifetimeHolder, Lifetimes } from './lifetimes.js';
import { expiryOf, SessionHolds } from './session-holds.js';
import { isEventStream, OPENING_COMMENT, sessionEndedEvent } from './sse.js';
import { type EndReason, relayEvents, SseClient } from './sse-relay.js';
import { readSome, type StreamAnswer, StreamUpstream } from './upstream.js';
import { WebSocketRelay } from './websocket.js';

export { END_REASONS, type EndReason } from './sse-relay.js';

/** The kinds of `streams_open{kind}`: a browser's event stream, a browser's WebSocket, a shared feed's upstream stream. */
export const STREAM_KINDS = ['sse', 'websocket', 'feed'] as const;
export type StreamKind = (typeof STREAM_KINDS)[number];

/**
 * The event a stream emits on its `ServerResponse` once it is open: load shedding stops counting it
 * as a request in flight then (docs/behaviour.md "Resilience", "Load shedding").
 */
export const LONG_LIVED_EVENT = 'front-proxy:long-lived';

/** The route prefix whose answers may be live streams: the raw passthrough's. */
export const LIVE_ROUTE_PREFIX = '/api/core-sportbook/';

/** The responses of the open event streams (their request line is not a request's latency: the metrics step skips them). */
const LIVE_RESPONSES = new WeakSet<object>();

/** Whether `res` (a `ServerResponse`) carried a live stream: its time is the stream's life, not an answer's latency. */
export function isLiveStream(res: object): boolean {
  return LIVE_RESPONSES.has(res);
}

/** Told of every stream that opens and ends (the stream metrics; docs/behaviour.md "Operations"). */
export interface StreamObserver {
  opened(kind: StreamKind): void;
  /** `seconds`: how long it was open (0 for a refused one). */
  ended(kind: StreamKind, reason: EndReason, seconds: number): void;
}

/** The headers every live stream answers with (docs/behaviour.md "Live streams"): nothing on the way may hold its bytes back or run it. */
export const STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cache-control': 'no-store',
  'x-accel-buffering': 'no',
  'content-security-policy': "sandbox; default-src 'none'",
  'x-content-type-options': 'nosniff',
});

/** Longest `Last-Event-ID` forwarded upstream, in characters; a longer one, or one with a control character, is dropped. */
export const MAX_LAST_EVENT_ID = 1_024;

/** What the passthrough hands over: the request and what its context knows. */
export interface LiveRequest {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  /** The accepted session token, if any. */
  readonly token: string | undefined;
  /** Every value the browser sent as the session cookie (scrubbed from every event and frame). */
  readonly secrets: readonly string[];
  /** The upstream path (below the BFF's base URL) and raw query, as the passthrough checked them. */
  readonly path: string;
  readonly rawQuery: string;
  /** The proxy's headers for an upstream call of this request (Bearer, `Cookie` without the session cookie, request id…). */
  readonly upstreamHeaders: Readonly<Record<string, string>>;
}

/**
 * What {@link LiveStreams.serve} did: `sent` (the stream is open, or its browser left meanwhile), an
 * answer for the route to send (a refusal with `Retry-After`, an upstream failure as the envelope,
 * `shutting_down` while draining), or `not_live` (the upstream's 2xx is no event stream: the route
 * goes its ordinary way).
 */
export type LiveOutcome = 'sent' | 'not_live' | ProxyAnswer;

/** Options of {@link LiveStreams}. */
export interface LiveStreamsOptions {
  readonly config: Pick<Config, 'streams' | 'upstreamTimeoutMs' | 'upstreams' | 'allowedOrigins' | 'sessionCookieName'>;
  readonly log: FastifyBaseLogger;
  readonly observer?: StreamObserver | undefined;
  /** Random source in [0, 1) of the `retry:` hints' jitter; default `Math.random`. */
  readonly random?: (() => number) | undefined;
  /** Clock of the tokens' `exp`, in epoch milliseconds; default `Date.now`. */
  readonly now?: (() => number) | undefined;
  /** How long a shared feed stays open after its last viewer left, in milliseconds (tests shorten it). */
  readonly feedLingerMs?: number | undefined;
  /** Time between a WebSocket's pings to each peer, in milliseconds; default `WS_LIMITS.pingIntervalMs` (tests shorten it). */
  readonly pingIntervalMs?: number | undefined;
}

/** Whether a request asks for a live stream: a WebSocket upgrade, or an `Accept` that names `text/event-stream`. */
export function liveKind(headers: IncomingHttpHeaders): 'sse' | 'websocket' | undefined {
  if (typeof headers.upgrade === 'string' && headers.upgrade.toLowerCase() === 'websocket') return 'websocket';
  return isEventStream(headers.accept) ? 'sse' : undefined;
}

/** A `Last-Event-ID` fit to forward (at most {@link MAX_LAST_EVENT_ID} characters, no control character), else `undefined`. */
export function lastEventIdOf(headers: IncomingHttpHeaders): string | undefined {
  const value = headers['last-event-id'];
  if (typeof value !== 'string' || value.length > MAX_LAST_EVENT_ID || /[\0-\x1f\x7f]/.test(value)) return undefined;
  return value;
}

/** An open stream as the drain and its lifetime see it. */
interface OpenStream extends LifetimeHolder {
  drain(): void;
}

/** The answer of a refused stream: the envelope with `Retry-After`, nothing sent upstream. */
function refusalAnswer(refusal: StreamRefusal): ProxyAnswer {
  return {
    status: refusal.status,
    body: refusal.body,
    contentType: JSON_CONTENT_TYPE,
    headers: { 'retry-after': String(refusal.retryAfterSeconds) },
  };
}

/** The answer to a stream asked for while the process drains: another instance takes it. */
const DRAINING: ProxyAnswer = {
  status: 503,
  body: envelope('shutting_down', 'The server is shutting down; open the stream again'),
  headers: { 'retry-after': '1', connection: 'close' },
};

/** See the module documentation. */
export class LiveStreams {
  readonly bounds: StreamBounds;
  readonly holds: SessionHolds;
  readonly feeds: SharedFeeds;
  readonly #upstream: StreamUpstream;
  readonly #websockets: WebSocketRelay;
  readonly #options: LiveStreamsOptions;
  readonly #open = new Set<OpenStream>();
  /** `STREAM_MAX_LIFETIME_MS` of every open stream, one timer for all. */
  readonly #lifetimes: Lifetimes;
  #draining = false;

  constructor(options: LiveStreamsOptions) {
    this.#options = options;
    const { streams, upstreamTimeoutMs } = options.config;
    this.bounds = new StreamBounds(streams);
    this.holds = new SessionHolds(options.now);
    this.#upstream = new StreamUpstream(upstreamTimeoutMs, streams.max);
    this.#lifetimes = new Lifetimes(streams.maxLifetimeMs);
    const observer = options.observer;
    this.feeds = new SharedFeeds(
      { idleTimeoutMs: streams.idleTimeoutMs },
      {
        lingerMs: options.feedLingerMs,
        observer: observer && {
          opened: () => observer.opened('feed'),
          ended: (reason, seconds) => observer.ended('feed', reason, seconds),
        },
      },
    );
    this.#websockets = new WebSocketRelay(options.config, options.log, options.pingIntervalMs);
  }

  /** Streams open now (browser streams; the shared feeds' upstream streams are not counted). */
  get open(): number {
    return this.#open.size;
  }

  /** Ends the streams the session of `key` holds here (told by the fleet: a logout or a refusal on any instance). */
  endSession(key: string, reason: 'logout' | 'refused'): void {
    this.holds.end(key, reason);
  }

  /**
   * Serves a request {@link liveKind} named: takes its place in the bounds (or answers the refusal),
   * then opens the stream.
   *
   * @throws {@link UpstreamError} when the upstream stream could not be opened (no headers within
   *   `UPSTREAM_TIMEOUT_MS`, unreachable…): the route's error handler answers the envelope.
   */
  async serve(kind: 'sse' | 'websocket', live: LiveRequest): Promise<LiveOutcome> {
    const baseUrl = this.#options.config.upstreams.BFF_BASE_URL;
    if (baseUrl === undefined) return { status: 503, body: envelope('not_configured', 'BFF_BASE_URL is not set') };
    if (this.#draining) return DRAINING;
    if (kind === 'websocket') {
      const refused = this.#websockets.refusal(live.request);
      if (refused !== undefined) return refused;
    }
    const sessionKey = live.token === undefined ? undefined : sessionTokenKey(live.request, live.token);
    const lease = this.bounds.take(sessionKey, clientAddress(live.request));
    if (isRefusal(lease)) {
      this.#options.observer?.ended(kind, 'refused', 0);
      return refusalAnswer(lease);
    }
    if (kind === 'websocket') return await this.#websocket(live, baseUrl, lease, sessionKey);
    try {
      const shared = live.token === undefined && live.secrets.length === 0;
      return shared ? await this.#shared(live, baseUrl, lease) : await this.#private(live, baseUrl, lease, sessionKey);
    } catch (error) {
      lease.release();
      throw error;
    }
  }

  /** A stream of its own: the browser's headers go upstream, its `Last-Event-ID` too. */
  async #private(live: LiveRequest, baseUrl: string, lease: StreamLease, sessionKey: string | undefined): Promise<LiveOutcome> {
    const headers: Record<string, string> = { ...live.upstreamHeaders, accept: 'text/event-stream', 'cache-control': 'no-cache' };
    const lastEventId = lastEventIdOf(live.request.headers);
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    const gone = new AbortController();
    const onGone = () => gone.abort();
    live.reply.raw.once('close', onGone);
    let answer: StreamAnswer;
    try {
      answer = await this.#upstream.open({ baseUrl, path: live.path, rawQuery: live.rawQuery, headers, signal: gone.signal });
    } finally {
      live.reply.raw.off('close', onGone);
    }
    const opening = await openingOf(answer);
    if (opening.kind !== 'open') {
      lease.release();
      return outcomeOf(opening);
    }
    const client = this.#start(live, opening.contentType, lease, sessionKey);
    if (client === undefined) {
      answer.body.destroy();
      return 'sent';
    }
    // The client is the relay's sink: nothing made for the opening (its abort controller, headers,
    // closures) stays reachable from the open stream.
    client.onClose(relayEvents(answer.body, client, { idleTimeoutMs: this.#options.config.streams.idleTimeoutMs }));
    return 'sent';
  }

  /** A shared feed: one upstream stream per sub-path and query, without any browser's headers. */
  async #shared(live: LiveRequest, baseUrl: string, lease: StreamLease): Promise<LiveOutcome> {
    const key = `${live.path}${live.rawQuery}`;
    const requestId = live.upstreamHeaders['x-request-id'];
    const open = async (): Promise<OpenedFeed> => {
      const answer = await this.#upstream.open({
        baseUrl,
        path: live.path,
        rawQuery: live.rawQuery,
        headers: {
          accept: 'text/event-stream',
          'cache-control': 'no-cache',
          ...(requestId === undefined ? {} : { 'x-request-id': requestId }),
        },
      });
      const opening = await openingOf(answer);
      return { opening, body: opening.kind === 'open' ? answer.body : undefined };
    };
    const opening = await this.feeds.ready(key, open);
    if (opening.kind !== 'open') {
      lease.release();
      return outcomeOf(opening);
    }
    const client = this.#start(live, opening.contentType, lease, undefined);
    if (client !== undefined) this.feeds.join(key, client, lastEventIdOf(live.request.headers));
    return 'sent';
  }

  /**
   * Sends the answer's head and its opening comment, and sets up what ends the stream: its lifetime,
   * its session, the drain, and the metrics. `undefined` when the browser left meanwhile.
   */
  #start(live: LiveRequest, contentType: string, lease: StreamLease, sessionKey: string | undefined): SseClient | undefined {
    const { reply } = live;
    if (reply.raw.destroyed) {
      lease.release();
      this.#options.observer?.ended('sse', 'client', 0);
      return undefined;
    }
    const observer = this.#options.observer;
    const openedAt = performance.now();
    let releaseHold: (() => void) | undefined;
    const entry: OpenStream = { drain: () => client.end('drain'), expire: () => client.end('lifetime') };
    const client = new SseClient({
      secrets: live.secrets,
      random: this.#options.random,
      onEnd: (reason) => {
        this.#lifetimes.stop(entry);
        releaseHold?.();
        lease.release();
        this.#open.delete(entry);
        observer?.ended('sse', reason, (performance.now() - openedAt) / 1000);
      },
    });
    if (sessionKey !== undefined && live.token !== undefined) {
      releaseHold = this.holds.hold(
        sessionKey,
        expiryOf(live.token),
        { endSession: (why) => client.end('session', sessionEndedEvent(why)) },
        this.#options.config.streams.maxLifetimeMs,
      );
    }
    if (client.ended) return undefined;
    this.#open.add(entry);
    this.#lifetimes.start(entry);
    observer?.opened('sse');
    LIVE_RESPONSES.add(reply.raw);
    reply.raw.emit(LONG_LIVED_EVENT);
    // The upstream's type is its only header the browser gets; a session cookie's value never leaves in it.
    reply.code(200).type(redactText(contentType, live.secrets)).headers(STREAM_HEADERS);
    reply.removeHeader('content-length');
    client.out.push(OPENING_COMMENT);
    reply.send(client.out);
    return client;
  }

  /** A WebSocket: see `websocket.ts`. Resolves once the upstream socket opened (the browser's upgraded) or failed (its answer). */
  async #websocket(live: LiveRequest, baseUrl: string, lease: StreamLease, sessionKey: string | undefined): Promise<LiveOutcome> {
    const observer = this.#options.observer;
    const openedAt = performance.now();
    let releaseHold: (() => void) | undefined;
    const entry: OpenStream = { drain: () => relayed.socket.close('drain'), expire: () => relayed.socket.close('lifetime') };
    this.#open.add(entry);
    this.#lifetimes.start(entry);
    const relayed = this.#websockets.relay(live, baseUrl, {
      opened: () => observer?.opened('websocket'),
      ended: (reason, wasOpen) => {
        this.#lifetimes.stop(entry);
        releaseHold?.();
        lease.release();
        this.#open.delete(entry);
        if (wasOpen) observer?.ended('websocket', reason, (performance.now() - openedAt) / 1000);
      },
    });
    if (sessionKey !== undefined && live.token !== undefined) {
      releaseHold = this.holds.hold(
        sessionKey,
        expiryOf(live.token),
        { endSession: () => relayed.socket.close('session') },
        this.#options.config.streams.maxLifetimeMs,
      );
    }
    live.reply.raw.emit(LONG_LIVED_EVENT);
    return (await relayed.answer) ?? 'sent';
  }

  /**
   * The drain (docs/behaviour.md "Live streams", "Drain"): refuses new streams, ends every open one
   * between events with a jittered `retry:` hint (WebSocket: close 1001), and closes the shared feeds.
   * Resolves once the WebSockets closed, at most `graceMs` later (their sockets are then destroyed).
   */
  async drain(graceMs: number): Promise<void> {
    this.#draining = true;
    for (const stream of [...this.#open]) stream.drain();
    this.feeds.close();
    await this.#websockets.closed(graceMs);
  }

  /** Closes the upstream pools (after {@link drain}). */
  async close(): Promise<void> {
    this.#draining = true;
    await this.#upstream.close();
  }
}

/** What an upstream stream's answer is: an event stream to relay, a failure to answer, or a 2xx of another kind. */
async function openingOf(answer: StreamAnswer): Promise<FeedOpening> {
  const type = answer.headers['content-type'];
  if (answer.status >= 200 && answer.status < 300) {
    if (answer.status !== 204 && isEventStream(type)) return { kind: 'open', contentType: String(type) };
    answer.body.destroy();
    return { kind: 'not_live' };
  }
  return { kind: 'answer', status: answer.status, headers: answer.headers, body: await readSome(answer.body) };
}

/** The route's outcome of an opening that is no event stream. */
function outcomeOf(opening: Exclude<FeedOpening, { kind: 'open' }>): LiveOutcome {
  if (opening.kind === 'not_live') return 'not_live';
  return upstreamFailureAnswer({ status: opening.status, headers: opening.headers, body: opening.body });
}
