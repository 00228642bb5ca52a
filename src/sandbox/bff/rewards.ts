/**
 * Rewards endpoints of the sandbox BFF (spec 4.8 "Upstream" column). Amounts in cents.
 *
 * | upstream | behaviour |
 * |---|---|
 * | `GET /bff/gamification/rewards?page=&per_page=&type=` | the user's rewards, `{ data, page, per_page, total, last_page }`; `type` filters (`bonus`, `cashback`, `free_spins`, `free_bet`) |
 * | `POST /bff/gamification/redeem` | `{ reward_id }` → the reward, now `redeemed`; a `bonus` reward adds to the bonus balance, a `cashback` reward to the cashback balance. A second redemption is 409 `already_redeemed`; an unknown id 404 `reward_not_found` |
 *
 * @module
 */
import type { SandboxArea } from '../context.js';
import { asRecord, sendError, sendValidationError } from '../http.js';
import { defineUserState } from '../store.js';
import { withUser } from './guard.js';
import { intOf, pageOf, walletOf } from './wallet.js';

interface Reward {
  id: number;
  type: 'bonus' | 'cashback' | 'free_spins' | 'free_bet';
  title: string;
  /** Cents for bonus, cashback and free bets; spins for free spins. */
  amount: number;
  status: 'available' | 'redeemed';
  expires_at: string;
  redeemed_at: string | null;
}

const rewardsState = defineUserState('rewards', (_user, store): { rewards: Reward[] } => {
  const expires = new Date(store.now() + 30 * 86_400_000).toISOString();
  const reward = (id: number, type: Reward['type'], title: string, amount: number): Reward => ({
    id,
    type,
    title,
    amount,
    status: 'available',
    expires_at: expires,
    redeemed_at: null,
  });
  return {
    rewards: [
      reward(1, 'bonus', 'Welcome back bonus', 1_000),
      reward(2, 'free_spins', '20 free spins', 20),
      reward(3, 'cashback', 'Weekend cashback', 500),
      reward(4, 'free_bet', 'Free bet', 2_000),
      reward(5, 'bonus', 'Level-up bonus', 2_500),
    ],
  };
});

/** The rewards area of the BFF. */
export const rewardsArea: SandboxArea = {
  name: 'rewards',
  register(app, ctx) {
    const { store } = ctx;
    app.get(
      '/bff/gamification/rewards',
      withUser(async (request, _reply, user) => {
        const query = asRecord(request.query);
        const type = typeof query.type === 'string' && query.type !== '' ? query.type : undefined;
        const list = store.userState(rewardsState, user).rewards.filter((r) => !type || r.type === type);
        return pageOf(list, intOf(query.page, 1, 10_000), intOf(query.per_page, 20, 100));
      }),
    );
    app.post(
      '/bff/gamification/redeem',
      withUser(async (request, reply, user) => {
        const raw = asRecord(request.body).reward_id;
        const id = typeof raw === 'string' && /^[0-9]+$/.test(raw) ? Number(raw) : raw;
        if (typeof id !== 'number') return sendValidationError(reply, { reward_id: ['The reward_id field is required.'] });
        const reward = store.userState(rewardsState, user).rewards.find((r) => r.id === id);
        if (!reward) return sendError(reply, 404, 'reward_not_found', 'Reward not found.');
        if (reward.status === 'redeemed') return sendError(reply, 409, 'already_redeemed', 'This reward was already redeemed.');
        reward.status = 'redeemed';
        reward.redeemed_at = new Date(store.now()).toISOString();
        const wallet = walletOf(user, store);
        if (reward.type === 'bonus') wallet.bonus_balance += reward.amount;
        if (reward.type === 'cashback') wallet.cashback_balance += reward.amount;
        return { message: 'Reward redeemed', reward };
      }),
    );
  },
};
