/**
 * The closed set of failures an upstream call can end in, and the one function that maps
 * transport errors (undici's stable `code` strings) onto it.
 *
 * @module
 */

/** Failure codes of an upstream call, each with the proxy status it answers (docs/behaviour.md "Error envelope"). */
export const UPSTREAM_FAILURES = {
  /** No answer (headers or whole body) within `UPSTREAM_TIMEOUT_MS`. */
  upstream_timeout: { status: 504, detail: 'The service did not answer in time' },
  /** Connection refused, reset or closed (before or in the middle of an answer), or the host could not be reached. */
  upstream_unavailable: { status: 502, detail: 'The service could not be reached' },
  /** The answer could not be read: malformed HTTP, an impossible status, a coding that does not decode. */
  upstream_bad_response: { status: 502, detail: 'The service sent an invalid answer' },
  /** The answer was larger than the proxy accepts. */
  upstream_response_too_large: { status: 502, detail: 'The service sent an answer that is too large' },
  /** The upstream answered with a redirect, which the proxy never follows. */
  upstream_redirect: { status: 502, detail: 'The service answered with a redirect' },
  /**
   * The client's request body, streamed upstream as it arrived, failed: the client stopped sending or
   * closed mid-body, or the body was cut (an unterminated multipart form). A client fault: the upstream
   * call is aborted, and it is neither an upstream failure nor observed as one. Also a read whose client
   * closed its connection before the answer (docs/behaviour.md "Resilience", "Client gone"): its queued or
   * running call is cancelled, and nobody reads the answer.
   */
  client_aborted: { status: 400, detail: 'The request body did not arrive whole' },
  /** The upstream URL for this route is not configured (docs/behaviour.md "Configuration"). */
  not_configured: { status: 503, detail: 'This service is not configured' },
  /**
   * The upstream endpoint is at its concurrency limit and its wait queue is full, or the wait ran out
   * (docs/behaviour.md "Resilience"); nothing was sent.
   */
  upstream_busy: { status: 503, detail: 'The service is busy; try again shortly' },
  /** The upstream endpoint's circuit is open: it has been failing (docs/behaviour.md "Resilience"); nothing was sent. */
  upstream_circuit_open: { status: 503, detail: 'The service is failing; try again shortly' },
} as const satisfies Record<string, { status: number; detail: string }>;

export type UpstreamFailureCode = keyof typeof UPSTREAM_FAILURES;

/**
 * A failed upstream call with a stable {@link UpstreamFailureCode}. The message and detail never
 * contain the upstream address or a credential; the original error is kept as `cause` for logs.
 */
export class UpstreamError extends Error {
  readonly code: UpstreamFailureCode;
  readonly status: number;
  readonly detail: string;
  /** For `upstream_busy` and `upstream_circuit_open`: the seconds a client should wait (`Retry-After`). */
  readonly retryAfterSeconds: number | undefined;
  /** For `upstream_busy` and `upstream_circuit_open`: the EP code of the refusing upstream endpoint. */
  readonly endpoint: string | undefined;
  constructor(
    code: UpstreamFailureCode,
    options: { detail?: string; cause?: unknown; retryAfterSeconds?: number; endpoint?: string } = {},
  ) {
    const info = UPSTREAM_FAILURES[code];
    super(options.detail ?? info.detail, { cause: options.cause });
    this.name = 'UpstreamError';
    this.code = code;
    this.status = info.status;
    this.detail = options.detail ?? info.detail;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.endpoint = options.endpoint;
  }
}

/**
 * A refusal of an endpoint's guard (503 `upstream_busy` or `upstream_circuit_open`), made without a
 * stack trace: a refusal is an expected answer, made thousands of times a second under overload, and
 * capturing the stack is most of the cost of an `Error`.
 *
 * @param retryAfterSeconds - the `Retry-After` the client gets, in seconds.
 * @param endpoint - the EP code of the refusing endpoint.
 */
export function refusal(code: 'upstream_busy' | 'upstream_circuit_open', retryAfterSeconds: number, endpoint: string): UpstreamError {
  return withoutStack(() => new UpstreamError(code, { retryAfterSeconds, endpoint }));
}

/**
 * The error `make` returns, made without capturing a stack trace: for the errors that are expected
 * answers (refusals of a guard, of a rate limit), made thousands of times a second under overload,
 * whose stack nobody reads.
 *
 * @example withoutStack(() => new RateLimitedError('api', 60))
 */
export function withoutStack<E extends Error>(make: () => E): E {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * The failures a circuit breaker counts (docs/behaviour.md "Resilience"): no answer in time, no
 * connection (refused, reset at any point of an answer). The proxy's own verdicts on an answer that
 * arrived (`upstream_bad_response`, `upstream_response_too_large`) never count: a client can provoke
 * them through a path it chooses (the raw passthrough), and one client must not open a circuit for
 * every user. Refusals of the proxy itself, a client that left and a redirect never count either.
 */
export const CIRCUIT_FAILURES: ReadonlySet<UpstreamFailureCode> = new Set<UpstreamFailureCode>([
  'upstream_timeout',
  'upstream_unavailable',
]);

/** The failures that are the proxy's own refusals: the call was never sent upstream. */
export const REFUSALS: ReadonlySet<UpstreamFailureCode> = new Set<UpstreamFailureCode>([
  'not_configured',
  'upstream_busy',
  'upstream_circuit_open',
]);

/** undici / Node error codes, by the failure they mean. Unknown codes are `upstream_unavailable`. */
const TRANSPORT_CODES: Readonly<Record<string, UpstreamFailureCode>> = {
  UND_ERR_CONNECT_TIMEOUT: 'upstream_timeout',
  UND_ERR_HEADERS_TIMEOUT: 'upstream_timeout',
  UND_ERR_BODY_TIMEOUT: 'upstream_timeout',
  ETIMEDOUT: 'upstream_timeout',
  UND_ERR_ABORTED: 'upstream_timeout',
  ABORT_ERR: 'upstream_timeout',
  ECONNREFUSED: 'upstream_unavailable',
  ECONNRESET: 'upstream_unavailable',
  EPIPE: 'upstream_unavailable',
  ENOTFOUND: 'upstream_unavailable',
  EAI_AGAIN: 'upstream_unavailable',
  EHOSTUNREACH: 'upstream_unavailable',
  ENETUNREACH: 'upstream_unavailable',
  UND_ERR_SOCKET: 'upstream_unavailable',
  UND_ERR_CLOSED: 'upstream_unavailable',
  UND_ERR_DESTROYED: 'upstream_unavailable',
  // An answer that ends before its declared length: the connection closed or was reset mid-body (a
  // `Connection: close` answer is finished by the close, which undici reports as this mismatch).
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'upstream_unavailable',
  // A chunked or close-delimited answer whose connection ended mid-body.
  HPE_INVALID_EOF_STATE: 'upstream_unavailable',
  UND_ERR_REQ_CONTENT_LENGTH_MISMATCH: 'upstream_bad_response',
  UND_ERR_INFO: 'upstream_bad_response',
  UND_ERR_RES_EXCEEDED_MAX_SIZE: 'upstream_response_too_large',
  // Answer headers too large to read: an answer arrived, malformed (never sent again).
  UND_ERR_HEADERS_OVERFLOW: 'upstream_bad_response',
  // A coded answer that does not decode (node:zlib's gzip/deflate and brotli errors).
  Z_DATA_ERROR: 'upstream_bad_response',
  Z_BUF_ERROR: 'upstream_bad_response',
  Z_NEED_DICT: 'upstream_bad_response',
  Z_STREAM_ERROR: 'upstream_bad_response',
};

/** Error codes of node:zlib's brotli and zstd decoders (`ERR__ERROR_FORMAT_…`, `ZSTD_error_…`): a body that does not decode. */
const DECODER_CODE = /^(?:ERR__ERROR_|ERR_BROTLI|ERR_ZSTD|ZSTD_)/;

/**
 * The {@link UpstreamError} of an error whose code is one of the transport failures above (undici's
 * `UND_ERR_*`, a socket's `ECONNRESET`, an HTTP parser's `HPE_*`), else `undefined`. For errors that
 * may or may not come from an upstream call: the body of a streamed answer that breaks before its first
 * byte is sent reaches the error handler with the socket's own error (`ECONNRESET` when the upstream
 * resets the connection right after its headers).
 */
export function transportFailureOf(error: unknown): UpstreamError | undefined {
  if (error instanceof UpstreamError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if ((error as { name?: unknown } | null)?.name === 'HTTPParserError') return toUpstreamError(error);
  if (typeof code !== 'string') return undefined;
  if (TRANSPORT_CODES[code] !== undefined || code.startsWith('UND_ERR_') || code.startsWith('HPE_')) return toUpstreamError(error);
  return undefined;
}

/**
 * The {@link UpstreamError} of a call that failed before its answer's headers were handed on
 * (docs/behaviour.md "Upstream answers", "Names"): as {@link toUpstreamError}, except that a length
 * mismatch there is a malformed header block, `upstream_bad_response` (never sent again). undici names
 * every parse failure of a header block that declared a `Content-Length` so — both `Content-Length`
 * and `Transfer-Encoding` (RFC 9112 §6.3), a bad chunk size — since no body byte can have been counted
 * yet; a reset is a socket error and stays `upstream_unavailable`.
 */
export function headerFailureOf(error: unknown): UpstreamError {
  if ((error as { code?: unknown } | null)?.code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
    return new UpstreamError('upstream_bad_response', { cause: error });
  }
  return toUpstreamError(error);
}

/**
 * Maps any error thrown while calling an upstream to an {@link UpstreamError}.
 * An `UpstreamError` is returned unchanged; HTTP parser errors (`HPE_*`) are `upstream_bad_response`.
 */
export function toUpstreamError(error: unknown): UpstreamError {
  if (error instanceof UpstreamError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const name = (error as { name?: unknown } | null)?.name;
  if (typeof code === 'string') {
    const known = TRANSPORT_CODES[code];
    if (known) return new UpstreamError(known, { cause: error });
    if (code.startsWith('HPE_') || DECODER_CODE.test(code)) return new UpstreamError('upstream_bad_response', { cause: error });
  }
  // undici's decompression refuses a chain of too many codings with a plain error naming the header.
  if (typeof code !== 'string' && /content-encoding/i.test(String((error as { message?: unknown } | null)?.message ?? ''))) {
    return new UpstreamError('upstream_bad_response', { cause: error });
  }
  // undici's parser errors carry no code (undici 7 looks the code up by number in a table keyed by
  // name): an answer that does not parse (a bad chunk size) is malformed; one whose connection ended
  // mid-body ("Invalid EOF state") was cut.
  if (name === 'HTTPParserError') {
    const cut = /invalid eof state/i.test(String((error as { message?: unknown }).message ?? ''));
    return new UpstreamError(cut ? 'upstream_unavailable' : 'upstream_bad_response', { cause: error });
  }
  if (name === 'AbortError' || name === 'TimeoutError') return new UpstreamError('upstream_timeout', { cause: error });
  return new UpstreamError('upstream_unavailable', { cause: error });
}
