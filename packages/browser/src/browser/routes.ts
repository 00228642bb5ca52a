/**
 * The proxy routes of spec part 4 as the browser sees them: one declarative row per method and
 * path, grouped by area. The typed client ({@link createProxyClient}) is generated from this list,
 * and `test/browser-routes.test.ts` checks it against the server's route tables in both
 * directions (same methods, same path patterns, same session needs), so the two cannot drift.
 *
 * Dev-only routes (`/api/dev/*`, spec 1.6) are not listed: the SDK is for production pages.
 *
 * Path patterns use `{name}` for one segment and a final `*` for any sub-path
 * (`/api/core-sportbook/*`, filled from the `subPath` parameter).
 *
 * @module
 */

/** HTTP methods the proxy routes use. */
export type RouteMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Who may call a route (docs/behaviour.md "Which routes need a session"):
 * - `session`: needs the session cookie; a 401 here can end the session (spec 5.7);
 * - `public`: no session needed (a present one is still forwarded);
 * - `pre-auth`: a pre-authentication route of spec 5.5 (form-level errors, spec 7.4.4; never a
 *   forced logout);
 * - `operator`: needs the operator credential (`Authorization: Bearer <CACHE_PURGE_TOKEN>`), not a
 *   user session.
 */
export type RouteAccess = 'session' | 'public' | 'pre-auth' | 'operator';

/** The request body a route takes: JSON (default for POST, PUT, PATCH, DELETE), a `FormData`, or none (GET). */
export type BodyKind = 'json' | 'form' | 'none';

/** The success answer of a route: JSON (default) or a binary `Blob` (raw passthrough, e.g. a receipt). */
export type ResponseKind = 'json' | 'blob';

/** What a successful call does to the session the client believes it has. */
export type SessionEffect = 'establish' | 'end' | 'none';

/** One client route row. */
export interface ClientRoute {
  /** Group of the typed client: `client.<area>.<name>(…)`. */
  readonly area: string;
  /** Function name inside the area. */
  readonly name: string;
  readonly method: RouteMethod;
  /** Path pattern below the proxy origin, e.g. `/api/games/category/{slug}`. */
  readonly path: string;
  readonly access: RouteAccess;
  /** `true` when the route needs the session cookie (`access === 'session'`). */
  readonly session: boolean;
  /** `true` for the pre-authentication routes of spec 5.5 (`access === 'pre-auth'`). */
  readonly preAuth: boolean;
  readonly body: BodyKind;
  readonly response: ResponseKind;
  /** `establish`: a success means the browser now has a session (login, registration, social
   * login, refresh); `end`: a success means it has none (logout). */
  readonly effect: SessionEffect;
  /** The section of the specification the route comes from, e.g. `'4.5'`. */
  readonly spec: string;
}

interface RowOptions {
  readonly body?: BodyKind;
  readonly response?: ResponseKind;
  readonly effect?: SessionEffect;
}

type Row<A extends string, N extends string, M extends RouteMethod, P extends string, O extends RowOptions> = {
  readonly area: A;
  readonly name: N;
  readonly method: M;
  readonly path: P;
  readonly access: RouteAccess;
  readonly session: boolean;
  readonly preAuth: boolean;
  readonly body: O extends { body: infer B extends BodyKind } ? B : M extends 'GET' ? 'none' : 'json';
  readonly response: O extends { response: infer R extends ResponseKind } ? R : 'json';
  readonly effect: SessionEffect;
  readonly spec: string;
};

function row<
  const A extends string,
  const N extends string,
  const M extends RouteMethod,
  const P extends string,
  const O extends RowOptions = Record<never, never>,
>(spec: string, area: A, name: N, method: M, path: P, access: RouteAccess, options?: O): Row<A, N, M, P, O> {
  return Object.freeze({
    area,
    name,
    method,
    path,
    access,
    session: access === 'session',
    preAuth: access === 'pre-auth',
    body: (options?.body ?? (method === 'GET' ? 'none' : 'json')) as Row<A, N, M, P, O>['body'],
    response: (options?.response ?? 'json') as Row<A, N, M, P, O>['response'],
    effect: options?.effect ?? 'none',
    spec,
  });
}

const S = 'session';
const PUB = 'public';
const PRE = 'pre-auth';

/**
 * Every non-dev proxy route of spec part 4, in the specification's order (4.1 to 4.10). A route
 * with several methods has one row per method.
 */
export const ROUTES = [
  // 4.1 Auth
  row('4.1', 'auth', 'login', 'POST', '/api/auth/login', PRE, { effect: 'establish' }),
  row('4.1', 'auth', 'register', 'POST', '/api/auth/register', PRE, { effect: 'establish' }),
  row('4.1', 'auth', 'logout', 'POST', '/api/auth/logout', PUB, { effect: 'end' }),
  row('4.1', 'auth', 'logoutAuto', 'POST', '/api/auth/logout-auto', PUB, { effect: 'end' }),
  row('4.1', 'auth', 'session', 'GET', '/api/auth/session', PUB),
  row('4.1', 'auth', 'profile', 'GET', '/api/auth/profile', S),
  row('4.1', 'auth', 'recheckSpa', 'POST', '/api/auth/recheck-spa', S),
  row('4.1', 'auth', 'refresh', 'POST', '/api/auth/refresh', S, { effect: 'establish' }),
  row('4.1', 'auth', 'recovery', 'POST', '/api/auth/recovery', PRE),
  row('4.1', 'auth', 'social', 'POST', '/api/auth/social/{provider}', PRE, { effect: 'establish' }),
  row('4.1', 'auth', 'validateDocument', 'POST', '/api/auth/validate-document', PRE),
  row('4.1, 6', 'logs', 'authLogout', 'POST', '/api/logs/auth-logout', PUB),
  // 4.2 Validation
  row('4.2', 'validation', 'emailSend', 'POST', '/api/validation/email/send', S),
  row('4.2', 'validation', 'emailVerify', 'POST', '/api/validation/email/verify', S),
  row('4.2', 'validation', 'emailChange', 'PATCH', '/api/validation/email/change', S),
  row('4.2', 'validation', 'smsSend', 'POST', '/api/validation/sms/send', S),
  row('4.2', 'validation', 'smsVerify', 'POST', '/api/validation/sms/verify', S),
  row('4.2', 'validation', 'smsChange', 'PATCH', '/api/validation/sms/change', S),
  row('4.2', 'validation', 'docsSubmit', 'PATCH', '/api/validation/docs/submit', S),
  row('4.2', 'validation', 'addressSubmit', 'PATCH', '/api/validation/address/submit', S),
  row('4.2', 'validation', 'termsAccept', 'PATCH', '/api/validation/terms/accept', S),
  row('4.2', 'validation', 'linkConfirm', 'POST', '/api/validation/link-confirm', S),
  row('4.2', 'address', 'lookupByPostalCode', 'POST', '/api/address/lookup-by-postal-code', PUB),
  // 4.3 User
  row('4.3', 'user', 'updateProfile', 'PATCH', '/api/user/update-profile', S),
  row('4.3', 'user', 'updateAddress', 'PATCH', '/api/user/update-address', S),
  row('4.3', 'user', 'addPhone', 'PATCH', '/api/user/add-phone', S),
  row('4.3', 'user', 'checkPassword', 'POST', '/api/user/check-password', S),
  row('4.3', 'user', 'changePassword', 'POST', '/api/user/change-password', S),
  row('4.3', 'user', 'twoFactor', 'PATCH', '/api/user/two-factor', S),
  row('4.3', 'user', 'storeDocument', 'POST', '/api/user/store-document', S, { body: 'form' }),
  row('4.3', 'user', 'updateMarketing', 'PATCH', '/api/user/update-marketing', S),
  row('4.3', 'user', 'updatePreferences', 'PATCH', '/api/user/update-preferences', S),
  row('4.3', 'user', 'updatePendingData', 'PATCH', '/api/user/update-pending-data', S),
  row('4.3', 'user', 'updateLimits', 'PATCH', '/api/user/update-limits', S),
  row('4.3', 'user', 'timeoutLimits', 'PATCH', '/api/user/timeout-limits', S),
  row('4.3', 'user', 'selfExclusion', 'PATCH', '/api/user/self-exclusion', S),
  row('4.3', 'user', 'loginHistory', 'GET', '/api/user/login-history', S),
  row('4.3', 'user', 'lastCasinoGames', 'GET', '/api/user/last-casino-games', S),
  row('4.3', 'user', 'supportDeskToken', 'GET', '/api/user/support-desk-token', S),
  row('4.3', 'user', 'referrals', 'POST', '/api/user/referrals', S),
  row('4.3', 'user', 'indicationStats', 'GET', '/api/user/indication-stats', S),
  row('4.3', 'user', 'referralIndicator', 'GET', '/api/user/referral-indicator', S),
  // 4.4 Wallet
  row('4.4', 'wallet', 'refresh', 'POST', '/api/wallet/refresh', S),
  row('4.4', 'wallet', 'transactions', 'POST', '/api/wallet/transactions', S),
  row('4.4', 'wallet', 'action', 'POST', '/api/wallet/action', S),
  row('4.4', 'wallet', 'receipt', 'POST', '/api/wallet/receipt', S, { response: 'blob' }),
  // 4.5 Payments
  row('4.5', 'payments', 'providers', 'GET', '/api/payments/providers', S),
  row('4.5', 'payments', 'deposit', 'POST', '/api/payments/deposit', S),
  row('4.5', 'payments', 'depositStatus', 'GET', '/api/payments/deposit-status', S),
  row('4.5', 'payments', 'withdraw', 'POST', '/api/payments/withdraw', S),
  row('4.5', 'payments', 'bankList', 'GET', '/api/payments/bank-list', S),
  row('4.5', 'payments', 'coupon', 'GET', '/api/payments/coupon', S),
  row('4.5', 'payments', 'getPixKey', 'GET', '/api/payments/pix-key', S),
  row('4.5', 'payments', 'updatePixKey', 'POST', '/api/payments/pix-key', S),
  row('4.5', 'payments', 'bankAccount', 'POST', '/api/payments/bank-account', S),
  // 4.6 Games, favourites, search
  row('4.6', 'games', 'list', 'GET', '/api/games/list', PUB),
  row('4.6', 'games', 'search', 'POST', '/api/games/search', PUB),
  row('4.6', 'games', 'category', 'GET', '/api/games/category/{slug}', PUB),
  row('4.6', 'games', 'provider', 'GET', '/api/games/provider/{slug}', PUB),
  row('4.6', 'games', 'bySlugs', 'GET', '/api/games/by-slugs', PUB),
  row('4.6', 'games', 'start', 'GET', '/api/games/start', S),
  row('4.6', 'games', 'topWins', 'GET', '/api/games/top-wins', PUB),
  row('4.6', 'games', 'statisticsDl', 'GET', '/api/games/statistics-dl', PUB),
  row('4.6', 'games', 'statsBatch', 'POST', '/api/games/stats-batch', PUB),
  row('4.6', 'games', 'getVote', 'GET', '/api/games/vote', S),
  row('4.6', 'games', 'vote', 'POST', '/api/games/vote', S),
  row('4.6', 'games', 'deleteVote', 'DELETE', '/api/games/vote', S),
  row('4.6', 'favorites', 'list', 'GET', '/api/favorites', S),
  row('4.6', 'favorites', 'toggle', 'PUT', '/api/favorites', S),
  row('4.6', 'search', 'unified', 'POST', '/api/search/unified', PUB),
  // 4.7 Sports
  row('4.7', 'sports', 'search', 'GET', '/api/sports/search', PUB),
  row('4.7', 'sports', 'launch', 'GET', '/api/sports/launch', S),
  row('4.7', 'sports', 'anonymousLaunch', 'GET', '/api/sports/anonymous-launch', PUB),
  row('4.7', 'sports', 'partnerAJwt', 'POST', '/api/sports/partner-a-jwt', S),
  row('4.7', 'sports', 'partnerBToken', 'GET', '/api/sports/partner-b-token', S),
  row('4.7', 'sports', 'coreSportbook', 'GET', '/api/core-sportbook/*', PUB),
  // 4.8 KYC, rewards, income report
  row('4.8', 'kyc', 'start', 'GET', '/api/kyc/start', S),
  row('4.8', 'kyc', 'status', 'GET', '/api/kyc/status', S),
  row('4.8', 'rewards', 'list', 'POST', '/api/rewards/list', S),
  row('4.8', 'rewards', 'redeem', 'POST', '/api/rewards/redeem', S),
  row('4.8', 'incomeReport', 'availableYears', 'GET', '/api/income-report/available-years', S),
  row('4.8', 'incomeReport', 'generate', 'POST', '/api/income-report/generate', S),
  row('4.8', 'incomeReport', 'status', 'GET', '/api/income-report/status/{id}', S),
  // 4.9 Sticker album
  row('4.9', 'album', 'bootstrap', 'GET', '/api/album/bootstrap', S),
  row('4.9', 'album', 'checkin', 'POST', '/api/album/checkin', S),
  row('4.9', 'album', 'claimFeatured', 'POST', '/api/album/claim-featured', S),
  row('4.9', 'album', 'openPack', 'POST', '/api/album/open-pack', S),
  row('4.9', 'album', 'openAllPacks', 'POST', '/api/album/open-all-packs', S),
  row('4.9', 'album', 'missionType', 'POST', '/api/album/mission-type', S),
  // 4.10 External and infrastructure
  row('4.10', 'ftdCashback', 'verify', 'POST', '/api/ftd-cashback/verify', S),
  row('4.10', 'ftdCashback', 'sendCashback', 'POST', '/api/ftd-cashback/send-cashback', S),
  row('4.10', 'tracking', 'attribution', 'POST', '/api/tracking/attribution', PUB),
  row('4.10', 'infra', 'version', 'GET', '/api/version', PUB),
  row('4.10', 'infra', 'clearCache', 'GET', '/api/clear-cache', PUB),
  row('4.10', 'infra', 'cachePurge', 'POST', '/api/cache/purge', 'operator'),
] as const;

/** The union of the route rows. */
export type Route = (typeof ROUTES)[number];

/** The areas of the typed client. */
export type RouteArea = Route['area'];

/** The rows of one area. */
export type RoutesOf<A extends RouteArea> = Extract<Route, { area: A }>;

/** A route's key, `'<area>.<name>'`, e.g. `'payments.deposit'`. */
export type RouteKey = KeyOf<Route>;

type KeyOf<R> = R extends { area: infer A extends string; name: infer N extends string } ? `${A}.${N}` : never;

/** The key of a row (`'<area>.<name>'`). */
export function routeKey(route: Pick<ClientRoute, 'area' | 'name'>): string {
  return `${route.area}.${route.name}`;
}

/**
 * The row of a key, e.g. `findRoute('auth.profile')`.
 * @returns the row, or `undefined` for an unknown key
 */
export function findRoute(key: string): ClientRoute | undefined {
  return (ROUTES as readonly ClientRoute[]).find((r) => routeKey(r) === key);
}

function patternMatches(pattern: string, path: string): boolean {
  const want = pattern.split('/');
  const got = path.split('/');
  const wildcard = want[want.length - 1] === '*';
  if (wildcard ? got.length < want.length - 1 : got.length !== want.length) return false;
  return want.every((segment, i) => {
    if (wildcard && i === want.length - 1) return true;
    const value = got[i] ?? '';
    return segment.startsWith('{') ? value !== '' : segment === value;
  });
}

/**
 * The row a method and a concrete proxy path belong to, e.g. `matchRoute('POST',
 * '/api/auth/social/google')` → the `auth.social` row. The query string and fragment are ignored.
 * @returns the first matching row, or `undefined` for a path outside the list (a dev-only route)
 */
export function matchRoute(method: string, path: string): ClientRoute | undefined {
  const m = method.toUpperCase();
  const cut = path.search(/[?#]/);
  const bare = cut === -1 ? path : path.slice(0, cut);
  return (ROUTES as readonly ClientRoute[]).find((r) => r.method === m && patternMatches(r.path, bare));
}
