/**
 * The proxy routes and upstream paths more than one scenario family loads or counts.
 *
 * @module
 */
import { BENCH_USER_ID } from '../upstream.js';

/** Authenticated GET routes that forward to the BFF, in order of preference (the passthrough route is the first served). */
export const PASSTHROUGH_CANDIDATES = ['/api/user/last-casino-games', '/api/payments/bank-list', '/api/user/login-history'];
/** The profile read's upstream call (spec 2.1): a session's first request may make it. */
export const PROFILE_UPSTREAM = '/auth/user-profile';
export const DEPOSIT_PATH = '/api/payments/deposit';
/** The upstream call of one deposit (spec 2.7). */
export const DEPOSIT_UPSTREAM = '/wallet/add-credit';
/** A DepositPayload (spec 2.7); `__N__` becomes a different amount in cents for every request. */
export const DEPOSIT_BODY = `{"userId":${BENCH_USER_ID},"creditAmount":__N__,"paymentMethod":"pix","currency":"BRL","utmSource":"newsletter","utmCampaign":"spring"}`;
/**
 * Consecutive requests of the profile and deposit rows that carry one session (a page load's worth).
 * The profile cache holds at most 100 tokens (spec 8), and a deposit reads the session's user id
 * from it: in strict rotation over thousands of sessions every request would find its token evicted
 * and the rows would measure a profile fetch per request, not the cache. In bursts, one session's
 * requests share one fetch, and the rotation still spreads them over every session (the per-session
 * rate is the same as without bursts).
 */
export const SESSION_BURST = 64;

/**
 * The passthrough on a proxy process of its own that serves nothing else (the production
 * configuration, as the main proxy): the base of the rows that change one setting in a proxy serving
 * the passthrough only (tracing, `REDIS_URL`, no heap limit). The main proxy serves every row's routes
 * (catalogue, profile, refusals), and V8 optimises the code they share for all of them; each such row
 * is compared with a process that, like it, has served the passthrough alone and has had as much
 * warm-up. (In round 5's three full runs the main proxy's passthrough served 0.96-1.75 times in its
 * first round what it served in the next two, after the other rows' runs on it; every one-route proxy
 * 0.44-0.98 times: 2 s of warm-up leaves V8 still optimising a process that has had no other.)
 */
export const PASSTHROUGH_ONLY_ROW = 'passthrough/proxy-passthrough-only';

/**
 * The load bench's deposit request (`POST /api/payments/deposit` with its DepositPayload, a new
 * `creditAmount` per request, each session for {@link SESSION_BURST} requests in a row): the deposit
 * rows of `npm run bench` and the deposits of `bench:instructions` send it alike.
 */
export const DEPOSIT_REQUEST = {
  method: 'POST',
  path: DEPOSIT_PATH,
  headers: { 'content-type': 'application/json' },
  body: DEPOSIT_BODY,
  session: true,
  burst: SESSION_BURST,
} as const;
