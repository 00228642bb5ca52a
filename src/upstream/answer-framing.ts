/**
 * The first look at an upstream answer, before undici's decompression (docs/behaviour.md "Upstream
 * answers"): an undici interceptor that
 *
 * - reads and drops interim answers (a CDN's `103 Early Hints`, a `102 Processing`: any 1xx before the
 *   final answer, RFC 9110 §15.2), so that nothing further on takes one for the answer. undici passes
 *   them to its handlers like a final answer; its decompression interceptor breaks on them. (undici
 *   itself closes the connection on a `100 Continue` it did not ask for: that one never reaches an
 *   interceptor, and answers `upstream_unavailable`.)
 * - drops the `Content-Encoding` of an answer without content: a 204 or 304 (RFC 9110 §15.3.5, §15.4.5),
 *   or a coded answer whose body is empty (`Content-Length: 0`, or a chunked or close-delimited body
 *   that ends before its first byte). There is nothing to decode, and a decoder given no bytes fails
 *   ("unexpected end of file"); the answer then follows the empty-answer rule like any other.
 *
 * @module
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

/** The statuses that never have content (RFC 9110 §15.3.5, §15.4.5). */
const NO_CONTENT = new Set([204, 304]);

/** `headers` without `Content-Encoding`: a new object, the one undici gave is left as it is. */
function withoutCoding(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const { 'content-encoding': _dropped, ...rest } = headers;
  return rest;
}

/** A final answer's start held back until its body shows whether it has any byte. */
interface HeldStart {
  readonly controller: Dispatcher.DispatchController;
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly message: string;
}

/**
 * The handler of {@link answerFraming}: passes everything on to `handler` but the interim answers,
 * and holds back the start of a coded answer of unknown length until its first body byte or its end.
 */
class AnswerFramingHandler implements Dispatcher.DispatchHandler {
  readonly #handler: Dispatcher.DispatchHandler;
  #held: HeldStart | undefined;

  constructor(handler: Dispatcher.DispatchHandler) {
    this.#handler = handler;
  }

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.#handler.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(
    controller: Dispatcher.DispatchController,
    status: number,
    headers: IncomingHttpHeaders,
    socket: import('node:stream').Duplex,
  ): void {
    this.#handler.onRequestUpgrade?.(controller, status, headers, socket);
  }

  onResponseStart(controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders, message: string): void {
    // An interim answer: read (undici has parsed it) and dropped; the final one follows on the same connection.
    if (status < 200) return;
    if (headers['content-encoding'] !== undefined) {
      const length = headers['content-length'];
      if (NO_CONTENT.has(status) || length === '0') {
        this.#handler.onResponseStart?.(controller, status, withoutCoding(headers), message);
        return;
      }
      if (length === undefined) {
        this.#held = { controller, status, headers, message };
        return;
      }
    }
    this.#handler.onResponseStart?.(controller, status, headers, message);
  }

  /** Passes on the held start, with its coding when the body has bytes, without it when it ended empty. */
  #release(empty: boolean): void {
    const held = this.#held;
    if (held === undefined) return;
    this.#held = undefined;
    this.#handler.onResponseStart?.(held.controller, held.status, empty ? withoutCoding(held.headers) : held.headers, held.message);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#held !== undefined) {
      if (chunk.length === 0) return;
      this.#release(false);
    }
    this.#handler.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.#release(true);
    this.#handler.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    // The answer's head did arrive: the handlers further on see it before its failure (a read whose
    // answer started is never sent again).
    this.#release(false);
    this.#handler.onResponseError?.(controller, error);
  }
}

/**
 * The interceptor (see the module documentation); compose it before the decompression interceptor,
 * so that it sees the answer as it came: `pool.compose(answerFraming(), interceptors.decompress(…))`.
 */
export function answerFraming(): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (options, handler) => dispatch(options, new AnswerFramingHandler(handler));
}
