/**
 * The registry of the proxy's own error names: every `error` of an envelope `{ ok: false, error, detail }`
 * the proxy makes itself rather than reads from an upstream answer (docs/behaviour.md "Error envelope",
 * "The proxy's own errors", a table generated from this one by `npm run docs:envelope`).
 * {@link envelope} and {@link envelopeText} take only a {@link ProxyErrorName}, so a name outside the
 * registry does not compile. The upstream failures keep their own table (`upstream/errors.ts`,
 * which says how a transport error maps onto them); their rows here take its status and detail.
 *
 * Names an envelope carries that are not here come from the upstream: its snake_case reason, or a
 * name for its status when it gave none (`UPSTREAM_STATUS_NAMES`, `FORM_STATUS_NAMES` in `envelope.ts`).
 *
 * @module
 */
import type { ErrorCode } from './errors/index.js';
import { UPSTREAM_FAILURES, type UpstreamFailureCode } from './upstream/errors.js';

/** One row of {@link PROXY_ERRORS}. */
export interface ProxyErrorRow {
  /** The HTTP status the proxy answers with this name. */
  readonly status: number;
  /**
   * The EM code (spec 7.3) the classifier gives this name at this status, when it is not EM0099 (the
   * fallback): the second half of the `X-Error-Ref` the answer carries.
   */
  readonly em?: ErrorCode;
  /** The `detail` when the caller gives none: a short English sentence, no address, no credential. */
  readonly detail: string;
  /**
   * The modules that answer it, relative to `src/`: pipeline steps, route tables, the live streams.
   * An upstream failure is answered by the error step (`pipeline/errors.ts`) of every route that calls
   * an upstream (the event streams included); a WebSocket answers its own.
   */
  readonly answeredBy: readonly string[];
}

/** The modules that answer a failed upstream call with its envelope. */
const UPSTREAM_CALLERS = ['pipeline/errors.ts'] as const;

/** The row of an upstream failure: its status and detail from `UPSTREAM_FAILURES`. */
function upstreamRow(
  code: UpstreamFailureCode,
  em: ErrorCode | undefined,
  answeredBy: readonly string[] = UPSTREAM_CALLERS,
): ProxyErrorRow {
  const { status, detail } = UPSTREAM_FAILURES[code];
  return em === undefined ? { status, detail, answeredBy } : { status, em, detail, answeredBy };
}

/**
 * The proxy's own error names, by name. Data: one row a name, read one-to-one against
 * docs/behaviour.md "Error envelope".
 */
export const PROXY_ERRORS = {
  invalid_request: {
    status: 400,
    detail: 'The request is invalid',
    answeredBy: [
      'pipeline/errors.ts',
      'pipeline/client-errors.ts',
      'streams/websocket.ts',
      'routes/album.ts',
      'routes/games.ts',
      'routes/infra.ts',
      'routes/payments.ts',
      'routes/user.ts',
      'routes/wallet.ts',
    ],
  },
  client_aborted: upstreamRow('client_aborted', undefined, ['pipeline/errors.ts']),
  request_timeout: { status: 408, detail: 'The request took too long to arrive', answeredBy: ['pipeline/client-errors.ts'] },
  headers_too_large: { status: 431, detail: 'The request headers are too large', answeredBy: ['pipeline/client-errors.ts'] },
  operator_credential_required: {
    status: 401,
    em: 'EM0005',
    detail: 'A valid operator credential is required',
    answeredBy: ['pipeline/auth-gate.ts'],
  },
  csrf_rejected: {
    status: 403,
    em: 'EM0011',
    detail: 'Cross-site requests are not allowed',
    answeredBy: ['pipeline/csrf.ts', 'streams/websocket.ts'],
  },
  user_mismatch: { status: 403, em: 'EM0011', detail: "userId must be the session's own user id", answeredBy: ['routes/payments.ts'] },
  not_found: { status: 404, detail: 'No such route', answeredBy: ['pipeline/errors.ts', 'pipeline/health.ts', 'routes/sports.ts'] },
  request_in_progress: {
    status: 409,
    em: 'EM0022',
    detail: 'The same request is still in progress or its outcome is not known yet; retry later',
    answeredBy: ['state/idempotency.ts'],
  },
  payload_too_large: { status: 413, detail: 'The request body is too large', answeredBy: ['pipeline/errors.ts', 'routes/user.ts'] },
  unsupported_media_type: {
    status: 415,
    detail: 'Expected application/json',
    answeredBy: ['pipeline/body.ts', 'pipeline/errors.ts', 'routes/user.ts'],
  },
  idempotency_key_reused: {
    status: 422,
    detail: 'This Idempotency-Key was used with another request body',
    answeredBy: ['state/idempotency.ts'],
  },
  rate_limited: {
    status: 429,
    em: 'EM0021',
    detail: 'Too many requests; try again later',
    answeredBy: ['pipeline/errors.ts', 'routes/auth.ts', 'streams/bounds.ts'],
  },
  internal_error: { status: 500, em: 'EM0031', detail: 'Internal error', answeredBy: ['pipeline/errors.ts'] },
  upstream_bad_status: { status: 500, em: 'EM0031', detail: 'The service answered with an unknown status', answeredBy: ['envelope.ts'] },
  upstream_unavailable: upstreamRow('upstream_unavailable', 'EM0032', [...UPSTREAM_CALLERS, 'streams/websocket.ts']),
  upstream_bad_response: upstreamRow('upstream_bad_response', 'EM0032', [
    ...UPSTREAM_CALLERS,
    'envelope.ts',
    'session/identity.ts',
    'routes/album.ts',
    'routes/payments.ts',
    'routes/wallet.ts',
  ]),
  upstream_response_too_large: upstreamRow('upstream_response_too_large', 'EM0032'),
  upstream_redirect: upstreamRow('upstream_redirect', 'EM0032', [...UPSTREAM_CALLERS, 'envelope.ts']),
  attribution_rejected: {
    status: 502,
    em: 'EM0032',
    detail: 'The attribution provider refused the event',
    answeredBy: ['routes/external.ts'],
  },
  purge_rejected: { status: 502, em: 'EM0032', detail: 'The cache purge endpoint refused the purge', answeredBy: ['routes/infra.ts'] },
  not_configured: upstreamRow('not_configured', 'EM0032', [
    ...UPSTREAM_CALLERS,
    'pipeline/auth-gate.ts',
    'routes/playground.ts',
    'streams/index.ts',
  ]),
  upstream_busy: upstreamRow('upstream_busy', 'EM0032'),
  upstream_circuit_open: upstreamRow('upstream_circuit_open', 'EM0032'),
  idempotency_unavailable: {
    status: 503,
    em: 'EM0032',
    detail: 'Money moves are paused: the shared state cannot be reached',
    answeredBy: ['state/idempotency.ts'],
  },
  purge_unavailable: {
    status: 503,
    em: 'EM0032',
    detail: 'The caches of the other instances could not be purged: the shared state cannot be reached',
    answeredBy: ['routes/infra.ts'],
  },
  overloaded: {
    status: 503,
    em: 'EM0032',
    detail: 'The server is overloaded; try again shortly',
    answeredBy: ['pipeline/load-shedding.ts', 'streams/bounds.ts'],
  },
  shutting_down: {
    status: 503,
    em: 'EM0032',
    detail: 'The server is shutting down',
    answeredBy: ['pipeline/drain.ts', 'pipeline/health.ts', 'streams/index.ts'],
  },
  not_ready: { status: 503, em: 'EM0032', detail: 'The BFF has not answered yet', answeredBy: ['pipeline/health.ts'] },
  upstream_timeout: upstreamRow('upstream_timeout', 'EM0032', [...UPSTREAM_CALLERS, 'streams/websocket.ts']),
} as const satisfies Record<string, ProxyErrorRow> & Record<UpstreamFailureCode, ProxyErrorRow>;

/** A name of the proxy's own errors: a key of {@link PROXY_ERRORS}. */
export type ProxyErrorName = keyof typeof PROXY_ERRORS;

/** Whether `name` is one of the proxy's own error names. */
export function isProxyErrorName(name: unknown): name is ProxyErrorName {
  return typeof name === 'string' && Object.hasOwn(PROXY_ERRORS, name);
}
