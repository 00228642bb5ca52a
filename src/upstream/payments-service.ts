/**
 * `paymentsService`: the client payments service contract of spec 4.5 over the BFF, every function
 * typed. Each answers the raw upstream response (any status) so that routes apply the envelope;
 * `readJson` of `auth-service.ts` reads a success body with its type. No function retries: one call,
 * one upstream attempt (a retried deposit could charge twice).
 *
 * Two upstream sets exist for the generic bank account, both implemented as written:
 *
 * | function / hub type | upstream |
 * |---|---|
 * | `getGenericBankAccount()` (client contract) | `GET /bff/users/bank-account` |
 * | `storeGenericBankAccount(data)` (client contract) | `POST /bff/users/bank-account` |
 * | hub `get-generic` (proxy route `/api/payments/bank-account`) | `GET /generic-bank-accounts/user-account` |
 * | hub `save-generic` (proxy route `/api/payments/bank-account`) | `POST /generic-bank-accounts/store` |
 *
 * The proxy routes use the hub paths (the proxy table of spec 4.5 and the EP registry EP0099/EP0100);
 * the contract functions keep the client contract's `/bff/users/bank-account` for callers of this
 * module that talk to a BFF exposing that path.
 *
 * @module
 */
import type { DepositWire, PixKeyUpdate, ProviderRecord, WithdrawPayload } from '../contracts/payments.js';
import type { BffCaller, Typed } from './auth-service.js';
import { buildPath } from './paths.js';

/** `GET /payment-providers` answer: the two collections of spec 2.8. */
export interface PaymentProvidersResponse {
  deposit: ProviderRecord[];
  withdraw: ProviderRecord[];
}

/**
 * `POST /wallet/add-credit` answer (fields not shown by the specification; these are what the
 * proxy reads). `amount` and `wallet.balance` are in cents.
 */
export interface DepositResult {
  transaction_id?: string | number;
  status?: string;
  amount?: number;
  wallet?: { balance?: number; [field: string]: unknown };
  real_wallet?: { balance?: number; [field: string]: unknown };
  [field: string]: unknown;
}

/** `GET /wallet/charge/{transactionId}` answer: the charge and its status (e.g. `pending`, `paid`). */
export interface ChargeStatus {
  transaction_id?: string | number;
  status?: string;
  [field: string]: unknown;
}

/** A withdraw result, a bank list, a PIX key or a bank account record: fields not shown by the specification. */
export type OpenRecord = Record<string, unknown>;

/**
 * The payments service of spec 4.5.
 *
 * - `getPaymentProviders(currency?)` — `GET /payment-providers` → `{ deposit, withdraw }`.
 * - `submitDeposit(wire, text?)` — `POST /wallet/add-credit` with the snake_case body of spec 2.7 (cents);
 *   `text`, when given, is `JSON.stringify(wire)` already made, sent as it is.
 * - `checkDepositStatus(transactionId)` — `GET /wallet/charge/{transactionId}` (the id is a checked path segment).
 * - `submitWithdraw(payload)` — `POST /new-withdraws` (PIX, SPEI, bank, phone; `amount` in cents).
 * - `getBankList()` — `GET /bff/users/bank-list`.
 * - `getPixKey()` — `POST /pix-keys/user-key`.
 * - `updatePixKey(data)` — `POST /pix-keys/update-user-key-v2`.
 * - `getMexBankAccount()` — `GET /mex-bank-accounts/user-account`.
 * - `storeMexBankAccount(data)` — `POST /mex-bank-accounts/store`.
 * - `getGenericBankAccount()` — `GET /bff/users/bank-account`.
 * - `storeGenericBankAccount(data)` — `POST /bff/users/bank-account`.
 *
 * Transport failures reject with `UpstreamError`; HTTP failures resolve with their status.
 * @throws UnsafePathError from `checkDepositStatus` for an id that cannot be a path segment.
 */
export function paymentsService(call: BffCaller) {
  return {
    getPaymentProviders: (currency?: string): Promise<Typed<PaymentProvidersResponse>> =>
      call({ method: 'GET', path: '/payment-providers', query: currency ? { currency } : undefined }),
    submitDeposit: (wire: DepositWire, text?: string): Promise<Typed<DepositResult>> =>
      call({ method: 'POST', path: '/wallet/add-credit', json: wire, jsonText: text }),
    checkDepositStatus: (transactionId: string): Promise<Typed<ChargeStatus>> =>
      call({ method: 'GET', path: buildPath('/wallet/charge/{transactionId}', { transactionId }) }),
    submitWithdraw: (payload: WithdrawPayload): Promise<Typed<OpenRecord>> =>
      call({ method: 'POST', path: '/new-withdraws', json: payload }),
    getBankList: (): Promise<Typed<OpenRecord>> => call({ method: 'GET', path: '/bff/users/bank-list' }),
    getPixKey: (): Promise<Typed<OpenRecord>> => call({ method: 'POST', path: '/pix-keys/user-key', json: {} }),
    updatePixKey: (data: PixKeyUpdate): Promise<Typed<OpenRecord>> =>
      call({ method: 'POST', path: '/pix-keys/update-user-key-v2', json: data }),
    getMexBankAccount: (): Promise<Typed<OpenRecord>> => call({ method: 'GET', path: '/mex-bank-accounts/user-account' }),
    storeMexBankAccount: (data: OpenRecord): Promise<Typed<OpenRecord>> =>
      call({ method: 'POST', path: '/mex-bank-accounts/store', json: data }),
    getGenericBankAccount: (): Promise<Typed<OpenRecord>> => call({ method: 'GET', path: '/bff/users/bank-account' }),
    storeGenericBankAccount: (data: OpenRecord): Promise<Typed<OpenRecord>> =>
      call({ method: 'POST', path: '/bff/users/bank-account', json: data }),
  };
}
export type PaymentsService = ReturnType<typeof paymentsService>;
