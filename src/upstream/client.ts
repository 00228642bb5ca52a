/**
 * The upstream client: one {@link UpstreamService} per base URL, calling it over the pools of a
 * `PoolRegistry` (`pools.ts`) with the proxy's headers, no redirects followed, and every failure
 * mapped to an {@link UpstreamError} (docs/behaviour.md "Upstream requests", "Upstream answers",
 * "Resilience"). A buffered call (`buffered-call.ts`) and a streamed one (`stream-call.ts`) pass the
 * same admission (`admission.ts`: the endpoint's guard or its client's share) and carry one deadline
 * from their slot on (`deadline.ts`).
 *
 * @module
 */
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { type EndpointCode, endpointCodeFor } from '../errors/index.js';
import { type Admission, admit, type CallGuard, guardOf, isRetryable, outcomeOfError, outcomeOfStatus } from './admission.js';
import { sendBuffered } from './buffered-call.js';
import { deadlineAfter } from './deadline.js';
import type { EndpointGuard, Ticket } from './endpoint-guard.js';
import { CIRCUIT_FAILURES, toUpstreamError, UpstreamError } from './errors.js';
import type { Cancellation, HttpMethod, UpstreamRequest, UpstreamResponse, UpstreamSpan, UpstreamStream } from './call.js';
import { buildQuery } from './paths.js';
import { type PoolRegistry, PRIORITY_ENDPOINTS } from './pools.js';
import { openStream } from './stream-call.js';

/** Remembered EP codes of call paths per service before the memory is emptied (paths carry ids). */
const ENDPOINT_MEMORY = 2_048;

// The shapes of a call live apart, so that the call's parts can use them without an import cycle.
export type {
  BodySource,
  Cancellation,
  HttpMethod,
  UpstreamCallRecord,
  UpstreamObserver,
  UpstreamRequest,
  UpstreamResponse,
  UpstreamSpan,
  UpstreamStream,
  UpstreamTracer,
} from './call.js';

/** One call its guard let go: what it sends, over which pool, and what it holds until it ends. */
interface AdmittedCall {
  readonly endpoint: EndpointCode;
  readonly options: Dispatcher.DispatchOptions;
  readonly priority: boolean;
  readonly guard: CallGuard | undefined;
  readonly ticket: Ticket;
  readonly signal: Cancellation | undefined;
  /** From the slot on (`deadline.ts`): the call's one deadline, `performance.now()` ms. */
  readonly deadline: number;
  /** `performance.now()` at the dispatch, for the observer's `seconds`. */
  readonly start: number;
  readonly span: UpstreamSpan | undefined;
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
  /** EP code by `METHOD path` (without query), emptied when it reaches {@link ENDPOINT_MEMORY} entries. */
  readonly #endpoints = new Map<string, EndpointCode>();
  /** When a call last got an answer (any status), `performance.now()`; `0`: never. */
  lastAnsweredAt = 0;
  /** When a call last failed without an answer (timeout, connection), `performance.now()`; `0`: never. */
  lastFailedAt = 0;

  /**
   * @param name - the configuration variable that names it (e.g. `BFF_BASE_URL`), used in `not_configured`.
   * @param baseUrl - origin plus optional path prefix, or `undefined` when not configured.
   * @param pools - the pools, guards, time and size limits the calls share.
   */
  constructor(name: string, baseUrl: string | undefined, pools: PoolRegistry) {
    this.name = name;
    this.#pools = pools;
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
  endpointOf(method: HttpMethod, path: string): EndpointCode {
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
   * The refusal the guard of `req`'s endpoint gives a new call now (`upstream_circuit_open`,
   * `upstream_busy`; reported to the metrics as such), or `undefined` when the call may be tried: lets
   * a caller refuse before it builds the call's headers. Nothing is taken or changed.
   */
  refusalFor(req: UpstreamRequest): UpstreamError | undefined {
    if (this.#origin === undefined || req.unguarded === true) return undefined;
    try {
      guardOf(this.#pools, this.name, this.endpointOf(req.method, req.path), req)?.refuseEarly();
      return undefined;
    } catch (error) {
      return error as UpstreamError;
    }
  }

  /**
   * The guard a call of `method path` passes when it names no client and is not `unguarded` (the
   * endpoint's own, the one {@link refusalFor} asks), for a caller that checks it before it builds the
   * call (`EndpointGuard.earlyRefusal`); `undefined` when the service is not configured (its calls
   * answer `not_configured`) or the pools have no limits. The same guard for every call of that
   * endpoint, made on first use.
   *
   * @param path - the call path below the base URL, without query.
   */
  endpointGuard(method: HttpMethod, path: string): EndpointGuard | undefined {
    if (this.#origin === undefined) return undefined;
    return this.#pools.guard(this.name, this.endpointOf(method, path));
  }

  /**
   * Calls the service and buffers the answer (`buffered-call.ts`): the wait for the endpoint's slot
   * first, bounded by `UPSTREAM_QUEUE_WAIT_MS`, then the call's deadline (`UPSTREAM_TIMEOUT_MS`,
   * headers and body).
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
    return this.#admit(req, proxyHeaders, trace, this.#buffered);
  }

  /**
   * Calls the service and returns the body as a stream (receipts, raw passthrough; `stream-call.ts`).
   * The call's deadline covers the whole transfer: a body still streaming after `UPSTREAM_TIMEOUT_MS`
   * is cut. The endpoint's slot is held until the body ends.
   *
   * @param proxyHeaders - as for {@link request}; `trace`: as for {@link request}.
   * @throws {@link UpstreamError} as {@link request}, for failures before the headers arrive.
   */
  stream(req: UpstreamRequest, proxyHeaders?: Readonly<Record<string, string>>, trace?: object): Promise<UpstreamStream> {
    return this.#admit(req, proxyHeaders, trace, this.#streamed);
  }

  /**
   * The one admission of both kinds of call (`admission.ts`): the endpoint's guard (refused at once,
   * or a slot, maybe after a wait), then the call's deadline, its span, and `send`.
   */
  #admit<T>(
    req: UpstreamRequest,
    proxyHeaders: Readonly<Record<string, string>> | undefined,
    trace: object | undefined,
    send: (call: AdmittedCall, req: UpstreamRequest) => Promise<T>,
  ): Promise<T> {
    if (this.#origin === undefined) {
      return Promise.reject(new UpstreamError('not_configured', { detail: `${this.name} is not set` }));
    }
    const endpoint = this.endpointOf(req.method, req.path);
    const guard = guardOf(this.#pools, this.name, endpoint, req);
    let admitted: Admission<Dispatcher.DispatchOptions>;
    try {
      admitted = admit(guard, req, () => this.#options(req, proxyHeaders));
    } catch (error) {
      return Promise.reject(toUpstreamError(error));
    }
    const go = (ticket: Ticket): Promise<T> => {
      guard?.earn();
      const options = admitted.prepared;
      const span = this.#pools.tracer?.start(
        trace,
        req.traceRoot === true,
        req.method,
        this.#origin as string,
        options.path,
        options.headers as Record<string, string>,
      );
      const now = performance.now();
      const call: AdmittedCall = {
        endpoint,
        options,
        priority: PRIORITY_ENDPOINTS.has(endpoint),
        guard,
        ticket,
        signal: admitted.signal,
        deadline: deadlineAfter(this.#pools.timeoutMs, now),
        start: now,
        span,
      };
      return send(call, req);
    };
    const ticket = admitted.ticket;
    return ticket instanceof Promise ? ticket.then(go) : go(ticket);
  }

  /** A buffered call's dispatch; its slot and span are given back when its answer (or failure) is in. */
  readonly #buffered = (call: AdmittedCall, req: UpstreamRequest): Promise<UpstreamResponse> => {
    const answer = sendBuffered(this.#pools.get(this.#origin as string, call.priority), call.options, {
      deadline: call.deadline,
      maxBytes: this.#pools.maxResponseBytes,
      signal: call.signal,
      retry: isRetryable(req) ? call.guard : undefined,
      bodySource: req.bodySource,
    });
    answer.then(
      (res) => {
        this.#note(undefined);
        call.guard?.leave(outcomeOfStatus(res.status), call.ticket);
        call.span?.end(res.status, undefined);
      },
      (error: UpstreamError) => {
        this.#note(error);
        call.guard?.leave(outcomeOfError(error), call.ticket);
        call.span?.end(0, error);
      },
    );
    this.#observe(call, req, answer);
    return answer;
  };

  /** A streamed call's dispatch; its slot and span are held until the body ends. */
  readonly #streamed = async (call: AdmittedCall, req: UpstreamRequest): Promise<UpstreamStream> => {
    const answer = openStream(this.#pools.get(this.#origin as string, call.priority), call.options, {
      deadline: call.deadline,
      wholeBody: true,
      maxBytes: this.#pools.maxResponseBytes,
      signal: call.signal,
    });
    this.#observe(call, req, answer);
    let res: UpstreamStream;
    try {
      res = await answer;
    } catch (error) {
      const failure = error as UpstreamError;
      this.#note(failure);
      call.guard?.leave(outcomeOfError(failure), call.ticket);
      call.span?.end(0, failure);
      throw failure;
    }
    this.#note(undefined);
    const outcome = outcomeOfStatus(res.status);
    res.body.once('close', () => {
      call.guard?.leave(outcome, call.ticket);
      call.span?.end(res.status, undefined);
    });
    return res;
  };

  /**
   * The dispatch options of a call: method, path below the base URL with its query, the proxy's headers
   * over the route's, and the JSON body serialised (or its text as given, `jsonText`).
   * @throws UnsafePathError or a serialisation error (callers map them to an {@link UpstreamError}).
   */
  #options(req: UpstreamRequest, proxyHeaders: Readonly<Record<string, string>> | undefined): Dispatcher.DispatchOptions {
    // `identity` last: neither a route nor a browser header may invite a coding (docs/behaviour.md "Upstream answers").
    const headers: Record<string, string> = { accept: 'application/json', ...req.headers, ...proxyHeaders, 'accept-encoding': 'identity' };
    let body: string | Buffer | Readable | undefined = req.body;
    if (req.jsonText !== undefined) {
      body = req.jsonText;
      headers['content-type'] = 'application/json';
    } else if (req.json !== undefined) {
      body = JSON.stringify(req.json);
      headers['content-type'] = 'application/json';
    }
    const path = `${this.#prefix}${req.path}${req.rawQuery ?? buildQuery(req.query)}` || '/';
    // The socket limits are set by each dispatch from the call's deadline (buffered-call.ts,
    // stream-call.ts); declared here so that setting them adds no property to the object.
    return { method: req.method, path, headers, body: body ?? null, headersTimeout: 0, bodyTimeout: 0 };
  }

  /** Records how a call ended, for readiness (`lastAnsweredAt`, `lastFailedAt`). */
  #note(error: UpstreamError | undefined): void {
    if (error === undefined) this.lastAnsweredAt = performance.now();
    else if (CIRCUIT_FAILURES.has(error.code)) this.lastFailedAt = performance.now();
  }

  /** Tells the pools' observer how `call` settled, once it has; nothing without an observer. */
  #observe(call: AdmittedCall, req: UpstreamRequest, answer: Promise<UpstreamResponse | UpstreamStream>): void {
    const observer = this.#pools.observer;
    if (observer === undefined) return;
    const tell = (status: number, error: UpstreamError | undefined, body: Buffer | undefined) => {
      try {
        observer({
          service: this.name,
          prefix: this.#prefix,
          method: req.method,
          path: req.path,
          endpoint: call.endpoint,
          status,
          error,
          body,
          seconds: (performance.now() - call.start) / 1000,
        });
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
}
