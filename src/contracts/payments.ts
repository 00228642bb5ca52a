/**
 * The payment shapes of spec 2.7 and 2.8 as schemas, types and declarative tables: the client
 * DepositPayload (camelCase) and its snake_case wire mapping, the payment-method classes, provider
 * records with their icon URLs, the withdraw payload and the bank-account hub of spec 4.5.
 *
 * Every amount is an integer number of cents, except where a name says `units`.
 *
 * @module
 */
import { type Static, Type } from '@sinclair/typebox';
import type { HttpMethod } from '../upstream/client.js';

/** Largest deposit or withdrawal accepted by the proxy, in cents (1 000 000.00 currency units). */
export const MAX_AMOUNT_CENTS = 100_000_000;

/** An amount in cents: an integer from 1 to {@link MAX_AMOUNT_CENTS}. Negative, zero and fractional values are refused. */
export const Cents = (description: string) =>
  Type.Integer({ minimum: 1, maximum: MAX_AMOUNT_CENTS, description: `${description}, in cents` });

const Slug = Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' });
const Currency = Type.String({ pattern: '^[A-Z]{3}$' });
/** PIX key kinds (BR). */
export const PIX_KEY_TYPES = ['cpf', 'cnpj', 'email', 'phone', 'random'] as const;
const PixKeyType = Type.Union(PIX_KEY_TYPES.map((t) => Type.Literal(t)));
const Attribution = (max = 256) => Type.Optional(Type.String({ minLength: 1, maxLength: max }));

// ---------------------------------------------------------------------------------------------
// spec 2.8 method classes

/** The method classes of spec 2.8; the class decides the front end's flow. */
export const METHOD_CLASSES = [
  'pix-like',
  'spei',
  'oxxo',
  'checkout-page',
  'card-form',
  'wallet',
  'redirect',
  'external-redirect',
] as const;
export type MethodClass = (typeof METHOD_CLASSES)[number];

/**
 * Slug → class (spec 2.8). `credit-card-2` and `credit-card-form` are the two card-form slugs: only
 * they carry card fields in a deposit.
 */
export const METHOD_CLASS_BY_SLUG = {
  pix: 'pix-like',
  'pix-2': 'pix-like',
  'pix-auto': 'pix-like',
  spei: 'spei',
  oxxo: 'oxxo',
  'credit-card': 'checkout-page',
  'bank-transfer': 'checkout-page',
  webpay: 'checkout-page',
  'credit-card-2': 'card-form',
  'credit-card-form': 'card-form',
  wallet: 'wallet',
  crypto: 'redirect',
  'mobile-money': 'redirect',
  'bank-link': 'external-redirect',
} as const satisfies Record<string, MethodClass>;

/**
 * Prefix rules for provider-specific slugs not listed in {@link METHOD_CLASS_BY_SLUG}
 * (spec 2.8: "a dozen provider-specific slugs" of the PIX-like class, and the like).
 */
export const METHOD_CLASS_BY_PREFIX: readonly (readonly [prefix: string, methodClass: MethodClass])[] = [
  ['pix-', 'pix-like'],
  ['checkout-', 'checkout-page'],
  ['redirect-', 'redirect'],
  ['external-', 'external-redirect'],
];

/** The class of a payment method slug, or `null` when the slug is unknown (the front end then hides it). */
export function methodClassOf(slug: string): MethodClass | null {
  const exact = (METHOD_CLASS_BY_SLUG as Readonly<Record<string, MethodClass>>)[slug];
  if (exact && Object.hasOwn(METHOD_CLASS_BY_SLUG, slug)) return exact;
  for (const [prefix, methodClass] of METHOD_CLASS_BY_PREFIX) if (slug.startsWith(prefix)) return methodClass;
  return null;
}

/** The card-form slugs (spec 2.7: card fields only for these). */
export const CARD_FORM_SLUGS: readonly string[] = Object.entries(METHOD_CLASS_BY_SLUG)
  .filter(([, c]) => c === 'card-form')
  .map(([slug]) => slug);

// ---------------------------------------------------------------------------------------------
// spec 2.7 DepositPayload

/**
 * spec 2.7 DepositPayload, the client shape (camelCase). Fields not listed here are ignored (never
 * forwarded): the wire body is built from {@link DEPOSIT_WIRE_NAMES} only.
 *
 * - `creditAmount`: integer cents, 1 … {@link MAX_AMOUNT_CENTS}.
 * - `userId`: must be the session's own user id (otherwise 403 `user_mismatch`).
 * - card fields: all five for the card-form slugs ({@link CARD_FORM_SLUGS}), none for any other method.
 */
export const DepositPayload = Type.Object({
  userId: Type.Integer({ minimum: 1 }),
  creditAmount: Cents('deposit amount'),
  paymentMethod: Slug,
  currency: Currency,
  couponCode: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })),
  utmCampaign: Attribution(),
  utmSource: Attribution(),
  utmMedium: Attribution(),
  utmContent: Attribution(),
  gaClientId: Attribution(128),
  cardNumber: Type.Optional(Type.String({ pattern: '^[0-9]{12,19}$' })),
  cardName: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  cardExpiryMonth: Type.Optional(Type.String({ pattern: '^(0[1-9]|1[0-2])$' })),
  cardExpiryYear: Type.Optional(Type.String({ pattern: '^([0-9]{2}|[0-9]{4})$' })),
  cardCvv: Type.Optional(Type.String({ pattern: '^[0-9]{3,4}$' })),
});
export type DepositPayload = Static<typeof DepositPayload>;

/** spec 2.7: client field → wire name, in the specification's order. The only source of the wire body. */
export const DEPOSIT_WIRE_NAMES = {
  userId: 'user_id',
  creditAmount: 'credit_amount',
  paymentMethod: 'payment_method',
  currency: 'currency',
  couponCode: 'coupon_code',
  utmCampaign: 'utm_campaign',
  utmSource: 'utm_source',
  utmMedium: 'utm_medium',
  utmContent: 'utm_content',
  gaClientId: 'ga_client_id',
  cardNumber: 'card_number',
  cardName: 'card_name',
  cardExpiryMonth: 'card_expiry_month',
  cardExpiryYear: 'card_expiry_year',
  cardCvv: 'card_cvv',
} as const satisfies Record<keyof DepositPayload, string>;

export type DepositWireName = (typeof DEPOSIT_WIRE_NAMES)[keyof typeof DEPOSIT_WIRE_NAMES];

/** spec 2.7 rule 1: fields that belong to signup only and never reach a deposit. */
export const FORBIDDEN_DEPOSIT_FIELDS = ['src', 'utm_src', 'affiliation_code', 'app_source'] as const;

/** The card fields of a DepositPayload (client names). */
export const CARD_FIELDS = ['cardNumber', 'cardName', 'cardExpiryMonth', 'cardExpiryYear', 'cardCvv'] as const;

/** The body of `POST /wallet/add-credit` (spec 2.7 wire names). `credit_amount` is in cents. */
export type DepositWire = { user_id: number; credit_amount: number; payment_method: string; currency: string } & Partial<
  Record<Exclude<DepositWireName, 'user_id' | 'credit_amount' | 'payment_method' | 'currency'>, string>
>;

/** Attribution read from the cookies (wire names), used where the body has none (docs/behaviour.md "Clarifications of the specification"). */
export interface CookieAttribution {
  utm_source?: string;
  utm_campaign?: string;
  utm_content?: string;
  utm_medium?: string;
  ga_client_id?: string;
}

/**
 * Why the card fields of a payload do not fit its method, or `undefined` when they do: the
 * card-form slugs need all five card fields, every other method none.
 */
export function cardFieldProblem(payload: DepositPayload): string | undefined {
  const present = CARD_FIELDS.filter((f) => payload[f] !== undefined);
  const cardForm = methodClassOf(payload.paymentMethod) === 'card-form';
  if (!cardForm && present.length > 0) {
    return `card fields (${present.join(', ')}) are only accepted for ${CARD_FORM_SLUGS.join(', ')}`;
  }
  if (cardForm && present.length < CARD_FIELDS.length) {
    const missing = CARD_FIELDS.filter((f) => payload[f] === undefined);
    return `${payload.paymentMethod} needs the card fields ${missing.join(', ')}`;
  }
  return undefined;
}

const DEPOSIT_WIRE_ENTRIES = Object.entries(DEPOSIT_WIRE_NAMES);

/**
 * Maps a validated DepositPayload to the wire body of `POST /wallet/add-credit` (spec 2.7): each
 * field of {@link DEPOSIT_WIRE_NAMES} that is present, under its wire name, in the table's order,
 * nothing else. Attribution absent from the body is filled from `cookies` (body values win). The
 * result never carries a field of {@link FORBIDDEN_DEPOSIT_FIELDS}. Its values are strings and numbers
 * and its keys come in a fixed order, so `JSON.stringify` of it is canonical: equal deposits give
 * equal text (the double-submit key).
 *
 * @example
 * toDepositWire({ userId: 7, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' }, { utm_source: 'news' })
 * // { user_id: 7, credit_amount: 5000, payment_method: 'pix', currency: 'BRL', utm_source: 'news' }
 * @throws {Error} if a forbidden field would be sent (cannot happen with the table above; a guard against edits).
 */
export function toDepositWire(payload: DepositPayload, cookies: CookieAttribution = {}): DepositWire {
  const wire: Record<string, unknown> = {};
  const source = payload as Record<string, unknown>;
  const fallback = cookies as Record<string, unknown>;
  // Fields in the table's order whatever their source, so that equal deposits serialise to equal text.
  for (const [client, name] of DEPOSIT_WIRE_ENTRIES) {
    const value = source[client];
    if (value !== undefined) {
      wire[name] = value;
      continue;
    }
    const cookie = fallback[name];
    if (typeof cookie === 'string' && cookie !== '') wire[name] = cookie;
  }
  for (const forbidden of FORBIDDEN_DEPOSIT_FIELDS) {
    if (forbidden in wire) throw new Error(`deposit wire body must not carry ${forbidden}`);
  }
  return wire as DepositWire;
}

/**
 * Keys of a deposit answer that hold the real-wallet record (spec 2.7 rule 2), in the order looked
 * for. The record's `balance` (cents) is answered in currency units; the original stays as `balance_cents`.
 */
export const REAL_WALLET_KEYS = ['real_wallet', 'wallet'] as const;

/**
 * Converts the real-wallet record of a deposit answer from cents to currency units (spec 2.7 rule 2):
 * `wallet.balance: 155000` → `wallet.balance: 1550, wallet.balance_cents: 155000`. Only an integer
 * `balance` is converted; the answer is returned as a new object, the input is not changed.
 */
export function realWalletInUnits<T>(answer: T): T {
  if (!answer || typeof answer !== 'object' || Array.isArray(answer)) return answer;
  const record = answer as Record<string, unknown>;
  for (const key of REAL_WALLET_KEYS) {
    const wallet = record[key];
    if (!wallet || typeof wallet !== 'object' || Array.isArray(wallet)) continue;
    const { balance } = wallet as Record<string, unknown>;
    if (typeof balance !== 'number' || !Number.isInteger(balance)) continue;
    // The copy keeps the record's key order; the wallet is put in its place by a store, not by a
    // computed key in the literal (which V8 defines property by property at run time).
    const converted: Record<string, unknown> = { ...record };
    converted[key] = { ...wallet, balance: centsToUnits(balance), balance_cents: balance };
    return converted as T;
  }
  return answer;
}

/** `155001` cents → `1550.01` units. */
export function centsToUnits(cents: number): number {
  return Math.round(cents) / 100;
}

/**
 * Upstream refusal reasons of a deposit or withdrawal that report an amount bound, with the field of
 * the upstream body that holds the bound (`min_amount` / `max_amount`, integer cents) and the extra
 * envelope field the proxy answers it under (spec 7.4.2: extra fields on statuses other than 401/403).
 */
export const AMOUNT_BOUNDS = {
  amount_below_minimum: { upstream: 'min_amount', envelope: 'minimumCents' },
  amount_above_maximum: { upstream: 'max_amount', envelope: 'maximumCents' },
} as const satisfies Record<string, { upstream: string; envelope: string }>;

/** The extra envelope field of an amount bound: `minimumCents` or `maximumCents`, integer cents. */
export type AmountBoundField = (typeof AMOUNT_BOUNDS)[keyof typeof AMOUNT_BOUNDS]['envelope'];

/**
 * The amount bound an upstream refusal reports, as the extra envelope field, or `undefined`: for the
 * reason `amount_below_minimum` the upstream's `min_amount` as `minimumCents`, for
 * `amount_above_maximum` its `max_amount` as `maximumCents`. Only a non-negative integer (cents) is taken.
 *
 * @example
 * amountBoundOf('amount_below_minimum', { reason: 'amount_below_minimum', min_amount: 1000 }) // { minimumCents: 1000 }
 */
export function amountBoundOf(reason: string | undefined, data: unknown): Partial<Record<AmountBoundField, number>> | undefined {
  if (reason === undefined || !Object.hasOwn(AMOUNT_BOUNDS, reason)) return undefined;
  if (!data || typeof data !== 'object' || Array.isArray(data)) return undefined;
  const bound = AMOUNT_BOUNDS[reason as keyof typeof AMOUNT_BOUNDS];
  const value = (data as Record<string, unknown>)[bound.upstream];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) return undefined;
  return { [bound.envelope]: value };
}

/** Request body fields that are amounts in cents ({@link Cents}): a deposit's `creditAmount`, a withdrawal's or transfer's `amount`. */
export const CENTS_AMOUNT_FIELDS: readonly string[] = ['creditAmount', 'amount'];

/**
 * The bound a request amount broke, as the extra field of the proxy's own 400 `invalid_request`
 * (nothing sent upstream): `{ minimumCents }` for a failed `minimum`, `{ maximumCents }` for a
 * failed `maximum` of a field of {@link CENTS_AMOUNT_FIELDS}; `undefined` for anything else.
 *
 * @param field - the failing body field's name (last segment of its path).
 * @param keyword - the schema keyword that failed (`minimum`, `maximum`, `type`…).
 * @param limit - the keyword's limit, in cents.
 * @example requestAmountBound('creditAmount', 'minimum', 1) // { minimumCents: 1 }
 */
export function requestAmountBound(field: string, keyword: string, limit: unknown): Partial<Record<AmountBoundField, number>> | undefined {
  if (!CENTS_AMOUNT_FIELDS.includes(field) || typeof limit !== 'number' || !Number.isSafeInteger(limit)) return undefined;
  if (keyword === 'minimum') return { minimumCents: limit };
  if (keyword === 'maximum') return { maximumCents: limit };
  return undefined;
}

/** A deposit error reason that reports a responsible-gaming limit (spec 7.4.2 `limitError`). */
export const LIMIT_REASON = /(^|_)(limit|limits)(_|$)|responsible_gaming|self_excluded|spa_/;

// ---------------------------------------------------------------------------------------------
// spec 2.8 providers

/** A provider record as the BFF answers it (fields not shown by the specification are kept as they come). */
export interface ProviderRecord {
  /** Payment method slug. */
  method?: string;
  slug?: string;
  /** Icon reference `payments/<method>`. */
  icon?: string;
  currency?: string;
  currencies?: string[];
  [field: string]: unknown;
}

/** A provider as the proxy answers it: the record plus its icon URL and method class. */
export type ProviderView = ProviderRecord & { iconUrl: string | null; methodClass: MethodClass | null };

/** `GET /api/payments/providers` answer (spec 2.8). */
export interface ProvidersAnswer {
  deposit: ProviderView[];
  withdraw: ProviderView[];
}

const ICON_REF = /^payments\/([a-z0-9][a-z0-9_-]{0,63})$/;

/**
 * The icon URL of an icon reference (spec 2.8): `payments/pix` → `/icons/payments/pix.svg`, or
 * `<prefix>/payments/pix.svg` with `PAYMENT_ICON_PREFIX`. Anything but `payments/<slug>` → `null`.
 */
export function iconUrl(ref: unknown, prefix: string | undefined): string | null {
  if (typeof ref !== 'string') return null;
  const match = ICON_REF.exec(ref);
  if (!match) return null;
  return `${prefix ?? '/icons'}/payments/${match[1]}.svg`;
}

/** The slug of a provider record (`method`, else `slug`). */
export function providerSlug(record: ProviderRecord): string | undefined {
  const slug = record.method ?? record.slug;
  return typeof slug === 'string' ? slug : undefined;
}

/** Whether a provider takes `currency`: a record that names no currency is kept. */
export function providerTakes(record: ProviderRecord, currency: string): boolean {
  if (typeof record.currency === 'string') return record.currency.toUpperCase() === currency;
  if (Array.isArray(record.currencies)) return record.currencies.some((c) => String(c).toUpperCase() === currency);
  return true;
}

/** The proxy's view of a provider record: `iconUrl` and `methodClass` added. */
export function providerView(record: ProviderRecord, prefix: string | undefined): ProviderView {
  const slug = providerSlug(record);
  return { ...record, iconUrl: iconUrl(record.icon, prefix), methodClass: slug ? methodClassOf(slug) : null };
}

// ---------------------------------------------------------------------------------------------
// spec 4.5 withdraw

/**
 * The withdraw payload (spec 4.5 "PIX, SPEI, bank, phone"; fields not given by the specification are
 * chosen here). `amount` is in cents. Sent to `POST /new-withdraws` under the same names, from the
 * explicit list {@link WITHDRAW_FIELDS}.
 */
export const WithdrawPayload = Type.Object({
  amount: Cents('withdrawal amount'),
  method: Slug,
  currency: Type.Optional(Currency),
  pix_key: Type.Optional(Type.String({ minLength: 1, maxLength: 140 })),
  pix_key_type: Type.Optional(PixKeyType),
  clabe: Type.Optional(Type.String({ pattern: '^[0-9]{18}$' })),
  bank_code: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9]{1,16}$' })),
  bank_name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  agency: Type.Optional(Type.String({ pattern: '^[0-9-]{1,16}$' })),
  account_number: Type.Optional(Type.String({ pattern: '^[0-9A-Za-z-]{1,34}$' })),
  account_type: Type.Optional(Type.String({ pattern: '^[a-z_]{1,32}$' })),
  account_holder: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  document: Type.Optional(Type.String({ pattern: '^[0-9A-Za-z.-]{1,32}$' })),
  ddi: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$' })),
  phone: Type.Optional(Type.String({ pattern: '^[0-9]{4,20}$' })),
});
export type WithdrawPayload = Static<typeof WithdrawPayload>;

/** The fields of a withdraw sent upstream, in order. */
export const WITHDRAW_FIELDS = Object.keys(WithdrawPayload.properties) as readonly (keyof WithdrawPayload)[];

/** The body of `POST /new-withdraws`: the fields of {@link WITHDRAW_FIELDS} that are present. */
export function toWithdrawWire(payload: WithdrawPayload): WithdrawPayload {
  const wire: Record<string, unknown> = {};
  for (const field of WITHDRAW_FIELDS) if (payload[field] !== undefined) wire[field] = payload[field];
  return wire as WithdrawPayload;
}

// ---------------------------------------------------------------------------------------------
// spec 4.5 bank-account hub and PIX key

/** The PIX key update body (`POST /pix-keys/update-user-key-v2`). */
export const PixKeyUpdate = Type.Object({
  pix_key: Type.String({ minLength: 1, maxLength: 140 }),
  pix_key_type: PixKeyType,
});
export type PixKeyUpdate = Static<typeof PixKeyUpdate>;

/** One action of the bank-account hub: its upstream call and whether the body's data fields go along. */
export interface BankAccountAction {
  method: HttpMethod;
  path: string;
  sendsData: boolean;
}

/** spec 4.5 `/api/payments/bank-account`: body `type` → upstream call. Any other `type` is a 400. */
export const BANK_ACCOUNT_ACTIONS = {
  'get-pix': { method: 'POST', path: '/pix-keys/user-key', sendsData: false },
  'update-pix': { method: 'POST', path: '/pix-keys/update-user-key-v2', sendsData: true },
  'get-mex': { method: 'GET', path: '/mex-bank-accounts/user-account', sendsData: false },
  'save-mex': { method: 'POST', path: '/mex-bank-accounts/store', sendsData: true },
  'get-generic': { method: 'GET', path: '/generic-bank-accounts/user-account', sendsData: false },
  'save-generic': { method: 'POST', path: '/generic-bank-accounts/store', sendsData: true },
} as const satisfies Record<string, BankAccountAction>;
export type BankAccountType = keyof typeof BANK_ACCOUNT_ACTIONS;

const HubValue = Type.Union([Type.String({ maxLength: 256 }), Type.Number(), Type.Boolean(), Type.Null()]);

/**
 * The hub's body: `type` plus flat data fields (bank-account record fields are not shown by the
 * specification: lower-case names, scalar values, at most 24). `type`, `id` and `user_id` are
 * never forwarded: the BFF knows the user from the token.
 */
export const BankAccountBody = Type.Object(
  { type: Type.Union((Object.keys(BANK_ACCOUNT_ACTIONS) as BankAccountType[]).map((t) => Type.Literal(t))) },
  { additionalProperties: HubValue, maxProperties: 25, propertyNames: { pattern: '^[a-z][a-z0-9_]{0,63}$' } },
);

/** Body fields of the hub that never go upstream. */
export const HUB_DROPPED_FIELDS = ['type', 'id', 'user_id'] as const;
