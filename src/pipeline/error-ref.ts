/**
 * Pipeline step **error reference** (an `onSend` hook: the last thing before an answer's headers are
 * written; docs/behaviour.md "Error envelope", the `X-Error-Ref` paragraph, and spec 7.1-7.3). Every answer
 * with a status of 400 or more, whoever made it (a hook, the error or not-found handler, a route,
 * a 401/403 body passed through byte for byte), carries `X-Error-Ref: EPdddd-EMdddd`: the reference
 * the browser SDK's classifier computes for that very answer (`ProxyError`, `browser/proxy-error.ts`).
 * The request's log line reads it from the answer's headers (`pipeline/logging.ts`, field `ref`).
 *
 * One source of truth: {@link errorRefOf} calls `classifyError` with the inputs the SDK gives it —
 * the status, the body as the SDK parses it, the body's text, the path the browser called (without
 * query) and the method. An answer below 400 returns from the hook at once, untouched.
 *
 * A body sent as a stream is not read (no route answers an error with a stream): its reference is
 * classified from the status alone. The answers Node's HTTP parser refuses before Fastify sees them
 * (`pipeline/client-errors.ts`) use {@link errorRefOf} too.
 *
 * @module
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { LRUCache } from 'lru-cache';
import { classifyError, type ErrorRef } from '../errors/index.js';

/** The header that carries the reference of an error answer (docs/behaviour.md "Error envelope"). */
export const ERROR_REF_HEADER = 'x-error-ref';

/** What {@link errorRefOf} classifies: one error answer as the client receives it. */
export interface ErrorAnswer {
  /** HTTP status of the answer (400-599 for an error answer). */
  readonly status: number;
  /** The request's method, as the browser sent it. */
  readonly method: string | undefined;
  /** The request target as the browser sent it (path and query, or absolute); `undefined` when unknown. */
  readonly url: string | undefined;
  /** The answer's `Content-Type`, if any. */
  readonly contentType: string | undefined;
  /** The answer's body as the client reads it: text, bytes (UTF-8), or `undefined` when there is none. */
  readonly body: string | Uint8Array | undefined;
}

const utf8 = new TextDecoder();

/** The path of a request target, without query string or fragment (what the SDK classifies). */
function pathOf(url: string): string {
  const q = url.indexOf('?');
  const h = url.indexOf('#');
  const cut = q === -1 ? h : h === -1 ? q : Math.min(q, h);
  return cut === -1 ? url : url.slice(0, cut);
}

/** The body as the SDK parses it (`proxy-client.ts`): JSON when it looks like JSON or says so, else nothing. */
function parsedAsTheSdkDoes(text: string, contentType: string | undefined): unknown {
  if (text === '') return undefined;
  if (!/^\s*[[{"]/.test(text) && !(contentType ?? '').includes('json')) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The reference of an error answer (spec 7.1): `classifyError` with the inputs the browser SDK gives
 * it for the same answer — status, the body parsed as the SDK parses it (JSON when it looks like JSON
 * or its type says so), the body's text (UTF-8, a byte-order mark dropped, as `Response.text()` does),
 * the path the browser called (query and fragment removed) and the method. An unknown URL gives EP0000.
 *
 * @param answer - the status, the request's method and target, the answer's content type and body.
 * @returns `EPdddd-EMdddd`, without the `#` display prefix. Never throws.
 * @example errorRefOf({ status: 401, method: 'GET', url: '/api/auth/profile', contentType: 'application/json', body: '{"reason":"no_token"}' })
 * // 'EP0702-EM0001'
 */
export function errorRefOf(answer: ErrorAnswer): ErrorRef {
  const body = answer.body;
  const text = body === undefined ? '' : typeof body === 'string' ? body : utf8.decode(body);
  const url = answer.url === undefined ? undefined : pathOf(answer.url);
  // The classifier runs once per distinct error answer: the same refusal (401 no_token, 429, a 503 of a
  // guard or of load shedding) on the same path gets its reference from memory.
  const key = text.length <= REMEMBERED_BODY_CHARS ? `${answer.status} ${answer.method} ${url}\n${answer.contentType}\n${text}` : undefined;
  const known = key === undefined ? undefined : remembered.get(key);
  if (known !== undefined) return known;
  const ref = classifyError({
    status: answer.status,
    data: parsedAsTheSdkDoes(text, answer.contentType),
    rawBody: text,
    url,
    method: answer.method,
  }).ref;
  if (key !== undefined) remembered.set(key, ref);
  return ref;
}

/** Longest body whose reference is remembered, in characters (refusals and envelopes are far shorter). */
const REMEMBERED_BODY_CHARS = 1_024;
/**
 * References already computed, by status, method, path, content type and body: at most 2,048 (the
 * least recently used go first). A reference is a pure function of these inputs.
 */
const remembered = new LRUCache<string, ErrorRef>({ max: 2_048 });

/**
 * The references of fixed answers (a refusal whose status, content type and body never change) on
 * each route, by the route (any object that stands for it), the request's method and the body
 * classified. A route's refusals are a handful: the maps stay small.
 */
const fixedRefs = new WeakMap<object, Map<string, Map<string, ErrorRef>>>();
/** The body key of an answer classified without a body (a `HEAD` answer). */
const NO_BODY = '';

/**
 * The reference of a fixed answer on `request`'s route, remembered per route, method and body rather
 * than classified again per answer: {@link errorRefOf} of the same inputs, the path being the route's
 * `pattern`. `undefined` when the request's target is not `pattern` itself, with or without a query (an
 * absolute-form target, a percent-encoded path: its answer is classified by {@link errorRefOf}).
 *
 * @param route - an object that stands for the route and lives as long as it (its context's `config`).
 * @param pattern - the route's URL pattern, a path without parameters for the reference to apply.
 * @param body - the body as the SDK reads it: the text, or `undefined` for a `HEAD` answer ({@link answerBody}).
 * @example fixedErrorRef(request.routeOptions.config, '/api/auth/profile', request, 401, JSON_CONTENT_TYPE, '{"reason":"no_token"}')
 * // 'EP0702-EM0001' for GET /api/auth/profile
 */
export function fixedErrorRef(
  route: object,
  pattern: string,
  request: FastifyRequest,
  status: number,
  contentType: string,
  body: string | undefined,
): ErrorRef | undefined {
  const url = request.url;
  if (url !== pattern && !(url.charCodeAt(pattern.length) === QUERY_MARK && url.startsWith(pattern))) return undefined;
  let byMethod = fixedRefs.get(route);
  if (byMethod === undefined) {
    byMethod = new Map();
    fixedRefs.set(route, byMethod);
  }
  const method = request.method;
  let byBody = byMethod.get(method);
  if (byBody === undefined) {
    byBody = new Map();
    byMethod.set(method, byBody);
  }
  let ref = byBody.get(body ?? NO_BODY);
  if (ref === undefined) {
    ref = errorRefOf({ status, method, url: pattern, contentType, body });
    byBody.set(body ?? NO_BODY, ref);
  }
  return ref;
}

/** `?`: where a request target's query begins. */
const QUERY_MARK = 0x3f;

/** The body of a text answer as the client reads it: the text, or nothing for a `HEAD` answer. */
export function answerBody(request: FastifyRequest, text: string): string | undefined {
  return request.method === 'HEAD' ? undefined : text;
}

/** The body of an `onSend` payload the client will read: a stream is not read; a HEAD answer has none. */
function bodyOf(request: FastifyRequest, payload: unknown): string | Uint8Array | undefined {
  if (typeof payload === 'string') return answerBody(request, payload);
  if (request.method === 'HEAD') return undefined;
  if (payload instanceof Uint8Array) return payload;
  return undefined;
}

function contentTypeOf(reply: FastifyReply): string | undefined {
  const value = reply.getHeader('content-type');
  return value === undefined ? undefined : String(value);
}

declare module 'fastify' {
  interface FastifyReply {
    /**
     * The reference of this answer when the step that made it already knows it: a fixed refusal whose
     * reference it computed once with {@link errorRefOf} from the very inputs this step would use
     * (status, method, path, content type, body as sent; `pipeline/errors.ts`). The hook then sets it
     * as it is rather than classifying the answer again. `undefined` for every other answer.
     */
    knownErrorRef: ErrorRef | undefined;
  }
}

/** The `onSend` hook of this step (see the module documentation). */
export const errorRef = fp(
  async (app: FastifyInstance) => {
    app.decorateReply('knownErrorRef', undefined);
    app.addHook('onSend', (request, reply, payload, done) => {
      if (reply.statusCode < 400) {
        done(null, payload);
        return;
      }
      const ref =
        reply.knownErrorRef ??
        errorRefOf({
          status: reply.statusCode,
          method: request.method,
          url: request.url,
          contentType: contentTypeOf(reply),
          body: bodyOf(request, payload),
        });
      reply.header(ERROR_REF_HEADER, ref);
      done(null, payload);
    });
  },
  { name: 'error-ref' },
);
