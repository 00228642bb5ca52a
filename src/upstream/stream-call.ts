/**
 * The streamed upstream call (docs/behaviour.md "Upstream answers", "Live streams"): one `request`
 * over an undici pool whose answer body is handed on as a stream once its headers arrived, bounded by
 * the call's deadline (`deadline.ts`) — to the end of the body for a receipt or a raw passthrough
 * answer, to the headers only for a live stream, whose silences its relay judges — and cancelled
 * when the client leaves before the headers.
 *
 * @module
 */
import { EventEmitter } from 'node:events';
import type { Dispatcher } from 'undici';
import type { Cancellation, UpstreamStream } from './call.js';
import { msLeft, socketLimitMs } from './deadline.js';
import { isDecodedCoding, unknownCoding } from './decompression.js';
import { headerFailureOf, UpstreamError } from './errors.js';

/** The body's `error` listener that keeps a destroyed body's error from ending the process (see {@link openStream}). */
function ignoreError(): void {}

/**
 * The cancellation of one streamed call, as undici's `signal` option takes it: an `EventEmitter` that
 * emits `abort`, with the `aborted` and `reason` undici reads of an `AbortSignal` (undici's
 * Dispatcher.request documentation: `AbortSignal | EventEmitter`). undici holds the signal for as long
 * as the answer's body, a live stream's for hours; this one is a fraction of an `AbortSignal`'s size.
 */
class CallCancel extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;

  /** Aborts the call with `reason` (the error the call and its body fail with); later calls do nothing. */
  abort(reason: UpstreamError): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

/** How one streamed call is sent. */
export interface StreamDispatch {
  /** The call's deadline (`performance.now()` ms): `upstream_timeout` when it passes. */
  readonly deadline: number;
  /** `true`: the deadline bounds the whole body (cut when it passes); `false`: the headers only. */
  readonly wholeBody: boolean;
  /** Largest answer accepted, in bytes: a declared `Content-Length` over it is refused; `0`: no limit. */
  readonly maxBytes: number;
  /** The client's cancellation: `client_aborted` when it aborts before the headers arrived. */
  readonly signal: Cancellation | undefined;
}

/**
 * Sends `options` over `dispatcher` and answers once the headers arrived, whatever the status. Refused
 * before a byte goes to the client: a coding the proxy cannot decode, a declared length over
 * `how.maxBytes` (a decoded body has no declared length; its decoder stops it at the limit, and the
 * stream breaks).
 *
 * @throws (the promise) {@link UpstreamError} for failures before the headers were handed on:
 *   `upstream_timeout`, `upstream_unavailable`, `upstream_bad_response`, `upstream_response_too_large`,
 *   `client_aborted`. A failure after them breaks the body stream instead.
 */
export async function openStream(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  how: StreamDispatch,
): Promise<UpstreamStream> {
  const now = performance.now();
  const cancel = new CallCancel();
  const timer = setTimeout(() => cancel.abort(new UpstreamError('upstream_timeout')), msLeft(how.deadline, now));
  const signal = how.signal;
  const onClientGone = () => cancel.abort(new UpstreamError('client_aborted'));
  signal?.addEventListener('abort', onClientGone, { once: true });
  const done = () => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onClientGone);
  };
  try {
    if (signal?.aborted) throw new UpstreamError('client_aborted');
    const socketLimit = socketLimitMs(how.deadline, now);
    const res = await dispatcher.request({
      ...options,
      signal: cancel,
      headersTimeout: socketLimit,
      bodyTimeout: how.wholeBody ? socketLimit : 0,
    });
    if (how.wholeBody) res.body.once('close', done);
    else done();
    // undici's body emits 'error' when destroyed before its end (a route dropping an answer it will
    // not pass on, a cut); with no listener that would be an uncaught exception and end the process.
    // Consumers (pipe, `for await`, Fastify's send) still receive the error through their own listeners.
    // The listener is a function of the module's, not a closure: a closure of this call would keep its
    // context (the client's signal, the timer) alive for as long as the body, a live stream's for hours.
    res.body.on('error', ignoreError);
    if (!isDecodedCoding(res.headers['content-encoding'])) {
      res.body.destroy();
      throw unknownCoding();
    }
    const declared = Number(res.headers['content-length']);
    if (how.maxBytes > 0 && Number.isFinite(declared) && declared > how.maxBytes) {
      res.body.destroy();
      throw new UpstreamError('upstream_response_too_large');
    }
    return { status: res.statusCode, headers: res.headers, body: res.body };
  } catch (error) {
    done();
    throw headerFailureOf(cancel.aborted ? cancel.reason : error);
  }
}
