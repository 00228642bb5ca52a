/**
 * spec 4.8 KYC: start a verification and poll its status, in the normal or the recovery flow.
 *
 * The flow is chosen by the query flag `recovery=1` (absent or `0`: normal), so that `source`
 * keeps one meaning (where the flow began) in both:
 *
 * | proxy | upstream |
 * |---|---|
 * | `GET /api/kyc/start?source=<s>` | `GET /bff/users/kyc?source=<s>` |
 * | `GET /api/kyc/start?source=<s>&recovery=1` | `GET /bff/users/kyc/recovery?source=<s>` |
 * | `GET /api/kyc/status?kyc_id=<id>` | `GET /bff/users/kyc/status?kyc_id=<id>` |
 * | `GET /api/kyc/status?kyc_id=<id>&recovery=1` | `GET /bff/users/kyc/status/recovery?kyc_id=<id>` |
 *
 * @module
 */
import { KycStartQuery, KycStatusQuery } from '../contracts/account.js';
import { type ProxyAnswer, upstreamAnswer } from '../envelope.js';
import { bff, route, type RouteContext, type RouteSpec, routeTable } from './route.js';

/** Upstream paths by flow. */
export const KYC_PATHS = {
  start: { normal: '/bff/users/kyc', recovery: '/bff/users/kyc/recovery' },
  status: { normal: '/bff/users/kyc/status', recovery: '/bff/users/kyc/status/recovery' },
} as const;

const flow = (recovery: string | undefined) => (recovery === '1' ? 'recovery' : 'normal');

/**
 * The handler of a KYC row (spec 4.8): `GET` the upstream path of the flow that the query's
 * `recovery` flag chooses, with the one query parameter `key` of the row.
 * @param paths the row's upstream paths by flow (a {@link KYC_PATHS} entry)
 * @param key the query parameter forwarded: `source` (start) or `kyc_id` (status)
 */
function byFlow<Q extends { readonly [key: string]: string | undefined; readonly recovery?: string }>(
  paths: { readonly normal: string; readonly recovery: string },
  key: Exclude<keyof Q & string, 'recovery'>,
): (ctx: RouteContext<unknown, Q>) => Promise<ProxyAnswer> {
  return async (ctx) => {
    const path = paths[flow(ctx.query.recovery)];
    return upstreamAnswer(await ctx.call('bff', { method: 'GET', path, query: { [key]: ctx.query[key] } }));
  };
}

/** spec 4.8 KYC, in the specification's order. */
export const kycRoutes: readonly RouteSpec[] = routeTable('KYC', [
  route({
    method: 'GET',
    url: '/api/kyc/start',
    spec: '4.8',
    summary: 'start KYC (normal, or recovery with `recovery=1`), query `source`',
    auth: 'required',
    sideEffects: true,
    querystring: KycStartQuery,
    upstream: [bff('GET', KYC_PATHS.start.normal), bff('GET', KYC_PATHS.start.recovery)],
    handler: byFlow(KYC_PATHS.start, 'source'),
  }),
  route({
    method: 'GET',
    url: '/api/kyc/status',
    spec: '4.8',
    summary: 'poll KYC status, query `kyc_id` (recovery flow with `recovery=1`)',
    auth: 'required',
    querystring: KycStatusQuery,
    upstream: [bff('GET', KYC_PATHS.status.normal), bff('GET', KYC_PATHS.status.recovery)],
    handler: byFlow(KYC_PATHS.status, 'kyc_id'),
  }),
]);
