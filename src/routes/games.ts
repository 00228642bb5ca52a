/**
 * spec 4.6 Games, favourites, search: the route table, rows in the specification's order.
 *
 * Catalogue reads (`list`, `search`, `category/{slug}`, `provider/{slug}`, `top-wins`,
 * `statistics-dl`, the casino half of `/api/search/unified`, the detail fallback of `by-slugs`) go
 * through the catalogue cache (`src/catalogue`), fetched anonymously; `by-slugs` reads the assembled
 * game index, `stats-batch` reads cached statistics only. With `CATALOGUE_FOR_SESSIONS=shared` (the
 * default) a request with a session is answered like one without: from the cache, with `Cache-Control:
 * public, max-age=30`, no session sent upstream (the sportsbook half of the unified search included)
 * and no session data in the answer. With `forward` a request with a session is forwarded with it and
 * never cached (`no-store`), and the cached answers say `Vary: Cookie` too.
 *
 * HTTP caching of the cached answers (`list`, `search`, `category/{slug}`, `provider/{slug}`,
 * `top-wins`, `statistics-dl`; `src/catalogue/representation.ts`): a 200 from the cache is sent from
 * the bytes its fill prepared, with a strong `ETag`, `Content-Encoding: br` or `gzip` as
 * `Accept-Encoding` asks (bodies of 1 KiB and more) and `Vary: Accept-Encoding`; a `GET` whose
 * `If-None-Match` names any of its variants' tags answers `304` without a body. Answers forwarded with
 * a session are never compressed nor tagged.
 *
 * Query and body parameters (spec 4.12 leaves them open; the list set is documented in
 * `src/catalogue/query.ts`; anything not listed is dropped):
 *
 * | route | input |
 * |---|---|
 * | `GET /api/games/list` | `categories[]`, `category`, `providers[]`, `provider`, `search`, `page`, `per_page` |
 * | `POST /api/games/search` | the same in a JSON body (`categories`, `providers` as arrays or strings) |
 * | `GET /api/games/category/{slug}`, `provider/{slug}` | `search`, `page`, `per_page` |
 * | `GET /api/games/by-slugs` | `slugs`: comma-separated, at most {@link MAX_SLUGS} |
 * | `GET /api/games/start` | `slug` or `gameId` (one required), `mode` (`real`, `demo`), `device` (`desktop`, `mobile`), `language`; never `debug` |
 * | `GET /api/games/statistics-dl` | `slug` (required) |
 * | `POST /api/games/stats-batch` | `{ slugs: string[] }`, 1-{@link MAX_SLUGS} |
 * | `GET /api/games/vote` | `casinoGameId` (digits) |
 * | `POST /api/games/vote` | `{ casinoGameId, vote: "up" \| "down" }` |
 * | `DELETE /api/games/vote` | `gameId` (query) |
 * | `PUT /api/favorites` | `{ casinoGameId }` or `{ slug }` |
 * | `POST /api/search/unified` | `{ search, page?, per_page? }` |
 *
 * @module
 */
import { Type } from '@sinclair/typebox';
import type { Game } from '../catalogue/assemble.js';
import { catalogueOf, type CatalogueRead, STATISTICS_PATH } from '../catalogue/catalogue.js';
import { CATALOGUE_CACHE_CONTROL } from '../catalogue/representation.js';
import {
  ListBody,
  ListQuerystring,
  listInputFromBody,
  listInputFromQuery,
  listQuery,
  PageParam,
  PerPageParam,
  SearchParam,
  Slug,
  SLUG_PATTERN,
} from '../catalogue/query.js';
import { cleanAnswer, type ProxyAnswer, parseJson, upstreamAnswer, upstreamFailureAnswer } from '../envelope.js';
import type { UpstreamResponse } from '../upstream/client.js';
import { type QueryValue, SPORTS_SEARCH_PATH } from '../upstream/paths.js';
import { sendRepresentation } from './context.js';
import { bff, fail, forward, ok, route, type RouteContext, type RouteSpec, routeTable } from './route.js';

export { CATALOGUE_CACHE_CONTROL };

/** Upstream of the catalogue list (spec 4.6; the trailing slash is the specification's). */
export const LIST_PATH = '/casino-games/list/';
/** Upstream of one game's detail (the `by-slugs` fallback). */
export const DETAIL_PATH = '/casino-games';
/** Most slugs in one `by-slugs` or `stats-batch` request. */
export const MAX_SLUGS = 100;
/** Detail fallbacks of one `by-slugs` request run at most this many at a time. */
const FALLBACK_CONCURRENCY = 8;
/**
 * Headers of the cacheable catalogue answers (not forwarded with a session), by `CATALOGUE_FOR_SESSIONS`:
 * `Cache-Control` (the proxy's own cache keeps them `CATALOGUE_CACHE_TTL_MS`) and `Vary`: always
 * `Accept-Encoding` (the coding is negotiated), plus `Cookie` with `forward`, where a session changes
 * the answer.
 */
const CACHEABLE_HEADERS = {
  shared: Object.freeze({ 'cache-control': CATALOGUE_CACHE_CONTROL, vary: 'Accept-Encoding' }),
  forward: Object.freeze({ 'cache-control': CATALOGUE_CACHE_CONTROL, vary: 'Cookie, Accept-Encoding' }),
} as const;

const SLUG = new RegExp(SLUG_PATTERN);
const Id = Type.String({ pattern: '^[0-9]{1,18}$' });
const IdValue = Type.Union([Type.Integer({ minimum: 1 }), Id]);
const GameId = Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' });
const PageQuery = Type.Object({
  search: Type.Optional(SearchParam),
  page: Type.Optional(PageParam),
  per_page: Type.Optional(PerPageParam),
});
const SlugParams = Type.Object({ slug: Slug });

/**
 * The answer of a catalogue read. A 200 from the shared cache is sent at once from its prepared
 * representations ({@link sendRepresentation}: `ETag`, `304`, `br` / `gzip`), and `undefined` is
 * returned; any other success not forwarded with a session is answered through the envelope with the
 * same `Cache-Control` and `Vary`; a read forwarded with a session, or a failure, as before (`no-store`).
 */
function catalogueAnswer(ctx: RouteContext, read: CatalogueRead): ProxyAnswer | undefined {
  const status = read.response.status;
  if (status < 200 || status >= 300 || read.outcome === 'session') return upstreamAnswer(read.response);
  const headers = CACHEABLE_HEADERS[ctx.deps.config.catalogueForSessions];
  if (read.representation && sendRepresentation(ctx.reply, status, read.representation, headers, ctx)) return undefined;
  const answer = upstreamAnswer(read.response);
  if (answer.status >= 200 && answer.status < 300) ctx.reply.headers(headers);
  return answer;
}

async function readList(ctx: RouteContext, query: Record<string, QueryValue>): Promise<ProxyAnswer | undefined> {
  return catalogueAnswer(ctx, await catalogueOf(ctx.deps).read(ctx, LIST_PATH, query));
}

function parseSlugs(value: string): string[] | ProxyAnswer {
  const slugs = [
    ...new Set(
      value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    ),
  ];
  if (slugs.length === 0) return fail(400, 'invalid_request', 'slugs must name at least one game');
  if (slugs.length > MAX_SLUGS) return fail(400, 'invalid_request', `slugs may name at most ${MAX_SLUGS} games`);
  const bad = slugs.find((s) => !SLUG.test(s));
  if (bad !== undefined) return fail(400, 'invalid_request', 'slugs contains a value that is not a slug');
  return slugs;
}

/** The game in a detail answer: `data` when it is the game, the answer itself, or the first listed game with that slug. */
function gameOfDetail(data: unknown, slug: string): Game | undefined {
  const candidates: unknown[] = [];
  if (data && typeof data === 'object') {
    const record = data as Record<string, unknown>;
    candidates.push(record.data, record.game, record);
    for (const key of ['data', 'games', 'items']) if (Array.isArray(record[key])) candidates.push(...(record[key] as unknown[]));
    if (Array.isArray(data)) candidates.push(...data);
  }
  for (const c of candidates) {
    if (c && typeof c === 'object' && !Array.isArray(c) && (c as Record<string, unknown>).slug === slug) return c as Game;
  }
  return undefined;
}

async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** `by-slugs`: the index first, then the detail of each miss. */
async function bySlugs(ctx: RouteContext, slugs: readonly string[]): Promise<ProxyAnswer> {
  const catalogue = catalogueOf(ctx.deps);
  let index: ReadonlyMap<string, Game> | undefined;
  try {
    index = (await catalogue.gameIndex(ctx))?.games;
  } catch (error) {
    ctx.request.log.warn({ err: error }, 'catalogue index unavailable; resolving slugs one by one');
  }
  const found = new Map<string, Game>();
  const misses: string[] = [];
  for (const slug of slugs) {
    const game = index?.get(slug);
    if (game) found.set(slug, game);
    else misses.push(slug);
  }
  let refusal: UpstreamResponse | undefined;
  await mapLimited(misses, FALLBACK_CONCURRENCY, async (slug) => {
    try {
      const { response } = await catalogue.read(ctx, DETAIL_PATH, { slug });
      if (response.status === 401 || response.status === 403) refusal ??= response;
      if (response.status < 200 || response.status >= 300) return;
      const game = gameOfDetail(parseJson(response.body), slug);
      if (game) found.set(slug, game);
    } catch (error) {
      ctx.request.log.warn({ err: error, slug }, 'game detail fallback failed');
    }
  });
  if (refusal) return upstreamFailureAnswer(refusal);
  const data = slugs.flatMap((s) => (found.has(s) ? [found.get(s) as Game] : []));
  const missing = slugs.filter((s) => !found.has(s));
  return ok({ data, missing });
}

function jsonOf(res: UpstreamResponse): unknown {
  return res.body.length === 0 ? null : (parseJson(res.body) ?? null);
}

/** `/api/search/unified`: casino list and sportsbook search in parallel; one side failing leaves the other. */
async function unifiedSearch(ctx: RouteContext, body: { search: string; page?: unknown; per_page?: unknown }): Promise<ProxyAnswer> {
  const term = body.search.trim().replace(/\s+/g, ' ');
  if (term.length === 0) return fail(400, 'invalid_request', 'body.search must not be blank');
  const casinoQuery = listQuery({
    search: term,
    page: body.page as string | number | undefined,
    per_page: body.per_page as string | number | undefined,
  });
  const catalogue = catalogueOf(ctx.deps);
  const sportsQuery = { search: term };
  const [casino, sports] = await Promise.allSettled([
    catalogue.read(ctx, LIST_PATH, casinoQuery),
    catalogue.forwardsSession(ctx)
      ? ctx.call('bff', { method: 'GET', path: SPORTS_SEARCH_PATH, query: sportsQuery })
      : catalogue.anonymousGet(ctx, SPORTS_SEARCH_PATH, sportsQuery),
  ]);
  const casinoRes = casino.status === 'fulfilled' ? casino.value.response : undefined;
  const sportsRes = sports.status === 'fulfilled' ? sports.value : undefined;
  const good = (res: UpstreamResponse | undefined): res is UpstreamResponse => res !== undefined && res.status >= 200 && res.status < 300;
  const failed: ('casino' | 'sports')[] = [];
  if (!good(casinoRes)) failed.push('casino');
  if (!good(sportsRes)) failed.push('sports');
  if (failed.length === 2) {
    if (casinoRes) return upstreamFailureAnswer(casinoRes);
    if (casino.status === 'rejected') throw casino.reason;
  }
  if (failed.length > 0) {
    const err = casino.status === 'rejected' ? casino.reason : sports.status === 'rejected' ? sports.reason : undefined;
    ctx.request.log.warn({ failed, casino: casinoRes?.status, sports: sportsRes?.status, err }, 'unified search side failed');
  }
  return ok({
    casino: good(casinoRes) ? jsonOf(casinoRes) : null,
    sports: good(sportsRes) ? jsonOf(sportsRes) : null,
    failed,
  });
}

/** spec 4.6 Games, favourites, search, in the specification's order. */
export const gamesRoutes: readonly RouteSpec[] = routeTable('Games', [
  route({
    method: 'GET',
    url: '/api/games/list',
    spec: '4.6',
    summary: 'paginated catalogue (category, provider, search); cacheable: answered from the shared catalogue cache',
    auth: 'none',
    querystring: ListQuerystring,
    upstream: [bff('GET', LIST_PATH)],
    handler: (ctx) => readList(ctx, listQuery(listInputFromQuery(ctx.query as Record<string, unknown>))),
  }),
  route({
    method: 'POST',
    url: '/api/games/search',
    spec: '4.6',
    summary: 'legacy search: the list parameters in a JSON body, delegated to the list',
    auth: 'none',
    body: ListBody,
    evictsProfile: false,
    upstream: [bff('GET', LIST_PATH)],
    handler: (ctx) => readList(ctx, listQuery(listInputFromBody(ctx.body as Record<string, unknown>))),
  }),
  route({
    method: 'GET',
    url: '/api/games/category/:slug',
    spec: '4.6',
    summary: 'games of one category (infinite scroll, cache first); query `search`, `page`, `per_page`',
    auth: 'none',
    params: SlugParams,
    querystring: PageQuery,
    upstream: [bff('GET', LIST_PATH)],
    handler: (ctx) => readList(ctx, listQuery({ ...ctx.query, categories: [ctx.params.slug] })),
  }),
  route({
    method: 'GET',
    url: '/api/games/provider/:slug',
    spec: '4.6',
    summary: 'games of one provider (cache first); query `search`, `page`, `per_page`',
    auth: 'none',
    params: SlugParams,
    querystring: PageQuery,
    upstream: [bff('GET', LIST_PATH)],
    handler: (ctx) => readList(ctx, listQuery({ ...ctx.query, providers: [ctx.params.slug] })),
  }),
  route({
    method: 'GET',
    url: '/api/games/by-slugs',
    spec: '4.6',
    summary:
      'resolve many games by slug (`slugs`, comma-separated, at most 100) from the catalogue index, falling back to the detail; answers `{ data, missing }` in the order asked',
    auth: 'none',
    querystring: Type.Object({ slugs: Type.String({ minLength: 1, maxLength: 13_000 }) }),
    upstream: [
      bff('GET', '/casino-games/home'),
      bff('GET', '/casino-games/page/{page}'),
      bff('GET', '/casino-games/list/base'),
      bff('GET', '/bff/games/last-wins'),
      bff('GET', '/bff/games/game-high-payers-dl'),
      bff('GET', DETAIL_PATH),
    ],
    handler: async (ctx) => {
      const slugs = parseSlugs(ctx.query.slugs);
      return Array.isArray(slugs) ? bySlugs(ctx, slugs) : slugs;
    },
  }),
  route({
    method: 'GET',
    url: '/api/games/start',
    spec: '4.6',
    summary: 'start an authenticated game session: `slug` or `gameId`, `mode`, `device`, `language`; the answer never carries debug data',
    auth: 'required',
    sideEffects: true,
    querystring: Type.Object({
      slug: Type.Optional(Slug),
      gameId: Type.Optional(GameId),
      mode: Type.Optional(Type.Union([Type.Literal('real'), Type.Literal('demo')])),
      device: Type.Optional(Type.Union([Type.Literal('desktop'), Type.Literal('mobile')])),
      language: Type.Optional(Type.String({ pattern: '^[a-z]{2}(-[A-Za-z]{2})?$' })),
    }),
    upstream: [bff('GET', '/start-game-v2')],
    handler: async (ctx) => {
      const { slug, gameId, mode, device, language } = ctx.query;
      if (slug === undefined && gameId === undefined) return fail(400, 'invalid_request', 'slug or gameId is required');
      const res = await ctx.call('bff', { method: 'GET', path: '/start-game-v2', query: { slug, gameId, mode, device, language } });
      return cleanAnswer(res);
    },
  }),
  route({
    method: 'GET',
    url: '/api/games/top-wins',
    spec: '4.6',
    summary: 'top wins of the day; answered from the shared catalogue cache',
    auth: 'none',
    upstream: [bff('GET', '/bff/games/top-wins-dl')],
    handler: async (ctx) => catalogueAnswer(ctx, await catalogueOf(ctx.deps).read(ctx, '/bff/games/top-wins-dl')),
  }),
  route({
    method: 'GET',
    url: '/api/games/statistics-dl',
    spec: '4.6',
    summary: 'statistics of one game, query `slug`; answered from the shared catalogue cache, whose entries feed `stats-batch`',
    auth: 'none',
    querystring: Type.Object({ slug: Slug }),
    upstream: [bff('GET', STATISTICS_PATH)],
    handler: async (ctx) => catalogueAnswer(ctx, await catalogueOf(ctx.deps).read(ctx, STATISTICS_PATH, { slug: ctx.query.slug })),
  }),
  route({
    method: 'POST',
    url: '/api/games/stats-batch',
    spec: '4.6',
    summary:
      'statistics for many slugs (`{ slugs }`, 1-100) from the cache only, never upstream: `{ data: { <slug>: statistics }, missing }`',
    auth: 'none',
    evictsProfile: false,
    body: Type.Object({ slugs: Type.Array(Slug, { minItems: 1, maxItems: MAX_SLUGS }) }),
    upstream: [],
    handler: async (ctx) => {
      const catalogue = catalogueOf(ctx.deps);
      const data: Record<string, unknown> = {};
      const missing: string[] = [];
      for (const slug of new Set(ctx.body.slugs)) {
        const stats = catalogue.cachedStatistics(slug);
        if (stats === undefined) missing.push(slug);
        else data[slug] = stats;
      }
      return ok({ data, missing });
    },
  }),
  route({
    method: 'GET',
    url: '/api/games/vote',
    spec: '4.6',
    summary: "the user's vote and the counts of one game, query `casinoGameId`",
    auth: 'required',
    querystring: Type.Object({ casinoGameId: Id }),
    upstream: [bff('GET', '/casino-game-votes')],
    handler: forward({ query: ({ query }) => ({ casinoGameId: query.casinoGameId }) }),
  }),
  route({
    method: 'POST',
    url: '/api/games/vote',
    spec: '4.6',
    summary: 'up/down vote on a game: `{ casinoGameId, vote: "up" | "down" }`',
    auth: 'required',
    evictsProfile: false,
    body: Type.Object({ casinoGameId: IdValue, vote: Type.Union([Type.Literal('up'), Type.Literal('down')]) }),
    upstream: [bff('POST', '/casino-game-votes/store/')],
    handler: forward({ body: ({ body }) => ({ casinoGameId: body.casinoGameId, vote: body.vote }) }),
  }),
  route({
    method: 'DELETE',
    url: '/api/games/vote',
    spec: '4.6',
    summary: "remove the user's vote on a game, query `gameId`",
    auth: 'required',
    evictsProfile: false,
    querystring: Type.Object({ gameId: GameId }),
    upstream: [bff('DELETE', '/casino-game-votes/destroy/{gameId}')],
    handler: forward({ pathValues: ({ query }) => ({ gameId: query.gameId }) }),
  }),
  route({
    method: 'GET',
    url: '/api/favorites',
    spec: '4.6',
    summary: "the user's favourite games",
    auth: 'required',
    upstream: [bff('GET', '/bff/favorite-games')],
    handler: forward(),
  }),
  route({
    method: 'PUT',
    url: '/api/favorites',
    spec: '4.6',
    summary: 'toggle a favourite game: `{ casinoGameId }` or `{ slug }`',
    auth: 'required',
    evictsProfile: false,
    body: Type.Object({ casinoGameId: Type.Optional(IdValue), slug: Type.Optional(Slug) }),
    upstream: [bff('PUT', '/bff/favorite-games/toggle')],
    handler: async (ctx) => {
      const { casinoGameId, slug } = ctx.body;
      if (casinoGameId === undefined && slug === undefined) return fail(400, 'invalid_request', 'casinoGameId or slug is required');
      const json = casinoGameId === undefined ? { slug } : { casinoGameId };
      return upstreamAnswer(await ctx.call('bff', { method: 'PUT', path: '/bff/favorite-games/toggle', json }));
    },
  }),
  route({
    method: 'POST',
    url: '/api/search/unified',
    spec: '4.6',
    summary: 'unified casino + sportsbook search in parallel: `{ casino, sports, failed }`; a failed side is null and named in `failed`',
    auth: 'none',
    evictsProfile: false,
    body: Type.Object({
      search: Type.String({ minLength: 1, maxLength: 100 }),
      page: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 99_999 }), PageParam])),
      per_page: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 100 }), PerPageParam])),
    }),
    upstream: [bff('GET', LIST_PATH), bff('GET', SPORTS_SEARCH_PATH)],
    handler: (ctx) => unifiedSearch(ctx, ctx.body),
  }),
]);
