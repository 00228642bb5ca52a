/**
 * spec 4.8 Rewards: the user's rewards, paginated, and redemption.
 *
 * @module
 */
import { DEFAULT_REWARDS_PER_PAGE, optionalBody, RedeemBody, RewardsListBody } from '../contracts/account.js';
import { bff, forward, route, type RouteSpec, routeTable } from './route.js';

/** spec 4.8 Rewards, in the specification's order. */
export const rewardsRoutes: readonly RouteSpec[] = routeTable('Rewards', [
  route({
    method: 'POST',
    url: '/api/rewards/list',
    spec: '4.8',
    summary: `paginated user rewards: body page (1…10000, default 1), per_page (1…100, default ${DEFAULT_REWARDS_PER_PAGE}), type`,
    auth: 'required',
    body: optionalBody(RewardsListBody),
    upstream: [bff('GET', '/bff/gamification/rewards')],
    evictsProfile: false,
    handler: forward({
      query: (ctx) => ({
        page: ctx.body?.page ?? 1,
        per_page: ctx.body?.per_page ?? DEFAULT_REWARDS_PER_PAGE,
        type: ctx.body?.type,
      }),
    }),
  }),
  route({
    method: 'POST',
    url: '/api/rewards/redeem',
    spec: '4.8',
    summary: 'redeem a reward (`reward_id`)',
    auth: 'required',
    body: RedeemBody,
    upstream: [bff('POST', '/bff/gamification/redeem')],
    handler: forward(),
  }),
]);
