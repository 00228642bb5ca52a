/**
 * Pipeline step **errors** (Fastify's error and not-found handlers, for whatever a hook, parser,
 * schema or handler throws; spec 7.4 and docs/behaviour.md "Error envelope"): every failure answers the
 * envelope `{ ok: false, error, detail }` — an upstream failure its status and code (504
 * `upstream_timeout`, 502 `upstream_unavailable`…), a request body that broke on the client's side
 * (closed mid-body, cut upload) 400 `client_aborted` (logged at info, never as an upstream failure),
 * an unsafe path segment or a schema failure 400
 * `invalid_request` naming the field (an amount out of range adds `minimumCents` or `maximumCents`), a body over the limit 413 `payload_too_large`, an unaccepted
 * media type 415, malformed JSON 400, anything else 500 `internal_error` (logged, never detailed to
 * the client). An unknown path answers 404 `not_found`. Error bodies never carry an upstream address,
 * a stack trace or a credential.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { requestAmountBound } from '../contracts/payments.js';
import { envelope, envelopeText, JSON_CONTENT_TYPE } from '../envelope.js';
import type { ProxyErrorName } from '../proxy-errors.js';
import { REFUSALS, transportFailureOf, UpstreamError } from '../upstream/errors.js';
import { UnsafePathError } from '../upstream/paths.js';
import { errorRefOf } from './error-ref.js';
import { AggregatedLine, skipCompletionLine } from './logging.js';

/** The envelope for what Fastify's own codes mean, by code. */
const FASTIFY_CODES = new Map<string, { status: number; error: ProxyErrorName; detail: string }>(
  Object.entries({
    FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, error: 'payload_too_large', detail: 'The request body is too large' },
    FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, error: 'unsupported_media_type', detail: 'Expected application/json' },
    FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, error: 'invalid_request', detail: 'The body is not valid JSON' },
    FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, error: 'invalid_request', detail: 'The body is not valid JSON' },
    FP_JSON_TOO_DEEP: { status: 400, error: 'invalid_request', detail: 'The body is nested too deeply' },
  }),
);

/**
 * The answer to a failed upstream call: its status and envelope. A refusal of the endpoint's guard
 * (503 `upstream_busy`, `upstream_circuit_open`) says `Retry-After` and names the upstream endpoint
 * (`endpoint: "EPdddd"`, which its `X-Error-Ref` names too) and writes no line of its own: one warn
 * line at most every 10 s counts them by reference and reason (`AggregatedLine`), as the guard's
 * metrics count them by EP code, since they come in bulk and a refusal must stay cheap. A client that left is no upstream failure.
 */
function sendUpstreamFailure(failure: UpstreamError, request: FastifyRequest, reply: FastifyReply, refusals: AggregatedLine): FastifyReply {
  if (failure.code === 'client_aborted') {
    request.log.info({ code: failure.code }, 'client closed the request before its answer');
  } else if (failure.endpoint !== undefined && REFUSALS.has(failure.code)) {
    // A refusal of an endpoint's guard comes in bulk when an endpoint fails or is slow: counted into one
    // line, by its reference (the one `X-Error-Ref` carries, so that a reference a user reads out is
    // found in the logs) and reason, instead of a line each, which would cost more than the refusal.
    skipCompletionLine(request);
    const ref = errorRefOf({
      status: failure.status,
      method: request.method,
      url: request.url,
      contentType: JSON_CONTENT_TYPE,
      body: envelopeText(failure.code, failure.detail, { endpoint: failure.endpoint }),
    });
    refusals.count(`${ref} ${failure.code}`);
  } else if (REFUSALS.has(failure.code)) {
    request.log.debug({ code: failure.code }, 'upstream call refused');
  } else {
    request.log.warn({ code: failure.code, cause: (failure.cause as Error | undefined)?.message }, 'upstream failure');
  }
  if (failure.retryAfterSeconds !== undefined) reply.header('retry-after', String(failure.retryAfterSeconds));
  const extra = failure.endpoint === undefined ? undefined : { endpoint: failure.endpoint };
  return reply
    .code(failure.status)
    .type(JSON_CONTENT_TYPE)
    .send(envelopeText(failure.code, failure.detail, extra));
}

/**
 * Whether `error` comes from the client's request body rather than from an upstream: the upstream
 * client's `client_aborted`, or any error while the request's body had not fully arrived and its
 * stream is gone (Node's `aborted` reset of a client that closed mid-body, which carries the code
 * `ECONNRESET` like an upstream reset).
 */
function clientAborted(error: FastifyError, raw: IncomingMessage): boolean {
  if (error instanceof UpstreamError) return error.code === 'client_aborted';
  return !raw.complete && (raw.destroyed || raw.readableAborted);
}

/** The error and not-found handlers (see the module documentation). */
export const errors = fp(
  async (app: FastifyInstance) => {
    const refusals = new AggregatedLine(app.log, 'upstream calls refused since the last line', 'refused');
    app.addHook('onClose', async () => refusals.flush());
    app.setErrorHandler((error: FastifyError, request, reply) => {
      // The client's own body broke (it closed mid-body, stopped sending, or its upload was cut): a client
      // fault, answered 400 and logged as such, never as an upstream failure (docs/behaviour.md "Resilience":
      // one client cannot provoke what the circuit breakers count).
      if (clientAborted(error, request.raw)) {
        request.log.info({ code: 'client_aborted', cause: (error.cause as Error | undefined)?.message ?? error.message }, 'client aborted');
        return reply.code(400).send(envelope('client_aborted', 'The request body did not arrive whole'));
      }
      // A transport error reaching here (a streamed answer that broke before its first byte was sent:
      // undici's UND_ERR_*, or the socket's ECONNRESET when the upstream resets right after its headers)
      // is an upstream failure too: the envelope of docs/behaviour.md "Error envelope", not a 500.
      const upstreamFailure = transportFailureOf(error);
      if (upstreamFailure) return sendUpstreamFailure(upstreamFailure, request, reply, refusals);
      if (error.code === 'FP_RATE_LIMITED') {
        const retryAfter = (error as FastifyError & { retryAfterSeconds?: number }).retryAfterSeconds ?? 60;
        return reply
          .code(429)
          .type(JSON_CONTENT_TYPE)
          .send(envelopeText('rate_limited', `Too many requests; retry in ${retryAfter} s`));
      }
      if (error instanceof UnsafePathError) {
        return reply.code(400).send(envelope('invalid_request', error.message));
      }
      if (error.validation) {
        const where = error.validationContext ?? 'request';
        const first = error.validation[0];
        const field = first?.instancePath ? `${where}${first.instancePath.replace(/\//g, '.')}` : where;
        // An amount out of its range says the bound, in cents (spec 7.4.2 extra fields).
        const bound =
          where === 'body' && first
            ? requestAmountBound(first.instancePath.split('/').pop() ?? '', first.keyword, first.params?.limit)
            : undefined;
        return reply.code(400).send(envelope('invalid_request', `${field} ${first?.message ?? 'is invalid'}`, bound));
      }
      const known = FASTIFY_CODES.get(error.code);
      if (known) return reply.code(known.status).send(envelope(known.error, known.detail));
      const status = error.statusCode;
      if (status && status >= 400 && status < 500) {
        const detail = status === 400 && /proto|constructor/i.test(error.message) ? 'The body is not allowed' : 'The request is invalid';
        return reply.code(status).send(envelope('invalid_request', detail));
      }
      request.log.error({ err: error }, 'unhandled error');
      return reply.code(500).send(envelope('internal_error', 'Internal error'));
    });

    app.setNotFoundHandler((request, reply) => {
      reply.code(404).send(envelope('not_found', `No route ${request.method} ${request.url.split('?')[0]}`.slice(0, 200)));
    });
  },
  { name: 'errors' },
);
