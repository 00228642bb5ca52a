/**
 * The {@link RouteContext} of one request and the sending of a handler's answer (docs/architecture.md
 * "One request, step by step": the handler's upstream calls carry the proxy's headers; answers go out through the
 * envelope's rules and never carry the JWT).
 *
 * @module
 */
import type { ServerResponse } from 'node:http';
import type { FastifyContextConfig, FastifyReply, FastifyRequest } from 'fastify';
import { ifNoneMatchMatches, type Representation } from '../catalogue/representation.js';
import type { Config } from '../config.js';
import { badResponse, JSON_CONTENT_TYPE, type ProxyAnswer } from '../envelope.js';
import { clientAddress, clientHops } from '../session/client.js';
import { readSessionToken } from '../session/cookie.js';
import type { SessionCaches } from '../session/identity.js';
import { encodedForms, redactBody, redactText, type SessionCookieSplit, splitSessionCookie } from '../session/redact.js';
import type { CacheReadObserver, CacheRegistry } from '../state/caches.js';
import type { AppState } from '../state/index.js';
import type { LiveStreams } from '../streams/index.js';
import type { Cancellation, UpstreamRequest, UpstreamResponse, UpstreamService, UpstreamStream } from '../upstream/client.js';
import type { ServiceName, UpstreamCaller } from '../upstream/services.js';

/** Shared state the routes use: configuration, upstream services and caches. Built by `createServer`. */
export interface AppDeps extends SessionCaches {
  readonly config: Config;
  readonly services: Readonly<Record<ServiceName, UpstreamService>>;
  /** Random source in [0, 1) (the beacon sampling of spec 6.2); replaceable in tests. */
  readonly random: () => number;
  /** Caches route areas register, emptied together by the cache purge routes (the state's registry). */
  readonly caches: CacheRegistry;
  /** The state every instance shares: idempotency of the money moves, purge and evictions, shared entries. */
  readonly state: AppState;
  /** What routes report to the metrics (docs/behaviour.md "Operations"); does nothing without `METRICS_PORT`. */
  readonly metrics: ProxyMetrics;
  /** The live streams of the raw passthrough: event streams and WebSockets (docs/behaviour.md "Live streams"). */
  readonly streams: LiveStreams;
  /**
   * Checks of the answers left out, **for measurement only** (the instruction bench's ledger:
   * `ServerOptions.omitSteps` of `createServer`); absent in every deployment.
   */
  readonly omitted?: OmittedAnswerChecks;
}

/** The answer checks a measurement leaves out (see {@link AppDeps.omitted}). */
export interface OmittedAnswerChecks {
  /** A data row's 2xx answer is passed on without its JSON check (`upstreamAnswer`'s `unchecked`). */
  readonly answerJsonCheck: boolean;
  /** No value of the session cookie is looked for in answers ({@link RouteContext.secrets} is empty). */
  readonly secretScan: boolean;
}

/** The secrets of a request whose answers are not scanned (see {@link OmittedAnswerChecks.secretScan}). */
const NO_SECRETS: readonly string[] = Object.freeze([]);

/** The counters routes (and pipeline steps, through their options) report to (docs/behaviour.md "Operations"). */
export interface ProxyMetrics extends CacheReadObserver {
  /** One request refused by the rate limit named `limit` (a fixed name: never a user, login, address or path). */
  rateLimited(limit: string): void;
  /**
   * One `/api` request answered 503 `overloaded` by load shedding (`load_shed_total`, a counter
   * without labels; docs/behaviour.md "Resilience", "Operations").
   */
  loadShed(): void;
}

/** What the routes get when `METRICS_PORT` is unset: every report does nothing. */
export const NO_METRICS: ProxyMetrics = Object.freeze({
  cacheRead: () => undefined,
  rateLimited: () => undefined,
  loadShed: () => undefined,
});

/**
 * What a handler gets: the validated input, the session token and upstream calls that carry the
 * proxy's headers (`Authorization: Bearer <jwt>` when a session is present, the incoming `Cookie`
 * header without the session cookie (spec 1.3; docs/behaviour.md "Upstream requests": the token
 * travels only as the Bearer of an accepted session), the request id and the client's address;
 * headers sent by the browser never override these).
 */
export interface RouteContext<B = unknown, Q = unknown, P = unknown> extends UpstreamCaller {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  readonly body: B;
  readonly query: Q;
  readonly params: P;
  readonly deps: AppDeps;
  /**
   * Every value the browser sent as the session cookie (accepted or refused: expired, forged,
   * malformed), under any spelling of its name, as sent and as decoded (on the raw passthrough also in
   * their base64 forms); redacted from every answer body and header (docs/behaviour.md "Session
   * cookie"). Empty when the request carries no session cookie.
   */
  readonly secrets: readonly string[];
  /**
   * The route's `config` as `registerRoutes` declared it (auth need, upstream rows, cache control…):
   * the same values as `request.routeOptions.config`, which builds a new object on every read.
   */
  readonly routeConfig?: FastifyContextConfig;
  /**
   * The headers the proxy sets on an upstream call of this request to `service` (the Bearer of an
   * accepted session, the `Cookie` without the session cookie, the request id, `X-Forwarded-For`…),
   * for a connection the handler opens itself (a live stream: docs/behaviour.md "Live streams").
   */
  upstreamHeaders(service: ServiceName): Record<string, string>;
}

/**
 * The context of one request. Its upstream calls are methods on the prototype rather than closures
 * made per request; the proxy's headers are built once per call and merged in the client.
 */
export class RequestContext implements RouteContext {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  readonly body: unknown;
  readonly query: unknown;
  readonly params: unknown;
  readonly token: string | undefined;
  readonly deps: AppDeps;
  readonly routeConfig: FastifyContextConfig | undefined;
  constructor(request: FastifyRequest, reply: FastifyReply, routeConfig: FastifyContextConfig | undefined, deps: AppDeps) {
    this.request = request;
    this.reply = reply;
    this.body = request.body;
    this.query = request.query;
    this.params = request.params;
    this.token = readSessionToken(request);
    this.deps = deps;
    this.routeConfig = routeConfig;
  }
  get requestId(): string {
    return this.request.id;
  }
  #cookie: SessionCookieSplit | undefined;
  /** The `Cookie` header split once for the session cookie: its values (the secrets) and the other pairs (sent upstream). */
  #sessionCookie(): SessionCookieSplit {
    this.#cookie ??= splitSessionCookie(this.request.headers.cookie, this.deps.config.sessionCookieName);
    return this.#cookie;
  }
  #secrets: readonly string[] | undefined;
  get secrets(): readonly string[] {
    if (this.#secrets === undefined) {
      if (this.deps.omitted?.secretScan === true) return (this.#secrets = NO_SECRETS);
      const sent = this.#sessionCookie().values;
      this.#secrets = this.routeConfig?.rawPassthrough === true && sent.length > 0 ? [...sent, ...encodedForms(sent)] : sent;
    }
    return this.#secrets;
  }
  call(service: ServiceName, req: UpstreamRequest, options?: { bearer?: string | null; shared?: boolean }): Promise<UpstreamResponse> {
    const upstream = this.deps.services[service];
    // A call its endpoint's guard refuses costs no headers and no request copy.
    const refused = upstream.refusalFor(req);
    if (refused !== undefined) return Promise.reject(refused);
    return upstream.request(this.#forClient(req, options?.shared === true), this.#proxyHeaders(service, options?.bearer), this.request);
  }
  upstreamHeaders(service: ServiceName): Record<string, string> {
    return this.#proxyHeaders(service, undefined);
  }
  stream(service: ServiceName, req: UpstreamRequest): Promise<UpstreamStream> {
    return this.deps.services[service].stream(this.#forClient(req, false), this.#proxyHeaders(service, undefined), this.request);
  }
  /**
   * `req` as this request's client decides it: a read of a route with side effects (game start, KYC
   * start…) is marked so, never retried nor cut; any other read is cancelled when the client leaves,
   * unless its answer is `shared` with other requests (docs/behaviour.md "Resilience", "Upstream answers").
   */
  #forClient(req: UpstreamRequest, shared: boolean): UpstreamRequest {
    if (req.method !== 'GET' && req.method !== 'HEAD') return req;
    if (this.routeConfig?.sideEffects === true) return { ...req, sideEffects: true };
    return shared ? req : { ...req, signal: this.#clientGone };
  }
  #gone: ClientDeparture | undefined;
  /**
   * For a read (GET, HEAD), a cancellation that aborts when the client leaves before its answer is
   * complete (docs/behaviour.md "Resilience", "Client gone"); `undefined` for any other method: a mutation
   * is never cut. Made when the first upstream call of the request needs it (not for a call its
   * endpoint's guard refuses at once); the upstream client calls this function.
   */
  readonly #clientGone = (): Cancellation | undefined => {
    if (this.#gone !== undefined) return this.#gone;
    const method = this.request.method;
    if (method !== 'GET' && method !== 'HEAD') return undefined;
    const res = this.reply.raw;
    this.#gone = new ClientDeparture(res, res.destroyed || this.request.raw.socket?.destroyed === true);
    return this.#gone;
  };
  /** The headers the proxy sets on an upstream call; they override the route's own. */
  #proxyHeaders(service: ServiceName, bearer: string | null | undefined): Record<string, string> {
    const request = this.request;
    const headers: Record<string, string> = { 'x-request-id': request.id, 'x-forwarded-for': forwardedFor(request) };
    const ua = request.headers['user-agent'];
    if (ua) headers['user-agent'] = ua.slice(0, 512);
    const lang = request.headers['accept-language'];
    if (lang) headers['accept-language'] = lang.slice(0, 128);
    const jwt = bearer === undefined ? this.token : bearer;
    if (jwt) headers.authorization = `Bearer ${jwt}`;
    const cookie = request.headers.cookie;
    if (cookie && (service === 'bff' || jwt)) {
      const others = this.#sessionCookie().others;
      if (others) headers.cookie = others;
    }
    return headers;
  }
}

/**
 * A client's departure as the upstream calls' {@link Cancellation} (docs/behaviour.md "Resilience",
 * "Client gone"): aborted once the answer's connection closes before the answer was written whole.
 * It holds one `close` listener on the response and calls its own `abort` listeners, each once, in
 * the order they were added: no `AbortController` and no `EventTarget` per request, whose listeners
 * cost more than the call's own work on this path.
 */
export class ClientDeparture implements Cancellation {
  readonly #res: ServerResponse;
  #aborted: boolean;
  #listeners: (() => void)[] | undefined = undefined;
  /**
   * @param res - the answer's response.
   * @param gone - the client has left already: aborted from the start.
   */
  constructor(res: ServerResponse, gone: boolean) {
    this.#res = res;
    this.#aborted = gone;
    if (!gone) res.once('close', () => this.#closed());
  }
  get aborted(): boolean {
    return this.#aborted;
  }
  #closed(): void {
    if (this.#res.writableFinished) return;
    this.#aborted = true;
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener();
  }
  /** Adds an `abort` listener, called once when the client leaves (`once` or not); none once it has left (as an `AbortSignal`'s). */
  addEventListener(_type: 'abort', listener: () => void, _options?: { once?: boolean }): void {
    if (this.#aborted) return;
    const listeners = this.#listeners;
    if (listeners === undefined) this.#listeners = [listener];
    else if (!listeners.includes(listener)) listeners.push(listener);
  }
  removeEventListener(_type: 'abort', listener: () => void): void {
    const listeners = this.#listeners;
    if (listeners === undefined) return;
    const at = listeners.indexOf(listener);
    if (at !== -1) listeners.splice(at, 1);
  }
}

/**
 * The `X-Forwarded-For` sent upstream (docs/behaviour.md "Rate limits and client address"): the client
 * address alone when the socket's peer is not a trusted proxy (a browser-sent value is never
 * believed); from a trusted load balancer, the incoming chain without its trusted right-hand hops, so
 * that it ends in the client address (`clientAddress`, Fastify's `request.ip`).
 */
export function forwardedFor(request: FastifyRequest): string {
  // The socket's peer, then X-Forwarded-For from the right, up to the first untrusted address.
  const hops = clientHops(request);
  if (hops.length < 2) return clientAddress(request);
  const header = request.headers['x-forwarded-for'];
  const chain = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((entry) => entry.trim());
  const kept = chain.slice(0, Math.max(1, chain.length - (hops.length - 2)));
  return kept.join(', ');
}

/**
 * Sends a handler's answer: its status; the route's `Cache-Control` on success; a JSON body serialised
 * (a buffer or text as it is, with the upstream's content type). Every value the browser sent as the
 * session cookie (`ctx.secrets`: the accepted JWT, or a refused one) is removed from the body (also
 * when a JSON body writes it with `\u` escapes) and from the headers, whatever the upstream sent
 * (docs/behaviour.md "Session cookie").
 */
export function sendAnswer(reply: FastifyReply, answer: ProxyAnswer, ctx: RouteContext): FastifyReply {
  let body = answer.body;
  if (body !== null && !Buffer.isBuffer(body) && typeof body !== 'string') {
    const text = serialise(body);
    // An upstream value the proxy cannot write back (nested too deep, too large) is the upstream's
    // fault, answered 502, never a 500 (docs/behaviour.md "Upstream answers", "JSON").
    if (text === undefined) return sendAnswer(reply, badResponse('The service sent an answer the proxy cannot pass on'), ctx);
    body = text;
    reply.type(JSON_CONTENT_TYPE);
  } else if (answer.contentType) {
    // The only header a buffered answer takes from the upstream: the JWT never appears in a response
    // header other than the session cookie. Streamed answers go through `sendRedactedStream`, which
    // checks every header.
    reply.type(redactText(answer.contentType, ctx.secrets));
  }
  reply.code(answer.status);
  if (answer.status < 400) {
    const cacheControl = (ctx.routeConfig ?? reply.request.routeOptions.config).cacheControl;
    if (cacheControl) reply.header('cache-control', cacheControl);
  }
  const headers = answer.headers;
  if (headers !== undefined) {
    for (const name in headers) if (!reply.hasHeader(name)) reply.header(name, redactText(headers[name] as string, ctx.secrets));
  }
  if (body === null) return reply.send();
  // A cookie value too short to be a credential ("a", "1") is not redacted: it would mangle the body.
  return reply.send(redactBody(body, ctx.secrets));
}

/** The JSON text of an answer's value, or `undefined` when it cannot be written (too deep, too large). */
function serialise(value: object): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/**
 * Sends a cached answer from its prepared representations (spec 4.6 "cacheable"; `representation.ts`),
 * the fast path of a catalogue hit: the variant `Accept-Encoding` chooses, its bytes as they are, its
 * headers and `headers` (the route's `Cache-Control` and `Vary`) set together; no JSON work and no
 * compression per request. A `GET` whose `If-None-Match` matches any variant's tag answers `304` with
 * no body, the chosen variant's `ETag` and `headers` only (RFC 9110 §13.1.2, §15.4.5); other methods
 * ignore `If-None-Match` (a `HEAD` gets the 200's headers).
 *
 * Only for answers that hold no session data (filled without any session). The safety net of
 * {@link sendAnswer} stays: when the request carries a session cookie value (at least
 * `MIN_REDACTED_TOKEN_LENGTH` characters) that the identity bytes contain, nothing is sent and
 * `false` tells the caller to answer through {@link sendAnswer}, which redacts it.
 *
 * @param status - the answer's status (the cached 200).
 * @param headers - lower-case names and values added to every answer, 200 and 304 alike.
 * @returns `true` when the answer was sent.
 */
export function sendRepresentation(
  reply: FastifyReply,
  status: number,
  representation: Representation,
  headers: Readonly<Record<string, string>>,
  ctx: RouteContext,
): boolean {
  for (const value of ctx.secrets) if (representation.identity.body.includes(value)) return false;
  const request = ctx.request;
  const variant = representation.select(request.headers['accept-encoding']);
  if (request.method === 'GET' && ifNoneMatchMatches(request.headers['if-none-match'], representation.etags)) {
    reply.code(304).headers(headers).header('etag', variant.etag).send();
    return true;
  }
  reply.code(status).headers(variant.headers).headers(headers).send(variant.body);
  return true;
}
