/**
 * spec 4.5 Payments: providers (spec 2.8), deposit (spec 2.7), deposit status, withdraw, bank list,
 * coupon, PIX key and the bank-account hub. Rows in the specification's order; every row needs a
 * session. Amounts are integer cents.
 *
 * Money rules:
 * - deposit and withdraw make exactly one upstream attempt per client request (no retries);
 * - double submit: the same deposit (or withdraw) from the same session within
 *   {@link SUBMIT_WINDOW_MS} after the first one settled, or while it is in flight, reaches the
 *   upstream once; the repeats get the first one's answer (key: SHA-256 of token and canonical wire body);
 * - a deposit's `userId` must be the session's own user id: otherwise 403 `user_mismatch`, nothing
 *   sent (never a deposit for someone else);
 * - card fields only for the card-form slugs, all five of them; card fields for any other method
 *   are a 400 (refused rather than dropped, so that a client bug is seen);
 * - the deposit answer's real-wallet record (`real_wallet` or `wallet`) has its `balance` in
 *   currency units and the original as `balance_cents` (spec 2.7 rule 2), in the answers of
 *   `/deposit` and `/deposit-status`;
 * - a deposit failure other than 401/403 whose reason reports a responsible-gaming limit carries
 *   `limitError: { reason, limit?, remaining?, period? }` (spec 7.4.2).
 *
 * @module
 */
import { hash } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { LRUCache } from 'lru-cache';
import {
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
import { sessionUserId } from '../session/identity.js';
import { paymentsService } from '../upstream/payments-service.js';
import { type AppDeps, bff, fail, forward, ok, type RouteContext, type RouteSpec, route } from './route.js';

/** Media type of the JSON answers the proxy serialises itself. */
const JSON_MEDIA_TYPE = 'application/json; charset=utf-8';

/** How long a settled deposit or withdraw answers its repeats, in milliseconds (5 s). */
export const SUBMIT_WINDOW_MS = 5_000;
/** Most submissions remembered at once. */
export const SUBMIT_MAX_ENTRIES = 10_000;

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

/** One submission the guard remembers: its answer, and when it settled (0 while in flight), in ms since the epoch. */
interface Submission {
  readonly promise: Promise<ProxyAnswer>;
  settledAt: number;
}

/**
 * Double-submit protection with single flight: `run(key, fn)` starts `fn` once per key; calls with
 * the same key while it runs, or within {@link SUBMIT_WINDOW_MS} after it settled, get the same
 * result (or the same rejection). Keys are SHA-256 hex digests: no token or card data is kept.
 * One cache read and at most one write per call; an entry lives at most `inFlightMs + windowMs`.
 */
export class SubmitGuard {
  readonly #entries: LRUCache<string, Submission>;
  readonly #windowMs: number;
  readonly #lifetimeMs: number;
  constructor(options: { windowMs?: number; inFlightMs: number; max?: number }) {
    this.#windowMs = options.windowMs ?? SUBMIT_WINDOW_MS;
    this.#lifetimeMs = options.inFlightMs + this.#windowMs;
    this.#entries = new LRUCache({ max: options.max ?? SUBMIT_MAX_ENTRIES, ttlAutopurge: false });
  }
  /** The key of a submission: SHA-256 of its scope, the session token and the canonical body ({@link canonicalJson}). */
  static key(scope: string, token: string, body: unknown): string {
    return SubmitGuard.keyOfText(scope, token, canonicalJson(body));
  }
  /** As {@link key}, for a body already in canonical text (equal submissions give equal text). */
  static keyOfText(scope: string, token: string, text: string): string {
    return hash('sha256', `${scope}\n${token}\n${text}`, 'hex');
  }
  /** Runs `fn` unless a submission with `key` is in flight or settled within the window. */
  run(key: string, fn: () => Promise<ProxyAnswer>): Promise<ProxyAnswer> {
    const known = this.#entries.get(key);
    if (known && (known.settledAt === 0 || Date.now() - known.settledAt < this.#windowMs)) return known.promise;
    // In flight, it is kept at least as long as an upstream call may last (the call's own time limit).
    const submission: Submission = { promise: fn(), settledAt: 0 };
    this.#entries.set(key, submission, { ttl: this.#lifetimeMs });
    const settle = () => {
      submission.settledAt = Date.now();
    };
    submission.promise.then(settle, settle);
    return submission.promise;
  }
  /** Submissions remembered now. */
  get size(): number {
    return this.#entries.size;
  }
  /** Forgets every submission (tests). */
  clear(): void {
    this.#entries.clear();
  }
}

const guards = new WeakMap<AppDeps, SubmitGuard>();

/** The double-submit guard of an app (one per `createServer`). */
export function submitGuard(deps: AppDeps): SubmitGuard {
  let guard = guards.get(deps);
  if (!guard) {
    guard = new SubmitGuard({ inFlightMs: deps.config.upstreamTimeoutMs });
    guards.set(deps, guard);
  }
  return guard;
}

function service(ctx: RouteContext) {
  return paymentsService((req) => ctx.call('bff', req));
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
  const answer = upstreamFailureAnswer(res);
  if (res.status === 401 || res.status === 403) return answer;
  const limitError = limitErrorOf(res);
  if (limitError && answer.body && typeof answer.body === 'object' && !Buffer.isBuffer(answer.body)) {
    return { ...answer, body: { ...answer.body, limitError } };
  }
  return answer;
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
  // The wire body's text is canonical (toDepositWire): the key is taken over it, no second serialisation.
  const key = SubmitGuard.keyOfText('deposit', ctx.token as string, JSON.stringify(wire));
  return submitGuard(ctx.deps).run(key, async () => depositAnswer(await service(ctx).submitDeposit(wire)));
}

const ProvidersQuery = Type.Object(
  { currency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$' })) },
  { additionalProperties: false },
);

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
export const paymentsRoutes: readonly RouteSpec[] = [
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
    summary: 'withdraw (`amount` in cents, `method`; PIX, SPEI, bank or phone fields); one upstream attempt, repeats within 5 s answered once',
    auth: 'required',
    body: WithdrawPayload,
    upstream: [bff('POST', '/new-withdraws')],
    handler: async (ctx) => {
      const wire = toWithdrawWire(ctx.body);
      const key = SubmitGuard.key('withdraw', ctx.token as string, wire);
      return submitGuard(ctx.deps).run(key, async () => upstreamAnswer(await service(ctx).submitWithdraw(wire)));
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
];
