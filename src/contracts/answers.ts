/**
 * What the proxy routes answer, for the OpenAPI document (`GET /openapi.json`): the answer shapes
 * of spec part 2 and of the proxy's own answers as TypeBox schemas, and {@link ROUTE_ANSWERS}, the
 * success answer of each operation (`'<METHOD> <path>'`) whose shape is known. An operation without
 * a row answers what its upstream sent, whose fields the specification does not show.
 *
 * These schemas only document: they are never given to Fastify as response schemas, so they cannot
 * change a byte of what the proxy sends (passthrough bodies and pre-serialised answers included).
 * `test/openapi.test.ts` checks that every row names an operation of the route tables.
 *
 * @example
 * const deposit = ROUTE_ANSWERS['POST /api/payments/deposit']; // { schema: DepositAnswer, … }
 *
 * @module
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { METHOD_CLASSES, PixKeyUpdate } from './payments.js';
import type {
  AuthUser as AuthUserShape,
  AuthUserInfo as AuthUserInfoShape,
  ValidateDocumentResponse as ValidateDocumentShape,
} from './shapes.js';

/** A record whose fields the specification does not show (spec 2.5, 2.8, 4.12): any JSON object. */
export function openRecord(description: string): TSchema {
  return Type.Object({}, { additionalProperties: true, description });
}

const NullableString = Type.Union([Type.String(), Type.Null()]);
const NullableNumber = Type.Union([Type.Number(), Type.Null()]);

/** spec 2.5 AuthUser. The sub-records are open: their fields are not shown by the specification. */
export const AuthUser = Type.Object(
  {
    id: Type.Number(),
    email: Type.String(),
    username: Type.String(),
    name: Type.String(),
    first_name: Type.String(),
    last_name: Type.String(),
    phone: Type.String(),
    ddi: Type.String({ description: 'phone country prefix' }),
    birth_date: Type.String(),
    country: Type.String(),
    language: Type.String(),
    currency: Type.String(),
    token: Type.String({ description: "a token of the BFF's user record; never the session JWT" }),
    mother_name: Type.String(),
    created_at: Type.String(),
    updated_at: Type.String(),
    last_login: Type.String(),
    gender: Type.Number(),
    document: Type.Union([openRecord('AuthUserDocument (fields not shown by the specification)'), Type.Null()]),
    country_data: Type.Union([openRecord('AuthUserCountryData (fields not shown by the specification)'), Type.Null()]),
    wallet: Type.Union([openRecord('AuthUserWallet (fields not shown by the specification)'), Type.Null()]),
    is_active: Type.Number(),
    cancelled_account: Type.Number(),
    bonus_enabled: Type.Number(),
    ftd_date: NullableString,
    ftd_value: Type.Number(),
    affiliation_code: Type.Optional(Type.String()),
    latestKyc: Type.Optional(openRecord('AuthLatestKyc (fields not shown by the specification)')),
  },
  { additionalProperties: true, description: 'spec 2.5 AuthUser' },
);

/** spec 2.6 AuthUserInfo; the `spa_*` fields are the responsible-gaming limits. */
export const AuthUserInfo = Type.Object(
  {
    validate_email_at: Type.String(),
    login_at: Type.String(),
    validate_sms_at: Type.String(),
    login_attempt_qty: Type.Number(),
    strong_password: Type.Number(),
    seven_days_since_last_login: Type.Boolean(),
    force_request_kyc: Type.Boolean(),
    two_factor_enabled: Type.Boolean(),
    two_factor_type: Type.Optional(Type.String()),
    force_request_kyc_reasons: Type.Optional(Type.Array(openRecord('ForceRequestKycReason (fields not shown by the specification)'))),
    two_factor_at: Type.Optional(NullableString),
    two_factor_code: Type.Optional(NullableString),
    latitude: Type.Optional(Type.Number()),
    longitude: Type.Optional(Type.Number()),
    location_at: Type.Optional(Type.String()),
    nationalities: Type.Optional(Type.String({ description: 'a JSON-encoded string' })),
    tc_accepted_at: Type.Optional(NullableString),
    privacy_accepted_at: Type.Optional(NullableString),
    lgpd_accepted_at: Type.Optional(NullableString),
    law_accepted_at: Type.Optional(NullableString),
    mkt_accepted_at: Type.Optional(NullableString),
    spa_bet_limit: Type.Optional(NullableNumber),
    spa_loss_limit: Type.Optional(NullableNumber),
    spa_deposit_limit: Type.Optional(NullableNumber),
    spa_withdrawal_limit: Type.Optional(NullableNumber),
    spa_time_limit: Type.Optional(NullableNumber),
    spa_period_limit: Type.Optional(NullableString),
    spa_note: Type.Optional(NullableString),
  },
  { additionalProperties: true, description: 'spec 2.6 AuthUserInfo' },
);

/**
 * spec 2.2 LoginResponse as the proxy answers it: without `access_token` (the JWT goes into the
 * HttpOnly session cookie). With `type`, there is no session (spec 3.2).
 */
export const LoginAnswer = Type.Union(
  [
    Type.Object(
      {
        expires_in: Type.Number({ description: 'lifetime of the session, in seconds' }),
        token_type: Type.String(),
        user: AuthUser,
        userInfo: AuthUserInfo,
      },
      { additionalProperties: true, description: 'a session: the cookie is set' },
    ),
    Type.Object(
      { type: Type.Union([Type.Literal('two_factor_code'), Type.Literal('cancelled_account')]) },
      {
        additionalProperties: true,
        description: 'no session: `two_factor_code` asks for the second factor, `cancelled_account` reports a cancelled account',
      },
    ),
  ],
  { description: 'spec 2.2 LoginResponse without access_token' },
);

/** spec 2.3 Profile response. */
export const ProfileAnswer = Type.Object(
  { user: AuthUser, userInfo: AuthUserInfo },
  { additionalProperties: true, description: 'spec 2.3 Profile response' },
);

/** spec 2.3 ValidateDocumentResponse (all optional). */
export const ValidateDocumentAnswer = Type.Object(
  {
    docnumber: Type.Optional(Type.String()),
    docnumber_valid: Type.Optional(Type.Boolean()),
    birth_date: Type.Optional(Type.String()),
    gender: Type.Optional(Type.String()),
    mother_name: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
  },
  { additionalProperties: true, description: 'spec 2.3 ValidateDocumentResponse' },
);

/** `{ ok: true }`: a success the proxy answers itself (logout, refresh, attribution, browser cache clear). */
export const OkAnswer = Type.Object({ ok: Type.Literal(true) }, { additionalProperties: false, description: 'a success without data' });

/** `GET /api/auth/session`: the session state from the cookie alone (beyond the spec). */
export const SessionStateAnswer = Type.Union(
  [
    Type.Object(
      {
        signedIn: Type.Literal(true),
        expiresAt: Type.Union([Type.Integer({ description: "epoch seconds of the token's `exp`" }), Type.Null()], {
          description: "epoch seconds of the token's `exp`; `null` when the token has none",
        }),
      },
      { additionalProperties: false },
    ),
    Type.Object({ signedIn: Type.Literal(false) }, { additionalProperties: false }),
  ],
  { description: 'whether the session cookie holds a usable session; the cookie itself is never in the body' },
);

/** Description of a money field in integer cents, as the BFF sends it. */
const CENTS = (what: string) => `${what}: integer cents, as the BFF sends it`;

/**
 * The fields of a wallet record other than `balance`, the same in both its forms: the other money
 * fields in integer cents, and the currency.
 */
const WALLET_OTHER_FIELDS = {
  withdrawable_balance: Type.Optional(Type.Number({ description: CENTS('the part of the balance that can be withdrawn') })),
  bonus_balance: Type.Optional(Type.Number({ description: CENTS('the bonus balance') })),
  cashback_balance: Type.Optional(Type.Number({ description: CENTS('the cashback balance') })),
  currency: Type.Optional(Type.String({ description: 'ISO 4217 code of every amount of the record' })),
};

/**
 * A wallet record as the BFF sends it (spec 4.4): every money field in integer cents. Only the
 * deposit answers convert `balance` to currency units ({@link RealWallet}).
 */
export const WalletRecord = Type.Object(
  {
    balance: Type.Optional(Type.Number({ description: CENTS('the real balance') })),
    ...WALLET_OTHER_FIELDS,
  },
  {
    additionalProperties: true,
    description:
      "the BFF's wallet record, passed on unchanged: every money field (`balance`, `withdrawable_balance`, `bonus_balance`, `cashback_balance`…) in integer cents (other fields not shown by the specification)",
  },
);

/**
 * The real-wallet record of a deposit answer (spec 2.7 rule 2): `balance` in currency units, the
 * BFF's original in `balance_cents`; every other money field stays in integer cents.
 */
export const RealWallet = Type.Object(
  {
    balance: Type.Number({ description: "currency units (spec 2.7 rule 2): the BFF's cents divided by 100, e.g. 1550.01" }),
    balance_cents: Type.Integer({ description: "integer cents: the BFF's original `balance`, added by the proxy" }),
    ...WALLET_OTHER_FIELDS,
  },
  {
    additionalProperties: true,
    description:
      'the real-wallet record of a deposit answer: `balance` in currency units and `balance_cents` in integer cents (spec 2.7 rule 2); every other money field in integer cents, as the BFF sends it',
  },
);

/** `/api/wallet/refresh` (spec 4.4): the wallet, and each rollover part or `null` (named in `missing`). */
export const WalletRefreshAnswer = Type.Object(
  {
    wallet: WalletRecord,
    rollover: Type.Union([
      openRecord(
        'the rollover record: money fields (`bonus_balance`, `required`, `wagered`, `remaining`…) in integer cents, as the BFF sends them',
      ),
      Type.Null(),
    ]),
    rolloverAccomplished: Type.Union([openRecord('the accomplished rollover record'), Type.Null()]),
    missing: Type.Array(Type.Union([Type.Literal('rollover'), Type.Literal('rolloverAccomplished')]), {
      description: 'the rollover parts the BFF could not give',
    }),
  },
  { additionalProperties: false, description: 'spec 4.4 wallet and rollover' },
);

/** A payment provider as the proxy answers it (spec 2.8): the BFF's record plus `iconUrl` and `methodClass`. */
export const ProviderView = Type.Object(
  {
    method: Type.Optional(Type.String({ description: 'payment method slug' })),
    slug: Type.Optional(Type.String()),
    icon: Type.Optional(Type.String({ description: 'icon reference `payments/<method>`' })),
    iconUrl: Type.Union([Type.String({ description: '`/icons/payments/<method>.svg`, or under PAYMENT_ICON_PREFIX' }), Type.Null()]),
    methodClass: Type.Union([Type.Union(METHOD_CLASSES.map((c) => Type.Literal(c))), Type.Null()], {
      description: 'the class of the slug, which decides the user flow (spec 2.8)',
    }),
    min_amount: Type.Optional(Type.Integer({ description: CENTS('the smallest amount the method takes') })),
    max_amount: Type.Optional(Type.Integer({ description: CENTS('the largest amount the method takes') })),
  },
  { additionalProperties: true, description: 'spec 2.8 provider (other fields as the BFF sends them)' },
);

/** `GET /api/payments/providers` (spec 2.8): both collections, filtered by `currency`. */
export const ProvidersAnswer = Type.Object(
  { deposit: Type.Array(ProviderView), withdraw: Type.Array(ProviderView) },
  { additionalProperties: false, description: 'spec 2.8 provider listing' },
);

/**
 * The deposit result (spec 2.7): not shown by the specification, except the real-wallet balance
 * rule. Money fields are integer cents, except the real-wallet `balance` (currency units).
 */
export const DepositAnswer = Type.Object(
  {
    amount: Type.Optional(Type.Integer({ description: CENTS('the amount of the charge') })),
    real_wallet: Type.Optional(RealWallet),
    wallet: Type.Optional(RealWallet),
  },
  {
    additionalProperties: true,
    description:
      'the deposit result as the BFF answers it (fields not shown by the specification). Money is in integer cents, with one exception: in the real-wallet record (`real_wallet`, else `wallet`) `balance` is in currency units and `balance_cents` keeps the original integer cents (spec 2.7 rule 2)',
  },
);

/** The withdrawal result (spec 4.5): not shown by the specification; money in integer cents. */
export const WithdrawAnswer = Type.Object(
  { amount: Type.Optional(Type.Integer({ description: CENTS('the amount withdrawn') })) },
  {
    additionalProperties: true,
    description: 'the withdrawal result as the BFF answers it (fields not shown by the specification); every money field in integer cents',
  },
);

/** A wallet transfer's result (`/api/wallet/action`, spec 4.4): not shown by the specification; money in integer cents. */
export const WalletActionAnswer = Type.Object(
  { amount: Type.Optional(Type.Integer({ description: CENTS('the amount transferred') })) },
  {
    additionalProperties: true,
    description:
      'the bonus or cashback transfer result as the BFF answers it (fields not shown by the specification); every money field in integer cents',
  },
);

/** A page of transactions (`/api/wallet/transactions`, spec 4.4): not shown by the specification; money in integer cents. */
export const TransactionsAnswer = openRecord(
  'the transactions (or cashback transactions) as the BFF answers them (fields not shown by the specification); every money field (`amount`, `balance`…) in integer cents',
);

/** The first-deposit cashback answers (spec 4.10): the external function's, money in integer cents. */
export const CashbackAnswer = Type.Object(
  {
    percent: Type.Optional(Type.Number({ description: 'the cashback rate, in percent' })),
    max_amount: Type.Optional(Type.Integer({ description: 'the largest cashback paid (verify): integer cents, as the function sends it' })),
    amount: Type.Optional(Type.Integer({ description: 'the cashback sent (send-cashback): integer cents, as the function sends it' })),
  },
  {
    additionalProperties: true,
    description: "the cashback function's answer (fields not shown by the specification); every money field in integer cents",
  },
);

/** A page of the game catalogue as the BFF answers it (spec 4.6; game fields not shown by the specification). */
export const CataloguePage = openRecord(
  'a catalogue page as the BFF answers it (game records: fields not shown by the specification); served from the proxy cache when fresh',
);

/** Games looked up by slug (`/api/games/by-slugs`): found records and missing slugs. */
export const SlugLookupAnswer = Type.Object(
  {
    data: Type.Array(openRecord('a record (fields not shown by the specification)')),
    missing: Type.Array(Type.String(), { description: 'the slugs with no record' }),
  },
  { additionalProperties: false },
);

/**
 * `/api/games/stats-batch` (spec 4.6, from the cache only): the cached statistics by slug, and the
 * slugs with none cached.
 */
export const StatsBatchAnswer = Type.Object(
  {
    data: Type.Record(
      Type.String(),
      openRecord("a game's statistics as the BFF answered `statistics-dl` (fields not shown by the specification)"),
      {
        description: 'the cached statistics, by slug',
      },
    ),
    missing: Type.Array(Type.String(), { description: 'the slugs with no cached statistics' }),
  },
  { additionalProperties: false },
);

/** `GET /readyz` once the BFF has answered once: `bff` says whether it answers now. */
export const ReadyAnswer = Type.Object(
  {
    ok: Type.Literal(true),
    bff: Type.Union([Type.Literal('up'), Type.Literal('down')], {
      description: '`down` when the latest call or probe of the BFF failed without an answer; the probe stays 200 either way',
    }),
  },
  { additionalProperties: false, description: 'ready: the BFF has answered once (any HTTP status)' },
);

/** `GET /debug/analytics` (development only): the attribution the proxy reads from the tracking cookies. */
export const DebugAnalyticsAnswer = Type.Object(
  {
    tracking: Type.Record(Type.String(), Type.String(), { description: 'the `utm_*` values of the `cookie_tracking` cookie' }),
    gaClientId: Type.Union([Type.String(), Type.Null()], { description: 'the client id read from the `_ga` cookie' }),
    cookies: Type.Object(
      { cookie_tracking: Type.Boolean(), _ga: Type.Boolean() },
      { additionalProperties: false, description: 'which of the two cookies the request carried' },
    ),
  },
  { additionalProperties: false },
);

/** `/api/search/unified`: each side's answer, or `null` and named in `failed`. */
export const UnifiedSearchAnswer = Type.Object(
  {
    casino: Type.Union([openRecord('the casino list answer'), Type.Null()]),
    sports: Type.Union([openRecord('the sportsbook search answer'), Type.Null()]),
    failed: Type.Array(Type.Union([Type.Literal('casino'), Type.Literal('sports')])),
  },
  { additionalProperties: false },
);

/** `/api/album/bootstrap` (spec 4.9): the four sticker-API answers by name. */
export const AlbumBootstrapAnswer = Type.Object(
  {
    campaign: openRecord('GET /campaigns/current'),
    progress: openRecord('GET /users/me/progress'),
    stickers: openRecord('GET /users/me/stickers'),
    checkin: openRecord('GET /users/me/checkin'),
  },
  { additionalProperties: false },
);

/** `GET /api/version` (spec 9.3). */
export const VersionAnswer = Type.Object(
  { buildId: Type.String({ description: 'BUILD_ID, default the package version' }) },
  { additionalProperties: false },
);

/** `POST /api/cache/purge`: entries emptied per proxy cache, and the worker cache purged. */
export const PurgeAnswer = Type.Object(
  {
    ok: Type.Literal(true),
    cleared: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: 'entries before the purge, by cache' }),
    upstream: Type.Literal('purged'),
  },
  { additionalProperties: false },
);

/**
 * Optional body of `POST /api/cache/purge` (spec 4.10; spec 4.12 gives no shape): the operator's JSON
 * object, forwarded to `CACHE_PURGE_URL` as given, since purge APIs take tags, keys, prefixes, hosts
 * or everything, each in its own words. Two fields are known and keep their types: `paths`, site
 * paths starting with `/`, and `tags`, cache tags, at most 100 each. Any other field, of any JSON
 * type, goes through unchecked: the route needs the operator credential, and the body is bounded by
 * {@link PURGE_BODY_LIMIT}.
 */
export const PurgeBody = Type.Object(
  {
    paths: Type.Optional(Type.Array(Type.String({ pattern: '^/[\\x21-\\x7e]{0,511}$' }), { maxItems: 100 })),
    tags: Type.Optional(Type.Array(Type.String({ pattern: '^[A-Za-z0-9_.:-]{1,128}$' }), { maxItems: 100 })),
  },
  {
    additionalProperties: true,
    description:
      "Forwarded to `CACHE_PURGE_URL` as given (for example `keys`, `prefixes`, `hosts`, `purge_everything`); `paths` and `tags` are checked. The proxy's own caches are emptied whatever the body holds.",
  },
);

/**
 * Largest body of `POST /api/cache/purge`, in bytes (64 KiB): above the largest request body purge
 * APIs take (Akamai's Fast Purge takes 50,000 bytes), far above a list of some hundred keys.
 */
export const PURGE_BODY_LIMIT = 64 * 1024;

/** Body of the multipart upload, for its documentation: one file part. */
const DocumentUpload = Type.Object(
  {
    file: Type.String({
      contentMediaType: 'application/octet-stream',
      description: 'the document (JPEG, PNG, WebP, HEIC or PDF, at most 10 MiB)',
    }),
  },
  { required: ['file'] },
);

/** The session effect of a success: `establish` sets the cookie, `end` clears it. */
export type SessionEffect = 'establish' | 'end';

/** The documented success answer of an operation. */
export interface SuccessDoc {
  /** Status of a success; default 200. */
  readonly status?: number;
  /**
   * The upstream creates a record and its success status is passed through (spec 4.12: success
   * statuses not shown): 201 when it says so (the sandbox does), 200 otherwise; both are documented,
   * with the same body.
   */
  readonly created?: boolean;
  /** Schema of the JSON body; `null` for an answer without a body. Default: the upstream's answer, not shown. */
  readonly schema?: TSchema | null;
  /** Bodies that are not JSON, by media type (receipts, pages, scripts). */
  readonly content?: Readonly<Record<string, TSchema>>;
  readonly description?: string;
  /** The session cookie set (`establish`) or cleared (`end`) by a success. */
  readonly session?: SessionEffect;
  /** A request body the handler checks itself (a row with several methods, a multipart upload). */
  readonly requestBody?: { readonly mediaType: string; readonly schema: TSchema; readonly optional?: boolean };
  /** The operation answers 200 whatever its upstream does and whatever the proxy refused on the way (logout, spec 5.5): no upstream failure, body, media-type or rate-limit refusal reaches the client. */
  readonly alwaysSucceeds?: boolean;
  /**
   * Answered from the shared catalogue cache when not forwarded with a session (spec 4.6 "cacheable"):
   * `Cache-Control: public, max-age=30`, a strong `ETag`, `Content-Encoding` (`br`, `gzip`) chosen by
   * `Accept-Encoding`, `Vary: Accept-Encoding`; a `GET` answers 304 to a matching `If-None-Match`.
   */
  readonly catalogueCache?: boolean;
}

const binary = (description: string): TSchema => Type.String({ contentMediaType: 'application/octet-stream', description });
const text = (description: string): TSchema => Type.String({ description });

/**
 * The success answers of the operations whose shape is known, by `'<METHOD> <path>'` (path as in
 * the route tables: `:name` for a parameter, `*` for any sub-path).
 */
export const ROUTE_ANSWERS: Readonly<Record<string, SuccessDoc>> = {
  'POST /api/auth/login': { schema: LoginAnswer, session: 'establish' },
  'POST /api/auth/register': { schema: LoginAnswer, session: 'establish' },
  'POST /api/auth/logout': { schema: OkAnswer, session: 'end', alwaysSucceeds: true },
  'POST /api/auth/logout-auto': { schema: OkAnswer, session: 'end', alwaysSucceeds: true },
  'GET /api/auth/session': {
    schema: SessionStateAnswer,
    description: 'the session state, answered from the cookie alone (never upstream); a refused cookie is cleared',
  },
  'GET /api/auth/profile': { schema: ProfileAnswer },
  'POST /api/auth/recheck-spa': { schema: ProfileAnswer },
  'POST /api/auth/refresh': { schema: OkAnswer, session: 'establish', description: 'a new session cookie; the JWT is never in the body' },
  'POST /api/auth/social/:provider': { schema: LoginAnswer, session: 'establish' },
  'POST /api/auth/validate-document': { schema: ValidateDocumentAnswer },
  'POST /api/logs/auth-logout': { status: 204, schema: null, description: 'accepted (sampled into the log at 50%)' },
  'POST /api/user/store-document': {
    created: true,
    requestBody: { mediaType: 'multipart/form-data', schema: DocumentUpload },
  },
  'POST /api/wallet/refresh': { schema: WalletRefreshAnswer },
  'POST /api/wallet/transactions': { schema: TransactionsAnswer },
  'POST /api/wallet/action': { schema: WalletActionAnswer },
  'POST /api/wallet/receipt': {
    content: { 'text/html': text('the receipt page (shown sandboxed)'), 'application/pdf': binary('the receipt document') },
    description: 'the withdrawal receipt, streamed from the BFF as it comes',
  },
  'GET /api/payments/providers': { schema: ProvidersAnswer },
  'POST /api/payments/deposit': { schema: DepositAnswer, created: true },
  'GET /api/payments/deposit-status': {
    schema: DepositAnswer,
    description:
      'the deposit status as the BFF answers it: real-wallet `balance` in currency units (spec 2.7 rule 2), every other amount in integer cents',
  },
  'POST /api/payments/withdraw': { schema: WithdrawAnswer, created: true },
  'POST /api/payments/pix-key': { requestBody: { mediaType: 'application/json', schema: PixKeyUpdate } },
  'GET /api/games/list': { schema: CataloguePage, catalogueCache: true },
  'POST /api/games/search': { schema: CataloguePage, catalogueCache: true },
  'GET /api/games/category/:slug': { schema: CataloguePage, catalogueCache: true },
  'GET /api/games/provider/:slug': { schema: CataloguePage, catalogueCache: true },
  'GET /api/games/by-slugs': { schema: SlugLookupAnswer },
  'GET /api/games/top-wins': { catalogueCache: true },
  'GET /api/games/statistics-dl': { catalogueCache: true },
  'POST /api/games/stats-batch': { schema: StatsBatchAnswer },
  'POST /api/search/unified': { schema: UnifiedSearchAnswer },
  'GET /api/album/bootstrap': { schema: AlbumBootstrapAnswer },
  'POST /api/ftd-cashback/verify': { schema: CashbackAnswer },
  'POST /api/ftd-cashback/send-cashback': { schema: CashbackAnswer },
  'POST /api/tracking/attribution': { schema: OkAnswer },
  'GET /api/version': { schema: VersionAnswer },
  'GET /api/clear-cache': { schema: OkAnswer, description: 'with `Clear-Site-Data: "cache"`' },
  'POST /api/cache/purge': { schema: PurgeAnswer, requestBody: { mediaType: 'application/json', schema: PurgeBody, optional: true } },
  'GET /api/core-sportbook/*': {
    description:
      'The upstream\'s 2xx as it sent it (any type but the ones that run script). With `Accept: text/event-stream` (or when the upstream answers one), a live stream: whole events as they come, `Cache-Control: no-store`, `X-Accel-Buffering: no`, ended between events (`retry:` hint; `event: session-ended` when the session ends); with `Upgrade: websocket`, a relayed WebSocket (docs/behaviour.md "Live streams"). Too many open streams: 429 `rate_limited` or 503 `overloaded` with `Retry-After`.',
    content: {
      'application/json': Type.Object({}, { additionalProperties: true, description: "the upstream's JSON answer" }),
      'text/event-stream': text(
        'Server-Sent Events: `id:`, `event:`, `data:` lines, each event ended by a blank line; the last is a `retry:` hint or `event: session-ended` with `data: {"reason": "expired" | "logout" | "refused"}`',
      ),
    },
  },
  'GET /healthz': { schema: OkAnswer },
  'GET /readyz': { schema: ReadyAnswer },
  'GET /api/dev/cache-clear': { schema: Type.Object({ ok: Type.Literal(true), cleared: Type.Record(Type.String(), Type.Integer()) }) },
  'POST /api/dev/cache-clear': { schema: Type.Object({ ok: Type.Literal(true), cleared: Type.Record(Type.String(), Type.Integer()) }) },
  'GET /dev/ftd-cashback': { content: { 'text/html': text('a development page') } },
  'GET /debug': { content: { 'text/html': text('a development page') } },
  'GET /debug/analytics': { schema: DebugAnalyticsAnswer },
  'GET /playground': { content: { 'text/html': text('the playground page') } },
  'GET /playground/sdk.js': { content: { 'text/javascript': text('the browser SDK bundle') } },
  'GET /playground/app.js': { content: { 'text/javascript': text("the playground page's script") } },
  'GET /favicon.ico': { status: 204, schema: null },
};

/**
 * Example request bodies shown by the reference page, by `'<METHOD> <path>'` (the sandbox's demo user;
 * each is a valid body of its route, which `test/openapi.test.ts` checks).
 */
export const REQUEST_EXAMPLES: Readonly<Record<string, unknown>> = {
  'POST /api/auth/login': { login: 'demo@example.com', password: 'Demo#2026' },
  'POST /api/payments/deposit': { userId: 1001, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' },
  'POST /api/payments/withdraw': { amount: 2500, method: 'pix', currency: 'BRL', pix_key: 'demo@example.com', pix_key_type: 'email' },
};

/** The money moves (docs/behaviour.md "Money moves: exactly once"): `Idempotency-Key`, replays, 409/422/503. */
export const MONEY_MOVES: readonly string[] = ['POST /api/payments/deposit', 'POST /api/payments/withdraw'];

/** The named answer shapes, as components of the OpenAPI document. */
export const ANSWER_COMPONENTS: Readonly<Record<string, TSchema>> = {
  AuthUser,
  AuthUserInfo,
  LoginResponse: LoginAnswer,
  ProfileResponse: ProfileAnswer,
  ValidateDocumentResponse: ValidateDocumentAnswer,
  OkAnswer,
  WalletRecord,
  RealWallet,
  WalletRefreshAnswer,
  WalletActionAnswer,
  TransactionsAnswer,
  WithdrawAnswer,
  CashbackAnswer,
  ProviderView,
  ProvidersAnswer,
  DepositAnswer,
  CataloguePage,
  StatsBatchAnswer,
  ReadyAnswer,
  VersionAnswer,
};

// The schemas above describe the shapes of spec part 2 declared in `shapes.ts`: this fails to compile
// when one has a field the other lacks, or a field of another type.
type SameFields<Schema, Shape> = [keyof Shape] extends [keyof Schema]
  ? [keyof Schema] extends [keyof Shape]
    ? [Required<Shape>] extends [Required<Schema>]
      ? true
      : never
    : never
  : never;
const coverage: [
  SameFields<Static<typeof AuthUser>, AuthUserShape>,
  SameFields<Static<typeof AuthUserInfo>, AuthUserInfoShape>,
  SameFields<Static<typeof ValidateDocumentAnswer>, ValidateDocumentShape>,
] = [true, true, true];
void coverage;
