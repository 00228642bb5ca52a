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
 * The refusals of the endpoint guards (503 `upstream_busy`, `upstream_circuit_open`) are answered
 * here too, whether a handler's call threw one or, for a row that only forwards to one endpoint
 * (`config.forwardsTo`), a route-level `preHandler` found its guard refusing before the handler ran
 * (docs/behaviour.md "Resilience"): one answer, one aggregated line, either way.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyContextConfig, FastifyError, FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { requestAmountBound } from '../contracts/payments.js';
import { envelope, envelopeText, JSON_CONTENT_TYPE } from '../envelope.js';
import type { ProxyErrorName } from '../proxy-errors.js';
import type { ErrorRef } from '../errors/index.js';
import type { UpstreamService } from '../upstream/client.js';
import type { EarlyRefusal, EndpointGuard } from '../upstream/endpoint-guard.js';
import { REFUSALS, transportFailureOf, UPSTREAM_FAILURES, UpstreamError, type UpstreamFailureCode } from '../upstream/errors.js';
import type { ServiceName } from '../upstream/services.js';
import { UnsafePathError } from '../upstream/paths.js';
import { answerBody, errorRefOf, fixedErrorRef } from './error-ref.js';
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
 * (503 `upstream_busy`, `upstream_circuit_open`) is answered by {@link GuardRefusals}. A client that
 * left is no upstream failure.
 */
function sendUpstreamFailure(failure: UpstreamError, request: FastifyRequest, reply: FastifyReply, refusals: GuardRefusals): FastifyReply {
  if (failure.endpoint !== undefined && failure.retryAfterSeconds !== undefined && isGuardRefusal(failure.code)) {
    return refusals.send(request, reply, failure.code, failure.endpoint, failure.retryAfterSeconds, failure.detail);
  }
  if (failure.code === 'client_aborted') {
    request.log.info({ code: failure.code }, 'client closed the request before its answer');
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

/** The upstream call a forwarding row makes (`config.forwardsTo`, declared by the route table). */
type ForwardTarget = NonNullable<FastifyContextConfig['forwardsTo']>;

/** The codes of an endpoint guard's refusals. */
type GuardRefusalCode = EarlyRefusal['code'];

function isGuardRefusal(code: UpstreamFailureCode): code is GuardRefusalCode {
  return code === 'upstream_busy' || code === 'upstream_circuit_open';
}

/**
 * The answers of the endpoint guards' refusals (503 `upstream_busy`, `upstream_circuit_open`), whether
 * the handler's call threw one or the check before the handler found one: `Retry-After`, the envelope
 * naming the upstream endpoint (`endpoint: "EPdddd"`, which its `X-Error-Ref` names too), and no line
 * of its own: one warn line at most every 10 s counts them by reference and reason
 * (`AggregatedLine`), as the guard's metrics count them by EP code, since they come in bulk when an
 * endpoint fails or is slow, and a line each would cost more than the refusal. The line is keyed by
 * the reference `X-Error-Ref` carries, so that a reference a user reads out is found in the logs.
 */
class GuardRefusals {
  readonly #line: AggregatedLine;
  constructor(line: AggregatedLine) {
    this.#line = line;
  }

  /**
   * Answers a refusal: 503, `Retry-After: <retryAfterSeconds>`, the envelope of `code` naming `endpoint`.
   *
   * @param route - with `pattern`, the route the request matched, when its refusals' references are
   *   remembered per route (`fixedErrorRef`: the check before the handler); otherwise each is
   *   classified from the answer (memoised by `errorRefOf`).
   */
  send(
    request: FastifyRequest,
    reply: FastifyReply,
    code: GuardRefusalCode,
    endpoint: string,
    retryAfterSeconds: number,
    detail: string = UPSTREAM_FAILURES[code].detail,
    body: string = envelopeText(code, detail, { endpoint }),
    route?: { key: object; pattern: string },
  ): FastifyReply {
    skipCompletionLine(request);
    const status = UPSTREAM_FAILURES[code].status;
    // The line's reference is the body's, whatever the method; the header's is the answer's as sent.
    const known = route && fixedErrorRef(route.key, route.pattern, request, status, JSON_CONTENT_TYPE, body);
    if (known === undefined) {
      const ref = errorRefOf({ status, method: request.method, url: request.url, contentType: JSON_CONTENT_TYPE, body });
      this.#line.count(`${ref} ${code}`);
    } else {
      this.#line.count(this.#lineKey(known, code));
      reply.knownErrorRef =
        request.method === 'HEAD' && route
          ? fixedErrorRef(route.key, route.pattern, request, status, JSON_CONTENT_TYPE, answerBody(request, body))
          : known;
    }
    reply.header('retry-after', String(retryAfterSeconds));
    return reply.code(status).type(JSON_CONTENT_TYPE).send(body);
  }

  /** The aggregated line's keys, by code and reference: the reference and the code. */
  readonly #lineKeys: Record<GuardRefusalCode, Map<ErrorRef, string>> = { upstream_busy: new Map(), upstream_circuit_open: new Map() };

  #lineKey(ref: ErrorRef, code: GuardRefusalCode): string {
    const keys = this.#lineKeys[code];
    let key = keys.get(ref);
    if (key === undefined) {
      key = `${ref} ${code}`;
      // A closed set: EP codes by EM codes, as the classifier gives them.
      keys.set(ref, key);
    }
    return key;
  }

  /**
   * A route-level `preHandler` for a row whose handler forwards to `target` (`config.forwardsTo`: one
   * upstream call, from a path without parameters, before anything else): when the target endpoint's
   * guard refuses a new call now, the request is answered here, exactly as the handler's call would
   * have been, without the handler, its context, the thrown error and the error handler. Otherwise the
   * handler runs and makes its call (a trial when one is due: the check takes nothing, so the trial
   * per pause of docs/behaviour.md "Resilience" goes as before). After the route's `onRequest` hooks
   * (the rate limits count the request) and its schema validation (a 400 comes first), as the
   * handler's own refusal did.
   *
   * @param pattern - the route's URL pattern.
   */
  beforeHandler(service: UpstreamService, target: ForwardTarget, pattern: string): preHandlerHookHandler {
    let resolved = false;
    let guard: EndpointGuard | undefined;
    /** The envelope text of each refusal (the endpoint is the route's). */
    const bodies: Partial<Record<GuardRefusalCode, string>> = {};
    /** The route, for its references ({@link fixedErrorRef}). */
    const route = { key: bodies, pattern };
    return (request, reply, done) => {
      if (!resolved) {
        // On first use, as the handler's first call would make it: the guard of the endpoint, or none.
        guard = service.endpointGuard(target.method, target.path);
        resolved = true;
      }
      const refused = guard?.earlyRefusal();
      if (refused === undefined || guard === undefined) {
        done();
        return;
      }
      const code = refused.code;
      const endpoint = guard.endpoint;
      const body = (bodies[code] ??= envelopeText(code, UPSTREAM_FAILURES[code].detail, { endpoint }));
      this.send(request, reply, code, endpoint, refused.retryAfterSeconds, undefined, body, route);
    };
  }
}

/** Options of the {@link errors} step. */
export interface ErrorsOptions {
  /**
   * The upstream services, for the check of a forwarding row's endpoint guard before its handler
   * ({@link GuardRefusals.beforeHandler}); without them every refusal is the handler's.
   */
  services?: Readonly<Record<ServiceName, UpstreamService>> | undefined;
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
  async (app: FastifyInstance, { services }: ErrorsOptions) => {
    const refusedLine = new AggregatedLine(app.log, 'upstream calls refused since the last line', 'refused');
    app.addHook('onClose', async () => refusedLine.flush());
    const refusals = new GuardRefusals(refusedLine);
    if (services !== undefined) {
      // Hooks this step added: a route declared twice (HEAD next to GET) gets one.
      const added = new WeakSet<preHandlerHookHandler>();
      app.addHook('onRoute', (route) => {
        const target = route.config?.forwardsTo;
        if (target === undefined) return;
        const own = route.preHandler === undefined ? [] : Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler];
        if (own.some((hook) => added.has(hook as preHandlerHookHandler))) return;
        const hook = refusals.beforeHandler(services[target.service], target, route.url);
        added.add(hook);
        // Last, right before the handler, where its call would have been refused.
        route.preHandler = [...own, hook] as typeof route.preHandler;
      });
    }
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
        const body = envelopeText('rate_limited', `Too many requests; retry in ${retryAfter} s`);
        const route = request.routeOptions.config;
        reply.knownErrorRef = fixedErrorRef(route, route.url, request, 429, JSON_CONTENT_TYPE, answerBody(request, body));
        return reply.code(429).type(JSON_CONTENT_TYPE).send(body);
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
