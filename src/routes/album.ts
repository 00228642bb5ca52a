/**
 * spec 4.9 Sticker album (separate API, `{sticker_api_url}`): the route table, rows in the
 * specification's order, and the handshake (spec 5.6).
 *
 * Every row needs a session. Before its sticker call a row performs the handshake
 * `POST /auth/token` on the sticker API with the user's session (`Authorization: Bearer <jwt>` and
 * the incoming `Cookie`); the call itself then carries the handshake token as its Bearer.
 *
 * Handshake tokens are kept per session (`session/sticker-handshakes.ts`): concurrent requests of one
 * session share one handshake. When a call made with a
 * remembered token answers 401, the token is forgotten and the call is made once more after a new
 * handshake.
 *
 * Inputs:
 *
 * | route | input |
 * |---|---|
 * | `POST /api/album/checkin` | query `claimType`: `daily` or `completion` |
 * | `POST /api/album/claim-featured` | `featuredId` in the JSON body or the query |
 * | `POST /api/album/open-pack` | optional body `{ packId }` |
 * | `POST /api/album/mission-type` | `missionType` (`casino` or `sportsbook`) in the JSON body or the query |
 *
 * @module
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { envelope, type ProxyAnswer, parseJson, upstreamAnswer, upstreamFailureAnswer } from '../envelope.js';
import { UpstreamAnswerError } from '../session/profile-cache.js';
import { handshakesOf } from '../session/sticker-handshakes.js';
import type { UpstreamRequest, UpstreamResponse } from '../upstream/client.js';
import { buildPath } from '../upstream/paths.js';
import { external, fail, ok, route, type RouteContext, type RouteSpec, routeTable } from './route.js';

/** The bootstrap targets (spec 4.9 row `bootstrap`), by the answer key that carries each. */
export const BOOTSTRAP_TARGETS = {
  campaign: '/campaigns/current',
  progress: '/users/me/progress',
  stickers: '/users/me/stickers',
  checkin: '/users/me/checkin',
} as const;

/**
 * One sticker API call for the request's user: handshake (remembered or new), then the call with the
 * handshake token; a 401 with a remembered token is retried once after a new handshake.
 *
 * @throws UpstreamAnswerError when the handshake was refused; UpstreamError on transport failures.
 */
export async function stickerCall(ctx: RouteContext, req: UpstreamRequest): Promise<UpstreamResponse> {
  const cache = handshakesOf(ctx.deps.caches);
  const first = await cache.get(ctx);
  const res = await ctx.call('sticker', req, { bearer: first.token });
  if (res.status !== 401 || first.fresh) return res;
  cache.forget(ctx.token as string);
  const again = await cache.get(ctx);
  return ctx.call('sticker', req, { bearer: again.token });
}

/** Runs a sticker flow; a refused handshake answers like any upstream failure (spec 7.4). */
async function withHandshake(run: () => Promise<ProxyAnswer>): Promise<ProxyAnswer> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof UpstreamAnswerError) return upstreamFailureAnswer(error.response);
    throw error;
  }
}

/**
 * Validates an optional JSON body (absent = `{}`) against a schema; a mismatch gives a 400
 * `invalid_request` answer.
 */
function optionalBody<T extends TSchema>(schema: T, body: unknown): { value: Static<T> } | { answer: ProxyAnswer } {
  const value = body ?? {};
  if (Value.Check(schema, value)) return { value: value as Static<T> };
  const first = [...Value.Errors(schema, value)][0];
  const field = first?.path ? `body${first.path.replace(/\//g, '.')}` : 'body';
  return { answer: fail(400, 'invalid_request', `${field} ${first?.message.toLowerCase() ?? 'is invalid'}`) };
}

const FeaturedId = Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })]);
const MissionType = Type.Union([Type.Literal('casino'), Type.Literal('sportsbook')]);
const FeaturedBody = Type.Object({ featuredId: Type.Optional(FeaturedId) });
const MissionBody = Type.Object({ missionType: Type.Optional(MissionType) });
const OpenPackBody = Type.Object({ packId: Type.Optional(FeaturedId) });

/** spec 4.9 Sticker album, in the specification's order. */
export const albumRoutes: readonly RouteSpec[] = routeTable('Sticker album', [
  route({
    method: 'GET',
    url: '/api/album/bootstrap',
    spec: '4.9',
    summary: 'refetch the whole album state: `{ campaign, progress, stickers, checkin }`, the four targets read in parallel',
    auth: 'required',
    upstream: [external('sticker', 'POST', '/auth/token'), ...Object.values(BOOTSTRAP_TARGETS).map((p) => external('sticker', 'GET', p))],
    handler: (ctx) =>
      withHandshake(async () => {
        await handshakesOf(ctx.deps.caches).get(ctx); // one handshake shared by the four calls
        const keys = Object.keys(BOOTSTRAP_TARGETS) as (keyof typeof BOOTSTRAP_TARGETS)[];
        const answers = await Promise.all(keys.map((k) => stickerCall(ctx, { method: 'GET', path: BOOTSTRAP_TARGETS[k] })));
        const failure = answers.find((r) => r.status === 401 || r.status === 403) ?? answers.find((r) => r.status < 200 || r.status >= 300);
        if (failure) return upstreamFailureAnswer(failure);
        const out: Record<string, unknown> = {};
        for (const [i, key] of keys.entries()) {
          const data = parseJson((answers[i] as UpstreamResponse).body);
          if (data === undefined) return { status: 502, body: envelope('upstream_bad_response', 'The service sent an invalid answer') };
          out[key] = data;
        }
        return ok(out);
      }),
  }),
  route({
    method: 'POST',
    url: '/api/album/checkin',
    spec: '4.9',
    summary: 'claim the check-in, query `claimType`: `daily` or `completion`',
    auth: 'required',
    evictsProfile: false,
    querystring: Type.Object({ claimType: Type.Union([Type.Literal('daily'), Type.Literal('completion')]) }),
    upstream: [external('sticker', 'POST', '/auth/token'), external('sticker', 'POST', '/users/me/checkin/claim')],
    handler: (ctx) =>
      withHandshake(async () =>
        upstreamAnswer(
          await stickerCall(ctx, { method: 'POST', path: '/users/me/checkin/claim', query: { claimType: ctx.query.claimType } }),
        ),
      ),
  }),
  route({
    method: 'POST',
    url: '/api/album/claim-featured',
    spec: '4.9',
    summary: 'redeem a featured card: `featuredId` in the body or the query',
    auth: 'required',
    evictsProfile: false,
    querystring: Type.Object({ featuredId: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })) }),
    upstream: [external('sticker', 'POST', '/auth/token'), external('sticker', 'POST', '/users/me/featured/{featuredId}/redeem')],
    handler: async (ctx) => {
      const body = optionalBody(FeaturedBody, ctx.body);
      if ('answer' in body) return body.answer;
      const featuredId = body.value.featuredId ?? ctx.query.featuredId;
      if (featuredId === undefined) return fail(400, 'invalid_request', 'featuredId is required');
      const path = buildPath('/users/me/featured/{featuredId}/redeem', { featuredId });
      return withHandshake(async () => upstreamAnswer(await stickerCall(ctx, { method: 'POST', path })));
    },
  }),
  route({
    method: 'POST',
    url: '/api/album/open-pack',
    spec: '4.9',
    summary: 'open one pack (optional body `{ packId }`)',
    auth: 'required',
    evictsProfile: false,
    upstream: [external('sticker', 'POST', '/auth/token'), external('sticker', 'POST', '/users/me/packs/open')],
    handler: async (ctx) => {
      const body = optionalBody(OpenPackBody, ctx.body);
      if ('answer' in body) return body.answer;
      const json = body.value.packId === undefined ? {} : { packId: body.value.packId };
      return withHandshake(async () => upstreamAnswer(await stickerCall(ctx, { method: 'POST', path: '/users/me/packs/open', json })));
    },
  }),
  route({
    method: 'POST',
    url: '/api/album/open-all-packs',
    spec: '4.9',
    summary: 'open every pack',
    auth: 'required',
    evictsProfile: false,
    upstream: [external('sticker', 'POST', '/auth/token'), external('sticker', 'POST', '/users/me/packs/open-all')],
    handler: (ctx) =>
      withHandshake(async () => upstreamAnswer(await stickerCall(ctx, { method: 'POST', path: '/users/me/packs/open-all', json: {} }))),
  }),
  route({
    method: 'POST',
    url: '/api/album/mission-type',
    spec: '4.9',
    summary: 'select the mission type, `casino` or `sportsbook` (`missionType` in the body or the query)',
    auth: 'required',
    evictsProfile: false,
    querystring: Type.Object({ missionType: Type.Optional(MissionType) }),
    upstream: [external('sticker', 'POST', '/auth/token'), external('sticker', 'GET', '/campaigns/current')],
    handler: async (ctx) => {
      const body = optionalBody(MissionBody, ctx.body);
      if ('answer' in body) return body.answer;
      const missionType = body.value.missionType ?? ctx.query.missionType;
      if (missionType === undefined) return fail(400, 'invalid_request', 'missionType is required (casino or sportsbook)');
      return withHandshake(async () =>
        upstreamAnswer(await stickerCall(ctx, { method: 'GET', path: '/campaigns/current', query: { missionType } })),
      );
    },
  }),
]);
