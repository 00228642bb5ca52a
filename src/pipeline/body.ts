/**
 * Pipeline step **body** (the last `onRequest` hook, then Fastify's content-type parsing; docs/behaviour.md
 * "CSRF defence" and "Upstream requests"): a state-changing request with a body whose media type
 * its route does not accept (`config.contentTypes`, `application/json` by default) answers 415
 * `unsupported_media_type` before the body is read, so a plain HTML form cannot post to a JSON route.
 * JSON bodies are parsed with prototype poisoning refused (`__proto__` and `constructor` keys: 400);
 * an empty body is allowed (a POST without a payload); a body nested deeper than {@link MAX_JSON_DEPTH}
 * levels is 400 `invalid_request` before it is parsed (no request body of the specification has more
 * than a few levels, and deep nesting would otherwise overflow the stack of later steps); malformed JSON is 400 `invalid_request`
 * (answered by the error step). The size limit is {@link JSON_BODY_LIMIT} unless a route sets its own
 * (413 `payload_too_large`).
 *
 * An error answer sent while the request body is still arriving (413, or any early 4xx: 403, 415…)
 * ends with a **lingering close** (docs/behaviour.md "Error envelope": the client reads the answer even while
 * it is still sending). Fastify answers a body error with `Connection: close` and Node then closes the
 * socket right after the answer; closing a socket whose peer is still sending makes the kernel reset
 * the connection, and the reset discards the answer the client has not read yet (a browser reads only
 * once its upload is done). So the answer says `Connection: close`, the rest of the body is read and
 * discarded, and the socket is closed once the body has arrived — or after {@link LINGER} `timeMs`,
 * or beyond `maxBytes` discarded, whichever comes first.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import secureJson from 'secure-json-parse';
import { envelope } from '../envelope.js';
import { STATE_CHANGING } from './csrf.js';
import { routeConfigOf } from './request-context.js';

/** Deepest nesting of arrays and objects a JSON request body may have, in levels; deeper answers 400. */
export const MAX_JSON_DEPTH = 32;

/**
 * Whether the JSON text nests arrays and objects deeper than `max` levels: one pass over the text,
 * brackets inside strings (and escaped quotes) not counted. Says nothing of the text's validity.
 *
 * @example nestedDeeperThan('{"a":[[1]]}', 2) // true (3 levels)
 */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** Request body limit for JSON routes, in bytes (1 MiB); larger bodies answer 413. */
export const JSON_BODY_LIMIT = 1024 * 1024;

function mediaType(header: string | undefined): string {
  if (!header) return '';
  const semi = header.indexOf(';');
  return (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
}

/**
 * Bounds of the lingering close after an early error answer: the socket is closed at most `timeMs`
 * after the answer, or once more than `maxBytes` of the remaining body have been discarded.
 */
export const LINGER = {
  /** Longest time the rest of a refused body is read after the answer, in milliseconds. */
  timeMs: 2_000,
  /** Most bytes of a refused body read and discarded after the answer (8 MiB). */
  maxBytes: 8 * 1024 * 1024,
} as const;

/** Whether the request's body has not fully arrived yet. */
function bodyStillArriving(request: FastifyRequest): boolean {
  return hasBody(request) && !request.raw.complete && !request.raw.socket.destroyed;
}

/**
 * Arranges the lingering close of a request whose error answer is sent before its body has arrived:
 * `Connection: close`, the rest of the body read and thrown away from now on, and Node's close after
 * the answer (`socket.destroySoon`, called once the answer is written) replaced for this socket by a
 * close once the body has arrived, bounded by {@link LINGER}.
 */
function lingerAfterAnswer(req: IncomingMessage, reply: FastifyReply): void {
  const socket = req.socket;
  reply.header('connection', 'close');
  let discarded = 0;
  let closing = false;
  const close = (): void => {
    clearTimeout(timer);
    req.off('data', discard);
    if (!socket.destroyed) socket.destroy();
  };
  const discard = (chunk: Buffer): void => {
    discarded += chunk.length;
    if (discarded > LINGER.maxBytes) close();
  };
  const timer = setTimeout(close, LINGER.timeMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  req.on('data', discard);
  req.once('end', () => {
    // Everything the client sent has been read: closing now loses nothing of the answer.
    if (closing) close();
  });
  req.resume();
  socket.destroySoon = () => {
    closing = true;
    // The answer, then FIN; reading goes on until the body has arrived or a bound is reached.
    socket.end();
    if (req.complete) close();
  };
}

/** The media-type check, the JSON parser and the lingering close (see the module documentation). */
export const body = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRequest', (request, reply, done) => {
      if (STATE_CHANGING.has(request.method) && hasBody(request)) {
        const accepted = routeConfigOf(request).contentTypes;
        if (accepted && !accepted.includes(mediaType(request.headers['content-type']))) {
          reply.code(415).send(envelope('unsupported_media_type', `Expected ${accepted.join(' or ')}`));
          return;
        }
      }
      done();
    });

    app.addHook('onSend', (request, reply, payload, done) => {
      if (reply.statusCode >= 400 && bodyStillArriving(request)) lingerAfterAnswer(request.raw, reply);
      done(null, payload);
    });

    app.removeContentTypeParser(['application/json', 'text/plain']);
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, text, done) => {
      if (text.length === 0) {
        done(null, undefined);
        return;
      }
      if (nestedDeeperThan(text as string, MAX_JSON_DEPTH)) {
        const error = new Error(`The body is nested deeper than ${MAX_JSON_DEPTH} levels`) as FastifyError;
        error.statusCode = 400;
        error.code = 'FP_JSON_TOO_DEEP';
        done(error, undefined);
        return;
      }
      try {
        done(null, secureJson.parse(text as string, undefined, { protoAction: 'error', constructorAction: 'error' }));
      } catch {
        const error = new Error('Body is not valid JSON') as FastifyError;
        error.statusCode = 400;
        error.code = 'FST_ERR_CTP_INVALID_JSON_BODY';
        done(error, undefined);
      }
    });
  },
  { name: 'body' },
);
