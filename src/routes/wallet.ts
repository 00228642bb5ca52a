/**
 * spec 4.4 Wallet: wallet and rollover reload, transactions, bonus/cashback transfers and the
 * withdrawal receipt. Rows in the specification's order; every row needs a session. Amounts are
 * integer cents, as the BFF sends them.
 *
 * @module
 */
import type { Readable } from 'node:stream';
import {
  EmptyBody,
  optionalBody,
  RECEIPT_MEDIA_TYPES,
  ReceiptBody,
  TransactionsBody,
  WALLET_ACTIONS,
  WalletActionBody,
} from '../contracts/account.js';
import { envelope, type ProxyAnswer, parseJson, upstreamAnswer, upstreamFailureAnswer } from '../envelope.js';
import type { UpstreamResponse } from '../upstream/client.js';
import { sendRedactedStream } from '../session/redact.js';
import { UpstreamError } from '../upstream/errors.js';
import { buildPath } from '../upstream/paths.js';
import { bff, fail, ok, route, type RouteContext, type RouteSpec, routeTable } from './route.js';

/** The rollover parts of `/api/wallet/refresh`, by answer field. */
const ROLLOVER_PARTS = {
  rollover: '/bonus/rollover',
  rolloverAccomplished: '/bonus/rollover-accomplished',
} as const;
type RolloverPart = keyof typeof ROLLOVER_PARTS;

/**
 * `/api/wallet/refresh` answer (spec 4.4). `wallet` is the BFF's wallet record (cents); a rollover
 * part the BFF could not give is `null` and named in `missing`.
 */
export interface WalletRefreshAnswer {
  wallet: unknown;
  rollover: unknown;
  rolloverAccomplished: unknown;
  missing: RolloverPart[];
}

function jsonOf(res: UpstreamResponse): unknown {
  return res.status >= 200 && res.status < 300 ? parseJson(res.body) : undefined;
}

/**
 * Wallet and both rollover calls in parallel. The wallet decides the answer: its failure is the
 * route's failure (envelope, 401/403 passthrough); a rollover failure (any status, transport error,
 * non-JSON) only empties that part.
 */
async function refresh(ctx: RouteContext): Promise<ProxyAnswer> {
  const parts = Object.entries(ROLLOVER_PARTS) as [RolloverPart, string][];
  const [wallet, ...rollovers] = await Promise.allSettled([
    ctx.call('bff', { method: 'GET', path: '/users/wallet' }),
    ...parts.map(([, path]) => ctx.call('bff', { method: 'GET', path })),
  ]);
  if (wallet?.status === 'rejected') throw wallet.reason;
  const walletRes = (wallet as PromiseFulfilledResult<UpstreamResponse>).value;
  if (walletRes.status < 200 || walletRes.status >= 300) return upstreamFailureAnswer(walletRes);
  const walletData = jsonOf(walletRes);
  if (walletData === undefined) {
    return { status: 502, body: envelope('upstream_bad_response', 'The service sent an invalid answer') };
  }
  const answer: WalletRefreshAnswer = { wallet: walletData, rollover: null, rolloverAccomplished: null, missing: [] };
  parts.forEach(([name], i) => {
    const settled = rollovers[i];
    const data = settled?.status === 'fulfilled' ? jsonOf(settled.value) : undefined;
    if (data === undefined) {
      answer.missing.push(name);
      if (settled?.status === 'rejected') ctx.request.log.warn({ err: settled.reason, part: name }, 'rollover part missing');
    } else {
      answer[name] = data;
    }
  });
  return ok(answer);
}

/** Largest error body read from a streamed upstream answer, in bytes. */
const MAX_STREAMED_ERROR_BYTES = 64 * 1024;

async function readCapped(stream: Readable, cap: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > cap) {
      stream.destroy();
      break;
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

function mediaType(header: unknown): string {
  return String(header ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
}

/** Content-Security-Policy of an HTML receipt: shown as a document, never able to run script on the proxy's origin. */
export const RECEIPT_HTML_CSP = "sandbox; default-src 'none'; img-src data: https:; style-src 'unsafe-inline'; font-src data: https:";

/**
 * `/api/wallet/receipt`: streams `GET /withdraw/{id}/generate` through without buffering it. Only
 * `text/html` and `application/pdf` are passed (anything else is a 502); an upstream failure is
 * answered through the envelope (401/403 byte for byte).
 */
async function receipt(ctx: RouteContext<{ transactionId?: string | number; id?: string | number }>): Promise<ProxyAnswer | undefined> {
  const id = ctx.body.transactionId ?? ctx.body.id;
  if (id === undefined) return fail(400, 'invalid_request', 'body must have transactionId or id');
  const path = buildPath('/withdraw/{id}/generate', { id: String(id) });
  const res = await ctx.stream('bff', { method: 'GET', path, headers: { accept: RECEIPT_MEDIA_TYPES.join(', ') } });
  if (res.status < 200 || res.status >= 300) {
    let body: Buffer;
    try {
      body = await readCapped(res.body, MAX_STREAMED_ERROR_BYTES);
    } catch (error) {
      throw error instanceof UpstreamError ? error : new UpstreamError('upstream_unavailable', { cause: error });
    }
    return upstreamFailureAnswer({ status: res.status, headers: res.headers, body });
  }
  const type = mediaType(res.headers['content-type']);
  if (!(RECEIPT_MEDIA_TYPES as readonly string[]).includes(type)) {
    res.body.destroy();
    return { status: 502, body: envelope('upstream_bad_response', 'The receipt is neither HTML nor PDF') };
  }
  const reply = ctx.reply.code(200).type(String(res.headers['content-type']));
  const length = res.headers['content-length'];
  if (typeof length === 'string' && /^[0-9]+$/.test(length)) reply.header('content-length', length);
  const extension = type === 'application/pdf' ? 'pdf' : 'html';
  reply.header('content-disposition', `inline; filename="receipt-${String(id).replace(/[^A-Za-z0-9_-]/g, '_')}.${extension}"`);
  if (type === 'text/html') reply.header('content-security-policy', RECEIPT_HTML_CSP);
  sendRedactedStream(reply, res.body, ctx.secrets);
  return undefined;
}

/** spec 4.4 Wallet, in the specification's order. */
export const walletRoutes: readonly RouteSpec[] = routeTable('Wallet', [
  route({
    method: 'POST',
    url: '/api/wallet/refresh',
    spec: '4.4',
    summary:
      'reload wallet and rollover → { wallet, rollover, rolloverAccomplished, missing }; a failed rollover call is null and named in missing',
    auth: 'required',
    body: optionalBody(EmptyBody),
    upstream: [bff('GET', '/users/wallet'), bff('GET', '/bonus/rollover'), bff('GET', '/bonus/rollover-accomplished')],
    evictsProfile: false,
    handler: refresh,
  }),
  route({
    method: 'POST',
    url: '/api/wallet/transactions',
    spec: '4.4',
    summary: 'list transactions (filter by type, period, page); type `cashback` reads the cashback list',
    auth: 'required',
    body: optionalBody(TransactionsBody),
    upstream: [bff('POST', '/bff/transactions'), bff('GET', '/transactions/cashback')],
    evictsProfile: false,
    handler: async (ctx) => {
      const filter = ctx.body ?? {};
      if (filter.type === 'cashback') {
        const { type: _cashback, ...query } = filter;
        return upstreamAnswer(await ctx.call('bff', { method: 'GET', path: '/transactions/cashback', query }));
      }
      return upstreamAnswer(await ctx.call('bff', { method: 'POST', path: '/bff/transactions', json: filter }));
    },
  }),
  route({
    method: 'POST',
    url: '/api/wallet/action',
    spec: '4.4',
    summary: 'wallet action `bonus-transfer` or `cashback-transfer` (optional `amount` in cents, `bonus_id`)',
    auth: 'required',
    body: WalletActionBody,
    upstream: Object.values(WALLET_ACTIONS).map((path) => bff('POST', path)),
    handler: async (ctx) => {
      const { action, ...fields } = ctx.body;
      return upstreamAnswer(await ctx.call('bff', { method: 'POST', path: WALLET_ACTIONS[action], json: fields }));
    },
  }),
  route({
    method: 'POST',
    url: '/api/wallet/receipt',
    spec: '4.4',
    summary: 'withdrawal receipt (HTML or PDF) streamed through; body `transactionId` or `id` of the withdrawal',
    auth: 'required',
    body: ReceiptBody,
    upstream: [bff('GET', '/withdraw/{id}/generate')],
    evictsProfile: false,
    handler: receipt,
  }),
]);
