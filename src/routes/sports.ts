/**
 * spec 4.7 Sports: the sportsbook routes, rows in the specification's order. The raw passthrough checks
 * its path with `rawSubPath` (`upstream/paths.ts`); launch answers lose their internal data through
 * `cleanAnswer` (`envelope.ts`, spec 1.6).
 *
 * Query parameters (spec 4.12 leaves them open; anything else is dropped):
 *
 * | route | parameters |
 * |---|---|
 * | `/api/sports/search` | `search` (required, 1-100 characters), `limit` (1-50), `lang` (`pt`, `pt-BR`…) |
 * | `/api/sports/launch`, `/api/sports/anonymous-launch` | `lang`, `device` (`desktop` or `mobile`) |
 * | `/api/core-sportbook/*` | the raw query string, passed through as it came |
 *
 * The raw passthrough keeps every rule of the named routes (docs/behaviour.md "The raw passthrough"):
 * a sub-path a named row serves answers 404 naming that route; its calls pass their client's fair share
 * of the endpoint's guard; JSON answers lose their internal keys; content that would run on the site's
 * origin is refused; every answer carries `PASSTHROUGH_ANSWER_HEADERS`; a text answer is scanned for the
 * session's values (in their base64 forms too) after transcoding to UTF-8. Without a session a non-JSON
 * 2xx body streams as it comes (decoded, with the headers of {@link PASSTHROUGH_HEADERS}); with a session
 * (which it forwards) the answer is buffered, at most `UPSTREAM_MAX_RESPONSE_BYTES`; an upstream 2xx
 * `text/event-stream` is a live stream either way, whatever the request's `Accept` (docs/behaviour.md
 * "Live streams"). Failures use the
 * envelope (401 and 403 byte for byte when JSON, spec 7.4). A declared length over the limit answers 502
 * `upstream_response_too_large` before anything is sent; a stream that breaks or runs over the limit
 * once its headers are sent ends the client's connection without the final chunk (docs/behaviour.md
 * "Upstream answers").
 *
 * @module
 */
import { type Static, Type } from '@sinclair/typebox';
import type { IncomingHttpHeaders } from 'node:http';
import {
  badResponse,
  cleanAnswer,
  isJsonMediaType,
  mediaTypeOf,
  parseJson,
  type ProxyAnswer,
  stripDebug,
  upstreamFailureAnswer,
} from '../envelope.js';
import { addressKey } from '../state/address-key.js';
import { clientAddress } from '../session/client.js';
import { sessionTokenKey } from '../session/cookie.js';
import { foreignEncoding, sendRedactedStream, transcodeToUtf8, utf8ContentType } from '../session/redact.js';
import { isEventStream } from '../streams/sse.js';
import { liveKind, type LiveOutcome } from '../streams/index.js';
import { rawSubPath, SPORTS_SEARCH_PATH } from '../upstream/paths.js';
import { bff, fail, forward, route, type RouteContext, type RouteSpec, routeTable } from './route.js';

/** Prefix of the raw passthrough route and of its upstream. */
export const CORE_SPORTBOOK = { route: '/api/core-sportbook/', upstream: '/core-sportbook/' } as const;

const Lang = Type.String({ pattern: '^[a-z]{2}(-[A-Za-z]{2})?$' });
const Device = Type.Union([Type.Literal('desktop'), Type.Literal('mobile')]);
/** `GET /api/sports/search` query. */
export const SportsSearchQuery = Type.Object({
  search: Type.String({ minLength: 1, maxLength: 100 }),
  limit: Type.Optional(Type.String({ pattern: '^([1-9]|[1-4][0-9]|50)$' })),
  lang: Type.Optional(Lang),
});
const LaunchQuery = Type.Object({ lang: Type.Optional(Lang), device: Type.Optional(Device) });

/**
 * The upstream headers the raw passthrough forwards with a 2xx besides `Content-Type` (docs/behaviour.md
 * "Upstream answers", "Headers"): the body's language and its date. Every other upstream header is
 * dropped: hop-by-hop fields, `Set-Cookie`, `Server`, `X-Powered-By`, `Content-Encoding` (the body is
 * decoded), caching headers (the route's own `Cache-Control` applies) and anything internal.
 */
export const PASSTHROUGH_HEADERS = ['content-language', 'last-modified'] as const;

/** The {@link PASSTHROUGH_HEADERS} an upstream answer has, each with a single value. */
function passthroughHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): Record<string, string> | undefined {
  let kept: Record<string, string> | undefined;
  for (const name of PASSTHROUGH_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string' && value.length <= 256) (kept ??= {})[name] = value;
  }
  return kept;
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
 * Media types that run script, or load what does, when a browser opens them (docs/behaviour.md "The raw
 * passthrough"): the passthrough refuses them (502 `upstream_bad_response`), whatever else guards the
 * site's origin. Any `+xml` type too (SVG, XHTML, XSLT…).
 */
export const SCRIPT_MEDIA_TYPES: ReadonlySet<string> = new Set([
  'text/html',
  'application/xhtml+xml',
  'image/svg+xml',
  'text/xml',
  'application/xml',
  'text/xsl',
  'text/javascript',
  'application/javascript',
  'application/x-javascript',
  'text/ecmascript',
  'application/ecmascript',
  'text/jscript',
  'application/wasm',
  'multipart/x-mixed-replace',
]);

/** Whether a media type runs script when opened ({@link SCRIPT_MEDIA_TYPES}, any `+xml` type). */
export function runsScript(type: string): boolean {
  return SCRIPT_MEDIA_TYPES.has(type) || type.endsWith('+xml');
}

/** The type of content the passthrough never serves (docs/behaviour.md "The raw passthrough"). */
function scriptRefused(): ProxyAnswer {
  return badResponse('The service sent content the proxy does not serve');
}

/**
 * The named row of spec 4.7 that serves an upstream sub-path of the passthrough, by the sub-path as a
 * BFF router matches it (lower case, no trailing `/`): the passthrough answers 404 naming it, so that
 * the row's rules (query validation, internal-key strip, side-effect rule, retry rule, EP code) can
 * never be skipped (docs/behaviour.md "The raw passthrough"). Built from the table below on first use.
 */
let namedSubPaths: ReadonlyMap<string, string> | undefined;

/** The proxy route that serves `upstreamPath`, when a named row of {@link sportsRoutes} does. */
export function namedRouteOf(upstreamPath: string): string | undefined {
  namedSubPaths ??= new Map(
    sportsRoutes.flatMap((r) =>
      r.url.endsWith('*')
        ? []
        : r.upstream.filter((u) => u.path.startsWith(CORE_SPORTBOOK.upstream)).map((u) => [u.path.toLowerCase(), r.url] as const),
    ),
  );
  return namedSubPaths.get(upstreamPath.toLowerCase().replace(/\/+$/, ''));
}

/**
 * The client a passthrough call is made for, for its fair share of the endpoint's guard
 * (docs/behaviour.md "Resilience"): a verified session (a token nobody can mint), else the client
 * address (IPv6 by its /64).
 */
function clientOf(ctx: RouteContext): string {
  const request = ctx.request;
  if (ctx.token !== undefined && request.sessionTokenVerified === true) return `s:${sessionTokenKey(request, ctx.token)}`;
  return `a:${addressKey(clientAddress(request))}`;
}

/**
 * A buffered passthrough 2xx as the browser gets it (docs/behaviour.md "The raw passthrough"): content
 * that runs script refused; a text in another encoding than UTF-8 transcoded (so that the session's
 * values are found by the redaction of `sendAnswer`), one in an encoding nobody here knows refused; a
 * JSON body without its internal keys (the upstream's bytes when it has none); the kept headers.
 */
function passthroughBody(status: number, headers: IncomingHttpHeaders, raw: Buffer, secrets: readonly string[]): ProxyAnswer {
  const declared = headers['content-type'];
  const type = mediaTypeOf(declared);
  if (type !== undefined && runsScript(type)) return scriptRefused();
  let body = raw;
  let contentType = type === undefined ? 'application/octet-stream' : (declared as string);
  if (secrets.length > 0 || isJsonMediaType(type)) {
    const encoding = foreignEncoding(type === undefined ? undefined : contentType, raw.subarray(0, 2));
    if (encoding === null) return badResponse('The service sent text in an encoding the proxy cannot read');
    if (encoding !== undefined) {
      body = transcodeToUtf8(raw, encoding);
      contentType = utf8ContentType(contentType);
    }
  }
  if (isJsonMediaType(type)) {
    const data = parseJson(body);
    if (data !== null && typeof data === 'object') {
      const kept = stripDebug(data);
      if (kept !== data) body = Buffer.from(JSON.stringify(kept));
    }
  }
  const kept = passthroughHeaders(headers);
  return { status, body, contentType, ...(kept && { headers: kept }) };
}

/**
 * The handler of the two launch rows (spec 4.7): `GET <path>` upstream with the accepted `lang` and
 * `device`, answered without the debug fields ({@link cleanAnswer}, spec 1.6).
 * @param path the upstream path, `/core-sportbook/launch` or `/core-sportbook/anonymous-launch`
 */
function launch(path: string): (ctx: RouteContext<unknown, Static<typeof LaunchQuery>>) => Promise<ProxyAnswer> {
  return async (ctx) =>
    cleanAnswer(await ctx.call('bff', { method: 'GET', path, query: { lang: ctx.query.lang, device: ctx.query.device } }));
}

/** Hands a passthrough request to the live streams (docs/behaviour.md "Live streams"). */
function serveLive(ctx: RouteContext, kind: 'sse' | 'websocket', target: { path: string; rawQuery: string }): Promise<LiveOutcome> {
  return ctx.deps.streams.serve(kind, {
    request: ctx.request,
    reply: ctx.reply,
    token: ctx.token,
    secrets: ctx.secrets,
    path: target.path,
    rawQuery: target.rawQuery,
    upstreamHeaders: ctx.upstreamHeaders('bff'),
  });
}

/** spec 4.7 Sports, in the specification's order. */
export const sportsRoutes: readonly RouteSpec[] = routeTable('Sports', [
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
    sideEffects: true,
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
    sideEffects: true,
    upstream: [bff('GET', '/sportsbook-partner-b/token')],
    handler: forward(),
  }),
  route({
    method: 'GET',
    url: '/api/core-sportbook/*',
    spec: '4.7',
    summary:
      'transparent raw proxy of a sub-path: raw query and answer body passed through under the rules of docs/behaviour.md "The raw passthrough"; the sub-path is checked on the raw URL and can never leave /core-sportbook/; a sub-path a named route serves answers 404 naming it',
    auth: 'none',
    rawPassthrough: true,
    upstream: [bff('GET', '/core-sportbook/{subPath}')],
    handler: async (ctx) => {
      const target = rawSubPath(ctx.request.raw.url ?? '', CORE_SPORTBOOK.route, CORE_SPORTBOOK.upstream);
      const named = namedRouteOf(target.path);
      if (named !== undefined) return fail(404, 'not_found', `This sub-path is served by ${named}`, { route: named });
      // Live streams (docs/behaviour.md "Live streams"): an event stream or a WebSocket asked for.
      const live = liveKind(ctx.request.headers);
      if (live !== undefined) {
        const outcome = await serveLive(ctx, live, target);
        if (outcome !== 'not_live') return outcome === 'sent' ? undefined : outcome;
      }
      const req = { method: 'GET', path: target.path, rawQuery: target.rawQuery, client: clientOf(ctx) } as const;
      const up = await ctx.stream('bff', req);
      const ok = up.status >= 200 && up.status < 300;
      if (live === undefined && ok && up.status !== 204 && isEventStream(up.headers['content-type'])) {
        // An event stream the request did not ask for (with or without a session): served as one, over
        // the live streams' own connection, event by event and scrubbed (docs/behaviour.md "Live streams").
        up.body.destroy();
        const outcome = await serveLive(ctx, 'sse', target);
        if (outcome === 'not_live') return badResponse('The service stopped answering this sub-path with an event stream');
        return outcome === 'sent' ? undefined : outcome;
      }
      if (ctx.token) {
        // With a session the answer is buffered, so that the JWT can never reach the body (docs/behaviour.md "Session cookie").
        if (!ok) return upstreamFailureAnswer({ status: up.status, headers: up.headers, body: await drain(up.body) }, { jsonOnly: true });
        if (up.status === 204) {
          up.body.destroy();
          return { status: 204, body: null };
        }
        // At most UPSTREAM_MAX_RESPONSE_BYTES: a declared length over it is refused before, a body over it breaks the stream.
        return passthroughBody(up.status, up.headers, await drain(up.body, Number.POSITIVE_INFINITY), ctx.secrets);
      }
      const type = mediaTypeOf(up.headers['content-type']);
      if (up.status >= 200 && up.status < 300 && up.status !== 204 && !isJsonMediaType(type)) {
        if (type !== undefined && runsScript(type)) {
          up.body.destroy();
          return scriptRefused();
        }
        // A session cookie the gate refused is no session, but its value is still redacted as the body
        // flows, after transcoding to UTF-8 (docs/behaviour.md "Session cookie").
        const encoding =
          ctx.secrets.length > 0
            ? foreignEncoding(type === undefined ? undefined : (up.headers['content-type'] as string), undefined)
            : undefined;
        if (encoding === null) {
          up.body.destroy();
          return badResponse('The service sent text in an encoding the proxy cannot read');
        }
        ctx.reply.code(up.status);
        const declared = type === undefined ? 'application/octet-stream' : (up.headers['content-type'] as string);
        ctx.reply.type(ctx.secrets.length > 0 && encoding !== undefined ? utf8ContentType(declared) : declared);
        const headers = passthroughHeaders(up.headers);
        if (headers) ctx.reply.headers(headers);
        sendRedactedStream(ctx.reply, up.body, ctx.secrets, { transcode: true, encoding });
        return undefined;
      }
      if (up.status >= 200 && up.status < 300 && up.status !== 204) {
        // JSON is read whole, to lose its internal keys (at most UPSTREAM_MAX_RESPONSE_BYTES, as the stream stops there).
        const body = await drain(up.body, Number.POSITIVE_INFINITY);
        return passthroughBody(up.status, up.headers, body, ctx.secrets);
      }
      const body = await drain(up.body);
      if (up.status === 204) return { status: 204, body: null };
      return upstreamFailureAnswer({ status: up.status, headers: up.headers, body }, { jsonOnly: true });
    },
  }),
]);
