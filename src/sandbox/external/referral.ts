/**
 * The referral services of the sandbox (spec 4.3, external), on the external server under the
 * prefixes of `EXTERNAL_PATHS` (`REFERRAL_V1_API_URL` = `<external>/referral-v1`,
 * `REFERRAL_V2_API_URL` = `<external>/referral-v2`). Both read the user from the BFF session
 * token (`Authorization: Bearer`), as the BFF does.
 *
 * | service | route | answer |
 * |---|---|---|
 * | v1 | `GET /refer-friend/indicator` | `{ user_id, code, link, indicated, rewarded }` |
 * | v2 | `GET /indication-stats/{userId}` | `{ user_id, campaign, invited, registered, deposited, reward_total }` (cents); 403 `forbidden` for another user's id |
 *
 * @module
 */
import type { SandboxArea } from '../context.js';
import { sendError } from '../http.js';
import { withUser } from '../bff/guard.js';
import { EXTERNAL_PATHS } from './paths.js';

/** The referral v1 and v2 routes, each under its own prefix (read when registering: `index.ts` imports this module). */
export const referralArea: SandboxArea = {
  name: 'referral',
  register(app) {
    app.get(
      `${EXTERNAL_PATHS.referralV1}/refer-friend/indicator`,
      withUser(async (_request, _reply, user) => ({
        user_id: user.id,
        code: `REF${user.id}`,
        link: `https://www.sandbox.example/r/REF${user.id}`,
        indicated: 2,
        rewarded: 1,
      })),
    );
    app.get<{ Params: { userId: string } }>(
      `${EXTERNAL_PATHS.referralV2}/indication-stats/:userId`,
      withUser<{ Params: { userId: string } }>(async (request, reply, user) => {
        if (request.params.userId !== String(user.id)) return sendError(reply, 403, 'forbidden', 'These are not your statistics.');
        return { user_id: user.id, campaign: 'invite-friends-2026', invited: 5, registered: 2, deposited: 1, reward_total: 2_000 };
      }),
    );
  },
};
