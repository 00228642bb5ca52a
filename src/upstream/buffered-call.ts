/**
 * The buffered upstream call (docs/behaviour.md "Upstream answers", "Resilience"): one dispatch whose
 * answer is collected straight from undici's dispatcher (no response stream, no `AbortController`),
 * bounded by the call's deadline (`deadline.ts`), cancelled when the client leaves, and for a read
 * whose connection failed before any answer byte sent once more within the time left.
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { CallGuard } from './admission.js';
import type { BodySource, Cancellation, UpstreamResponse } from './call.js';
import { msLeft, socketLimitMs } from './deadline.js';
import { isDecodedCoding, unknownCoding } from './decompression.js';
import { headerFailureOf, toUpstreamError, UpstreamError } from './errors.js';

/** A retry is sent only when at least this much of the call's time is left, in milliseconds. */
const RETRY_MIN_LEFT_MS = 50;

/** How one buffered call is sent. */
export interface BufferedDispatch {
  /** The call's deadline (`performance.now()` ms, `deadline.ts`): `upstream_timeout` when it passes. */
  readonly deadline: number;
  /** Largest answer accepted, in bytes: a declared `Content-Length` over it is refused at once. */
  readonly maxBytes: number;
  /** The client's cancellation (reads): `client_aborted` when it aborts. */
  readonly signal: Cancellation | undefined;
  /** The guard whose retry budget a read spends on a second dispatch; `undefined`: never sent again. */
  readonly retry: CallGuard | undefined;
  /** Where a stream body stands with its source (see {@link BodySource}). */
  readonly bodySource: BodySource | undefined;
}

/**
 * One dispatch of `options` over `dispatcher` with `how`'s deadline; for a read (`how.retry` set) whose
 * connection failed before any answer byte, one more dispatch within the time left, when the
 * endpoint's retry budget allows. undici's socket limits of each dispatch are the time left.
 *
 * @throws (the promise) {@link UpstreamError}: `upstream_timeout`, `upstream_unavailable`,
 *   `upstream_bad_response`, `upstream_response_too_large`, `client_aborted` (the signal, or a stream
 *   body that failed or stopped arriving at the deadline).
 */
export function sendBuffered(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  how: BufferedDispatch,
): Promise<UpstreamResponse> {
  const now = performance.now();
  const call = new BufferedCall(how.maxBytes);
  const answer = call.start(msLeft(how.deadline, now), how.signal);
  const body = options.body;
  if (body !== null && body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body) && !(body instanceof Uint8Array)) {
    const stream = body as Readable;
    // Registered before undici's own listener: a failing request body is the client's fault, not the upstream's.
    stream.once('error', (error) => call.fail(new UpstreamError('client_aborted', { cause: error })));
    // At the deadline, a body waiting on its source (everything the client sent taken, the next bytes not
    // come) means the client stopped sending: its fault too. Any other body is held up by the upstream.
    const source = how.bodySource;
    if (source !== undefined) call.bodyStarved = () => source.waitingSince !== 0;
  }
  const socketLimit = socketLimitMs(how.deadline, now);
  options.headersTimeout = socketLimit;
  options.bodyTimeout = socketLimit;
  try {
    dispatcher.dispatch(options, call);
  } catch (error) {
    call.fail(toUpstreamError(error));
  }
  const retry = how.retry;
  if (retry === undefined) return answer;
  return answer.catch((error: UpstreamError) => {
    if (error.code !== 'upstream_unavailable' || call.answerStarted || msLeft(how.deadline) < RETRY_MIN_LEFT_MS || !retry.tryRetry())
      throw error;
    return sendBuffered(dispatcher, options, { ...how, retry: undefined });
  });
}

/**
 * A call's deadline: `client_aborted` when its stream body is waiting on the client's bytes (see
 * {@link BodySource}), else `upstream_timeout`.
 */
function onDeadline(call: BufferedCall): void {
  call.fail(
    call.bodyStarved?.() === true
      ? new UpstreamError('client_aborted', { detail: 'The request body stopped arriving' })
      : new UpstreamError('upstream_timeout'),
  );
}

/**
 * One buffered upstream call: an undici dispatch handler that collects the answer's chunks and settles
 * one promise, with the call's deadline as a plain timer and the client's cancellation.
 */
class BufferedCall implements Dispatcher.DispatchHandler {
  #resolve: ((response: UpstreamResponse) => void) | undefined;
  #reject: ((error: UpstreamError) => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #controller: Dispatcher.DispatchController | undefined;
  #signal: Cancellation | undefined;
  #settled = false;
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  #chunks: Buffer[] = [];
  /** True once the answer's status line arrived (a failure after it is never retried). */
  answerStarted = false;
  /** For a streamed request body with a {@link BodySource}: whether it is waiting on its source (read at the deadline). */
  bodyStarved: (() => boolean) | undefined;
  /** Largest answer accepted, in bytes: a declared `Content-Length` over it is refused at once. */
  readonly #maxBytes: number;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /**
   * The promise of the answer; the call fails with `upstream_timeout` once `leftMs` (the time left
   * before its deadline, in ms) passed, and with `client_aborted` when `signal` aborts.
   */
  start(leftMs: number, signal?: Cancellation): Promise<UpstreamResponse> {
    const promise = new Promise<UpstreamResponse>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#timer = setTimeout(onDeadline, leftMs, this);
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
    // The deadline passed (or the client left) while the call waited for a connection: it is not sent at all.
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
