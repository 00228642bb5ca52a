/**
 * spec 4.5 Payments: providers (spec 2.8), deposit (spec 2.7), deposit status, withdraw, bank list,
 * coupon, PIX key and the bank-account hub. Rows in the specification's order; every row needs a
 * session. Amounts are integer cents.
 *
 * Money rules:
 * - deposit and withdraw reach the upstream once per submission, across every process and instance
 *   (docs/behaviour.md "Money moves: exactly once", `state/idempotency.ts`): the client's `Idempotency-Key`
 *   (forwarded upstream), or without one the session plus the canonical wire body for 5 s; a repeat
 *   replays the first answer (`Idempotent-Replayed: true`), waits for it, or answers 409
 *   `request_in_progress`; a key reused with another body answers 422 `idempotency_key_reused`; the
 *   shared state unreachable answers 503 `idempotency_unavailable` with nothing sent;
 * - a deposit's `userId` must be the session's own user id: otherwise 403 `user_mismatch`, nothing
 *   sent (never a deposit for someone else);
 * - card fields only for the card-form slugs, all five of them; card fields for any other method
 *   are a 400 (refused rather than dropped, so that a client bug is seen);
 * - the deposit answer's real-wallet record (`real_wallet` or `wallet`) has its `balance` in
 *   currency units and the original as `balance_cents` (spec 2.7 rule 2), in the answers of
 *   `/deposit` and `/deposit-status`;
 * - a deposit failure other than 401/403 whose reason reports a responsible-gaming limit carries
 *   `limitError: { reason, limit?, remaining?, period? }` (spec 7.4.2);
 * - a deposit or withdrawal the upstream refuses with `amount_below_minimum` / `amount_above_maximum`
 *   carries the bound it gave, in integer cents: `minimumCents` / `maximumCents` (spec 7.4.2).
 *
 * @module
 */
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  amountBoundOf,
  BANK_ACCOUNT_ACTIONS,
  BankAccountBody,
  type BankAccountType,
  cardFieldProblem,
  DepositPayload,
  HUB_DROPPED_FIELDS,
  LIMIT_REASON,
  PixKeyUpdate,
  type ProviderRecord,
  type ProvidersAnswer,
  providerTakes,
  providerView,
  realWalletInUnits,
  toDepositWire,
  toWithdrawWire,
  WithdrawPayload,
} from '../contracts/payments.js';
import { envelope, type ProxyAnswer, parseJson, upstreamAnswer, upstreamFailureAnswer, upstreamReason } from '../envelope.js';
import { gaClientIdFromCookie, trackingFromCookie } from '../session/attribution.js';
import type { UpstreamResponse } from '../upstream/client.js';
import { sessionTokenKey } from '../session/cookie.js';
import { sessionUserId } from '../session/identity.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../state/idempotency.js';
import { paymentsService } from '../upstream/payments-service.js';
import { bff, fail, forward, ok, route, type RouteContext, type RouteSpec, routeTable } from './route.js';

/** Media type of the JSON answers the proxy serialises itself. */
const JSON_MEDIA_TYPE = 'application/json; charset=utf-8';

/** Canonical JSON: object keys sorted at every level, so that equal bodies give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((k) => record[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function service(ctx: RouteContext, idempotencyKey?: string) {
  if (idempotencyKey === undefined) return paymentsService((req) => ctx.call('bff', req));
  return paymentsService((req) => ctx.call('bff', { ...req, headers: { ...req.headers, 'idempotency-key': idempotencyKey } }));
}

/**
 * A money move through the idempotency of docs/behaviour.md "Money moves: exactly once" (`state/idempotency.ts`):
 * the client's `Idempotency-Key` (400 when malformed), the canonical wire body, one upstream call per
 * submission across every instance, `Idempotent-Replayed: true` on a replay, `Retry-After` on a 409.
 *
 * @param body - the canonical text of the wire body (equal submissions give equal text).
 * @param call - the upstream call, given the `Idempotency-Key` to forward.
 */
async function moveMoney(
  ctx: RouteContext,
  move: 'deposit' | 'withdraw',
  body: string,
  call: (idempotencyKey: string) => Promise<ProxyAnswer>,
): Promise<ProxyAnswer> {
  const key = ctx.request.headers['idempotency-key'];
  if (key !== undefined && (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key))) {
    return fail(400, 'invalid_request', 'Idempotency-Key must be 1 to 255 visible ASCII characters');
  }
  const token = ctx.token as string;
  const { answer, decision, retryAfterSeconds } = await ctx.deps.state.idempotency.run(
    { move, token, tokenKey: sessionTokenKey(ctx.request, token), key, body },
    call,
  );
  ctx.request.log.debug({ move, decision }, 'money move');
  if (decision === 'replayed') ctx.reply.header('idempotent-replayed', 'true');
  else if (retryAfterSeconds !== undefined) ctx.reply.header('retry-after', String(retryAfterSeconds));
  return answer;
}

/** A 2xx JSON answer transformed by `map`; other answers through the envelope. */
function mapJson(res: UpstreamResponse, map: (data: unknown) => unknown): ProxyAnswer {
  if (res.status < 200 || res.status >= 300 || res.status === 204) return upstreamAnswer(res);
  const data = parseJson(res.body);
  if (data === undefined) return upstreamAnswer(res);
  return { status: res.status, body: map(data) as object };
}

/** The responsible-gaming `limitError` of a deposit failure (spec 7.4.2), or undefined. */
export function limitErrorOf(res: UpstreamResponse): Record<string, unknown> | undefined {
  const data = parseJson(res.body);
  const { reason } = upstreamReason(data);
  if (!reason || !LIMIT_REASON.test(reason)) return undefined;
  const record = (data && typeof data === 'object' ? data : {}) as Record<string, unknown>;
  const out: Record<string, unknown> = { reason };
  for (const field of ['limit', 'remaining', 'period'] as const) {
    const value = record[field];
    if (typeof value === 'number' || typeof value === 'string') out[field] = value;
  }
  return out;
}

/**
 * The deposit's answer. A success is serialised here, once: the double-submit guard keeps it as text
 * (about the size of the upstream's answer) for its repeats, not as an object graph.
 */
function depositAnswer(res: UpstreamResponse): ProxyAnswer {
  if (res.status >= 200 && res.status < 300) {
    const answer = mapJson(res, realWalletInUnits);
    if (answer.body === null || Buffer.isBuffer(answer.body) || typeof answer.body !== 'object') return answer;
    return { status: answer.status, body: JSON.stringify(answer.body), contentType: JSON_MEDIA_TYPE };
  }
  return withAmountBound(res, upstreamFailureAnswer(res), limitErrorOf(res));
}

/**
 * A money move's failure answer with its extra envelope fields (spec 7.4.2, statuses other than
 * 401/403 only): `minimumCents` / `maximumCents` when the upstream refused the amount and said the
 * bound ({@link amountBoundOf}), and the deposit's `limitError` when given.
 */
function withAmountBound(res: UpstreamResponse, answer: ProxyAnswer, limitError?: Record<string, unknown>): ProxyAnswer {
  if (res.status === 401 || res.status === 403) return answer;
  if (!answer.body || typeof answer.body !== 'object' || Buffer.isBuffer(answer.body)) return answer;
  const data = parseJson(res.body);
  const bound = amountBoundOf(upstreamReason(data).reason, data);
  if (!bound && !limitError) return answer;
  return { ...answer, body: { ...answer.body, ...bound, ...(limitError ? { limitError } : {}) } };
}

/** The withdrawal's answer: the upstream's, a failure with its amount bound (see {@link withAmountBound}). */
function withdrawAnswer(res: UpstreamResponse): ProxyAnswer {
  const answer = upstreamAnswer(res);
  return res.status >= 200 && res.status < 300 ? answer : withAmountBound(res, answer);
}

async function deposit(ctx: RouteContext<DepositPayload>): Promise<ProxyAnswer> {
  const payload = ctx.body;
  const cardProblem = cardFieldProblem(payload);
  if (cardProblem) return fail(400, 'invalid_request', cardProblem);
  const user = await sessionUserId(ctx);
  if ('answer' in user) return user.answer;
  if (payload.userId !== user.id) {
    return fail(403, 'user_mismatch', "userId must be the session's own user id");
  }
  const cookies = ctx.request.cookies;
  const wire = toDepositWire(payload, {
    ...trackingFromCookie(cookies.cookie_tracking),
    ga_client_id: gaClientIdFromCookie(cookies._ga),
  });
  // The wire body's text is canonical (toDepositWire): the key is taken over it, and it is the body sent
  // upstream, serialised once.
  const text = JSON.stringify(wire);
  return moveMoney(ctx, 'deposit', text, async (key) => depositAnswer(await service(ctx, key).submitDeposit(wire, text)));
}

const ProvidersQuery = Type.Object({ currency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$' })) }, { additionalProperties: false });

/** The providers answer of spec 2.8: both collections, filtered by currency, with `iconUrl` and `methodClass`. */
function providersAnswer(data: unknown, currency: string | undefined, prefix: string | undefined): ProvidersAnswer | undefined {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return undefined;
  const record = data as Record<string, unknown>;
  const collection = (name: 'deposit' | 'withdraw') => {
    const list = record[name] ?? [];
    if (!Array.isArray(list)) return undefined;
    return list
      .filter((p): p is ProviderRecord => !!p && typeof p === 'object' && !Array.isArray(p))
      .filter((p) => currency === undefined || providerTakes(p, currency))
      .map((p) => providerView(p, prefix));
  };
  const deposit = collection('deposit');
  const withdraw = collection('withdraw');
  return deposit && withdraw ? { deposit, withdraw } : undefined;
}

const StatusQuery = Type.Object({ transactionId: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false });
const CouponQuery = Type.Object({ code: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

/** spec 4.5 Payments, in the specification's order. */
export const paymentsRoutes: readonly RouteSpec[] = routeTable('Payments', [
  route({
    method: 'GET',
    url: '/api/payments/providers',
    spec: '4.5, 2.8',
    summary: 'list providers: { deposit, withdraw }, filterable by `currency`; each with iconUrl and methodClass',
    auth: 'required',
    querystring: ProvidersQuery,
    upstream: [bff('GET', '/payment-providers')],
    handler: async (ctx) => {
      const { currency } = ctx.query;
      const res = await service(ctx).getPaymentProviders(currency);
      if (res.status < 200 || res.status >= 300) return upstreamAnswer(res);
      const answer = providersAnswer(parseJson(res.body), currency, ctx.deps.config.paymentIconPrefix);
      if (!answer) return { status: 502, body: envelope('upstream_bad_response', 'The service sent an invalid answer') };
      return ok(answer);
    },
  }),
  route({
    method: 'POST',
    url: '/api/payments/deposit',
    spec: '4.5, 2.7',
    summary: 'create deposit (DepositPayload, spec 2.7; creditAmount in cents); answers the deposit result, wallet balance in units',
    auth: 'required',
    body: DepositPayload,
    upstream: [bff('POST', '/wallet/add-credit'), bff('GET', '/auth/user-profile')],
    // A deposit creates a pending charge and changes nothing of the profile when it is made: the wallet
    // changes when the charge is paid, later and elsewhere, which the profile's 10 s time to live covers.
    evictsProfile: false,
    handler: deposit,
  }),
  route({
    method: 'GET',
    url: '/api/payments/deposit-status',
    spec: '4.5',
    summary: 'poll deposit status, query `transactionId`',
    auth: 'required',
    querystring: StatusQuery,
    upstream: [bff('GET', '/wallet/charge/{transactionId}')],
    handler: async (ctx) => mapJson(await service(ctx).checkDepositStatus(ctx.query.transactionId), realWalletInUnits),
  }),
  route({
    method: 'POST',
    url: '/api/payments/withdraw',
    spec: '4.5',
    summary:
      'withdraw (`amount` in cents, `method`; PIX, SPEI, bank or phone fields); one upstream attempt, repeats within 5 s answered once',
    auth: 'required',
    body: WithdrawPayload,
    upstream: [bff('POST', '/new-withdraws')],
    handler: async (ctx) => {
      const wire = toWithdrawWire(ctx.body);
      return moveMoney(ctx, 'withdraw', canonicalJson(wire), async (key) => withdrawAnswer(await service(ctx, key).submitWithdraw(wire)));
    },
  }),
  route({
    method: 'GET',
    url: '/api/payments/bank-list',
    spec: '4.5',
    summary: 'list banks',
    auth: 'required',
    upstream: [bff('GET', '/bff/users/bank-list')],
    handler: async (ctx) => upstreamAnswer(await service(ctx).getBankList()),
  }),
  route({
    method: 'GET',
    url: '/api/payments/coupon',
    spec: '4.5',
    summary: 'resolve coupon, query `code`',
    auth: 'required',
    querystring: CouponQuery,
    upstream: [bff('GET', '/coupons/{code}')],
    handler: forward({ pathValues: (ctx) => ({ code: ctx.query.code }) }),
  }),
  route({
    method: ['GET', 'POST'],
    url: '/api/payments/pix-key',
    spec: '4.5',
    summary: "read (GET) or update (POST `pix_key`, `pix_key_type`) the user's PIX key (BR)",
    auth: 'required',
    upstream: [bff('POST', '/pix-keys/user-key'), bff('POST', '/pix-keys/update-user-key-v2')],
    handler: async (ctx) => {
      if (ctx.request.method === 'GET') return upstreamAnswer(await service(ctx).getPixKey());
      // One row for both methods (spec 4.5); Fastify takes no body schema on a GET row, so the POST body is checked here.
      if (!Value.Check(PixKeyUpdate, ctx.body)) {
        return fail(400, 'invalid_request', 'body must have pix_key and pix_key_type (cpf, cnpj, email, phone, random)');
      }
      const { pix_key, pix_key_type } = ctx.body as PixKeyUpdate;
      return upstreamAnswer(await service(ctx).updatePixKey({ pix_key, pix_key_type }));
    },
  }),
  route({
    method: 'POST',
    url: '/api/payments/bank-account',
    spec: '4.5',
    summary: `multi-action hub; body \`type\` is one of ${Object.keys(BANK_ACCOUNT_ACTIONS).join(', ')}`,
    auth: 'required',
    body: BankAccountBody,
    upstream: Object.values(BANK_ACCOUNT_ACTIONS).map((a) => bff(a.method, a.path)),
    handler: async (ctx) => {
      const body = ctx.body as Static<typeof BankAccountBody> & Record<string, unknown>;
      const action = BANK_ACCOUNT_ACTIONS[body.type as BankAccountType];
      const data: Record<string, unknown> = { ...body };
      for (const field of HUB_DROPPED_FIELDS) delete data[field];
      const json = action.method === 'GET' ? undefined : action.sendsData ? data : {};
      return upstreamAnswer(await ctx.call('bff', { method: action.method, path: action.path, json }));
    },
  }),
]);
