/**
 * Pipeline step **body** (the last `onRequest` hook, then Fastify's content-type parsing; CONTRACT.md
 * "CSRF defence" and "Upstream requests"): a state-changing request with a body whose media type
 * its route does not accept (`config.contentTypes`, `application/json` by default) answers 415
 * `unsupported_media_type` before the body is read, so a plain HTML form cannot post to a JSON route.
 * JSON bodies are parsed with prototype poisoning refused (`__proto__` and `constructor` keys: 400);
 * an empty body is allowed (a POST without a payload); malformed JSON is 400 `invalid_request`
 * (answered by the error step). The size limit is {@link JSON_BODY_LIMIT} unless a route sets its own
 * (413 `payload_too_large`).
 *
 * @module
 */
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import secureJson from 'secure-json-parse';
import { envelope } from '../envelope.js';
import { STATE_CHANGING } from './csrf.js';

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

/** The media-type check and the JSON parser (see the module documentation). */
export const body = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRequest', (request, reply, done) => {
      if (STATE_CHANGING.has(request.method) && hasBody(request)) {
        const accepted = request.routeOptions.config.contentTypes;
        if (accepted && !accepted.includes(mediaType(request.headers['content-type']))) {
          reply.code(415).send(envelope('unsupported_media_type', `Expected ${accepted.join(' or ')}`));
          return;
        }
      }
      done();
    });

    app.removeContentTypeParser(['application/json', 'text/plain']);
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, text, done) => {
      if (text.length === 0) {
        done(null, undefined);
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
