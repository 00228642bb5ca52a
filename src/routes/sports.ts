/**
 * spec 4.7 Sports: the sportsbook routes, rows in the specification's order. The raw passthrough checks
 * its path with `rawSubPath` (`upstream/paths.ts`); launch answers lose their debug data through
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
 * The raw passthrough streams the answer body as it comes (decoded, with the headers of
 * {@link PASSTHROUGH_HEADERS}) when the request has no session; with a session (which it forwards) it
 * buffers the answer, at most `UPSTREAM_MAX_RESPONSE_BYTES`, so that the JWT is removed from the body
 * should the upstream echo it. A 2xx body passes through (it is the one route whose 2xx need not be
 * JSON); failures use the envelope (401 and 403 byte for byte, spec 7.4). A declared length over the
 * limit answers 502 `upstream_response_too_large` before anything is sent; a stream that breaks or runs
 * over the limit once its headers are sent ends the client's connection without the final chunk
 * (docs/behaviour.md "Upstream answers").
 *
 * @module
 */
import { type Static, Type } from '@sinclair/typebox';
import { cleanAnswer, type ProxyAnswer, upstreamFailureAnswer } from '../envelope.js';
import { sendRedactedStream } from '../session/redact.js';
import { isEventStream } from '../streams/sse.js';
import { liveKind, type LiveOutcome } from '../streams/index.js';
import { rawSubPath, SPORTS_SEARCH_PATH } from '../upstream/paths.js';
import { bff, forward, type RouteContext, type RouteSpec, route } from './route.js';

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
 * The handler of the two launch rows (spec 4.7): `GET <path>` upstream with the accepted `lang` and
 * `device`, answered without the debug fields ({@link cleanAnswer}, spec 1.6).
 * @param path the upstream path, `/core-sportbook/launch` or `/core-sportbook/anonymous-launch`
 */
function launch(path: string): (ctx: RouteContext<unknown, Static<typeof LaunchQuery>>) => Promise<ProxyAnswer> {
  return async (ctx) => cleanAnswer(await ctx.call('bff', { method: 'GET', path, query: { lang: ctx.query.lang, device: ctx.query.device } }));
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
      'transparent raw proxy of a sub-path: raw query and answer body passed through; the sub-path is checked on the raw URL and can never leave /core-sportbook/',
    auth: 'none',
    upstream: [bff('GET', '/core-sportbook/{subPath}')],
    handler: async (ctx) => {
      const target = rawSubPath(ctx.request.raw.url ?? '', CORE_SPORTBOOK.route, CORE_SPORTBOOK.upstream);
      // Live streams (docs/behaviour.md "Live streams"): an event stream or a WebSocket asked for.
      const live = liveKind(ctx.request.headers);
      if (live !== undefined) {
        const outcome = await serveLive(ctx, live, target);
        if (outcome !== 'not_live') return outcome === 'sent' ? undefined : outcome;
      }
      const req = { method: 'GET', path: target.path, rawQuery: target.rawQuery } as const;
      if (ctx.token) {
        // With a session the answer is buffered, so that the JWT can never reach the body (docs/behaviour.md "Session cookie").
        const res = await ctx.call('bff', req);
        if (res.status < 200 || res.status >= 300) return upstreamFailureAnswer(res);
        if (res.status === 204) return { status: 204, body: null };
        const type = res.headers['content-type'];
        const headers = passthroughHeaders(res.headers);
        return {
          status: res.status,
          body: res.body,
          contentType: typeof type === 'string' ? type : 'application/octet-stream',
          ...(headers && { headers }),
        };
      }
      const up = await ctx.stream('bff', req);
      if (live === undefined && up.status >= 200 && up.status < 300 && isEventStream(up.headers['content-type'])) {
        // An event stream the request did not ask for: served as one, over the live streams' own connection.
        up.body.destroy();
        const outcome = await serveLive(ctx, 'sse', target);
        if (outcome !== 'not_live') return outcome === 'sent' ? undefined : outcome;
      }
      if (up.status >= 200 && up.status < 300 && up.status !== 204) {
        const type = up.headers['content-type'];
        ctx.reply.code(up.status);
        if (typeof type === 'string') ctx.reply.type(type);
        const headers = passthroughHeaders(up.headers);
        if (headers) ctx.reply.headers(headers);
        // A session cookie the gate refused is no session, but its value is still redacted as the body flows.
        sendRedactedStream(ctx.reply, up.body, ctx.secrets);
        return undefined;
      }
      const body = await drain(up.body);
      if (up.status === 204) return { status: 204, body: null };
      return upstreamFailureAnswer({ status: up.status, headers: up.headers, body });
    },
  }),
];
