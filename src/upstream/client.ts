/**
 * The upstream client: one undici `Pool` per upstream origin with keep-alive, a total time limit per
 * call (`UPSTREAM_TIMEOUT_MS`, headers and body), a response-size cap, no redirects followed, no
 * retries, and every transport failure mapped to an {@link UpstreamError}.
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { type Dispatcher, Pool } from 'undici';
import { toUpstreamError, UpstreamError } from './errors.js';
import { buildQuery, type QueryValue } from './paths.js';

/** Largest upstream answer the proxy reads, in bytes (4 MiB); larger answers are `upstream_response_too_large`. */
export const MAX_UPSTREAM_RESPONSE_BYTES = 4 * 1024 * 1024;

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
 * One finished upstream call, as an {@link UpstreamObserver} sees it (CONTRACT.md "Operations": the
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

/** Keeps one undici `Pool` per origin, shared by every service on that origin. */
export class PoolRegistry {
  readonly #pools = new Map<string, Pool>();
  readonly #timeoutMs: number;
  /** Told of every call of the services over these pools; `undefined`: nothing observed (no cost). */
  readonly observer: UpstreamObserver | undefined;
  /**
   * @param timeoutMs - total limit of one call, in milliseconds.
   * @param observer - told of every call (the metrics); omit it when nothing observes.
   */
  constructor(timeoutMs: number, observer?: UpstreamObserver) {
    this.#timeoutMs = timeoutMs;
    this.observer = observer;
  }
  /** The pool for an origin such as `https://bff.example.com`, created on first use. */
  get(origin: string): Pool {
    let pool = this.#pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, {
        connections: 128,
        pipelining: 1,
        keepAliveTimeout: 4_000,
        keepAliveMaxTimeout: 60_000,
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
        connectTimeout: Math.min(this.#timeoutMs, 10_000),
        maxResponseSize: MAX_UPSTREAM_RESPONSE_BYTES,
      });
      this.#pools.set(origin, pool);
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

  /**
   * The dispatch options of a call: method, path below the base URL with its query, the proxy's headers
   * over the route's, and the JSON body serialised.
   * @throws UnsafePathError or a serialisation error (callers map them to an {@link UpstreamError}).
   */
  #options(req: UpstreamRequest, proxyHeaders: Readonly<Record<string, string>> | undefined): Dispatcher.DispatchOptions {
    const headers: Record<string, string> = { accept: 'application/json', ...req.headers, ...proxyHeaders };
    let body: string | Buffer | Readable | undefined = req.body;
    if (req.json !== undefined) {
      body = JSON.stringify(req.json);
      headers['content-type'] = 'application/json';
    }
    const path = `${this.#prefix}${req.path}${req.rawQuery ?? buildQuery(req.query)}` || '/';
    return { method: req.method, path, headers, body: body ?? null };
  }

  #dispatch(req: UpstreamRequest, proxyHeaders: Readonly<Record<string, string>> | undefined, signal: AbortSignal) {
    if (this.#origin === undefined) {
      throw new UpstreamError('not_configured', { detail: `${this.name} is not set` });
    }
    return this.#pools.get(this.#origin).request({ ...this.#options(req, proxyHeaders), signal });
  }

  /**
   * Calls the service and buffers the answer.
   *
   * The body is collected straight from undici's dispatcher (no response stream, no AbortController):
   * undici's `headersTimeout`/`bodyTimeout` watch the socket, and one timer per call enforces the total
   * limit (`UPSTREAM_TIMEOUT_MS`, queueing, headers and body) by aborting the dispatch.
   *
   * @param proxyHeaders - headers the proxy sets (session, request id…); they override `req.headers`.
   * @returns the status, headers and body of any answer with a status, including 4xx and 5xx.
   * @throws {@link UpstreamError} `upstream_timeout`, `upstream_unavailable`, `upstream_bad_response`,
   *   `upstream_response_too_large` or `not_configured`; `client_aborted` when a stream `body` fails (the
   *   client's upload broke: the call is aborted, and not observed as an upstream failure); never anything else.
   */
  request(req: UpstreamRequest, proxyHeaders?: Readonly<Record<string, string>>): Promise<UpstreamResponse> {
    if (this.#origin === undefined) {
      return Promise.reject(new UpstreamError('not_configured', { detail: `${this.name} is not set` }));
    }
    let options: Dispatcher.DispatchOptions;
    try {
      options = this.#options(req, proxyHeaders);
    } catch (error) {
      return Promise.reject(toUpstreamError(error));
    }
    const call = new BufferedCall();
    const answer = call.start(this.#timeoutMs);
    const body = req.body;
    if (body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body)) {
      // Registered before undici's own listener: a failing request body is the client's fault, not the upstream's.
      body.once('error', (error) => call.fail(new UpstreamError('client_aborted', { cause: error })));
      // At the time limit, a body still waiting for the client's bytes (nothing buffered, not ended) means the
      // client stopped sending: its fault too. A body held back by an upstream that stopped reading has bytes buffered.
      call.bodyStarved = () => !body.readableEnded && body.readableLength === 0;
    }
    const observer = this.#pools.observer;
    if (observer !== undefined) observe(observer, this.name, this.#prefix, req, answer, performance.now());
    try {
      this.#pools.get(this.#origin).dispatch(options, call);
    } catch (error) {
      call.fail(toUpstreamError(error));
    }
    return answer;
  }

  /**
   * Calls the service and returns the body as a stream (receipts, raw passthrough). The time limit
   * covers the whole transfer: a body still streaming after `UPSTREAM_TIMEOUT_MS` is cut.
   *
   * @param proxyHeaders - as for {@link request}.
   * @throws {@link UpstreamError} as {@link request}, for failures before the headers arrive.
   */
  stream(req: UpstreamRequest, proxyHeaders?: Readonly<Record<string, string>>): Promise<UpstreamStream> {
    const observer = this.#pools.observer;
    const start = observer === undefined ? 0 : performance.now();
    const answer = this.#stream(req, proxyHeaders);
    if (observer !== undefined && this.#origin !== undefined) observe(observer, this.name, this.#prefix, req, answer, start);
    return answer;
  }

  async #stream(req: UpstreamRequest, proxyHeaders: Readonly<Record<string, string>> | undefined): Promise<UpstreamStream> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new UpstreamError('upstream_timeout')), this.#timeoutMs);
    try {
      const res = await this.#dispatch(req, proxyHeaders, controller.signal);
      res.body.once('close', () => clearTimeout(timer));
      // undici's body emits 'error' when destroyed before its end (a route dropping an answer it will
      // not pass on, a cut); with no listener that would be an uncaught exception and end the process.
      // Consumers (pipe, `for await`, Fastify's send) still receive the error through their own listeners.
      res.body.on('error', () => undefined);
      return { status: res.statusCode, headers: res.headers, body: res.body };
    } catch (error) {
      clearTimeout(timer);
      throw toUpstreamError(controller.signal.aborted ? controller.signal.reason : error);
    }
  }
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
      // The client's body broke (client_aborted): not an outcome of the upstream.
      if (failure.code !== 'client_aborted') tell(0, failure, undefined);
    },
  );
}

function onCallTimeout(call: BufferedCall): void {
  call.fail(
    call.bodyStarved?.() === true
      ? new UpstreamError('client_aborted', { detail: 'The request body stopped arriving' })
      : new UpstreamError('upstream_timeout'),
  );
}

/**
 * One buffered upstream call: an undici dispatch handler that collects the answer's chunks and settles
 * one promise, with the call's total time limit as a plain timer.
 */
class BufferedCall implements Dispatcher.DispatchHandler {
  #resolve: ((response: UpstreamResponse) => void) | undefined;
  #reject: ((error: UpstreamError) => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #controller: Dispatcher.DispatchController | undefined;
  #settled = false;
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  #chunks: Buffer[] = [];
  /** For a streamed request body: whether it is waiting for the client's bytes (read at the time limit). */
  bodyStarved: (() => boolean) | undefined;

  /** The promise of the answer; the call fails with `upstream_timeout` after `timeoutMs`. */
  start(timeoutMs: number): Promise<UpstreamResponse> {
    const promise = new Promise<UpstreamResponse>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#timer = setTimeout(onCallTimeout, timeoutMs, this);
    return promise;
  }

  /** Settles the call with a failure and aborts the dispatch if it is still running. */
  fail(error: UpstreamError): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.#reject?.(error);
    if (this.#controller && !this.#controller.aborted) this.#controller.abort(error);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    // The limit passed while the call waited for a connection: it is not sent at all.
    if (this.#settled) controller.abort(new UpstreamError('upstream_timeout'));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.#status = statusCode;
    this.#headers = headers;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    const chunks = this.#chunks;
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    this.#resolve?.({ status: this.#status, headers: this.#headers, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(toUpstreamError(error));
  }
}
