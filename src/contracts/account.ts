/**
 * Request shapes of the account routes (spec 4.2 validation, 4.3 user, 4.4 wallet, 4.8 KYC,
 * rewards, income report) as TypeBox schemas. The specification does not give most of these bodies
 * (spec 4.12); where it does not, a route accepts a *flat body*: a JSON object of at most 64
 * scalar fields with identifier-like names, which the BFF validates further.
 *
 * Query values arrive as strings (ajv runs without type coercion): numbers in a query are digit
 * strings, converted by the route.
 *
 * @module
 */
import { type Static, type TProperties, type TSchema, Type } from '@sinclair/typebox';
import { Cents } from './payments.js';

/** A scalar JSON value of a flat body. */
export const Scalar = Type.Union([Type.String({ maxLength: 2048 }), Type.Number(), Type.Boolean(), Type.Null()]);

/**
 * A flat body: the given properties plus any other scalar field (name `^[A-Za-z][A-Za-z0-9_]{0,63}$`,
 * at most 64 fields). Nested objects and arrays are refused.
 */
export function flatBody<P extends TProperties>(properties: P = {} as P) {
  return Type.Object(properties, {
    additionalProperties: Scalar,
    maxProperties: 64,
    propertyNames: { pattern: '^[A-Za-z][A-Za-z0-9_]{0,63}$' },
  });
}

/** A body that may be absent (an empty POST): `null` stands for "no body". */
export function optionalBody<T extends TSchema>(schema: T) {
  return Type.Union([Type.Null(), schema]);
}

/** A body with no fields (`{}`). */
export const EmptyBody = Type.Object({}, { additionalProperties: false });

/** A page number in a query string: digits, converted with {@link pageNumber}. */
export const PageParam = Type.String({ pattern: '^[0-9]{1,6}$' });

/** `"3"` → 3; absent, `"0"` → 1. */
export function pageNumber(value: string | undefined): number {
  const n = value === undefined ? 1 : Number(value);
  return Math.max(n, 1);
}

/** A verification code (e-mail, SMS): 4 to 10 letters or digits. */
export const Code = Type.String({ pattern: '^[A-Za-z0-9]{4,10}$' });

// spec 4.2 ---------------------------------------------------------------------------------------

export const EmailVerifyBody = flatBody({ code: Code });
export const EmailChangeBody = flatBody({ email: Type.String({ pattern: '^[^\\s@]{1,64}@[^\\s@]{1,255}$' }) });
export const SmsVerifyBody = flatBody({ code: Code });
export const SmsChangeBody = flatBody({
  phone: Type.String({ pattern: '^[0-9]{6,20}$' }),
  ddi: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$' })),
});
export const LinkConfirmBody = flatBody({ token: Type.String({ minLength: 1, maxLength: 2048 }) });

/**
 * `/api/address/lookup-by-postal-code` (spec 4.2; spec 4.12 gives no shape): the Brazilian postal
 * code `cep` (`01310-100` or `01310100`, required), plus any other scalar field the front end sends
 * (`postal_code`, `country`…), forwarded to `POST /apicep` unchanged: a flat body (at most 64 fields,
 * strings of at most 2048 characters, no nested object or array).
 */
export const PostalCodeBody = flatBody({ cep: Type.String({ pattern: '^[0-9]{5}-?[0-9]{3}$' }) });

/**
 * Largest body of `/api/address/lookup-by-postal-code`, in bytes (16 KiB): a lookup that needs no
 * session is cheap to send in bulk, and a front end's lookup body is well under 1 KiB.
 */
export const POSTAL_CODE_BODY_LIMIT = 16 * 1024;

// spec 4.3 ---------------------------------------------------------------------------------------

/** Fields of a user body that never go upstream: the user is the session's own (path id or token). */
export const USER_ID_FIELDS = ['id', 'user_id', 'userId'] as const;

export const ChangePasswordBody = flatBody({ password: Type.String({ minLength: 1, maxLength: 256 }) });
export const CheckPasswordBody = flatBody({ password: Type.String({ minLength: 1, maxLength: 256 }) });
export const TwoFactorBody = flatBody({ enabled: Type.Boolean() });

/**
 * The preference metadata keys `/api/user/update-preferences` forwards (spec 4.3 "whitelisted keys").
 * Any other key is a 400 and nothing is sent upstream.
 *
 * | key | value |
 * |---|---|
 * | `language` | BCP 47 tag such as `pt-BR` |
 * | `theme` | `light`, `dark` or `system` |
 * | `odds_format` | `decimal`, `fractional` or `american` |
 * | `timezone` | IANA zone such as `America/Sao_Paulo` |
 * | `notifications_email`, `notifications_sms`, `notifications_push` | boolean |
 * | `hide_balance`, `sound_enabled` | boolean |
 */
export const PREFERENCE_KEYS = {
  language: Type.String({ pattern: '^[a-z]{2,3}(-[A-Z]{2})?$' }),
  theme: Type.Union([Type.Literal('light'), Type.Literal('dark'), Type.Literal('system')]),
  odds_format: Type.Union([Type.Literal('decimal'), Type.Literal('fractional'), Type.Literal('american')]),
  timezone: Type.String({ pattern: '^[A-Za-z_]{1,32}(/[A-Za-z0-9_+-]{1,32}){0,2}$' }),
  notifications_email: Type.Boolean(),
  notifications_sms: Type.Boolean(),
  notifications_push: Type.Boolean(),
  hide_balance: Type.Boolean(),
  sound_enabled: Type.Boolean(),
} as const;

export const UpdatePreferencesBody = Type.Partial(Type.Object(PREFERENCE_KEYS), {
  additionalProperties: false,
  minProperties: 1,
});
export type UpdatePreferencesBody = Static<typeof UpdatePreferencesBody>;

const LimitCents = Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 10_000_000_000 }), Type.Null()]));

/**
 * `/api/user/update-limits`: the responsible-gaming limits of spec 2.6. Money limits are integer
 * cents (`null` removes a limit), `spa_time_limit` minutes per day, `spa_period_limit` the period.
 */
export const UpdateLimitsBody = Type.Object(
  {
    spa_bet_limit: LimitCents,
    spa_loss_limit: LimitCents,
    spa_deposit_limit: LimitCents,
    spa_withdrawal_limit: LimitCents,
    spa_time_limit: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1440 }), Type.Null()])),
    spa_period_limit: Type.Optional(Type.Union([Type.Literal('daily'), Type.Literal('weekly'), Type.Literal('monthly'), Type.Null()])),
    spa_note: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const LoginHistoryQuery = Type.Object({ page: Type.Optional(PageParam) }, { additionalProperties: false });

/** KYC document kinds accepted by `/api/user/store-document` → `POST /documents/{endpoint}`. */
export const DOCUMENT_ENDPOINTS = ['selfie', 'document-front', 'document-back', 'proof-of-address'] as const;
export type DocumentEndpoint = (typeof DOCUMENT_ENDPOINTS)[number];

/** Media types a KYC document may have. */
export const DOCUMENT_MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/heic', 'application/pdf'] as const;

/** Largest KYC document, in bytes (10 MiB). */
export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;

export const StoreDocumentQuery = Type.Object(
  { endpoint: Type.Optional(Type.Union(DOCUMENT_ENDPOINTS.map((e) => Type.Literal(e)))) },
  { additionalProperties: false },
);

// spec 4.4 ---------------------------------------------------------------------------------------

/**
 * `/api/wallet/transactions` filter (spec 4.12: the complete filter set is not shown). `type`
 * `cashback` reads the cashback list; `period` a named period; `start_date`/`end_date` ISO dates.
 */
export const TransactionsBody = Type.Object(
  {
    type: Type.Optional(Type.String({ pattern: '^[a-z][a-z_-]{0,31}$' })),
    period: Type.Optional(Type.String({ pattern: '^[a-z0-9_-]{1,16}$' })),
    start_date: Type.Optional(Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' })),
    end_date: Type.Optional(Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' })),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  },
  { additionalProperties: false },
);
export type TransactionsBody = Static<typeof TransactionsBody>;

/** Wallet actions of `/api/wallet/action` and their upstream paths (spec 4.4). */
export const WALLET_ACTIONS = {
  'bonus-transfer': '/bonus/transfer',
  'cashback-transfer': '/cashback/transfer',
} as const;
export type WalletAction = keyof typeof WALLET_ACTIONS;

/** `/api/wallet/action`: the action, and optionally an amount in cents and the bonus id. */
export const WalletActionBody = Type.Object(
  {
    action: Type.Union((Object.keys(WALLET_ACTIONS) as WalletAction[]).map((a) => Type.Literal(a))),
    amount: Type.Optional(Cents('amount to transfer')),
    bonus_id: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })])),
  },
  { additionalProperties: false },
);

/** An id taken from input for a path segment; checked again by `buildPath`. */
export const PathId = Type.Union([Type.String({ minLength: 1, maxLength: 128 }), Type.Integer({ minimum: 1 })]);

/** `/api/wallet/receipt`: the withdrawal's id as `transactionId` or `id`. */
export const ReceiptBody = Type.Object(
  { transactionId: Type.Optional(PathId), id: Type.Optional(PathId) },
  { additionalProperties: false },
);

/** Media types a receipt may have (spec 4.4 "HTML/PDF"); anything else is a 502. */
export const RECEIPT_MEDIA_TYPES = ['text/html', 'application/pdf'] as const;

// spec 4.8 ---------------------------------------------------------------------------------------

/**
 * `/api/kyc/start`: `source` (where the flow began, e.g. `deposit`, `withdraw`, `profile`) and
 * `recovery=1` for the recovery flow (`GET /bff/users/kyc/recovery`).
 */
export const KycStartQuery = Type.Object(
  {
    source: Type.Optional(Type.String({ pattern: '^[a-z0-9_-]{1,32}$' })),
    recovery: Type.Optional(Type.Union([Type.Literal('1'), Type.Literal('0')])),
  },
  { additionalProperties: false },
);

/** `/api/kyc/status`: `kyc_id` and `recovery=1` for the recovery flow (`GET /bff/users/kyc/status/recovery`). */
export const KycStatusQuery = Type.Object(
  {
    kyc_id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
    recovery: Type.Optional(Type.Union([Type.Literal('1'), Type.Literal('0')])),
  },
  { additionalProperties: false },
);

/** `/api/rewards/list`: page (1…10 000), per_page (1…100, default 20), reward type. */
export const RewardsListBody = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
    per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    type: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9_-]{0,31}$' })),
  },
  { additionalProperties: false },
);

/** Rewards per page when `per_page` is absent. */
export const DEFAULT_REWARDS_PER_PAGE = 20;

/** `/api/rewards/redeem`: the reward's id. */
export const RedeemBody = Type.Object(
  { reward_id: Type.Union([Type.Integer({ minimum: 1 }), Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' })]) },
  { additionalProperties: false },
);

/** `/api/income-report/generate`: the calendar year. */
export const IncomeReportGenerateBody = Type.Object(
  { year: Type.Integer({ minimum: 2000, maximum: 2100 }) },
  { additionalProperties: false },
);

/** `/api/income-report/status/{id}`: the report id (checked again by `buildPath`). */
export const IncomeReportParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) });
