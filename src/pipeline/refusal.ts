/**
 * A fixed refusal sent by the step that knows it (docs/behaviour.md "Error envelope"; spec 7.3 and
 * 7.4): the auth gate's 401s and the endpoint guards' 503s before the handler. Their status and body
 * never change for a reason (and a route), so each is a {@link FixedAnswer} built once, and the answer
 * is written at once, with the headers the request's earlier steps set (`X-Request-Id`,
 * `X-Content-Type-Options`, `Cache-Control`…), its own (`Content-Type`, `Retry-After`, `X-Error-Ref`,
 * `Content-Length`), and nothing of the steps after it: no `onSend` hook, no content-type parse, no
 * length worked out per answer. What comes after the answer stays: the request metrics and the
 * request's log line (Fastify's `onResponse` hooks and its completion line run when the answer is
 * written, whoever wrote it).
 *
 * It goes the ordinary way (`reply.send`, every `onSend` hook) whenever an `onSend` step may have
 * something to do with it: a `HEAD` request (no body, its own `X-Error-Ref`), a reference not known in
 * advance (the error-reference step classifies the answer), a request with a body
 * (the body step's lingering close), a route whose refusals become its success (`alwaysSucceeds`,
 * the logout), a session cookie a route asked for, or a drain under way (its `Connection: close`).
 * The bytes, the status and the headers on the wire are the same either way.
 *
 * @module
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { JSON_CONTENT_TYPE } from '../envelope.js';
import type { ErrorRef } from '../errors/index.js';
import { hasRequestBody } from './body.js';
import { ERROR_REF_HEADER } from './error-ref.js';

/** A refusal's status and body, serialised once: the body's text (for `X-Error-Ref`), its bytes and their length. */
export interface FixedAnswer {
  /** HTTP status (400-599). */
  readonly status: number;
  /** The body as the client reads it (UTF-8 JSON). */
  readonly text: string;
  /** {@link text}'s bytes. */
  readonly bytes: Buffer;
  /** `Content-Length` of {@link bytes}, in bytes, as the header's text. */
  readonly length: string;
}

/**
 * A {@link FixedAnswer} of `status` and the JSON text `text`.
 *
 * @example fixedAnswer(401, '{"reason":"no_token"}') // { status: 401, text: '{"reason":"no_token"}', bytes: <Buffer …>, length: '21' }
 */
export function fixedAnswer(status: number, text: string): FixedAnswer {
  const bytes = Buffer.from(text, 'utf8');
  return { status, text, bytes, length: String(bytes.length) };
}

/** What a refusal is sent with: its `X-Error-Ref` and, for a 503 of a guard, its `Retry-After` in seconds. */
export interface RefusalExtras {
  /** The answer's reference (`fixedErrorRef`); `undefined` when it is not known in advance. */
  readonly ref: ErrorRef | undefined;
  /** `Retry-After`, in whole seconds. */
  readonly retryAfterSeconds?: number | undefined;
  /** Whether the matched route turns its refusals into its success (`config.alwaysSucceeds`). */
  readonly alwaysSucceeds?: boolean | undefined;
}

/**
 * Sends fixed refusals (see the module documentation).
 *
 * @param app - the app: whether it has the error-reference step (`X-Error-Ref` on every error
 *   answer) is read at the first refusal, once every step is registered.
 * @param draining - whether the drain has begun (`createDrain`'s `draining`): its `onSend` hook then
 *   marks a connection's last answer, and refusals go the ordinary way.
 * @returns `send(request, reply, answer, extras)`: answers `answer.status` with `answer.bytes`; never throws.
 */
export function refusalSender(
  app: FastifyInstance,
  draining: () => boolean,
): (request: FastifyRequest, reply: FastifyReply, answer: FixedAnswer, extras: RefusalExtras) => void {
  let withRef: boolean | undefined;
  return (request, reply, answer, { ref, retryAfterSeconds, alwaysSucceeds }) => {
    withRef ??= app.hasReplyDecorator('knownErrorRef');
    const retryAfter = retryAfterSeconds === undefined ? undefined : String(retryAfterSeconds);
    if (
      request.method === 'HEAD' ||
      // Without a reference known in advance, the error-reference step classifies the answer as sent.
      (withRef && ref === undefined) ||
      alwaysSucceeds === true ||
      reply.pendingSession !== undefined ||
      hasRequestBody(request) ||
      draining()
    ) {
      if (withRef) reply.knownErrorRef = ref;
      if (retryAfter !== undefined) reply.header('retry-after', retryAfter);
      reply.code(answer.status).type(JSON_CONTENT_TYPE).send(answer.text);
      return;
    }
    // The earlier steps' headers, then the answer's own, in the order `reply.send` writes them.
    const headers = reply.getHeaders();
    if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
    headers['content-type'] = JSON_CONTENT_TYPE;
    if (withRef) {
      headers[ERROR_REF_HEADER] = ref;
      // The request's log line reads the reference from the reply (`pipeline/logging.ts`).
      reply.header(ERROR_REF_HEADER, ref);
    }
    headers['content-length'] = answer.length;
    const res = reply.raw;
    res.writeHead(answer.status, headers as Parameters<typeof res.writeHead>[1]);
    res.end(answer.bytes);
  };
}
