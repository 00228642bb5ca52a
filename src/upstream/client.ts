/**
 * The upstream client: undici `Pool`s per upstream origin with keep-alive, a total time limit per
 * call (`UPSTREAM_TIMEOUT_MS`, headers and body), a response-size cap, no redirects followed, and every
 * transport failure mapped to an {@link UpstreamError}.
 *
 * Every call passes its endpoint's guard first (`endpoint-guard.ts`, docs/behaviour.md "Resilience"): a
 * bounded share of the origin's connections per EP code, a bounded wait, a circuit breaker. The calls
 * of the session and of the money moves ({@link PRIORITY_ENDPOINTS}) go over a pool of their own, so
 * that the other endpoints can never take their connections. A read (GET, HEAD) whose connection
 * failed before any answer byte is sent once more, within the retry budget and its time limit; a
 * read's call is cancelled when its `signal` aborts (the client left). Mutations are never retried
 * and never cancelled.
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { type Dispatcher, interceptors, Pool } from 'undici';
import { endpointCodeFor } from '../errors/index.js';
import { answerFraming } from './answer-framing.js';
import { type CallOutcome, type CircuitListener, EndpointGuard, type GuardLimits, type ResilienceObserver, type Ticket } from './endpoint-guard.js';
import { ClientShares } from './client-shares.js';
import { CIRCUIT_FAILURES, headerFailureOf, toUpstreamError, UpstreamError } from './errors.js';
import { buildQuery, type QueryValue } from './paths.js';

/**
 * Largest upstream answer the proxy buffers by default, in bytes (4 MiB, `UPSTREAM_MAX_RESPONSE_BYTES`;
 * docs/behaviour.md "Upstream answers"): counted on the bytes received and again on the decoded bytes of a
 * coded answer; larger answers are `upstream_response_too_large`.
 */
export const MAX_UPSTREAM_RESPONSE_BYTES = 4 * 1024 * 1024;

/**
 * The codings a recipient may see after decoding: none, or `identity`. Anything else left in
 * `Content-Encoding` once undici's decompression ran is a coding the proxy cannot decode.
 */
function isDecodedCoding(value: string | string[] | undefined): boolean {
  if (value === undefined) return true;
  const text = (Array.isArray(value) ? value.join(',') : value).trim().toLowerCase();
  return text === '' || text === 'identity';
}

/** The failure of an answer whose `Content-Encoding` names a coding the proxy cannot decode (docs/behaviour.md "Upstream answers"). */
function unknownCoding(): UpstreamError {
  return new UpstreamError('upstream_bad_response', { detail: 'The service sent an answer in a coding the proxy cannot read' });
}

/** Connections of an origin's general pool (every endpoint but {@link PRIORITY_ENDPOINTS}). */
export const POOL_CONNECTIONS = 128;

/**
 * Connections of an origin's pool for {@link PRIORITY_ENDPOINTS} (opened as needed): as many as the
 * general pool, so that a burst of logins or profile reads never waits in undici's queue.
 */
export const PRIORITY_POOL_CONNECTIONS = 128;

/**
 * The endpoints that must always find a connection (docs/behaviour.md "Resilience": money moves and the
 * session's own calls), by EP code (spec 7.2): they go over a pool of their own per origin.
 */
export const PRIORITY_ENDPOINTS: ReadonlySet<string> = new Set([
  'EP0001', // POST /auth/login
  'EP0002', // POST /auth/logout
  'EP0003', // GET /auth/user-profile
  'EP0004', // POST /users/refresh-token
  'EP0012', // POST /auth/logout-auto
  'EP0015', // POST /bff/social/{provider}
  'EP0091', // POST /wallet/add-credit (deposit)
  'EP0093', // POST /new-withdraws (withdraw)
]);

/** Remembered EP codes of call paths per service before the memory is emptied (paths carry ids). */
const ENDPOINT_MEMORY = 2_048;

/** A retry is sent only when at least this much of the call's time limit is left, in milliseconds. */
const RETRY_MIN_LEFT_MS = 50;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

/** One call to an upstream. `path` must come from the route table or {@link buildPath}. */
export interface UpstreamRequest {
  method: HttpMethod;
  /** Path below the service's base URL, starting with `/` (or `''` for a service whose URL is the endpoint). */
  path: string;
  query?: Readonly<Record<string, QueryValue>> | undefined;
  /** Raw query string to append as is (starting with `?`); only for the raw sports passthrough. */
  rawQuery?: string | undefined;
  headers?: Readonly<Record<string, string>> | undefined;
  /** A JSON value to send (serialised here, with `content-type: application/json`). */
  json?: unknown;
  /**
   * A body already serialised, or a stream sent as it is read (uploads); set `content-type` in
   * `headers`. A stream that errors aborts the call.
   */
  body?: string | Buffer | Readable | undefined;
  /**
   * For a stream `body`: where it stands with its own source (the client's upload), read when the call
   * meets its time limit to tell a client that stopped sending (`client_aborted`) from an upstream that
   * stopped reading (`upstream_timeout`). Without it, such a call is an upstream timeout.
   */
  bodySource?: BodySource | undefined;
  /**
   * The client's cancellation, for reads only (docs/behaviour.md "Resilience", "Client gone"): when it
   * aborts, the call leaves its queue or is aborted, and fails with `client_aborted`. A function is
   * called for the signal only once the endpoint's guard has not refused the call at once (a signal
   * costs an `AbortController` and a listener, which a refusal never needs).
   */
  signal?: AbortSignal | (() => AbortSignal | undefined) | undefined;
  /** Skip the endpoint's guard (the readiness probe, which must see the BFF as it is). */
  unguarded?: boolean | undefined;
  /**
   * The client a call whose target the client chose is made for (the raw passthrough: a verified
   * session's key, else the client address): the call passes the client's fair share of the endpoint's
   * guard (`client-shares.ts`, docs/behaviour.md "Resilience"). Never a token or a raw address in a label.
   */
  client?: string | undefined;
  /**
   * Tracing: the call is made on the proxy's own behalf (a catalogue fill, the readiness probe), so
   * its span is a root span, linked to the request given as the call's `trace` (the one that caused
   * it) instead of a child of that request's span.
   */
  traceRoot?: boolean | undefined;
  /**
   * A `GET` whose upstream call creates or hands out something (game start, sports launch, partner
   * and support-desk tokens, KYC start; the route's `sideEffects`): like a mutation, it is never sent
   * again and never cut when its client leaves (docs/behaviour.md "Upstream answers", "Retries and side effects").
   */
  sideEffects?: boolean | undefined;
}

/**
 * Where a streamed request body stands with its source, kept up to date by the code that produces the
 * body (one timestamp write per chunk, nothing allocated): `waitingSince` is set to `performance.now()`
 * each time the body asks its source for the next chunk (the call having taken every chunk the source
 * gave so far), and back to `0` as soon as that chunk arrives and when the source is done.
 *
 * At the call's time limit, a body waiting on its source means the proxy is held up by the client: every
 * byte it sent has been taken by the call, and the next has not come (a stalled or too slow upload). A
 * body not waiting on its source is held up by the upstream: it has not started reading it (the call
 * still queued or connecting), or it stopped reading with a chunk of the client's in hand, or it read
 * everything and has not answered. Unlike the length of the stream's buffer, this does not depend on how
 * much the streams on the way buffer (their `highWaterMark`, 16 KiB up to Node.js 20, 64 KiB from 22).
 */
export interface BodySource {
  /** `performance.now()` when the body began waiting for its source's next chunk; `0` while it is not waiting. */
  waitingSince: number;
}

/** A buffered upstream answer. */
export interface UpstreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The whole body, at most {@link MAX_UPSTREAM_RESPONSE_BYTES}. */
  body: Buffer;
}

/** A streamed upstream answer; the caller must consume or destroy `body`. */
export interface UpstreamStream {
  status: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

/**
 * One finished upstream call, as an {@link UpstreamObserver} sees it (docs/behaviour.md "Operations": the
 * upstream metrics). Holds raw paths and bodies: an observer must never put them in a label.
 */
export interface UpstreamCallRecord {
  /** The service's configuration variable, e.g. `BFF_BASE_URL`. */
  readonly service: string;
  /** The path prefix of the service's base URL (`''` when it is an origin alone). */
  readonly prefix: string;
  readonly method: HttpMethod;
  /** The call's path below the base URL, without the query string. */
  readonly path: string;
  /** The answer's status; `0` when the call failed without one. */
  readonly status: number;
  /** The failure, when the call ended without an answer. */
  readonly error: UpstreamError | undefined;
  /** The whole body of a buffered answer; `undefined` for a streamed answer or a failure. */
  readonly body: Buffer | undefined;
  /** From the dispatch to the whole answer (buffered) or to its headers (streamed), in seconds. */
  readonly seconds: number;
}

/**
 * Told of every upstream call that was dispatched (a service that is not configured dispatches
 * nothing). Called synchronously when the call settles; what it throws is ignored.
 */
export type UpstreamObserver = (call: UpstreamCallRecord) => void;

/** A sampled upstream call's span (tracing on), ended once the call settles. */
export interface UpstreamSpan {
  /** `status`: the answer's HTTP status (for a stream, once its body is done); `error`: the failure without one. */
  end(status: number, error: UpstreamError | undefined): void;
}

/**
 * The tracing of upstream calls (`src/pipeline/tracing-sdk.ts`), given to the pools when tracing is on.
 * Called once per call at its dispatch: adds the configured propagators' headers to `headers` and
 * answers the call's span when it is sampled (else `undefined`: nothing to end).
 *
 * @param trace - the request the call is made for (the tracing step's state is kept on it), if any.
 * @param root - the call's span is a root span linked to `trace` ({@link UpstreamRequest.traceRoot}).
 * @param origin - the service's origin (`http://host:port`); `path`: the dispatched path with its query.
 */
export interface UpstreamTracer {
  start(trace: object | undefined, root: boolean, method: string, origin: string, path: string, headers: Record<string, string>): UpstreamSpan | undefined;
}

/** What the pools and guards of every service share: limits, observers. */
export interface PoolOptions {
  /** The limits of each endpoint's guard; `undefined`: no guard (tests of the bare client). */
  readonly limits?: GuardLimits | undefined;
  /** Told of every call (the metrics); omit it when nothing observes. */
  readonly observer?: UpstreamObserver | undefined;
  /** Told of the guards' events (the metrics). */
  readonly resilience?: ResilienceObserver | undefined;
  /** Told of every circuit change (the warn log line). */
  readonly onCircuit?: CircuitListener | undefined;
  /** Traces every call (tracing on); omit it when tracing is off (no cost). */
  readonly tracer?: UpstreamTracer | undefined;
  /**
   * Largest answer buffered or streamed, in bytes, counted on the received and on the decoded bytes
   * (`UPSTREAM_MAX_RESPONSE_BYTES`); default {@link MAX_UPSTREAM_RESPONSE_BYTES}.
   */
  readonly maxResponseBytes?: number | undefined;
}

/**
 * Keeps two undici `Pool`s per origin — a general one and one for {@link PRIORITY_ENDPOINTS} — shared
 * by every service on that origin, and the guard of every endpoint.
 */
export class PoolRegistry {
  readonly #pools = new Map<string, Dispatcher>();
  readonly #timeoutMs: number;
  /** Told of every call of the services over these pools; `undefined`: nothing observed (no cost). */
  readonly observer: UpstreamObserver | undefined;
  /** Traces every call of the services over these pools; `undefined`: tracing off (no cost). */
  readonly tracer: UpstreamTracer | undefined;
  readonly #options: PoolOptions;
  readonly #guards = new Map<string, EndpointGuard>();
  /**
   * @param timeoutMs - total limit of one call, in milliseconds.
   * @param options - guard limits and observers, or (older form) the call observer alone.
   */
  constructor(timeoutMs: number, options?: PoolOptions | UpstreamObserver) {
    this.#timeoutMs = timeoutMs;
    this.#options = typeof options === 'function' ? { observer: options } : (options ?? {});
    this.observer = this.#options.observer;
    this.tracer = this.#options.tracer;
    this.maxResponseBytes = this.#options.maxResponseBytes ?? MAX_UPSTREAM_RESPONSE_BYTES;
  }
  /** Largest answer accepted, in bytes (received and decoded; `UPSTREAM_MAX_RESPONSE_BYTES`). */
  readonly maxResponseBytes: number;
  /** The guard of one endpoint of one service, created on first use; `undefined` without limits. */
  guard(service: string, endpoint: string): EndpointGuard | undefined {
    const limits = this.#options.limits;
    if (limits === undefined) return undefined;
    const key = `${service} ${endpoint}`;
    let guard = this.#guards.get(key);
    if (guard === undefined) {
      guard = new EndpointGuard(endpoint, service, limits, this.#options.resilience, this.#options.onCircuit);
      this.#guards.set(key, guard);
    }
    return guard;
  }
  readonly #shares = new Map<string, ClientShares>();
  /**
   * The fair shares of one endpoint's guard for calls of named clients ({@link UpstreamRequest.client}),
   * created on first use over the endpoint's own guard; `undefined` without limits.
   */
  shares(service: string, endpoint: string): ClientShares | undefined {
    const shared = this.guard(service, endpoint);
    if (shared === undefined) return undefined;
    const key = `${service} ${endpoint}`;
    let shares = this.#shares.get(key);
    if (shares === undefined) {
      shares = new ClientShares(shared, this.#options.limits as GuardLimits, this.#options.resilience);
      this.#shares.set(key, shares);
    }
    return shares;
  }
  /** Every guard made so far (tests, diagnostics). */
  get guards(): readonly EndpointGuard[] {
    return [...this.#guards.values()];
  }
  /**
   * The pool for an origin such as `https://bff.example.com`, created on first use; `priority`: the
   * pool of {@link PRIORITY_ENDPOINTS}. Its answers are decoded before anyone reads them (docs/behaviour.md
   * "Upstream answers", docs/architecture.md "Habits" (habit 16)): undici's decompression interceptor decodes `gzip`,
   * `deflate`, `br` (and `zstd` where the runtime has it), whatever the status, and stops a decoded
   * body at {@link maxResponseBytes} (`upstream_response_too_large`, decoded no further); the pool
   * itself stops the received bytes at the same size. A coding it does not know stays in
   * `Content-Encoding`, and the calls refuse such an answer. Before the decoding, interim 1xx answers
   * are dropped and an answer without content loses its coding (`answer-framing.ts`).
   */
  get(origin: string, priority = false): Dispatcher {
    const key = priority ? `${origin} priority` : origin;
    let pool = this.#pools.get(key);
    if (!pool) {
      const limit = this.maxResponseBytes;
      pool = new Pool(origin, {
        connections: priority ? PRIORITY_POOL_CONNECTIONS : POOL_CONNECTIONS,
        pipelining: 1,
        keepAliveTimeout: 4_000,
        keepAliveMaxTimeout: 60_000,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
        connectTimeout: Math.min(this.#timeoutMs, 10_000),
        maxResponseSize: limit,
      }).compose(answerFraming(), decompression(limit));
      this.#pools.set(key, pool);
    }
    return pool;
  }
  /** Closes every pool (graceful shutdown: in-flight calls finish first). */
  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((p) => p.close().catch(() => p.destroy())));
  }
}

/**
 * One upstream service (the BFF, the sticker API, an external endpoint) at a base URL: origin plus
 * optional path prefix. Its URL is never exposed in errors.
 */
export class UpstreamService {
  readonly name: string;
  readonly #pools: PoolRegistry;
  readonly #origin: string | undefined;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  /** EP code by `METHOD path` (without query), emptied when it reaches {@link ENDPOINT_MEMORY} entries. */
  readonly #endpoints = new Map<string, string>();
  /** When a call last got an answer (any status), `performance.now()`; `0`: never. */
  lastAnsweredAt = 0;
  /** When a call last failed without an answer (timeout, connection), `performance.now()`; `0`: never. */
  lastFailedAt = 0;

  /**
   * @param name - the configuration variable that names it (e.g. `BFF_BASE_URL`), used in `not_configured`.
   * @param baseUrl - origin plus optional path prefix, or `undefined` when not configured.
   * @param timeoutMs - total limit of one call (headers and body), in milliseconds.
   */
  constructor(name: string, baseUrl: string | undefined, pools: PoolRegistry, timeoutMs: number) {
    this.name = name;
    this.#pools = pools;
    this.#timeoutMs = timeoutMs;
    if (baseUrl === undefined) {
      this.#origin = undefined;
      this.#prefix = '';
    } else {
      const url = new URL(baseUrl);
      this.#origin = url.origin;
      this.#prefix = url.pathname.replace(/\/+$/, '');
    }
  }

  /** True when a base URL is configured. */
  get configured(): boolean {
    return this.#origin !== undefined;
  }

  /** True once any call of this service got an answer (any HTTP status). */
  get answeredOnce(): boolean {
    return this.lastAnsweredAt !== 0;
  }

  /**
   * The EP code (spec 7.2) of a call: the registry row of the dispatched path (base URL prefix and
   * call path, no query) and method; `EP0000` for a path the registry does not know.
   */
  endpointOf(method: HttpMethod, path: string): string {
    const key = `${method} ${path}`;
    let code = this.#endpoints.get(key);
    if (code === undefined) {
      code = endpointCodeFor(method, `${this.#prefix}${path}`);
      if (this.#endpoints.size >= ENDPOINT_MEMORY) this.#endpoints.clear();
      this.#endpoints.set(key, code);
    }
    return code;
  }

  /**
   * The dispatch options of a call: method, path below the base URL with its query, the proxy's headers
   * over the route's, and the JSON body serialised.
   * @throws UnsafePathError or a serialisation error (callers map them to an {@link UpstreamError}).
   */
  #options(req: UpstreamRequest, proxyHeaders: Readonly<Record<string, string>> | undefined): Dispatcher.DispatchOptions {
    // `identity` last: neither a route nor a browser header may invite a coding (docs/behaviour.md "Upstream answers").
    const headers: Record<string, string> = { accept: 'application/json', ...req.headers, ...proxyHeaders, 'accept-encoding': 'identity' };
    let body: string | Buffer | Readable | undefined = req.body;
    if (req.json !== undefined) {
      body = JSON.stringify(req.json);
      headers['content-type'] = 'application/json';
    }
    const path = `${this.#prefix}${req.path}${req.rawQuery ?? buildQuery(req.query)}` || '/';
    return { method: req.method, path, headers, body: body ?? null };
  }

  /**
   * The guard of the call's endpoint (its client's fair share of it for a call with a
   * {@link UpstreamRequest.client}) and whether it takes the priority pool; no guard when unguarded.
   */
  #route(req: UpstreamRequest): { guard: CallGuard | undefined; priority: boolean } {
    const endpoint = this.endpointOf(req.method, req.path);
    let guard: CallGuard | undefined;
    if (req.unguarded !== true) {
      if (req.client === undefined) guard = this.#pools.guard(this.name, endpoint);
      else {
        const shares = this.#pools.shares(this.name, endpoint);
        guard = shares === undefined ? undefined : new ClientCall(shares, req.client);
      }
    }
    return { guard, priority: PRIORITY_ENDPOINTS.has(endpoint) };
  }

  /**
   * The refusal the guard of `req`'s endpoint gives a new call now (`upstream_circuit_open`,
   * `upstream_busy`; reported to the metrics as such), or `undefined` when the call may be tried: lets
   * a caller refuse before it builds the call's headers. Nothing is taken or changed.
   */
  refusalFor(req: UpstreamRequest): UpstreamError | undefined {
    if (this.#origin === undefined || req.unguarded === true) return undefined;
    try {
      this.#route(req).guard?.refuseEarly();
      return undefined;
    } catch (error) {
      return error as UpstreamError;
    }
  }

  /** Records how a call ended, for readiness (`lastAnsweredAt`, `lastFailedAt`). */
  #note(error: UpstreamError | undefined): void {
    if (error === undefined) this.lastAnsweredAt = performance.now();
    else if (CIRCUIT_FAILURES.has(error.code)) this.lastFailedAt = performance.now();
  }

  /**
   * Calls the service and buffers the answer.
   *
   * The body is collected straight from undici's dispatcher (no response stream, no AbortController):
   * undici's `headersTimeout`/`bodyTimeout` watch the socket, and one timer per call enforces the total
   * limit (`UPSTREAM_TIMEOUT_MS`, headers and body) by aborting the dispatch. The wait for the
   * endpoint's guard comes before, bounded by `UPSTREAM_QUEUE_WAIT_MS`.
   *
   * @param proxyHeaders - headers the proxy sets (session, request id…); they override `req.headers`.
   * @param trace - the request the call is made for (tracing: its span's parent, or its link with
   *   `req.traceRoot`); ignored when tracing is off.
   * @returns the status, headers and body of any answer with a status, including 4xx and 5xx.
   * @throws {@link UpstreamError} `upstream_timeout`, `upstream_unavailable`, `upstream_bad_response`,
   *   `upstream_response_too_large`, `not_configured`, `upstream_busy`, `upstream_circuit_open` or
   *   `client_aborted` (a read whose `signal` aborted, or a stream `body` that failed: the client's upload
   *   broke, the call is aborted and not observed as an upstream failure); never anything else.
   */
  request(req: UpstreamRequest, proxyHeaders?: Readonly<Record<string, string>>, trace?: object): Promise<UpstreamResponse> {
    if (this.#origin === undefined) {
      return Promise.reject(new UpstreamError('not_configured', { detail: `${this.name} is not set` }));
    }
    const { guard, priority } = this.#route(req);
    let options: Dispatcher.DispatchOptions;
    let ticket: Ticket | Promise<Ticket> | undefined;
    let signal: AbortSignal | undefined;
    try {
      guard?.refuseEarly();
    } catch (error) {
      return Promise.reject(error as UpstreamError);
    }
    try {
      options = this.#options(req, proxyHeaders);
    } catch (error) {
      return Promise.reject(toUpstreamError(error));
    }
    try {
      signal = signalOf(req);
      if (signal?.aborted) return Promise.reject(new UpstreamError('client_aborted'));
      ticket = guard?.enter(signal);
    } catch (error) {
      return Promise.reject(error as UpstreamError);
    }
    const go = (given: Ticket | undefined) => this.#guarded(guard, given ?? 0, priority, options, req, signal, trace);
    return ticket instanceof Promise ? ticket.then(go) : go(ticket);
  }

  /** Sends a call its guard let go, observes it, and gives the slot back when it ends. */
  #guarded(
    guard: CallGuard | undefined,
    ticket: Ticket,
    priority: boolean,
    options: Dispatcher.DispatchOptions,
    req: UpstreamRequest,
    signal: AbortSignal | undefined,
    trace: object | undefined,
  ): Promise<UpstreamResponse> {
    guard?.earn();
    const start = performance.now();
    const retryable = isRead(req.method) && req.sideEffects !== true;
    const span = this.#pools.tracer?.start(trace, req.traceRoot === true, req.method, this.#origin as string, options.path, options.headers as Record<string, string>);
    const answer = this.#send(options, priority, this.#timeoutMs, signal, retryable ? guard : undefined, req.bodySource);
    answer.then(
      (res) => {
        this.#note(undefined);
        guard?.leave(outcomeOfStatus(res.status), ticket);
        span?.end(res.status, undefined);
      },
      (error: UpstreamError) => {
        this.#note(error);
        guard?.leave(outcomeOfError(error), ticket);
        span?.end(0, error);
      },
    );
    const observer = this.#pools.observer;
    if (observer !== undefined) observe(observer, this.name, this.#prefix, req, answer, start);
    return answer;
  }

  /**
   * One dispatch with its time limit; for a read (`retryGuard` set) whose connection failed before any
   * answer byte, one more dispatch within the time left, when the endpoint's retry budget allows.
   * `bodySource`: where a stream body stands with its source (see {@link BodySource}).
   */
  #send(
    options: Dispatcher.DispatchOptions,
    priority: boolean,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    retryGuard: CallGuard | undefined,
    bodySource?: BodySource,
  ): Promise<UpstreamResponse> {
    const call = new BufferedCall(this.#pools.maxResponseBytes);
    const started = performance.now();
    const answer = call.start(timeoutMs, signal);
    const body = options.body;
    if (body !== null && body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body) && !(body instanceof Uint8Array)) {
      const stream = body as Readable;
      // Registered before undici's own listener: a failing request body is the client's fault, not the upstream's.
      stream.once('error', (error) => call.fail(new UpstreamError('client_aborted', { cause: error })));
      // At the time limit, a body waiting on its source (everything the client sent taken, the next bytes not
      // come) means the client stopped sending: its fault too. Any other body is held up by the upstream.
      if (bodySource !== undefined) call.bodyStarved = () => bodySource.waitingSince !== 0;
    }
    try {
      this.#pools.get(this.#origin as string, priority).dispatch(options, call);
    } catch (error) {
      call.fail(toUpstreamError(error));
    }
    if (retryGuard === undefined) return answer;
    return answer.catch((error: UpstreamError) => {
      const left = timeoutMs - (performance.now() - started);
      if (error.code !== 'upstream_unavailable' || call.answerStarted || left < RETRY_MIN_LEFT_MS || !retryGuard.tryRetry()) throw error;
      return this.#send(options, priority, left, signal, undefined);
    });
  }

  /**
   * Calls the service and returns the body as a stream (receipts, raw passthrough). The time limit
   * covers the whole transfer: a body still streaming after `UPSTREAM_TIMEOUT_MS` is cut. The
   * endpoint's slot is held until the body ends.
   *
   * @param proxyHeaders - as for {@link request}; `trace`: as for {@link request}.
   * @throws {@link UpstreamError} as {@link request}, for failures before the headers arrive.
   */
  async stream(req: UpstreamRequest, proxyHeaders?: Readonly<Record<string, string>>, trace?: object): Promise<UpstreamStream> {
    if (this.#origin === undefined) throw new UpstreamError('not_configured', { detail: `${this.name} is not set` });
    const { guard, priority } = this.#route(req);
    guard?.refuseEarly();
    const signal = signalOf(req);
    if (signal?.aborted) throw new UpstreamError('client_aborted');
    const entered = guard?.enter(signal);
    const ticket = entered instanceof Promise ? await entered : (entered ?? 0);
    guard?.earn();
    const observer = this.#pools.observer;
    const start = observer === undefined ? 0 : performance.now();
    const answer = this.#stream(req, proxyHeaders, priority, signal, trace);
    if (observer !== undefined) observe(observer, this.name, this.#prefix, req, answer, start);
    let res: UpstreamStream;
    try {
      res = await answer;
    } catch (error) {
      this.#note(error as UpstreamError);
      guard?.leave(outcomeOfError(error as UpstreamError), ticket);
      throw error;
    }
    this.#note(undefined);
    if (guard !== undefined) {
      const outcome = outcomeOfStatus(res.status);
      res.body.once('close', () => guard.leave(outcome, ticket));
    }
    return res;
  }

  async #stream(
    req: UpstreamRequest,
    proxyHeaders: Readonly<Record<string, string>> | undefined,
    priority: boolean,
    signal: AbortSignal | undefined,
    trace: object | undefined,
  ): Promise<UpstreamStream> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new UpstreamError('upstream_timeout')), this.#timeoutMs);
    const onClientGone = () => controller.abort(new UpstreamError('client_aborted'));
    signal?.addEventListener('abort', onClientGone, { once: true });
    let span: UpstreamSpan | undefined;
    try {
      const options = this.#options(req, proxyHeaders);
      span = this.#pools.tracer?.start(trace, req.traceRoot === true, req.method, this.#origin as string, options.path, options.headers as Record<string, string>);
      const res = await this.#pools.get(this.#origin as string, priority).request({ ...options, signal: controller.signal });
      res.body.once('close', () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onClientGone);
        span?.end(res.statusCode, undefined);
      });
      // undici's body emits 'error' when destroyed before its end (a route dropping an answer it will
      // not pass on, a cut); with no listener that would be an uncaught exception and end the process.
      // Consumers (pipe, `for await`, Fastify's send) still receive the error through their own listeners.
      res.body.on('error', () => undefined);
      // Refused before a byte goes to the client (docs/behaviour.md "Upstream answers"): a coding the proxy
      // cannot decode, or a declared length over the limit (a decoded body has no declared length; its
      // decoder stops it at the limit, and the stream breaks).
      if (!isDecodedCoding(res.headers['content-encoding'])) {
        res.body.destroy();
        throw unknownCoding();
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > this.#pools.maxResponseBytes) {
        res.body.destroy();
        throw new UpstreamError('upstream_response_too_large');
      }
      return { status: res.statusCode, headers: res.headers, body: res.body };
    } catch (error) {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onClientGone);
      // Before the headers were handed on (a body failure after them breaks the stream instead).
      const failure = headerFailureOf(controller.signal.aborted ? controller.signal.reason : error);
      span?.end(0, failure);
      throw failure;
    }
  }
}

/**
 * undici's decompression interceptor for a pool (docs/behaviour.md "Upstream answers"): every status is
 * decoded (an error page may be coded too), the decoded bytes stop at `limit` (`0`: no limit, for the
 * live streams, which have no end).
 */
export function decompression(limit: number): Dispatcher.DispatcherComposeInterceptor {
  // undici flags the interceptor experimental with a process warning at its creation. What the proxy
  // relies on (every coding decoded, the size bound, an unknown coding left in place) is tested over
  // real sockets by hardening row 18 on each supported Node.js line; the warning alone is kept out of
  // the operators' logs.
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if (String(typeof warning === 'string' ? warning : warning.message).startsWith('DecompressInterceptor')) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return interceptors.decompress({ skipErrorResponses: false, skipStatusCodes: [204, 304], maxSize: limit });
  } finally {
    process.emitWarning = emitWarning;
  }
}

/** What a call needs of its guard: an endpoint's own ({@link EndpointGuard}) or a client's share of it ({@link ClientCall}). */
interface CallGuard {
  refuseEarly(): void;
  enter(signal?: AbortSignal): Ticket | Promise<Ticket>;
  leave(outcome: CallOutcome, ticket: Ticket): void;
  earn(): void;
  tryRetry(): boolean;
}

/** One call of a named client through its endpoint's {@link ClientShares}. */
class ClientCall implements CallGuard {
  readonly #shares: ClientShares;
  readonly #client: string;
  constructor(shares: ClientShares, client: string) {
    this.#shares = shares;
    this.#client = client;
  }
  refuseEarly(): void {
    this.#shares.refuseEarly(this.#client);
  }
  enter(signal?: AbortSignal): Ticket | Promise<Ticket> {
    return this.#shares.enter(this.#client, signal);
  }
  leave(outcome: CallOutcome, ticket: Ticket): void {
    this.#shares.leave(outcome, ticket);
  }
  earn(): void {
    this.#shares.earn();
  }
  tryRetry(): boolean {
    return this.#shares.tryRetry();
  }
}

/** GET and HEAD: the calls a client's departure cancels and a connection failure may retry. */
function isRead(method: HttpMethod): boolean {
  return method === 'GET' || method === 'HEAD';
}

/** An answer's verdict for the circuit: 502, 503 and 504 are failures; any other status is an answer. */
function outcomeOfStatus(status: number): CallOutcome {
  return status === 502 || status === 503 || status === 504 ? 'failed' : 'answered';
}

/** A failure's verdict for the circuit: timeouts and connection failures count; a client that left does not. */
function outcomeOfError(error: UpstreamError): CallOutcome {
  if (CIRCUIT_FAILURES.has(error.code)) return 'failed';
  return error.code === 'client_aborted' ? 'neutral' : 'answered';
}

/** Tells `observer` how the call of `req` settled, once it has (`start`: `performance.now()` at dispatch). */
function observe(
  observer: UpstreamObserver,
  service: string,
  prefix: string,
  req: UpstreamRequest,
  answer: Promise<UpstreamResponse | UpstreamStream>,
  start: number,
): void {
  const tell = (status: number, error: UpstreamError | undefined, body: Buffer | undefined) => {
    try {
      observer({ service, prefix, method: req.method, path: req.path, status, error, body, seconds: (performance.now() - start) / 1000 });
    } catch {
      // Observing never changes the call's outcome.
    }
  };
  answer.then(
    (res) => tell(res.status, undefined, Buffer.isBuffer(res.body) ? res.body : undefined),
    (error: unknown) => {
      const failure = toUpstreamError(error);
      // A client that left, or whose body broke, is not an upstream failure (upstream_errors_total).
      if (failure.code !== 'client_aborted') tell(0, failure, undefined);
    },
  );
}

/**
 * The cancellation signal of a read (made now when the request holds a function for it); none for
 * other methods and for a read with side effects, which is never cut.
 */
function signalOf(req: UpstreamRequest): AbortSignal | undefined {
  if (!isRead(req.method) || req.sideEffects === true) return undefined;
  const signal = req.signal;
  return typeof signal === 'function' ? signal() : signal;
}

/**
 * A call's time limit: `client_aborted` when its stream body is waiting on the client's bytes (see
 * {@link BodySource}), else `upstream_timeout`.
 */
function onCallTimeout(call: BufferedCall): void {
  call.fail(
    call.bodyStarved?.() === true
      ? new UpstreamError('client_aborted', { detail: 'The request body stopped arriving' })
      : new UpstreamError('upstream_timeout'),
  );
}

/**
 * One buffered upstream call: an undici dispatch handler that collects the answer's chunks and settles
 * one promise, with the call's total time limit as a plain timer and the client's cancellation.
 */
class BufferedCall implements Dispatcher.DispatchHandler {
  #resolve: ((response: UpstreamResponse) => void) | undefined;
  #reject: ((error: UpstreamError) => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #controller: Dispatcher.DispatchController | undefined;
  #signal: AbortSignal | undefined;
  #settled = false;
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  #chunks: Buffer[] = [];
  /** True once the answer's status line arrived (a failure after it is never retried). */
  answerStarted = false;
  /** For a streamed request body with a {@link BodySource}: whether it is waiting on its source (read at the time limit). */
  bodyStarved: (() => boolean) | undefined;
  /** Largest answer accepted, in bytes: a declared `Content-Length` over it is refused at once. */
  readonly #maxBytes: number;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /**
   * The promise of the answer; the call fails with `upstream_timeout` after `timeoutMs`, and with
   * `client_aborted` when `signal` aborts.
   */
  start(timeoutMs: number, signal?: AbortSignal): Promise<UpstreamResponse> {
    const promise = new Promise<UpstreamResponse>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#timer = setTimeout(onCallTimeout, timeoutMs, this);
    if (signal !== undefined) {
      this.#signal = signal;
      if (signal.aborted) this.fail(new UpstreamError('client_aborted'));
      else signal.addEventListener('abort', this.#onAbort, { once: true });
    }
    return promise;
  }

  readonly #onAbort = (): void => {
    this.fail(new UpstreamError('client_aborted'));
  };

  #finish(): void {
    this.#settled = true;
    clearTimeout(this.#timer);
    this.#signal?.removeEventListener('abort', this.#onAbort);
  }

  /** Settles the call with a failure and aborts the dispatch if it is still running. */
  fail(error: UpstreamError): void {
    if (this.#settled) return;
    this.#finish();
    this.#reject?.(error);
    if (this.#controller && !this.#controller.aborted) this.#controller.abort(error);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    // The limit passed (or the client left) while the call waited for a connection: it is not sent at all.
    if (this.#settled) controller.abort(new UpstreamError('upstream_timeout'));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.answerStarted = true;
    this.#status = statusCode;
    this.#headers = headers;
    // Decoded by the pool's interceptor when it could be; a coding left here is one nobody can read.
    if (!isDecodedCoding(headers['content-encoding'])) this.fail(unknownCoding());
    // A declared length over the limit is refused before its body is waited for (as the streamed calls do).
    else if (Number(headers['content-length']) > this.#maxBytes) this.fail(new UpstreamError('upstream_response_too_large'));
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.#settled) return;
    this.#finish();
    const chunks = this.#chunks;
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    this.#resolve?.({ status: this.#status, headers: this.#headers, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(this.answerStarted ? toUpstreamError(error) : headerFailureOf(error));
  }
}
