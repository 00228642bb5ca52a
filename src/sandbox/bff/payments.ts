/**
 * Payment endpoints of the sandbox BFF (spec 4.5 "Upstream" column). Amounts are integer cents.
 *
 * | upstream | behaviour |
 * |---|---|
 * | `GET /payment-providers[?currency=]` | `{ deposit, withdraw }` provider records (BR, MX, CHL and multi-currency), icons `payments/<method>` |
 * | `POST /wallet/add-credit` | spec 2.7 wire body; creates a charge and a pending deposit transaction; the answer has the flow's data (PIX QR and copy-paste code, SPEI CLABE, OXXO barcode, checkout or redirect URL, wallet QR and app link) and the real `wallet` record (cents). Card-form methods are paid at once (a card failing the Luhn check is 422 `card_declined`). Honours `Idempotency-Key` as a real BFF should: the same key with the same body within {@link IDEMPOTENCY_KEEP_MS} answers the first charge again (201, `Idempotent-Replayed: true`, nothing charged), with another body 422 `idempotency_key_reused`; the last {@link IDEMPOTENCY_KEYS_PER_USER} keys of a user are kept. |
 * | `GET /wallet/charge/{id}` | the charge; a pending charge is `paid` from its {@link PAID_AFTER_POLLS}th poll on, which credits the wallet |
 * | `POST /new-withdraws` | debits the wallet at once (`approved`); 422 `insufficient_balance` above the withdrawable balance |
 * | `GET /bff/users/bank-list` | banks of the user's country |
 * | `GET /coupons/{code}` | `WELCOME10`, `CASHBACK5`; 404 `coupon_not_found` |
 * | `POST /pix-keys/user-key`, `POST /pix-keys/update-user-key-v2` | the user's PIX key (seeded with the CPF) |
 * | `GET /mex-bank-accounts/user-account`, `POST /mex-bank-accounts/store` | the MX account (`clabe`, 18 digits) |
 * | `GET /generic-bank-accounts/user-account`, `POST /generic-bank-accounts/store`, and the same at `GET`/`POST /bff/users/bank-account` | the generic bank account |
 *
 * Deposit refusals (422 unless noted): `user_mismatch` (403, `user_id` is not the token's user),
 * `forbidden_field` (a signup-only field such as `src` or `affiliation_code`, spec 2.7 rule 1),
 * `validation_error`, `unknown_method`, `currency_mismatch`, `amount_below_minimum`,
 * `amount_above_maximum`, `card_declined`, `deposit_limit_exceeded` (the user's `spa_deposit_limit`
 * for `spa_period_limit`, with `limit`, `remaining` and `period`).
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { FORBIDDEN_DEPOSIT_FIELDS, type MethodClass, methodClassOf } from '../../contracts/payments.js';
import type { SandboxArea } from '../context.js';
import { asRecord, checkFields, sendError, sendValidationError } from '../http.js';
import { defineUserState, type SandboxStore } from '../store.js';
import type { SandboxUser } from '../types.js';
import { withUser } from './guard.js';
import { addTransaction, moveBalance, type SandboxTransaction, walletOf, walletState } from './wallet.js';

/** How long a deposit's `Idempotency-Key` is kept (24 h), in milliseconds. */
export const IDEMPOTENCY_KEEP_MS = 24 * 60 * 60 * 1000;
/** Most `Idempotency-Key`s kept per user (the oldest dropped first). */
export const IDEMPOTENCY_KEYS_PER_USER = 1_000;

/** A pending charge is paid from this poll of `GET /wallet/charge/{id}` on. */
export const PAID_AFTER_POLLS = 2;

/** A provider record of the sandbox (fields chosen here; spec 2.8 does not show them). Amounts in cents. */
export interface SandboxProvider {
  id: number;
  name: string;
  method: string;
  icon: string;
  country: string;
  currency?: string;
  currencies?: string[];
  min_amount: number;
  max_amount: number;
  /** Withdraw only: the fields the method needs. */
  requires?: string[];
}

function provider(
  id: number,
  name: string,
  method: string,
  country: string,
  currency: string | string[],
  min: number,
  max: number,
  requires?: string[],
): SandboxProvider {
  return {
    id,
    name,
    method,
    icon: `payments/${method}`,
    country,
    ...(Array.isArray(currency) ? { currencies: currency } : { currency }),
    min_amount: min,
    max_amount: max,
    ...(requires ? { requires } : {}),
  };
}

/** The provider catalogue: BR, MX, CHL and a multi-currency crypto method. */
export const PROVIDERS: { deposit: SandboxProvider[]; withdraw: SandboxProvider[] } = {
  deposit: [
    provider(1, 'PIX', 'pix', 'BR', 'BRL', 1_000, 5_000_000),
    provider(2, 'PIX Express', 'pix-express', 'BR', 'BRL', 1_000, 1_000_000),
    provider(3, 'SPEI', 'spei', 'MX', 'MXN', 10_000, 10_000_000),
    provider(4, 'OXXO', 'oxxo', 'MX', 'MXN', 10_000, 1_000_000),
    provider(5, 'Tarjeta', 'credit-card-2', 'MX', 'MXN', 10_000, 5_000_000),
    provider(6, 'Tarjeta', 'credit-card', 'CL', 'CLP', 100_000, 100_000_000),
    provider(7, 'Webpay', 'webpay', 'CL', 'CLP', 100_000, 100_000_000),
    provider(8, 'Tarjeta', 'credit-card-form', 'CL', 'CLP', 100_000, 100_000_000),
    provider(9, 'Billetera', 'wallet', 'CL', 'CLP', 100_000, 50_000_000),
    provider(10, 'Banco', 'bank-link', 'CL', 'CLP', 100_000, 100_000_000),
    provider(11, 'Crypto', 'crypto', 'ALL', ['BRL', 'MXN', 'CLP'], 5_000, 100_000_000),
  ],
  withdraw: [
    provider(101, 'PIX', 'pix', 'BR', 'BRL', 2_000, 5_000_000, ['pix_key']),
    provider(102, 'SPEI', 'spei', 'MX', 'MXN', 10_000, 10_000_000, ['clabe']),
    provider(103, 'Transferencia', 'bank-transfer', 'CL', 'CLP', 100_000, 100_000_000, ['account_number']),
    provider(104, 'Mobile money', 'mobile-money', 'ALL', ['MXN', 'CLP'], 10_000, 10_000_000, ['phone']),
    provider(105, 'Crypto', 'crypto', 'ALL', ['BRL', 'MXN', 'CLP'], 5_000, 100_000_000, ['wallet_address']),
  ],
};

function takes(p: SandboxProvider, currency: string): boolean {
  return p.currency === currency || (p.currencies ?? []).includes(currency);
}

/** A deposit charge. Amounts in cents; times epoch ms. */
export interface Charge {
  id: string;
  userId: number;
  transactionId: string;
  method: string;
  methodClass: MethodClass;
  amount: number;
  currency: string;
  status: 'pending' | 'paid';
  polls: number;
  createdAt: number;
  paidAt: number | null;
  /** What the flow shows (QR code, CLABE, URL…). */
  payment: Record<string, unknown>;
  /** The wire body as received (card fields masked), for tests. */
  received: Record<string, unknown>;
}

/** Per-user payment state. */
export interface PaymentsState {
  charges: Map<string, Charge>;
  pixKey: { pix_key: string; pix_key_type: string; updated_at: string } | null;
  mexAccount: Record<string, unknown> | null;
  genericAccount: Record<string, unknown> | null;
  /** Deposits by `Idempotency-Key`: the body they came with (JSON text) and the answer given, in insertion order. */
  deposits: Map<string, { body: string; answer: Record<string, unknown>; at: number }>;
}

export const paymentsState = defineUserState('payments', (user, store): PaymentsState => ({
  charges: new Map(),
  pixKey: user.profile.document?.number
    ? { pix_key: user.profile.document.number, pix_key_type: 'cpf', updated_at: new Date(store.now()).toISOString() }
    : null,
  mexAccount: null,
  genericAccount: null,
  deposits: new Map(),
}));

/** Banks by country. */
const BANKS: Readonly<Record<string, { code: string; name: string }[]>> = {
  BR: [
    { code: '001', name: 'Banco do Brasil' },
    { code: '104', name: 'Caixa Econômica Federal' },
    { code: '237', name: 'Bradesco' },
    { code: '260', name: 'Nu Pagamentos' },
    { code: '341', name: 'Itaú Unibanco' },
  ],
  MX: [
    { code: '002', name: 'Banamex' },
    { code: '012', name: 'BBVA México' },
    { code: '072', name: 'Banorte' },
  ],
  CL: [
    { code: '001', name: 'Banco de Chile' },
    { code: '012', name: 'BancoEstado' },
    { code: '037', name: 'Banco Santander Chile' },
  ],
};

/** Coupons by code: a deposit bonus in percent, bounds in cents. */
const COUPONS: Readonly<Record<string, Record<string, unknown>>> = {
  WELCOME10: { code: 'WELCOME10', type: 'deposit_bonus', percentage: 10, min_deposit: 2_000, max_bonus: 50_000, valid: true },
  CASHBACK5: { code: 'CASHBACK5', type: 'cashback', percentage: 5, min_deposit: 5_000, max_bonus: 20_000, valid: true },
};

const PERIOD_MS: Readonly<Record<string, number>> = { daily: 86_400_000, weekly: 7 * 86_400_000, monthly: 30 * 86_400_000 };

function token(bytes = 8): string {
  return randomBytes(bytes).toString('hex');
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return digits.length >= 12 && sum % 10 === 0;
}

/** The data of a method class's flow for a new charge. */
function paymentData(methodClass: MethodClass, id: string, amount: number, store: SandboxStore): Record<string, unknown> {
  const expires = new Date(store.now() + 30 * 60_000).toISOString();
  const copyPaste = `00020126580014BR.GOV.BCB.PIX0136${id}5204000053039865405${(amount / 100).toFixed(2)}5802BR6304ABCD`;
  const byClass: Record<MethodClass, () => Record<string, unknown>> = {
    'pix-like': () => ({ qr_code: Buffer.from(copyPaste).toString('base64'), qr_code_text: copyPaste, expires_at: expires }),
    spei: () => ({
      clabe: `646180${String(Date.now()).slice(-12).padStart(12, '0')}`,
      bank: 'STP',
      reference: id.slice(-7),
      barcode: `SPEI${id.slice(-10)}`,
    }),
    oxxo: () => ({ barcode: `9${String(amount).padStart(10, '0')}${id.slice(-8)}`, reference: id.slice(-10), expires_at: expires }),
    'checkout-page': () => ({ checkout_page: `https://checkout.sandbox.example/pay/${id}` }),
    'card-form': () => ({ authorization_code: token(3).toUpperCase() }),
    wallet: () => ({ qr_code: Buffer.from(`wallet:${id}`).toString('base64'), app_link: `walletapp://pay/${id}` }),
    redirect: () => ({ redirect_url: `https://pay.sandbox.example/redirect/${id}` }),
    'external-redirect': () => ({ redirect_url: `https://bank.sandbox.example/authorize/${id}`, new_tab: true }),
  };
  return byClass[methodClass]();
}

function depositedInPeriod(store: SandboxStore, user: SandboxUser, periodMs: number): number {
  const since = store.now() - periodMs;
  return store
    .userState(walletState, user)
    .transactions.filter((t) => t.type === 'deposit' && t.status !== 'failed' && Date.parse(t.created_at) >= since)
    .reduce((sum, t) => sum + t.amount, 0);
}

function findTx(store: SandboxStore, user: SandboxUser, id: string): SandboxTransaction | undefined {
  return store.userState(walletState, user).transactions.find((t) => t.id === id);
}

/** Pays a charge: credits the wallet, marks its transaction paid, records the first deposit. */
function pay(store: SandboxStore, user: SandboxUser, charge: Charge): void {
  charge.status = 'paid';
  charge.paidAt = store.now();
  moveBalance(store, user, charge.amount);
  const tx = findTx(store, user, charge.transactionId);
  if (tx) {
    tx.status = 'paid';
    tx.updated_at = new Date(charge.paidAt).toISOString();
  }
  if (user.profile.ftd_date === null) {
    user.profile.ftd_date = new Date(charge.paidAt).toISOString();
    user.profile.ftd_value = charge.amount;
  }
}

function chargeView(charge: Charge, user: SandboxUser, store: SandboxStore) {
  return {
    transaction_id: charge.id,
    status: charge.status,
    method: charge.method,
    amount: charge.amount,
    currency: charge.currency,
    created_at: new Date(charge.createdAt).toISOString(),
    paid_at: charge.paidAt === null ? null : new Date(charge.paidAt).toISOString(),
    payment: charge.payment,
    wallet: { ...walletOf(user, store) },
  };
}

/** The payments area of the BFF. */
export const paymentsArea: SandboxArea = {
  name: 'payments',
  register(app, ctx) {
    const { store } = ctx;

    app.get(
      '/payment-providers',
      withUser(async (request) => {
        const currency = asRecord(request.query).currency;
        if (typeof currency !== 'string' || currency === '') return PROVIDERS;
        return {
          deposit: PROVIDERS.deposit.filter((p) => takes(p, currency)),
          withdraw: PROVIDERS.withdraw.filter((p) => takes(p, currency)),
        };
      }),
    );

    app.post(
      '/wallet/add-credit',
      withUser(async (request, reply, user) => {
        const body = asRecord(request.body);
        const header = request.headers['idempotency-key'];
        const key = typeof header === 'string' && header !== '' ? header : undefined;
        const deposits = store.userState(paymentsState, user).deposits;
        const earlier = key === undefined ? undefined : deposits.get(key);
        if (earlier !== undefined && store.now() - earlier.at < IDEMPOTENCY_KEEP_MS) {
          if (earlier.body !== JSON.stringify(body))
            return sendError(reply, 422, 'idempotency_key_reused', 'This Idempotency-Key was used with another deposit.');
          return reply.code(201).header('idempotent-replayed', 'true').send(earlier.answer);
        }
        const leaked = FORBIDDEN_DEPOSIT_FIELDS.filter((f) => f in body);
        if (leaked.length > 0) return sendError(reply, 422, 'forbidden_field', `A deposit must not carry ${leaked.join(', ')}.`);
        const checked = checkFields(body, {
          user_id: 'number',
          credit_amount: 'number',
          payment_method: 'string',
          currency: 'string',
          coupon_code: 'string?',
          card_number: 'string?',
        });
        if (!checked.ok) return sendValidationError(reply, checked.errors);
        const input = checked.value;
        if (input.user_id !== user.id) return sendError(reply, 403, 'user_mismatch', 'You can only deposit into your own wallet.');
        if (!Number.isInteger(input.credit_amount) || input.credit_amount <= 0) {
          return sendValidationError(reply, { credit_amount: ['The credit amount must be a positive integer number of cents.'] });
        }
        const method = PROVIDERS.deposit.find((p) => p.method === input.payment_method);
        const methodClass = methodClassOf(input.payment_method);
        if (!method || !methodClass) return sendError(reply, 422, 'unknown_method', `Unknown payment method ${input.payment_method}.`);
        const wallet = walletOf(user, store);
        if (input.currency !== wallet.currency || !takes(method, input.currency)) {
          return sendError(reply, 422, 'currency_mismatch', `${input.payment_method} does not take ${input.currency} for this wallet.`);
        }
        if (input.credit_amount < method.min_amount)
          return sendError(reply, 422, 'amount_below_minimum', 'The amount is below the minimum.', { min_amount: method.min_amount });
        if (input.credit_amount > method.max_amount)
          return sendError(reply, 422, 'amount_above_maximum', 'The amount is above the maximum.', { max_amount: method.max_amount });
        if (methodClass === 'card-form' && !luhn(input.card_number ?? '')) {
          return sendError(reply, 422, 'card_declined', 'The card was declined.');
        }
        const limit = user.info.spa_deposit_limit;
        const period = user.info.spa_period_limit ?? 'monthly';
        if (typeof limit === 'number') {
          const used = depositedInPeriod(store, user, PERIOD_MS[period] ?? PERIOD_MS.monthly!);
          if (used + input.credit_amount > limit) {
            return sendError(reply, 422, 'deposit_limit_exceeded', 'The deposit exceeds your deposit limit.', {
              limit,
              remaining: Math.max(0, limit - used),
              period,
            });
          }
        }
        const tx = addTransaction(store, user, {
          type: 'deposit',
          status: 'pending',
          amount: input.credit_amount,
          method: input.payment_method,
          description: `Deposit by ${method.name}`,
        });
        const id = `ch_${token()}`;
        const received = { ...body };
        if (typeof received.card_number === 'string') received.card_number = `**** ${received.card_number.slice(-4)}`;
        if ('card_cvv' in received) received.card_cvv = '***';
        const charge: Charge = {
          id,
          userId: user.id,
          transactionId: tx.id,
          method: input.payment_method,
          methodClass,
          amount: input.credit_amount,
          currency: input.currency,
          status: 'pending',
          polls: 0,
          createdAt: store.now(),
          paidAt: null,
          payment: paymentData(methodClass, id, input.credit_amount, store),
          received,
        };
        store.userState(paymentsState, user).charges.set(id, charge);
        if (methodClass === 'card-form') pay(store, user, charge);
        const answer = { ...chargeView(charge, user, store), method_class: methodClass };
        if (key !== undefined) {
          deposits.delete(key);
          deposits.set(key, { body: JSON.stringify(body), answer, at: store.now() });
          if (deposits.size > IDEMPOTENCY_KEYS_PER_USER) deposits.delete(deposits.keys().next().value as string);
        }
        return reply.code(201).send(answer);
      }),
    );

    app.get<{ Params: { id: string } }>(
      '/wallet/charge/:id',
      withUser<{ Params: { id: string } }>(async (request, reply, user) => {
        const charge = store.userState(paymentsState, user).charges.get(request.params.id);
        if (!charge) return sendError(reply, 404, 'charge_not_found', 'Charge not found.');
        charge.polls += 1;
        if (charge.status === 'pending' && charge.polls >= PAID_AFTER_POLLS) pay(store, user, charge);
        return chargeView(charge, user, store);
      }),
    );

    app.post(
      '/new-withdraws',
      withUser(async (request, reply, user) => {
        const body = asRecord(request.body);
        const checked = checkFields(body, { amount: 'number', method: 'string', currency: 'string?' });
        if (!checked.ok) return sendValidationError(reply, checked.errors);
        const { amount, method: slug } = checked.value;
        if (!Number.isInteger(amount) || amount <= 0) {
          return sendValidationError(reply, { amount: ['The amount must be a positive integer number of cents.'] });
        }
        const wallet = walletOf(user, store);
        const method = PROVIDERS.withdraw.find((p) => p.method === slug && takes(p, wallet.currency));
        if (!method) return sendError(reply, 422, 'unknown_method', `${slug} is not a withdraw method for ${wallet.currency}.`);
        const payments = store.userState(paymentsState, user);
        const stored: Record<string, unknown> = {
          pix_key: payments.pixKey?.pix_key,
          clabe: payments.mexAccount?.clabe,
          account_number: payments.genericAccount?.account_number,
        };
        const missing = (method.requires ?? []).filter((f) => (body[f] ?? stored[f]) === undefined);
        if (missing.length > 0) {
          return sendValidationError(reply, Object.fromEntries(missing.map((f) => [f, [`The ${f} field is required for ${slug}.`]])));
        }
        if (amount < method.min_amount)
          return sendError(reply, 422, 'amount_below_minimum', 'The amount is below the minimum.', { min_amount: method.min_amount });
        if (amount > method.max_amount)
          return sendError(reply, 422, 'amount_above_maximum', 'The amount is above the maximum.', { max_amount: method.max_amount });
        if (amount > wallet.withdrawable_balance) {
          return sendError(reply, 422, 'insufficient_balance', 'The amount is above your withdrawable balance.', {
            withdrawable_balance: wallet.withdrawable_balance,
          });
        }
        moveBalance(store, user, -amount);
        const tx = addTransaction(store, user, {
          type: 'withdraw',
          status: 'approved',
          amount,
          method: slug,
          description: `Withdrawal by ${method.name}`,
        });
        return reply.code(201).send({
          id: tx.id,
          transaction_id: tx.id,
          status: tx.status,
          amount,
          currency: wallet.currency,
          method: slug,
          receipt_available: true,
          wallet: { ...wallet },
        });
      }),
    );

    app.get(
      '/bff/users/bank-list',
      withUser(async (_request, _reply, user) => ({ banks: BANKS[user.profile.country] ?? [] })),
    );

    app.get<{ Params: { code: string } }>(
      '/coupons/:code',
      withUser<{ Params: { code: string } }>(async (request, reply) => {
        const coupon = COUPONS[request.params.code.toUpperCase()];
        if (!coupon) return sendError(reply, 404, 'coupon_not_found', 'Coupon not found.');
        return coupon;
      }),
    );

    app.post(
      '/pix-keys/user-key',
      withUser(async (_request, _reply, user) => {
        const key = store.userState(paymentsState, user).pixKey;
        return key ?? { pix_key: null, pix_key_type: null };
      }),
    );

    app.post(
      '/pix-keys/update-user-key-v2',
      withUser(async (request, reply, user) => {
        const checked = checkFields(request.body, { pix_key: 'string', pix_key_type: 'string' });
        if (!checked.ok) return sendValidationError(reply, checked.errors);
        const { pix_key, pix_key_type } = checked.value;
        const formats: Record<string, RegExp> = {
          cpf: /^[0-9]{11}$/,
          cnpj: /^[0-9]{14}$/,
          email: /^[^@\s]+@[^@\s]+\.[^@\s]+$/,
          phone: /^\+?[0-9]{10,14}$/,
          random: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
        };
        const format = formats[pix_key_type];
        if (!format) return sendValidationError(reply, { pix_key_type: ['Unknown PIX key type.'] });
        if (!format.test(pix_key)) return sendValidationError(reply, { pix_key: [`The PIX key is not a valid ${pix_key_type}.`] });
        const key = { pix_key, pix_key_type, updated_at: new Date(store.now()).toISOString() };
        store.userState(paymentsState, user).pixKey = key;
        return { message: 'PIX key updated', ...key };
      }),
    );

    app.get(
      '/mex-bank-accounts/user-account',
      withUser(async (_request, _reply, user) => ({ account: store.userState(paymentsState, user).mexAccount })),
    );

    app.post(
      '/mex-bank-accounts/store',
      withUser(async (request, reply, user) => {
        const checked = checkFields(request.body, { clabe: 'string', bank: 'string?', holder_name: 'string?' });
        if (!checked.ok) return sendValidationError(reply, checked.errors);
        if (!/^[0-9]{18}$/.test(checked.value.clabe)) return sendValidationError(reply, { clabe: ['The CLABE must have 18 digits.'] });
        const account = { ...checked.value, updated_at: new Date(store.now()).toISOString() };
        store.userState(paymentsState, user).mexAccount = account;
        return { message: 'Bank account stored', account };
      }),
    );

    const readGeneric = withUser(async (_request, _reply, user) => ({ account: store.userState(paymentsState, user).genericAccount }));
    const storeGeneric = withUser(async (request, reply, user) => {
      const checked = checkFields(request.body, {
        bank_code: 'string',
        account_number: 'string',
        account_type: 'string?',
        agency: 'string?',
        holder_name: 'string?',
      });
      if (!checked.ok) return sendValidationError(reply, checked.errors);
      const account = { ...checked.value, updated_at: new Date(store.now()).toISOString() };
      store.userState(paymentsState, user).genericAccount = account;
      return { message: 'Bank account stored', account };
    });
    app.get('/generic-bank-accounts/user-account', readGeneric);
    app.post('/generic-bank-accounts/store', storeGeneric);
    app.get('/bff/users/bank-account', readGeneric);
    app.post('/bff/users/bank-account', storeGeneric);
  },
};
