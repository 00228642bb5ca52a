/**
 * The doctor's probe table: one row per upstream BFF endpoint the proxy calls (spec part 4 "Upstream",
 * the EP registry of spec 7.2), with the call the doctor makes to check it (method, path, query, body,
 * with or without the session), what kind of call it is (a read, the doctor's own session, a write, a
 * side-effect `GET`, a money move) and the shape a success must have (the TypeBox schemas of
 * `src/contracts`). Data only: `run.ts` performs the calls, `checks.ts` judges the answers.
 *
 * A row's path, filled with its sample values, is matched by the EP registry to the row's own code
 * (`test/doctor-probes.test.ts` checks it, and that every BFF row of the registry has a probe).
 *
 * @example
 * PROBES.find((p) => p.code === 'EP0003'); // { method: 'GET', path: '/auth/user-profile', kind: 'read', session: true, … }
 *
 * @module
 */
import type { TSchema } from '@sinclair/typebox';
import { UPSTREAM_ANSWER_EXPECTATIONS } from '../contracts/upstream-answers.js';
import type { EndpointCode } from '../errors/index.js';

/**
 * What a call does, which decides whether the doctor makes it:
 * - `read`: changes nothing; always probed (`session: true` rows only with `--login`);
 * - `session`: the doctor's own session (login, refresh, logout); probed with `--login`;
 * - `side-effect`: a `GET` that creates or hands out something (game start, sports launch, partner and
 *   support-desk tokens, KYC start; docs/behaviour.md "CSRF defence");
 * - `write`: a mutation; `money`: a money move or a wallet transfer.
 *
 * `side-effect`, `write` and `money` rows are probed only with `--allow-writes` against a sandbox, a
 * `write` or `money` row only when it declares a body.
 */
export type ProbeKind = 'read' | 'session' | 'side-effect' | 'write' | 'money';

/** A sample value that the doctor takes from an earlier answer, else the fallback. */
export interface Discovered {
  /** `slug`, `gameId`: of the first game of the catalogue list; `userId`: `user.id` of the profile. */
  readonly from: 'slug' | 'gameId' | 'userId';
  readonly fallback: string;
}

/** One probe: an upstream endpoint and how to call it. */
export interface Probe {
  /** The EP code of the endpoint (spec 7.2). */
  readonly code: EndpointCode;
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path template below `{bff_base_url}` as the route tables write it (`{name}` segments). */
  readonly path: string;
  /** Values of the path's `{name}` segments. */
  readonly params?: Readonly<Record<string, string | Discovered>>;
  readonly query?: Readonly<Record<string, string | Discovered>>;
  /**
   * JSON body sent (POST, PUT, PATCH; `{}` when absent on a read), its top-level {@link Discovered}
   * fields filled. A `write` or `money` row without one is never called: no body of the doctor's
   * would be a real one.
   */
  readonly body?: Readonly<Record<string, unknown>>;
  readonly kind: ProbeKind;
  /** Sent with the session (`Authorization: Bearer` and the cookie); else with neither. */
  readonly session: boolean;
  /**
   * Whether the proxy calls it (a route or the catalogue assembly): a deviation fails the run. `false`
   * for the endpoints only listed in the registry (spec 4.6 "further", 4.11): reported, never failing.
   */
  readonly required: boolean;
  /** Shape of a 2xx JSON body; absent: any JSON. */
  readonly answer?: TSchema;
  /** The proxy needs the body (docs/behaviour.md "Upstream answers", "Empty answers": login, refresh, profile): an empty 2xx fails. */
  readonly needsBody?: boolean;
  /** Statuses besides 2xx that count as a proper answer (404 for a made-up id). */
  readonly alsoAccept?: readonly number[];
  /** A document, not JSON (the withdrawal receipt): these media types pass. */
  readonly media?: readonly string[];
  /** Why the row is probed as it is, shown in the report. */
  readonly note?: string;
}

/**
 * A row's `answer` and `needsBody`, from the table the live checks of upstream answers share
 * (`src/contracts/upstream-answers.ts`).
 */
function answerOf(code: EndpointCode): Pick<Probe, 'answer' | 'needsBody'> {
  const expectation = UPSTREAM_ANSWER_EXPECTATIONS[code];
  if (expectation?.schema === undefined) throw new Error(`${code}: no answer shape in UPSTREAM_ANSWER_EXPECTATIONS`);
  return { answer: expectation.schema, ...(expectation.needsBody === true ? { needsBody: true } : {}) };
}

/** The shapes the doctor holds answers to, re-exported under their former home. */
export { UpstreamLoginResponse, UpstreamProviders, UpstreamRefreshResponse } from '../contracts/upstream-answers.js';

const SLUG: Discovered = { from: 'slug', fallback: 'doctor-probe' };
const GAME_ID: Discovered = { from: 'gameId', fallback: '1' };
const USER_ID: Discovered = { from: 'userId', fallback: '0' };
const MADE_UP = 'doctor-probe';
const NOT_FOUND_OK = [404] as const;

/**
 * Every upstream BFF endpoint of the EP registry (spec 7.2, EP0001-EP0203), in the registry's order,
 * with the call that probes it. KYC (EP0120) has two rows: the start (a side effect) and the status (a read).
 */
export const PROBES: readonly Probe[] = [
  // spec 4.1 Auth
  { code: 'EP0001', method: 'POST', path: '/auth/login', kind: 'session', session: false, required: true, ...answerOf('EP0001') },
  {
    code: 'EP0002',
    method: 'POST',
    path: '/auth/logout',
    kind: 'session',
    session: true,
    required: true,
    note: "ends the doctor's own session, last",
  },
  {
    code: 'EP0003',
    method: 'GET',
    path: '/auth/user-profile',
    query: { check_spa_again: '1' },
    kind: 'read',
    session: true,
    required: true,
    ...answerOf('EP0003'),
  },
  { code: 'EP0004', method: 'POST', path: '/users/refresh-token', kind: 'session', session: true, required: true, ...answerOf('EP0004') },
  { code: 'EP0005', method: 'POST', path: '/bff/register-simplified', kind: 'write', session: false, required: true },
  {
    code: 'EP0006',
    method: 'POST',
    path: '/documents/validate',
    body: { number: '52998224725' },
    kind: 'read',
    session: false,
    required: true,
    ...answerOf('EP0006'),
    alsoAccept: [422],
  },
  { code: 'EP0007', method: 'POST', path: '/auth/passwords/reset/options', kind: 'write', session: false, required: true },
  { code: 'EP0008', method: 'POST', path: '/auth/passwords/reset/by-email', kind: 'write', session: false, required: true },
  { code: 'EP0009', method: 'POST', path: '/auth/passwords/reset/by-sms', kind: 'write', session: false, required: true },
  { code: 'EP0010', method: 'POST', path: '/auth/passwords/reset/validate-code', kind: 'write', session: false, required: true },
  { code: 'EP0011', method: 'POST', path: '/auth/passwords/reset/confirm', kind: 'write', session: false, required: true },
  { code: 'EP0012', method: 'POST', path: '/auth/logout-auto', kind: 'write', session: true, required: true },
  { code: 'EP0013', method: 'POST', path: '/auth/register', kind: 'write', session: false, required: true },
  { code: 'EP0014', method: 'POST', path: '/auth/register/simplified', kind: 'write', session: false, required: true },
  {
    code: 'EP0015',
    method: 'POST',
    path: '/bff/social/{provider}',
    params: { provider: 'google' },
    kind: 'write',
    session: false,
    required: true,
  },
  {
    code: 'EP0016',
    method: 'POST',
    path: '/bff/social/{provider}/registerSimplified',
    params: { provider: 'google' },
    kind: 'write',
    session: false,
    required: true,
  },

  // spec 4.2, 4.3 Validation and user
  { code: 'EP0020', method: 'POST', path: '/users/update/{id}', params: { id: USER_ID }, kind: 'write', session: true, required: true },
  { code: 'EP0021', method: 'GET', path: '/bff/users/address-by-user', kind: 'read', session: true, required: false },
  { code: 'EP0022', method: 'PATCH', path: '/bff/users/self-email', kind: 'write', session: true, required: true },
  { code: 'EP0023', method: 'PATCH', path: '/bff/users/add-phone', kind: 'write', session: true, required: true },
  { code: 'EP0024', method: 'PATCH', path: '/bff/users/update-address', kind: 'write', session: true, required: true },
  { code: 'EP0025', method: 'PATCH', path: '/bff/users/self-contracts', kind: 'write', session: true, required: true },
  { code: 'EP0026', method: 'PATCH', path: '/bff/users/self-mkt', kind: 'write', session: true, required: true },
  { code: 'EP0027', method: 'PATCH', path: '/bff/users/update-user-info-metadata', kind: 'write', session: true, required: true },
  {
    code: 'EP0028',
    method: 'POST',
    path: '/users/change-password/{id}',
    params: { id: USER_ID },
    kind: 'write',
    session: true,
    required: true,
  },
  {
    code: 'EP0029',
    method: 'POST',
    path: '/bff/users/check-password',
    kind: 'write',
    session: true,
    required: true,
    note: 'a wrong password may count toward a lock-out',
  },
  { code: 'EP0030', method: 'PATCH', path: '/bff/users/self-two-factor', kind: 'write', session: true, required: true },
  { code: 'EP0031', method: 'GET', path: '/bff/users/account-social', kind: 'read', session: true, required: false },
  { code: 'EP0032', method: 'GET', path: '/bff/users/login-history', query: { page: '1' }, kind: 'read', session: true, required: true },
  { code: 'EP0033', method: 'GET', path: '/bff/games/user-last-casino-games-dl', kind: 'read', session: true, required: true },
  { code: 'EP0034', method: 'GET', path: '/users/wallet', kind: 'read', session: true, required: true, ...answerOf('EP0034') },
  { code: 'EP0035', method: 'GET', path: '/bonus/rollover', kind: 'read', session: true, required: true },
  { code: 'EP0036', method: 'GET', path: '/bonus/rollover-accomplished', kind: 'read', session: true, required: true },
  { code: 'EP0037', method: 'POST', path: '/documents/{type}', params: { type: 'selfie' }, kind: 'write', session: true, required: true },
  { code: 'EP0038', method: 'PATCH', path: '/bff/users/update-limits', kind: 'write', session: true, required: true },
  { code: 'EP0039', method: 'PATCH', path: '/bff/users/timeout-limits', kind: 'write', session: true, required: true },
  { code: 'EP0040', method: 'PATCH', path: '/bff/users/self-exclusion', kind: 'write', session: true, required: true },
  {
    code: 'EP0041',
    method: 'POST',
    path: '/apicep',
    body: { cep: '01310-100' },
    kind: 'read',
    session: false,
    required: true,
    alsoAccept: [404, 422],
    note: 'a postal-code lookup',
  },
  { code: 'EP0042', method: 'POST', path: '/income-report/generate', kind: 'write', session: true, required: true },
  { code: 'EP0043', method: 'GET', path: '/income-report/available-years', kind: 'read', session: true, required: true },
  {
    code: 'EP0044',
    method: 'GET',
    path: '/income-report/{id}',
    params: { id: MADE_UP },
    kind: 'read',
    session: true,
    required: true,
    alsoAccept: NOT_FOUND_OK,
    note: 'a made-up id: 404 is a proper answer',
  },
  { code: 'EP0045', method: 'PATCH', path: '/bff/users/add-address', kind: 'write', session: true, required: true },
  { code: 'EP0046', method: 'PATCH', path: '/bff/users/add-initial-data', kind: 'write', session: true, required: true },
  { code: 'EP0047', method: 'PATCH', path: '/bff/users/self-phone', kind: 'write', session: true, required: true },
  { code: 'EP0048', method: 'POST', path: '/bff/users/send-email', kind: 'write', session: true, required: true },
  { code: 'EP0049', method: 'POST', path: '/bff/users/validade-email-code', kind: 'write', session: true, required: true },
  { code: 'EP0050', method: 'POST', path: '/bff/users/send-sms', kind: 'write', session: true, required: true },
  { code: 'EP0051', method: 'POST', path: '/bff/users/validade-sms-code', kind: 'write', session: true, required: true },
  { code: 'EP0052', method: 'POST', path: '/bff/users/list-referrals', body: {}, kind: 'read', session: true, required: false },
  { code: 'EP0053', method: 'PATCH', path: '/bff/users/update-pending-data', kind: 'write', session: true, required: true },
  {
    code: 'EP0054',
    method: 'GET',
    path: '/bff/users/support-desk/create-or-update-user',
    kind: 'side-effect',
    session: true,
    required: true,
  },
  { code: 'EP0055', method: 'POST', path: '/bff/validate-confirmation', kind: 'write', session: true, required: true },
  { code: 'EP0056', method: 'POST', path: '/users/list-referrals', body: {}, kind: 'read', session: true, required: true },

  // spec 4.4 Wallet
  {
    code: 'EP0070',
    method: 'POST',
    path: '/bff/transactions',
    body: { page: 1 },
    kind: 'read',
    session: true,
    required: true,
    note: 'a listing sent as POST',
  },
  { code: 'EP0071', method: 'GET', path: '/transactions/cashback', kind: 'read', session: true, required: true },
  { code: 'EP0072', method: 'POST', path: '/bonus/transfer', kind: 'money', session: true, required: true },
  { code: 'EP0073', method: 'POST', path: '/cashback/transfer', kind: 'money', session: true, required: true },
  {
    code: 'EP0074',
    method: 'GET',
    path: '/withdraw/{id}/generate',
    params: { id: MADE_UP },
    kind: 'read',
    session: true,
    required: true,
    alsoAccept: NOT_FOUND_OK,
    media: ['text/html', 'application/pdf'],
    note: 'the receipt (HTML or PDF); a made-up id: 404 is a proper answer',
  },

  // spec 4.5 Payments
  { code: 'EP0090', method: 'GET', path: '/payment-providers', kind: 'read', session: true, required: true, ...answerOf('EP0090') },
  {
    code: 'EP0091',
    method: 'POST',
    path: '/wallet/add-credit',
    body: { user_id: USER_ID, credit_amount: 1000, payment_method: 'pix', currency: 'BRL' },
    kind: 'money',
    session: true,
    required: true,
    note: 'a deposit of 1000 cents (sandbox only)',
  },
  {
    code: 'EP0092',
    method: 'GET',
    path: '/wallet/charge/{transactionId}',
    params: { transactionId: MADE_UP },
    kind: 'read',
    session: true,
    required: true,
    alsoAccept: NOT_FOUND_OK,
    note: 'a made-up id: 404 is a proper answer',
  },
  { code: 'EP0093', method: 'POST', path: '/new-withdraws', kind: 'money', session: true, required: true },
  { code: 'EP0094', method: 'GET', path: '/bff/users/bank-list', kind: 'read', session: true, required: true },
  {
    code: 'EP0095',
    method: 'POST',
    path: '/pix-keys/user-key',
    body: {},
    kind: 'read',
    session: true,
    required: true,
    alsoAccept: NOT_FOUND_OK,
    note: 'a read sent as POST',
  },
  { code: 'EP0096', method: 'POST', path: '/pix-keys/update-user-key-v2', kind: 'write', session: true, required: true },
  {
    code: 'EP0097',
    method: 'GET',
    path: '/mex-bank-accounts/user-account',
    kind: 'read',
    session: true,
    required: true,
    alsoAccept: NOT_FOUND_OK,
  },
  { code: 'EP0098', method: 'POST', path: '/mex-bank-accounts/store', kind: 'write', session: true, required: true },
  {
    code: 'EP0099',
    method: 'GET',
    path: '/generic-bank-accounts/user-account',
    kind: 'read',
    session: true,
    required: true,
    alsoAccept: NOT_FOUND_OK,
  },
  { code: 'EP0100', method: 'POST', path: '/generic-bank-accounts/store', kind: 'write', session: true, required: true },
  {
    code: 'EP0101',
    method: 'GET',
    path: '/coupons/{code}',
    params: { code: 'DOCTORPROBE' },
    kind: 'read',
    session: true,
    required: true,
    alsoAccept: [404, 422],
    note: 'a made-up coupon: 404 is a proper answer',
  },

  // spec 4.8 KYC, rewards
  {
    code: 'EP0120',
    method: 'GET',
    path: '/bff/users/kyc',
    query: { source: 'doctor' },
    kind: 'side-effect',
    session: true,
    required: true,
    note: 'KYC start',
  },
  {
    code: 'EP0120',
    method: 'GET',
    path: '/bff/users/kyc/status',
    query: { kyc_id: MADE_UP },
    kind: 'read',
    session: true,
    required: true,
    alsoAccept: NOT_FOUND_OK,
    note: 'KYC status of a made-up id: 404 is a proper answer',
  },
  {
    code: 'EP0130',
    method: 'GET',
    path: '/bff/gamification/rewards',
    query: { page: '1', per_page: '20' },
    kind: 'read',
    session: true,
    required: true,
  },
  { code: 'EP0131', method: 'POST', path: '/bff/gamification/redeem', kind: 'write', session: true, required: true },

  // spec 4.6 Games: the catalogue, without a session
  { code: 'EP0140', method: 'GET', path: '/casino-games/page/{page}', params: { page: '1' }, kind: 'read', session: false, required: true },
  { code: 'EP0141', method: 'GET', path: '/casino-games/home', kind: 'read', session: false, required: true },
  { code: 'EP0142', method: 'GET', path: '/casino-games/list/base', kind: 'read', session: false, required: true },
  {
    code: 'EP0143',
    method: 'GET',
    path: '/casino-games/list',
    query: { page: '1', per_page: '24' },
    kind: 'read',
    session: false,
    required: true,
    note: 'the catalogue list; its first game gives the slug and id of later probes',
  },
  {
    code: 'EP0144',
    method: 'GET',
    path: '/casino-games',
    query: { slug: SLUG },
    kind: 'read',
    session: false,
    required: true,
    alsoAccept: NOT_FOUND_OK,
  },
  { code: 'EP0145', method: 'GET', path: '/casino-games/filter', kind: 'read', session: false, required: false },
  {
    code: 'EP0146',
    method: 'GET',
    path: '/start-game-v2',
    query: { slug: SLUG },
    kind: 'side-effect',
    session: true,
    required: true,
    note: 'game start',
  },
  { code: 'EP0147', method: 'GET', path: '/bff/games/top-wins-dl', kind: 'read', session: false, required: true },
  {
    code: 'EP0148',
    method: 'GET',
    path: '/bff/games/top-wins-game-dl/{slug}',
    params: { slug: SLUG },
    kind: 'read',
    session: false,
    required: false,
    alsoAccept: NOT_FOUND_OK,
  },
  { code: 'EP0149', method: 'GET', path: '/bff/games/last-wins', kind: 'read', session: false, required: true },
  { code: 'EP0150', method: 'GET', path: '/bff/games/game-high-payers-dl', kind: 'read', session: false, required: true },
  {
    code: 'EP0151',
    method: 'GET',
    path: '/bff/games/statistics-by-period-dl/{slug}',
    params: { slug: SLUG },
    kind: 'read',
    session: false,
    required: false,
    alsoAccept: NOT_FOUND_OK,
  },
  {
    code: 'EP0152',
    method: 'GET',
    path: '/bff/games/statistics-dl/{slug}',
    params: { slug: SLUG },
    kind: 'read',
    session: false,
    required: false,
    alsoAccept: NOT_FOUND_OK,
  },
  {
    code: 'EP0153',
    method: 'GET',
    path: '/bff/games/game-vote/{slug}',
    params: { slug: SLUG },
    kind: 'read',
    session: true,
    required: false,
    alsoAccept: NOT_FOUND_OK,
  },
  {
    code: 'EP0154',
    method: 'GET',
    path: '/bff/games/game-vote-count/{slug}',
    params: { slug: SLUG },
    kind: 'read',
    session: false,
    required: false,
    alsoAccept: NOT_FOUND_OK,
  },
  { code: 'EP0155', method: 'POST', path: '/casino-game-votes/store/', kind: 'write', session: true, required: true },
  {
    code: 'EP0156',
    method: 'DELETE',
    path: '/casino-game-votes/destroy/{gameId}',
    params: { gameId: GAME_ID },
    kind: 'write',
    session: true,
    required: true,
  },
  { code: 'EP0157', method: 'GET', path: '/bff/favorite-games', kind: 'read', session: true, required: true },
  { code: 'EP0158', method: 'PUT', path: '/bff/favorite-games/toggle', kind: 'write', session: true, required: true },
  {
    code: 'EP0159',
    method: 'GET',
    path: '/casino-game-votes',
    query: { casinoGameId: GAME_ID },
    kind: 'read',
    session: true,
    required: true,
    alsoAccept: NOT_FOUND_OK,
  },
  {
    code: 'EP0160',
    method: 'GET',
    path: '/bff/games/statistics-dl',
    query: { slug: SLUG },
    kind: 'read',
    session: false,
    required: true,
    alsoAccept: NOT_FOUND_OK,
  },

  // spec 4.7 Sports
  {
    code: 'EP0190',
    method: 'GET',
    path: '/core-sportbook/search',
    query: { search: 'a', limit: '5' },
    kind: 'read',
    session: false,
    required: true,
  },
  {
    code: 'EP0191',
    method: 'GET',
    path: '/core-sportbook/launch',
    kind: 'side-effect',
    session: true,
    required: true,
    note: 'sportsbook launch',
  },
  { code: 'EP0192', method: 'GET', path: '/core-sportbook/anonymous-launch', kind: 'read', session: false, required: true },
  {
    code: 'EP0193',
    method: 'POST',
    path: '/sportsbook-partner-a/get-jwt',
    body: {},
    kind: 'side-effect',
    session: true,
    required: true,
    note: 'a partner token',
  },
  {
    code: 'EP0194',
    method: 'GET',
    path: '/sportsbook-partner-b/token',
    kind: 'side-effect',
    session: true,
    required: true,
    note: 'a partner token',
  },

  // spec 4.11 Other endpoints in the registry (no proxy route calls them)
  { code: 'EP0200', method: 'GET', path: '/appearance', kind: 'read', session: false, required: false },
  { code: 'EP0201', method: 'GET', path: '/bff/features', kind: 'read', session: false, required: false },
  {
    code: 'EP0202',
    method: 'POST',
    path: '/bookmaker-settings',
    body: {},
    kind: 'read',
    session: false,
    required: false,
    note: 'a read sent as POST',
  },
  { code: 'EP0203', method: 'GET', path: '/getlegalterm', kind: 'read', session: false, required: false },
];

/**
 * The BFF codes of the registry that have no probe, and why: the raw sports passthrough (EP0195)
 * forwards any sub-path, which no fixed probe stands for.
 */
export const UNPROBED: Readonly<Partial<Record<EndpointCode, string>>> = {
  EP0195: 'the raw passthrough of any /core-sportbook/ sub-path: no fixed path to probe (its answers are streamed as they are)',
};
