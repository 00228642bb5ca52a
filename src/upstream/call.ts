/**
 * The shapes of one upstream call, shared by the client (`client.ts`) and its parts (`pools.ts`,
 * `admission.ts`, `buffered-call.ts`, `stream-call.ts`): the request, the answers, the record an
 * observer sees, the tracer's hooks.
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { EndpointCode } from '../errors/index.js';
import type { UpstreamError } from './errors.js';
import type { QueryValue } from './paths.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

/**
 * A client's cancellation as the upstream calls read it: whether it has aborted, and one `abort`
 * listener at a time, called once. An `AbortSignal` is one; so is a lighter object that follows the
 * client's connection without an `AbortController` (the routes' client departure, `routes/context.ts`).
 */
export interface Cancellation {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

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
   * A JSON body already serialised, sent as {@link json}'s text would be (the same bytes and
   * `content-type: application/json`): for a caller that needed the text itself (a money move's
   * exactly-once key is taken over it), so that the body is not serialised twice.
   */
  jsonText?: string | undefined;
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
   * called for it only once the endpoint's guard has not refused the call at once (it costs a
   * listener, which a refusal never needs).
   */
  signal?: Cancellation | (() => Cancellation | undefined) | undefined;
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
  /** The whole body, at most `UPSTREAM_MAX_RESPONSE_BYTES` (`pools.ts`). */
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
  /** The EP code (spec 7.2) of the dispatched path (base URL prefix and call path, no query) and method; `EP0000` for a path the registry does not know. */
  readonly endpoint: EndpointCode;
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
  start(
    trace: object | undefined,
    root: boolean,
    method: string,
    origin: string,
    path: string,
    headers: Record<string, string>,
  ): UpstreamSpan | undefined;
}
