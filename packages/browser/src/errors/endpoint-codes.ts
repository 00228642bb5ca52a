/**
 * The EP registry of spec 7.2: one row per upstream endpoint or proxy route that can fail,
 * in the specification's order. First match wins, so the order of the rows is part of the
 * meaning (for example `/documents/validate` (EP0006) precedes `/documents/{type}` (EP0037)).
 *
 * Codes are append-only (spec 7.1): never edit, remove or reuse a row; add new rows at the
 * end of their group and append them to `codes.lock.json`. See `docs/adding-error-codes.md`.
 *
 * The internal proxy routes (EP0700-EP0799) are written in `proxy-endpoint-codes.ts` and spread
 * here at their place in the order.
 *
 * Isomorphic: no Node built-ins, no imports outside `src/errors`.
 *
 * @module
 */

import { API_FALLBACK_ENDPOINT_CODE, PROXY_ENDPOINT_CODES, UNKNOWN_ENDPOINT_CODE } from './proxy-endpoint-codes.js';

/** An HTTP method named by a row of spec 7.2 (upper case). */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * One row of the EP table (spec 7.2).
 *
 * - `methods`: the methods of the row, or `'any'`.
 * - `path`: the path pattern, matched on whole segments after the version prefix is stripped:
 *   a literal segment matches itself (case-sensitive); `{name}` matches exactly one non-empty
 *   segment; a last segment `*` matches zero or more further segments; a last segment
 *   `prefix*` matches one segment starting with `prefix` followed by zero or more segments.
 *   `null` only for EP0000, which no pattern matches (it is the final fallback).
 * - `meaning`: what the endpoint does, in a few words (from spec part 4).
 */
export interface EndpointRow {
  readonly methods: readonly HttpMethod[] | 'any';
  readonly path: string | null;
  readonly meaning: string;
}

/**
 * The EP registry (spec 7.2), keyed by code, in the specification's order (which is the
 * matching order). A code can be written only once: a second key with the same name does
 * not compile, and `test/errors/endpoint-codes.test.ts` also checks the source text.
 */
export const ENDPOINT_CODES = {
  // Auth (EP0001-EP0019)
  EP0001: { methods: ['POST'], path: '/auth/login', meaning: 'log in with credentials' },
  EP0002: { methods: ['POST'], path: '/auth/logout', meaning: 'log out' },
  EP0003: { methods: ['GET'], path: '/auth/user-profile', meaning: 'read the user profile' },
  EP0004: { methods: ['POST'], path: '/users/refresh-token', meaning: 'renew the JWT' },
  EP0005: { methods: ['POST'], path: '/bff/register-simplified', meaning: 'simplified registration' },
  EP0006: { methods: ['POST'], path: '/documents/validate', meaning: 'validate a national document before registration' },
  EP0007: { methods: ['POST'], path: '/auth/passwords/reset/options', meaning: 'password recovery: reset options' },
  EP0008: { methods: ['POST'], path: '/auth/passwords/reset/by-email', meaning: 'password recovery: code by e-mail' },
  EP0009: { methods: ['POST'], path: '/auth/passwords/reset/by-sms', meaning: 'password recovery: code by SMS' },
  EP0010: { methods: ['POST'], path: '/auth/passwords/reset/validate-code', meaning: 'password recovery: validate the code' },
  EP0011: { methods: ['POST'], path: '/auth/passwords/reset/confirm', meaning: 'password recovery: set the new password' },
  EP0012: { methods: ['POST'], path: '/auth/logout-auto', meaning: 'automatic logout after session expiry' },
  EP0013: { methods: ['POST'], path: '/auth/register', meaning: 'registration (classic register type)' },
  EP0014: { methods: ['POST'], path: '/auth/register/simplified', meaning: 'registration (simplified register type)' },
  EP0015: { methods: ['POST'], path: '/bff/social/{provider}', meaning: 'social login: provider token exchanged for a session' },
  EP0016: { methods: ['POST'], path: '/bff/social/{provider}/registerSimplified', meaning: 'registration through a social provider' },

  // User / account (EP0020-EP0069)
  EP0020: { methods: ['POST'], path: '/users/update/{id}', meaning: 'update the profile' },
  EP0021: { methods: ['GET'], path: '/bff/users/address-by-user', meaning: "read the user's address" },
  EP0022: { methods: ['PATCH'], path: '/bff/users/self-email', meaning: 'change the e-mail' },
  EP0023: { methods: ['PATCH'], path: '/bff/users/add-phone', meaning: 'add a phone' },
  EP0024: { methods: ['PATCH'], path: '/bff/users/update-address', meaning: 'update the address' },
  EP0025: { methods: ['PATCH'], path: '/bff/users/self-contracts', meaning: 'accept terms and contracts' },
  EP0026: { methods: ['PATCH'], path: '/bff/users/self-mkt', meaning: 'marketing preferences' },
  EP0027: { methods: ['PATCH'], path: '/bff/users/update-user-info-metadata', meaning: 'generic preference metadata' },
  EP0028: { methods: ['POST'], path: '/users/change-password/{id}', meaning: 'change the password' },
  EP0029: { methods: ['POST'], path: '/bff/users/check-password', meaning: 'verify the current password' },
  EP0030: { methods: ['PATCH'], path: '/bff/users/self-two-factor', meaning: 'enable or disable the second factor' },
  EP0031: { methods: ['GET', 'POST', 'DELETE'], path: '/bff/users/account-social', meaning: 'linked social accounts' },
  EP0032: { methods: ['GET'], path: '/bff/users/login-history', meaning: 'login history' },
  EP0033: { methods: ['GET'], path: '/bff/games/user-last-casino-games-dl', meaning: 'last casino games played' },
  EP0034: { methods: ['GET'], path: '/users/wallet', meaning: 'wallet balance' },
  EP0035: { methods: ['GET'], path: '/bonus/rollover', meaning: 'bonus rollover' },
  EP0036: { methods: ['GET'], path: '/bonus/rollover-accomplished', meaning: 'accomplished bonus rollover' },
  EP0037: { methods: ['POST'], path: '/documents/{type}', meaning: 'upload a KYC document' },
  EP0038: { methods: ['PATCH'], path: '/bff/users/update-limits', meaning: 'responsible-gaming limits' },
  EP0039: { methods: ['PATCH'], path: '/bff/users/timeout-limits', meaning: 'account pause / timeout' },
  EP0040: { methods: ['PATCH'], path: '/bff/users/self-exclusion', meaning: 'self-exclusion' },
  EP0041: { methods: ['POST'], path: '/apicep', meaning: 'postal-code lookup' },
  EP0042: { methods: ['POST'], path: '/income-report/generate', meaning: 'generate an income report' },
  EP0043: { methods: ['GET'], path: '/income-report/available-years', meaning: 'income report: available years' },
  EP0044: { methods: ['GET'], path: '/income-report/{id}', meaning: 'income report: status' },
  EP0045: { methods: ['PATCH'], path: '/bff/users/add-address', meaning: 'submit the address' },
  EP0046: { methods: ['PATCH'], path: '/bff/users/add-initial-data', meaning: 'initial data (KYC level 1)' },
  EP0047: { methods: ['PATCH'], path: '/bff/users/self-phone', meaning: 'change the phone' },
  EP0048: { methods: ['POST'], path: '/bff/users/send-email', meaning: 'send the e-mail verification code' },
  EP0049: { methods: ['POST'], path: '/bff/users/validade-email-code', meaning: 'verify the e-mail code' },
  EP0050: { methods: ['POST'], path: '/bff/users/send-sms', meaning: 'send the SMS code' },
  EP0051: { methods: ['POST'], path: '/bff/users/validade-sms-code', meaning: 'verify the SMS code' },
  EP0052: { methods: ['POST'], path: '/bff/users/list-referrals', meaning: "list the user's referrals" },
  EP0053: { methods: ['PATCH'], path: '/bff/users/update-pending-data', meaning: 'update pending data after login' },
  EP0054: { methods: ['GET'], path: '/bff/users/support-desk/create-or-update-user', meaning: 'support desk single sign-on token' },
  EP0055: { methods: ['POST'], path: '/bff/validate-confirmation', meaning: 'confirm the e-mail validation link' },
  EP0056: { methods: ['POST'], path: '/users/list-referrals', meaning: "list the user's referrals (upstream of /api/user/referrals)" },

  // Wallet (EP0070-EP0089)
  EP0070: { methods: ['POST'], path: '/bff/transactions', meaning: 'list transactions' },
  EP0071: { methods: ['GET'], path: '/transactions/cashback', meaning: 'cashback transactions' },
  EP0072: { methods: ['POST'], path: '/bonus/transfer', meaning: 'bonus transfer' },
  EP0073: { methods: ['POST'], path: '/cashback/transfer', meaning: 'cashback transfer' },
  EP0074: { methods: ['GET'], path: '/withdraw/{id}/generate', meaning: 'withdrawal receipt' },

  // Payments (EP0090-EP0119)
  EP0090: { methods: ['GET'], path: '/payment-providers', meaning: 'payment providers' },
  EP0091: { methods: ['POST'], path: '/wallet/add-credit', meaning: 'create a deposit' },
  EP0092: { methods: ['GET'], path: '/wallet/charge/{id}', meaning: 'deposit status' },
  EP0093: { methods: ['POST'], path: '/new-withdraws', meaning: 'withdraw' },
  EP0094: { methods: ['GET'], path: '/bff/users/bank-list', meaning: 'bank list' },
  EP0095: { methods: ['POST'], path: '/pix-keys/user-key', meaning: 'read the PIX key' },
  EP0096: { methods: ['POST'], path: '/pix-keys/update-user-key-v2', meaning: 'update the PIX key' },
  EP0097: { methods: ['GET'], path: '/mex-bank-accounts/user-account', meaning: 'read the Mexican bank account' },
  EP0098: { methods: ['POST'], path: '/mex-bank-accounts/store', meaning: 'store the Mexican bank account' },
  EP0099: { methods: ['GET'], path: '/generic-bank-accounts/user-account', meaning: 'read the bank account' },
  EP0100: { methods: ['POST'], path: '/generic-bank-accounts/store', meaning: 'store the bank account' },
  EP0101: { methods: ['GET'], path: '/coupons/{code}', meaning: 'resolve a coupon' },

  // KYC (EP0120-EP0129)
  EP0120: { methods: 'any', path: '/bff/users/kyc*', meaning: 'KYC start and status, every sub-route' },

  // Rewards (EP0130-EP0139)
  EP0130: { methods: ['GET'], path: '/bff/gamification/rewards', meaning: 'list rewards' },
  EP0131: { methods: ['POST'], path: '/bff/gamification/redeem', meaning: 'redeem a reward' },

  // Games / casino (EP0140-EP0189)
  EP0140: { methods: ['GET'], path: '/casino-games/page/{page}', meaning: 'catalogue page' },
  EP0141: { methods: ['GET'], path: '/casino-games/home', meaning: 'catalogue home' },
  EP0142: { methods: ['GET'], path: '/casino-games/list/base', meaning: 'base game list' },
  EP0143: { methods: ['GET'], path: '/casino-games/list', meaning: 'game list (category, provider, search)' },
  EP0144: { methods: ['GET'], path: '/casino-games', meaning: 'games by slug' },
  EP0145: { methods: ['GET'], path: '/casino-games/filter', meaning: 'game filter (legacy)' },
  EP0146: { methods: ['GET'], path: '/start-game-v2', meaning: 'start a game session' },
  EP0147: { methods: ['GET'], path: '/bff/games/top-wins-dl', meaning: 'top wins of the day' },
  EP0148: { methods: ['GET'], path: '/bff/games/top-wins-game-dl/{slug}', meaning: 'top wins of one game' },
  EP0149: { methods: ['GET'], path: '/bff/games/last-wins', meaning: 'last wins' },
  EP0150: { methods: ['GET'], path: '/bff/games/game-high-payers-dl', meaning: 'high-paying games' },
  EP0151: { methods: ['GET'], path: '/bff/games/statistics-by-period-dl/{slug}', meaning: 'game statistics by period' },
  EP0152: { methods: ['GET'], path: '/bff/games/statistics-dl/{slug}', meaning: 'game statistics' },
  EP0153: { methods: ['GET'], path: '/bff/games/game-vote/{slug}', meaning: "the user's vote on a game" },
  EP0154: { methods: ['GET'], path: '/bff/games/game-vote-count/{slug}', meaning: 'vote count of a game' },
  EP0155: { methods: ['POST'], path: '/casino-game-votes/store', meaning: 'vote on a game' },
  EP0156: { methods: ['DELETE'], path: '/casino-game-votes/destroy/{id}', meaning: 'remove a vote' },
  EP0157: { methods: ['GET'], path: '/bff/favorite-games', meaning: 'read favourites' },
  EP0158: { methods: ['PUT'], path: '/bff/favorite-games/toggle', meaning: 'toggle a favourite' },
  EP0159: { methods: ['GET'], path: '/casino-game-votes', meaning: "the user's vote and the vote counts of a game (query casinoGameId)" },
  EP0160: { methods: ['GET'], path: '/bff/games/statistics-dl', meaning: 'game statistics (slug in the query)' },

  // Sports (EP0190-EP0199)
  EP0190: { methods: ['GET'], path: '/core-sportbook/search', meaning: 'sportsbook search' },
  EP0191: { methods: ['GET'], path: '/core-sportbook/launch', meaning: 'authenticated sportsbook launch' },
  EP0192: { methods: ['GET'], path: '/core-sportbook/anonymous-launch', meaning: 'anonymous sportsbook launch' },
  EP0193: { methods: ['POST'], path: '/sportsbook-partner-a/get-jwt', meaning: 'JWT for sportsbook partner A' },
  EP0194: { methods: ['GET'], path: '/sportsbook-partner-b/token', meaning: 'token for sportsbook partner B' },
  EP0195: { methods: ['GET'], path: '/core-sportbook/*', meaning: 'sportsbook raw passthrough: any other sub-path' },

  // Brand / platform (EP0200-EP0209)
  EP0200: { methods: ['GET'], path: '/appearance', meaning: 'brand appearance' },
  EP0201: { methods: ['GET'], path: '/bff/features', meaning: 'feature flags' },
  EP0202: { methods: ['POST'], path: '/bookmaker-settings', meaning: 'bookmaker settings' },
  EP0203: { methods: ['GET'], path: '/getlegalterm', meaning: 'legal terms' },

  // Internal proxy routes (EP0700-EP0799): a failure raised by the proxy itself; the rows are
  // proxy-endpoint-codes.ts (the browser SDK matches its calls on them alone)
  ...PROXY_ENDPOINT_CODES,

  // Unrecognised URL: neither a BFF endpoint nor /api/* (classifier defect, unexpected host or
  // unregistered new endpoint)
  EP0000: { methods: 'any', path: null, meaning: 'unrecognised URL' },
} as const satisfies Readonly<Record<`EP${number}`, EndpointRow>>;

/** A code of the EP registry (spec 7.2), for example `'EP0003'`. */
export type EndpointCode = keyof typeof ENDPOINT_CODES;

/** An EP row with its code. */
export interface EndpointEntry extends EndpointRow {
  readonly code: EndpointCode;
  /** Key of {@link ENDPOINT_GROUPS} the code falls in. */
  readonly group: EndpointGroupKey;
}

// Written in proxy-endpoint-codes.ts, which the browser SDK imports without this module.
export { API_FALLBACK_ENDPOINT_CODE, UNKNOWN_ENDPOINT_CODE };

/** A group of EP codes: the headings of spec 7.2 with their reserved number ranges (inclusive). */
export interface EndpointGroup {
  readonly title: string;
  readonly first: number;
  readonly last: number;
}

/** The EP groups of spec 7.2, in the specification's order. */
export const ENDPOINT_GROUPS = {
  auth: { title: 'Auth', first: 1, last: 19 },
  user: { title: 'User / account', first: 20, last: 69 },
  wallet: { title: 'Wallet', first: 70, last: 89 },
  payments: { title: 'Payments', first: 90, last: 119 },
  kyc: { title: 'KYC', first: 120, last: 129 },
  rewards: { title: 'Rewards', first: 130, last: 139 },
  games: { title: 'Games / casino', first: 140, last: 189 },
  sports: { title: 'Sports', first: 190, last: 199 },
  brand: { title: 'Brand / platform', first: 200, last: 209 },
  internal: { title: 'Internal proxy routes', first: 700, last: 799 },
  unrecognised: { title: 'Unrecognised URL', first: 0, last: 0 },
} as const satisfies Readonly<Record<string, EndpointGroup>>;

/** Key of {@link ENDPOINT_GROUPS}. */
export type EndpointGroupKey = keyof typeof ENDPOINT_GROUPS;

/**
 * The EP group (spec 7.2 headings) a code number falls in, or `undefined` when the number is
 * in no reserved range.
 * @param num - the numeric part of an EP code (`3` for `EP0003`)
 */
export function endpointGroupOf(num: number): EndpointGroupKey | undefined {
  for (const key of Object.keys(ENDPOINT_GROUPS) as EndpointGroupKey[]) {
    const g = ENDPOINT_GROUPS[key];
    if (num >= g.first && num <= g.last) return key;
  }
  return undefined;
}

/**
 * Every EP row with its code, in the registry's (and the specification's) order, which is the
 * matching order of spec 7.2. EP0000 is last.
 */
export const ENDPOINT_LIST: readonly EndpointEntry[] = Object.freeze(
  (Object.keys(ENDPOINT_CODES) as EndpointCode[]).map((code) =>
    Object.freeze({
      code,
      group: endpointGroupOf(Number(code.slice(2))) ?? 'unrecognised',
      ...(ENDPOINT_CODES[code] as EndpointRow),
    }),
  ),
);

const ENDPOINT_BY_CODE: ReadonlyMap<string, EndpointEntry> = new Map(ENDPOINT_LIST.map((e) => [e.code, e]));

/**
 * Type guard: whether `code` is a code of this registry (spec 7.2), for example `'EP0003'`.
 * A well-formed code from a newer registry version is not a code of this one.
 */
export function isEndpointCode(code: unknown): code is EndpointCode {
  return typeof code === 'string' && ENDPOINT_BY_CODE.has(code);
}

/**
 * The EP row of a code (spec 7.2). Total for an {@link EndpointCode}; `undefined` for any
 * other string (an unknown or malformed code). Never throws.
 * @example getEndpoint('EP0001') // { code: 'EP0001', methods: ['POST'], path: '/auth/login', ... }
 */
export function getEndpoint(code: EndpointCode): EndpointEntry;
export function getEndpoint(code: string): EndpointEntry | undefined;
export function getEndpoint(code: string): EndpointEntry | undefined {
  return ENDPOINT_BY_CODE.get(code);
}

/**
 * The methods of a row as the specification's table writes them (spec 7.2): `'POST'`,
 * `'GET/POST/DELETE'` or `'any'`.
 */
export function formatMethods(methods: EndpointRow['methods']): string {
  return methods === 'any' ? 'any' : methods.join('/');
}
