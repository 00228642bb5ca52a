/**
 * The upstream side of the live streams (docs/behaviour.md "Live streams", "Bounds"): undici `Pool`s of
 * their own per origin, apart from the request pools and their per-endpoint bulkheads, so that open
 * streams never hold a connection or a slot an ordinary read needs. `UPSTREAM_TIMEOUT_MS` bounds the
 * wait for the answer's headers only; after them the stream's own idle and lifetime limits apply
 * (`STREAM_IDLE_TIMEOUT_MS`, `STREAM_MAX_LIFETIME_MS`, kept by the relays). Answers are framed and
 * decoded as every other upstream answer is (1xx dropped, codings decoded), without a size limit:
 * a stream has no end.
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex, Readable } from 'node:stream';
import { type Dispatcher, Pool } from 'undici';
import { answerFraming } from '../upstream/answer-framing.js';
import { connectTimeoutMs, deadlineAfter } from '../upstream/deadline.js';
import { decompression } from '../upstream/decompression.js';
import { openStream } from '../upstream/stream-call.js';

/**
 * The handler of {@link rawHeadReleased}: passes everything on, and once the answer's start has been
 * passed on, lets go of the raw head undici keeps on the call's controller for handlers that read it
 * (`DispatchController.rawHeaders`: the header lines as views of the socket read they came in). No
 * handler of this pool reads it; a live stream would hold it, and that read, for its whole life.
 */
class RawHeadReleasedHandler implements Dispatcher.DispatchHandler {
  readonly #handler: Dispatcher.DispatchHandler;

  constructor(handler: Dispatcher.DispatchHandler) {
    this.#handler = handler;
  }

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.#handler.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.#handler.onRequestUpgrade?.(controller, status, headers, socket);
  }

  onResponseStart(controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders, message: string): void {
    this.#handler.onResponseStart?.(controller, status, headers, message);
    controller.rawHeaders = null;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#handler.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.#handler.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.#handler.onResponseError?.(controller, error);
  }
}

/** The interceptor of {@link RawHeadReleasedHandler}; composed first, so that it sees the controller before any other handler. */
export function rawHeadReleased(): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (options, handler) => dispatch(options, new RawHeadReleasedHandler(handler));
}

/** One stream to open upstream. */
export interface StreamRequest {
  /** The service's base URL (origin plus optional path prefix). */
  readonly baseUrl: string;
  /** Path below the base URL, starting with `/`. */
  readonly path: string;
  /** The raw query string, `''` or starting with `?`. */
  readonly rawQuery: string;
  /** Every header to send (the proxy's own, `Accept`, `Last-Event-ID`…). */
  readonly headers: Readonly<Record<string, string>>;
  /** Aborts the wait for the headers (the client left); once the answer started, destroy its body instead. */
  readonly signal?: AbortSignal | undefined;
}

/** An upstream stream's answer; the caller must consume or destroy `body`. */
export interface StreamAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Readable;
}

/** Bytes of a failure answer's body read from an upstream stream's answer (the envelope needs its reason, nothing more). */
export const FAILURE_BODY_BYTES = 64 * 1024;

/** Reads at most `limit` bytes of `body` (a failure answer's), then destroys it; a body that breaks gives what came. */
export async function readSome(body: Readable, limit = FAILURE_BODY_BYTES): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const buf = chunk as Buffer;
      chunks.push(buf.subarray(0, limit - size));
      size += buf.length;
      if (size >= limit) break;
    }
  } catch {
    // what came before the break is all there is
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks);
}

/** See the module documentation. */
export class StreamUpstream {
  readonly #pools = new Map<string, Dispatcher>();
  readonly #headersTimeoutMs: number;
  readonly #connections: number;

  /**
   * @param headersTimeoutMs - `UPSTREAM_TIMEOUT_MS`: the longest wait for an answer's headers, in milliseconds.
   * @param connections - connections per origin (`STREAMS_MAX`: one per open stream at most).
   */
  constructor(headersTimeoutMs: number, connections: number) {
    this.#headersTimeoutMs = headersTimeoutMs;
    this.#connections = connections;
  }

  #pool(origin: string): Dispatcher {
    let pool = this.#pools.get(origin);
    if (pool === undefined) {
      pool = new Pool(origin, {
        connections: this.#connections,
        pipelining: 1,
        keepAliveTimeout: 4_000,
        connectTimeout: connectTimeoutMs(this.#headersTimeoutMs),
      }).compose(rawHeadReleased(), answerFraming(), decompression(0));
      this.#pools.set(origin, pool);
    }
    return pool;
  }

  /**
   * Opens one stream: `GET` with `req.headers`, the coding `identity` asked for.
   *
   * @returns the answer, whatever its status, once its headers arrived.
   * @throws {@link UpstreamError} `upstream_timeout` (no headers within `UPSTREAM_TIMEOUT_MS`),
   *   `upstream_unavailable`, `upstream_bad_response` (a coding left undecoded too), `upstream_redirect`
   *   is not thrown (the status is the caller's to map), `client_aborted` (the signal aborted).
   */
  async open(req: StreamRequest): Promise<StreamAnswer> {
    const url = new URL(req.baseUrl);
    const prefix = url.pathname.replace(/\/+$/, '');
    const options: Dispatcher.DispatchOptions = {
      method: 'GET',
      path: `${prefix}${req.path}${req.rawQuery}` || '/',
      headers: { ...req.headers, 'accept-encoding': 'identity' },
    };
    // Silence after the headers is the relay's to judge (STREAM_IDLE_TIMEOUT_MS, ending between events).
    return openStream(this.#pool(url.origin), options, {
      deadline: deadlineAfter(this.#headersTimeoutMs),
      wholeBody: false,
      maxBytes: 0,
      signal: req.signal,
    });
  }

  /** Destroys every pool: the streams are ended before (drain), so nothing waits for them. */
  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((pool) => pool.destroy().catch(() => undefined)));
  }
}
