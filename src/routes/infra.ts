/**
 * spec 4.10 Infrastructure: build id, the legacy browser cache clear, and the cache purge. Rows in
 * the specification's order.
 *
 * `POST /api/cache/purge` needs the operator credential (`Authorization: Bearer <CACHE_PURGE_TOKEN>`,
 * checked by the gate; 503 `not_configured` without the variable). It empties every cache of the
 * proxy registered in `deps.caches` (profile, catalogue, catalogue index, sticker handshakes…), then
 * calls `POST {cache_purge_url}` with the operator's optional JSON object as given (`paths` and `tags`
 * checked, any other field forwarded unchecked: {@link PurgeBody}; no session, no cookie). A body that
 * is not a JSON object, or whose `paths` or `tags` is malformed, is a 400: nothing is purged.
 * It answers `{ ok: true, cleared: { <cache>: <entries before> }, upstream: "purged" }`; when the
 * purge endpoint fails or is not configured, the local caches are still emptied and the answer is
 * the envelope of that failure with `cleared` added (503 `not_configured`, 502 `purge_rejected`…).
 *
 * @module
 */
import { Value } from '@sinclair/typebox/value';
import { PURGE_BODY_LIMIT, PurgeBody } from '../contracts/answers.js';
import { envelope } from '../envelope.js';
import { UpstreamError } from '../upstream/errors.js';
import { external, fail, ok, route, type RouteSpec, routeTable } from './route.js';

/** spec 4.10 Infrastructure, in the specification's order. */
export const infraRoutes: readonly RouteSpec[] = routeTable('Infrastructure', [
  route({
    method: 'GET',
    url: '/api/version',
    spec: '4.10, 9.3',
    summary: 'build id for cache busting: `{ buildId }` (BUILD_ID, default the package version)',
    auth: 'none',
    upstream: [],
    handler: async (ctx) => ok({ buildId: ctx.deps.config.buildId }),
  }),
  route({
    method: 'GET',
    url: '/api/clear-cache',
    spec: '4.10, 9.5',
    summary: 'legacy: asks the browser to clear its cache (`Clear-Site-Data: "cache"`); answers { ok: true }',
    auth: 'none',
    upstream: [],
    handler: async (ctx) => {
      ctx.reply.header('clear-site-data', '"cache"');
      return ok({ ok: true });
    },
  }),
  route({
    method: 'POST',
    url: '/api/cache/purge',
    spec: '4.10',
    summary:
      "empty the proxy's caches on every instance (the purge generation moves; 503 `purge_unavailable` when the shared state cannot be reached) and the worker cache, to which the operator's JSON body goes as given (`paths` and `tags` checked); operator credential (CACHE_PURGE_TOKEN) required",
    auth: 'operator',
    evictsProfile: false,
    bodyLimit: PURGE_BODY_LIMIT,
    // The body is optional and checked by the handler (PurgeBody); the OpenAPI document shows it.
    upstream: [external('cachePurge', 'POST', '')],
    handler: async (ctx) => {
      const body = ctx.body ?? {};
      if (!Value.Check(PurgeBody, body)) {
        const first = [...Value.Errors(PurgeBody, body)][0];
        const field = first?.path ? `body${first.path.replace(/\//g, '.')}` : 'body';
        const problem = first?.path ? first.message.toLowerCase() : 'must be a JSON object';
        return fail(400, 'invalid_request', `${field} ${problem}`);
      }
      const { cleared, generation } = await ctx.deps.state.fleet.purge();
      if (generation === undefined) {
        ctx.request.log.warn({ cleared }, 'proxy caches purged here only: the shared state cannot be reached');
        return fail(503, 'purge_unavailable', 'The caches of the other instances could not be purged: the shared state cannot be reached', {
          cleared,
        });
      }
      ctx.request.log.info({ cleared, generation }, 'proxy caches purged on every instance');
      try {
        const res = await ctx.call('cachePurge', { method: 'POST', path: '', json: body }, { bearer: null });
        if (res.status >= 200 && res.status < 300) return ok({ ok: true, cleared, upstream: 'purged' });
        ctx.request.log.warn({ status: res.status }, 'worker cache purge refused');
        return {
          status: 502,
          body: envelope('purge_rejected', `The cache purge endpoint answered ${res.status}`, { cleared }),
        };
      } catch (error) {
        if (error instanceof UpstreamError) {
          // A refusal of the endpoint's guard (503 upstream_busy, upstream_circuit_open) says when to try again, as on every route.
          const headers = error.retryAfterSeconds === undefined ? undefined : { 'retry-after': String(error.retryAfterSeconds) };
          return { status: error.status, body: envelope(error.code, error.detail, { cleared }), ...(headers ? { headers } : {}) };
        }
        throw error;
      }
    },
  }),
]);
