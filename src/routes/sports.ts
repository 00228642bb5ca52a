/**
 * spec 4.7 Sports: the sportsbook routes, rows in the specification's order, and two helpers other
 * tables use: {@link rawSubPath} (a raw request path checked segment by segment before it may name an
 * upstream path) and {@link stripDebug} (spec 1.6: no internal debug data in a proxy answer).
 *
 * Query parameters (spec 4.12 leaves them open; anything else is dropped):
 *
 * | route | parameters |
 * |---|---|
 * | `/api/sports/search` | `search` (required, 1-100 characters), `limit` (1-50), `lang` (`pt`, `pt-BR`…) |
 * | `/api/sports/launch`, `/api/sports/anonymous-launch` | `lang`, `device` (`desktop` or `mobile`) |
 * | `/api/core-sportbook/*` | the raw query string, passed through as it came |
 *
 * The raw passthrough streams the answer body as it comes (with its content type) when the request has
 * no session; with a session (which it forwards) it buffers the answer, at most 4 MiB, so that the
 * JWT is removed from the body should the upstream echo it. A 2xx body passes through; failures use
 * the envelope (401 and 403 byte for byte, spec 7.4).
 *
 * @module
 */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { envelope, type ProxyAnswer, parseJson, upstreamFailureAnswer } from '../envelope.js';
import type { UpstreamResponse } from '../upstream/client.js';
import { safeSegment, UnsafePathError } from '../upstream/paths.js';
import { bff, forward, ok, type RouteContext, type RouteSpec, route } from './route.js';

/** Upstream of the first-party sportsbook search (spec 4.7, also used by `/api/search/unified`). */
export const SPORTS_SEARCH_PATH = '/core-sportbook/search';
/** Prefix of the raw passthrough route and of its upstream. */
export const CORE_SPORTBOOK = { route: '/api/core-sportbook/', upstream: '/core-sportbook/' } as const;
/** Longest raw query string passed through, in characters. */
export const MAX_RAW_QUERY = 4096;

const Lang = Type.String({ pattern: '^[a-z]{2}(-[A-Za-z]{2})?$' });
const Device = Type.Union([Type.Literal('desktop'), Type.Literal('mobile')]);
/** `GET /api/sports/search` query. */
export const SportsSearchQuery = Type.Object({
  search: Type.String({ minLength: 1, maxLength: 100 }),
  limit: Type.Optional(Type.String({ pattern: '^([1-9]|[1-4][0-9]|50)$' })),
  lang: Type.Optional(Lang),
});
const LaunchQuery = Type.Object({ lang: Type.Optional(Lang), device: Type.Optional(Device) });

/** Keys of upstream answers that are internal (debug, traces, stacks, credentials): never sent to the browser. */
export const DEBUG_KEY =
  /^(?:x[-_])?_*(?:debug\w*|trace|traces|trace[-_]?id|stack|stack[-_]?trace|stacktrace|internal\w*|exception|sql|queries|query[-_]?log|request[-_]?log|(?:provider|raw|upstream)[-_]?(?:request|response|headers)|credentials?|secret|secrets|client[-_]?secret|api[-_]?key|private[-_]?key|operator[-_]?(?:token|secret|key))$/i;

/**
 * A copy of a JSON value without any key matching {@link DEBUG_KEY}, at any depth (spec 1.6: proxy
 * answers never carry internal debug data or internal upstream credentials).
 *
 * @example stripDebug({ url: 'https://g/launch', debug: { sql: '…' } }) // { url: 'https://g/launch' }
 */
export function stripDebug(value: unknown, depth = 0): unknown {
  if (depth > 32) return null;
  if (Array.isArray(value)) return value.map((v) => stripDebug(v, depth + 1));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (!DEBUG_KEY.test(key)) out[key] = stripDebug(child, depth + 1);
  }
  return out;
}

/**
 * The answer for an upstream response whose JSON is cleaned by {@link stripDebug} (game start,
 * sportsbook launch). Failures go through the envelope (spec 7.4).
 */
export function cleanAnswer(res: UpstreamResponse): ProxyAnswer {
  if (res.status < 200 || res.status >= 300) return upstreamFailureAnswer(res);
  if (res.status === 204) return { status: 204, body: null };
  if (res.body.length === 0) return ok({ ok: true }, res.status);
  const data = parseJson(res.body);
  if (data === undefined || data === null || typeof data !== 'object') {
    return { status: 502, body: envelope('upstream_bad_response', 'The service sent an invalid answer') };
  }
  return ok(stripDebug(data) as object, res.status);
}

/** A raw sub-path that passed {@link rawSubPath}. */
export interface RawSubPath {
  /** The upstream path: the upstream prefix plus the checked segments, each percent-encoded once. */
  path: string;
  /** The raw query string including `?`, or `''`. */
  rawQuery: string;
}

const ENCODED_FORBIDDEN = /%(?:25|2e|2f|5c|3b|3f|23|00|[01][0-9a-f]|7f)/i;

/**
 * Checks the raw request URL (as received, before any decoding) of a wildcard route and returns the
 * upstream path built from its segments. Used by `/api/core-sportbook/*` and `/api/dev/proxy/*`.
 *
 * Refused (400 `invalid_request` through {@link UnsafePathError}, before any upstream call): a URL
 * outside `routePrefix`; an empty sub-path; bytes outside printable ASCII (controls, NUL, spaces,
 * raw full-width characters); `\`, `;`, `//`; a malformed escape; the escapes of `%` (double
 * encoding), `.`, `/`, `\`, `;`, `?`, `#` and control characters; a segment that is `.` or `..` or
 * that decodes to something {@link safeSegment} refuses (`..`, full-width dots and slashes…); a raw
 * query longer than {@link MAX_RAW_QUERY} or with bytes outside printable ASCII. One trailing `/` is kept.
 *
 * @example rawSubPath('/api/core-sportbook/events/12?live=1', '/api/core-sportbook/', '/core-sportbook/')
 * // { path: '/core-sportbook/events/12', rawQuery: '?live=1' }
 * @throws {@link UnsafePathError}
 */
export function rawSubPath(rawUrl: string, routePrefix: string, upstreamPrefix: string): RawSubPath {
  const q = rawUrl.indexOf('?');
  const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q);
  const rawQuery = q < 0 ? '' : rawUrl.slice(q);
  if (!rawPath.startsWith(routePrefix)) throw new UnsafePathError('path', 'is outside the route');
  const rest = rawPath.slice(routePrefix.length);
  if (rest.length === 0) throw new UnsafePathError('path', 'needs a sub-path');
  if (!/^[\x21-\x7e]+$/.test(rest)) throw new UnsafePathError('path', 'contains a character that is not allowed');
  if (/[\\;]/.test(rest) || rest.includes('//') || rest.startsWith('/')) {
    throw new UnsafePathError('path', 'contains a separator that is not allowed');
  }
  if (/%(?![0-9A-Fa-f]{2})/.test(rest)) throw new UnsafePathError('path', 'contains a malformed escape');
  if (ENCODED_FORBIDDEN.test(rest)) throw new UnsafePathError('path', 'contains an escape that is not allowed');
  const trailing = rest.endsWith('/');
  const segments = (trailing ? rest.slice(0, -1) : rest).split('/').map((raw) => {
    let decoded: string;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      throw new UnsafePathError('path', 'contains a malformed escape');
    }
    if (decoded === '.' || decoded === '..') throw new UnsafePathError('path', 'must not contain "." or ".." segments');
    return safeSegment('path', decoded);
  });
  if (rawQuery.length > MAX_RAW_QUERY + 1) throw new UnsafePathError('query', 'is too long');
  if (rawQuery.length > 0 && !/^\?[\x21-\x7e]*$/.test(rawQuery)) {
    throw new UnsafePathError('query', 'contains a character that is not allowed');
  }
  return { path: `${upstreamPrefix}${segments.join('/')}${trailing ? '/' : ''}`, rawQuery: rawQuery === '?' ? '' : rawQuery };
}

/** The raw URL of a request (what the client sent, before Fastify decoded anything). */
export function rawUrlOf(request: FastifyRequest): string {
  return request.raw.url ?? '';
}

/** Reads a stream into a buffer of at most `limit` bytes (the rest is dropped). */
async function drain(stream: NodeJS.ReadableStream, limit = 64 * 1024): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    if (size < limit) chunks.push(buf.subarray(0, limit - size));
    size += buf.length;
  }
  return Buffer.concat(chunks);
}

/**
 * The handler of the two launch rows (spec 4.7): `GET <path>` upstream with the accepted `lang` and
 * `device`, answered without the debug fields ({@link cleanAnswer}, spec 1.6).
 * @param path the upstream path, `/core-sportbook/launch` or `/core-sportbook/anonymous-launch`
 */
function launch(path: string): (ctx: RouteContext<unknown, Static<typeof LaunchQuery>>) => Promise<ProxyAnswer> {
  return async (ctx) => cleanAnswer(await ctx.call('bff', { method: 'GET', path, query: { lang: ctx.query.lang, device: ctx.query.device } }));
}

/** spec 4.7 Sports, in the specification's order. */
export const sportsRoutes: readonly RouteSpec[] = [
  route({
    method: 'GET',
    url: '/api/sports/search',
    spec: '4.7',
    summary: 'first-party sportsbook search; query `search` (required), `limit`, `lang`',
    auth: 'none',
    querystring: SportsSearchQuery,
    upstream: [bff('GET', SPORTS_SEARCH_PATH)],
    handler: forward({ query: ({ query }) => ({ search: query.search.trim(), limit: query.limit, lang: query.lang }) }),
  }),
  route({
    method: 'GET',
    url: '/api/sports/launch',
    spec: '4.7',
    summary: 'authenticated sportsbook launch; query `lang`, `device`; debug fields of the answer are removed',
    auth: 'required',
    querystring: LaunchQuery,
    upstream: [bff('GET', '/core-sportbook/launch')],
    handler: launch('/core-sportbook/launch'),
  }),
  route({
    method: 'GET',
    url: '/api/sports/anonymous-launch',
    spec: '4.7',
    summary: 'anonymous sportsbook launch; query `lang`, `device`; debug fields of the answer are removed',
    auth: 'none',
    querystring: LaunchQuery,
    upstream: [bff('GET', '/core-sportbook/anonymous-launch')],
    handler: launch('/core-sportbook/anonymous-launch'),
  }),
  route({
    method: 'POST',
    url: '/api/sports/partner-a-jwt',
    spec: '4.7',
    summary: 'issue a JWT for sportsbook partner A (the request body is ignored; `{}` is sent)',
    auth: 'required',
    evictsProfile: false,
    upstream: [bff('POST', '/sportsbook-partner-a/get-jwt')],
    handler: forward({ body: () => ({}) }),
  }),
  route({
    method: 'GET',
    url: '/api/sports/partner-b-token',
    spec: '4.7',
    summary: 'token for sportsbook partner B (the upstream path is kept exactly as the specification writes it)',
    auth: 'required',
    upstream: [bff('GET', '/sportsbook-partner-b/token')],
    handler: forward(),
  }),
  route({
    method: 'GET',
    url: '/api/core-sportbook/*',
    spec: '4.7',
    summary:
      'transparent raw proxy of a sub-path: raw query and answer body passed through; the sub-path is checked on the raw URL and can never leave /core-sportbook/',
    auth: 'none',
    upstream: [bff('GET', '/core-sportbook/{subPath}')],
    handler: async (ctx) => {
      const target = rawSubPath(rawUrlOf(ctx.request), CORE_SPORTBOOK.route, CORE_SPORTBOOK.upstream);
      const req = { method: 'GET', path: target.path, rawQuery: target.rawQuery } as const;
      if (ctx.token) {
        // With a session the answer is buffered, so that the JWT can never reach the body (CONTRACT.md).
        const res = await ctx.call('bff', req);
        if (res.status < 200 || res.status >= 300) return upstreamFailureAnswer(res);
        if (res.status === 204) return { status: 204, body: null };
        const type = res.headers['content-type'];
        return { status: res.status, body: res.body, contentType: typeof type === 'string' ? type : 'application/octet-stream' };
      }
      const up = await ctx.stream('bff', req);
      if (up.status >= 200 && up.status < 300 && up.status !== 204) {
        const type = up.headers['content-type'];
        ctx.reply.code(up.status);
        if (typeof type === 'string') ctx.reply.type(type);
        ctx.reply.send(up.body);
        return undefined;
      }
      const body = await drain(up.body);
      if (up.status === 204) return { status: 204, body: null };
      return upstreamFailureAnswer({ status: up.status, headers: up.headers, body });
    },
  }),
];
