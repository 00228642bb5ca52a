/**
 * The first-deposit cashback functions of the sandbox external server (spec 4.10):
 * `POST /ftd-cashback/verify` and `POST /ftd-cashback/send` (the URLs of `FTD_CASHBACK_VERIFY_URL`
 * and `FTD_CASHBACK_SEND_URL`). Both need the user's session (`Authorization: Bearer <jwt>`, the BFF
 * guard's 401 bodies otherwise) and record what they receive.
 *
 * | endpoint | answer |
 * |---|---|
 * | `POST /ftd-cashback/verify` | `{ eligible, userId, percent, max_amount, reason }`: eligible until the cashback was sent (amounts in cents) |
 * | `POST /ftd-cashback/send` | `{ ok: true, userId, amount, currency }`; 409 `already_sent` the second time |
 *
 * Admin (external server): `GET /__sandbox/ftd-cashback/received` → `{ verify: [...], send: [...] }`,
 * each `{ at, userId, body, cookie }`.
 *
 * @module
 */
import { authenticate, GUARD_BODIES } from '../bff/guard.js';
import type { SandboxArea } from '../context.js';
import { asRecord, sendError } from '../http.js';
import { defineAreaState } from '../store.js';
import { EXTERNAL_PATHS } from './paths.js';

/** One request received by a cashback function. */
export interface CashbackReceived {
  /** Epoch ms. */
  at: number;
  userId: number | null;
  body: Record<string, unknown>;
  cookie: string | null;
}

/** What the two functions received, oldest first, and the users already paid. */
export const cashbackState = defineAreaState('ftd-cashback', () => ({
  verify: [] as CashbackReceived[],
  send: [] as CashbackReceived[],
  paid: new Set<number>(),
}));

/** Cashback percent of the first deposit, and its cap in cents. */
const PERCENT = 10;
const MAX_AMOUNT = 50_000;

/** The cashback functions. */
export const ftdCashbackArea: SandboxArea = {
  name: 'ftd-cashback',
  register(app, ctx) {
    const state = () => ctx.store.areaState(cashbackState);
    const received = (userId: number | null, body: unknown, cookie: string | undefined): CashbackReceived => ({
      at: ctx.store.now(),
      userId,
      body: asRecord(body),
      cookie: cookie ?? null,
    });

    app.post(EXTERNAL_PATHS.ftdCashbackVerify, async (request, reply) => {
      const auth = await authenticate(request);
      state().verify.push(received(typeof auth === 'string' ? null : auth.user.id, request.body, request.headers.cookie));
      if (typeof auth === 'string') return reply.code(401).send(GUARD_BODIES[auth]);
      const paid = state().paid.has(auth.user.id);
      return {
        eligible: !paid,
        userId: auth.user.id,
        percent: PERCENT,
        max_amount: MAX_AMOUNT,
        reason: paid ? 'already_paid' : 'first_deposit_eligible',
      };
    });

    app.post(EXTERNAL_PATHS.ftdCashbackSend, async (request, reply) => {
      const auth = await authenticate(request);
      state().send.push(received(typeof auth === 'string' ? null : auth.user.id, request.body, request.headers.cookie));
      if (typeof auth === 'string') return reply.code(401).send(GUARD_BODIES[auth]);
      if (state().paid.has(auth.user.id)) return sendError(reply, 409, 'already_sent', 'The cashback was already sent');
      state().paid.add(auth.user.id);
      return { ok: true, userId: auth.user.id, amount: MAX_AMOUNT / 10, currency: auth.user.profile.currency };
    });

    app.get('/__sandbox/ftd-cashback/received', async () => ({ verify: state().verify, send: state().send }));
  },
};
