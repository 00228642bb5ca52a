/**
 * Wallet endpoints of the sandbox BFF (spec 4.4 "Upstream" column) and the money state other areas
 * share: the real wallet is `user.profile.wallet` (so the profile shows it), every amount an
 * integer number of cents; transactions and rollover are per-user state of this module.
 *
 * | upstream | answer |
 * |---|---|
 * | `GET /users/wallet` | the wallet record: `balance`, `bonus_balance`, `cashback_balance`, `withdrawable_balance` (cents), `currency` |
 * | `GET /bonus/rollover` | `{ bonus_balance, required, wagered, remaining, percentage }` (cents, percentage 0-100) |
 * | `GET /bonus/rollover-accomplished` | `{ accomplished, accomplished_at }` |
 * | `POST /bff/transactions` | filter `{ type?, period?, start_date?, end_date?, page?, per_page? }` → `{ data, page, per_page, total, last_page }`, newest first |
 * | `GET /transactions/cashback?page=` | the cashback transactions, same page shape |
 * | `POST /bonus/transfer` | bonus balance → real balance; 422 `rollover_not_accomplished`, `no_bonus_balance`, `amount_above_balance` |
 * | `POST /cashback/transfer` | cashback balance → real balance; 422 `no_cashback_balance`, `amount_above_balance` |
 * | `GET /withdraw/{id}/generate` | the receipt of one of the user's withdrawals: HTML, or PDF when `Accept` starts with `application/pdf`; 404 `withdraw_not_found` |
 *
 * A user starts with 25.00 of bonus (rollover accomplished) and 12.00 of cashback, set the first
 * time this state is read, plus a few past transactions.
 *
 * @module
 */
import type { FastifyReply } from 'fastify';
import type { SandboxArea } from '../context.js';
import { asRecord, sendError } from '../http.js';
import { defineUserState, type SandboxStore } from '../store.js';
import type { AuthUserWallet, SandboxUser } from '../types.js';
import { withUser } from './guard.js';

/** Transaction kinds. */
export type TransactionType = 'deposit' | 'withdraw' | 'bet' | 'win' | 'bonus' | 'cashback';

/** One transaction. `amount` in cents, always positive; the type says the direction. */
export interface SandboxTransaction {
  id: string;
  type: TransactionType;
  /** `pending`, `paid`, `approved`, `completed`, `failed`. */
  status: string;
  amount: number;
  currency: string;
  method: string | null;
  description: string;
  created_at: string;
  updated_at: string;
}

/** Per-user wallet state besides the wallet record. */
export interface WalletState {
  transactions: SandboxTransaction[];
  /** Rollover of the bonus: amounts in cents. */
  rollover: { required: number; wagered: number; accomplished_at: string | null };
  nextId: number;
}

/** Initial bonus and cashback balances of a user, in cents. */
export const INITIAL_BONUS_CENTS = 2_500;
export const INITIAL_CASHBACK_CENTS = 1_200;

const iso = (ms: number) => new Date(ms).toISOString();

/** The user's real wallet record (created when the profile has none). */
export function walletOf(user: SandboxUser, store: SandboxStore): AuthUserWallet {
  user.profile.wallet ??= {
    id: user.id * 10 + 2,
    user_id: user.id,
    currency: user.profile.currency,
    balance: 0,
    bonus_balance: 0,
    cashback_balance: 0,
    withdrawable_balance: 0,
    updated_at: iso(store.now()),
  };
  return user.profile.wallet;
}

/** Per-user wallet state (see {@link WalletState}). */
export const walletState = defineUserState('wallet', (user, store): WalletState => {
  const wallet = walletOf(user, store);
  if (wallet.bonus_balance === 0) wallet.bonus_balance = INITIAL_BONUS_CENTS;
  if (wallet.cashback_balance === 0) wallet.cashback_balance = INITIAL_CASHBACK_CENTS;
  const now = store.now();
  const past = (days: number) => iso(now - days * 86_400_000);
  const currency = wallet.currency;
  const seed = (id: number, type: TransactionType, amount: number, days: number, description: string): SandboxTransaction => ({
    id: `tx_${user.id}_${id}`,
    type,
    status: 'completed',
    amount,
    currency,
    method: null,
    description,
    created_at: past(days),
    updated_at: past(days),
  });
  return {
    transactions: [
      seed(3, 'win', 4_000, 3, 'Win: Fortune Tiger'),
      seed(2, 'bet', 1_000, 3, 'Bet: Fortune Tiger'),
      seed(1, 'cashback', INITIAL_CASHBACK_CENTS, 10, 'Weekly cashback'),
    ],
    rollover: { required: 20_000, wagered: 20_000, accomplished_at: past(2) },
    nextId: 4,
  };
});

/** Records a transaction (newest first) and returns it. */
export function addTransaction(
  store: SandboxStore,
  user: SandboxUser,
  input: { type: TransactionType; status: string; amount: number; method?: string | null; description: string },
): SandboxTransaction {
  const state = store.userState(walletState, user);
  const now = iso(store.now());
  const tx: SandboxTransaction = {
    id: `tx_${user.id}_${state.nextId++}`,
    type: input.type,
    status: input.status,
    amount: input.amount,
    currency: walletOf(user, store).currency,
    method: input.method ?? null,
    description: input.description,
    created_at: now,
    updated_at: now,
  };
  state.transactions.unshift(tx);
  return tx;
}

/** Changes the real balance (and the withdrawable part) by `cents` (negative to debit). */
export function moveBalance(store: SandboxStore, user: SandboxUser, cents: number): AuthUserWallet {
  store.userState(walletState, user);
  const wallet = walletOf(user, store);
  wallet.balance += cents;
  wallet.withdrawable_balance = Math.max(0, Math.min(wallet.balance, wallet.withdrawable_balance + cents));
  wallet.updated_at = iso(store.now());
  return wallet;
}

/** Length of a named period of the transaction filter, in days. */
const PERIOD_DAYS: Readonly<Record<string, number>> = { today: 1, '7d': 7, '30d': 30, '90d': 90, week: 7, month: 30 };

/**
 * A positive whole number read from a query or body value (a page, a page size): a string of digits or
 * an integer, capped at `max`; anything else, zero included, is `fallback`.
 * @example intOf('3', 1, 100) === 3; intOf('0', 1, 100) === 1; intOf('500', 20, 100) === 100
 */
export function intOf(value: unknown, fallback: number, max: number): number {
  const n = typeof value === 'string' && /^[0-9]+$/.test(value) ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 ? Math.min(n, max) : fallback;
}

/** One page of a list: `{ data, page, per_page, total, last_page }`. */
export function pageOf<T>(items: readonly T[], page: number, perPage: number) {
  return {
    data: items.slice((page - 1) * perPage, page * perPage),
    page,
    per_page: perPage,
    total: items.length,
    last_page: Math.max(1, Math.ceil(items.length / perPage)),
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function money(cents: number, currency: string): string {
  return `${currency} ${(cents / 100).toFixed(2)}`;
}

/** A one-page PDF with the given lines (plain text, Helvetica). */
function tinyPdf(lines: string[]): Buffer {
  const text = lines
    .map((l, i) => `BT /F1 12 Tf 72 ${760 - i * 18} Td (${l.replace(/[()\\]/g, (c) => `\\${c}`).replace(/[^\x20-\x7e]/g, '?')}) Tj ET`)
    .join('\n');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${Buffer.byteLength(text)} >>\nstream\n${text}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

function transfer(
  store: SandboxStore,
  user: SandboxUser,
  reply: FastifyReply,
  body: unknown,
  from: 'bonus_balance' | 'cashback_balance',
): unknown {
  const wallet = walletOf(user, store);
  const state = store.userState(walletState, user);
  const kind = from === 'bonus_balance' ? 'bonus' : 'cashback';
  if (kind === 'bonus' && state.rollover.wagered < state.rollover.required) {
    return sendError(reply, 422, 'rollover_not_accomplished', 'The bonus rollover is not accomplished yet.');
  }
  const available = wallet[from];
  if (available <= 0) return sendError(reply, 422, `no_${kind}_balance`, `There is no ${kind} balance to transfer.`);
  const requested = asRecord(body).amount;
  const amount = requested === undefined ? available : requested;
  if (typeof amount !== 'number' || !Number.isInteger(amount) || amount <= 0) {
    return sendError(reply, 422, 'validation_error', 'The amount must be a positive integer number of cents.');
  }
  if (amount > available) return sendError(reply, 422, 'amount_above_balance', `The amount is above the ${kind} balance.`);
  wallet[from] -= amount;
  moveBalance(store, user, amount);
  const tx = addTransaction(store, user, {
    type: kind,
    status: 'completed',
    amount,
    description: kind === 'bonus' ? 'Bonus transfer' : 'Cashback transfer',
  });
  return { message: 'Transfer completed', transaction: tx, wallet };
}

/** The wallet area of the BFF. */
export const walletArea: SandboxArea = {
  name: 'wallet',
  register(app, ctx) {
    const { store } = ctx;

    app.get(
      '/users/wallet',
      withUser(async (_request, _reply, user) => {
        store.userState(walletState, user);
        return walletOf(user, store);
      }),
    );

    app.get(
      '/bonus/rollover',
      withUser(async (_request, _reply, user) => {
        const { rollover } = store.userState(walletState, user);
        const remaining = Math.max(0, rollover.required - rollover.wagered);
        return {
          bonus_balance: walletOf(user, store).bonus_balance,
          required: rollover.required,
          wagered: rollover.wagered,
          remaining,
          percentage: rollover.required === 0 ? 100 : Math.min(100, Math.floor((rollover.wagered * 100) / rollover.required)),
        };
      }),
    );

    app.get(
      '/bonus/rollover-accomplished',
      withUser(async (_request, _reply, user) => {
        const { rollover } = store.userState(walletState, user);
        const accomplished = rollover.wagered >= rollover.required;
        return { accomplished, accomplished_at: accomplished ? rollover.accomplished_at : null };
      }),
    );

    app.post(
      '/bff/transactions',
      withUser(async (request, _reply, user) => {
        const filter = asRecord(request.body);
        const { transactions } = store.userState(walletState, user);
        const now = store.now();
        const days = typeof filter.period === 'string' ? PERIOD_DAYS[filter.period] : undefined;
        const from = typeof filter.start_date === 'string' ? Date.parse(filter.start_date) : days ? now - days * 86_400_000 : -Infinity;
        const to = typeof filter.end_date === 'string' ? Date.parse(filter.end_date) + 86_400_000 : Infinity;
        const type = typeof filter.type === 'string' && filter.type !== 'all' ? filter.type : undefined;
        const list = transactions.filter((t) => {
          const at = Date.parse(t.created_at);
          return (!type || t.type === type) && at >= from && at < to;
        });
        return pageOf(list, intOf(filter.page, 1, 100_000), intOf(filter.per_page, 20, 100));
      }),
    );

    app.get(
      '/transactions/cashback',
      withUser(async (request, _reply, user) => {
        const query = asRecord(request.query);
        const list = store.userState(walletState, user).transactions.filter((t) => t.type === 'cashback');
        return pageOf(list, intOf(query.page, 1, 100_000), intOf(query.per_page, 20, 100));
      }),
    );

    app.post(
      '/bonus/transfer',
      withUser(async (request, reply, user) => transfer(store, user, reply, request.body, 'bonus_balance')),
    );
    app.post(
      '/cashback/transfer',
      withUser(async (request, reply, user) => transfer(store, user, reply, request.body, 'cashback_balance')),
    );

    app.get<{ Params: { id: string } }>(
      '/withdraw/:id/generate',
      withUser<{ Params: { id: string } }>(async (request, reply, user) => {
        const tx = store.userState(walletState, user).transactions.find((t) => t.id === request.params.id && t.type === 'withdraw');
        if (!tx) return sendError(reply, 404, 'withdraw_not_found', 'Withdrawal not found.');
        const lines = [
          'Withdrawal receipt',
          `Transaction: ${tx.id}`,
          `Name: ${user.profile.name}`,
          `Amount: ${money(tx.amount, tx.currency)}`,
          `Method: ${tx.method ?? '-'}`,
          `Status: ${tx.status}`,
          `Date: ${tx.created_at}`,
        ];
        const accept = String(request.headers.accept ?? '');
        if (accept.startsWith('application/pdf')) return reply.type('application/pdf').send(tinyPdf(lines));
        const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(lines[0]!)}</title></head><body><h1>${escapeHtml(lines[0]!)}</h1><ul>${lines
          .slice(1)
          .map((l) => `<li>${escapeHtml(l)}</li>`)
          .join('')}</ul></body></html>`;
        return reply.type('text/html; charset=utf-8').send(html);
      }),
    );
  },
};
