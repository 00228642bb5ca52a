/**
 * The EM registry of spec 7.3: one row per failure family, in the specification's order
 * (the 401 families EM0001-EM0014, then "Other statuses": EM0011 and EM0021-EM0099).
 *
 * Codes are append-only (spec 7.1): never edit, remove or reuse a row; add new rows at the
 * end of their group and append them to `codes.lock.json`. See `docs/adding-error-codes.md`.
 *
 * How a row matches (implemented in `classify.ts`):
 * - A row with `words` or `prefixes` is *specific* (status + pattern); a row without is
 *   *generic* (status only). Specific rows are tried first, in table order, then generic rows,
 *   in table order; the first match wins (spec 7.3).
 * - `words` are searched in the reason case-insensitively, as plain substrings (spelling as
 *   written, upstream misspellings included). An occurrence that lies inside an occurrence of a
 *   longer listed word of another row belongs to that longer word: `user_blocked` is EM0012's
 *   word and does not count as EM0004's `blocked` (otherwise a word the specification lists
 *   for EM0012 could never reach it). `User blocked` still reads as EM0004's `blocked`.
 * - `prefixes` match when the reason, leading white space removed, starts with them
 *   (case-insensitive): EM0003's "anything starting with exp".
 * - `statuses: 'any'` (EM0099 only) matches every status: the final fallback.
 *
 * Isomorphic: no Node built-ins, no imports outside `src/errors`.
 *
 * @module
 */

/**
 * One row of the EM table (spec 7.3).
 *
 * - `statuses`: the HTTP statuses the row applies to (`0` = no response), or `'any'`.
 * - `match`: the "Reason matches" / "Match" column of the specification, as written.
 * - `words`, `prefixes`: the reason patterns of a specific row (see the module notes).
 * - `meaning`: the "Meaning" column of the specification, as written.
 * - `message`: a short English message for the user: what the browser SDK shows
 *   (`ProxyError.message`) for a failure of a call that is not a pre-authentication call.
 * - `preAuthMessage`: what the browser SDK shows instead when the failure comes from a
 *   pre-authentication route (spec 5.5, 7.4.4: login, register, recovery, social login,
 *   document validation). There the user has no session yet, so the message speaks of the
 *   details entered, never of a session; absent when `message` already reads right there.
 */
export interface ErrorRow {
  readonly statuses: readonly number[] | 'any';
  readonly match: string;
  readonly words?: readonly string[];
  readonly prefixes?: readonly string[];
  readonly meaning: string;
  readonly message: string;
  readonly preAuthMessage?: string;
}

/**
 * The EM registry (spec 7.3), keyed by code, in the specification's order. A code can be
 * written only once: a second key with the same name does not compile, and
 * `test/errors/error-codes.test.ts` also checks the source text.
 */
export const ERROR_CODES = {
  // 401 (EM0001-EM0019)
  EM0001: {
    statuses: [401],
    match: 'no_token, missing_token, token_required, the text User not logged in',
    words: ['no_token', 'missing_token', 'token_required', 'User not logged in'],
    meaning: 'session ended, log in again',
    message: 'Your session has ended. Please log in again.',
    preAuthMessage: 'Something this step needs is missing. Please start again.',
  },
  EM0002: {
    statuses: [401],
    match: 'wrong_token, wrong_ha, wrong_hf1, wrrong_hf2 (upstream misspelling), invalid_token, malformed, bad_signature, Invalido',
    words: ['wrong_token', 'wrong_ha', 'wrong_hf1', 'wrrong_hf2', 'invalid_token', 'malformed', 'bad_signature', 'Invalido'],
    meaning: 'session invalid',
    message: 'Your session is not valid. Please log in again.',
    preAuthMessage: 'The details you entered are not valid. Please check them and try again.',
  },
  EM0003: {
    statuses: [401],
    match: 'expired, token_expired, anything starting with exp',
    words: ['expired', 'token_expired'],
    prefixes: ['exp'],
    meaning: 'session expired',
    message: 'Your session has expired. Please log in again.',
    preAuthMessage: 'The code or link has expired. Please start again to get a new one.',
  },
  EM0004: {
    statuses: [401],
    match: 'revoked, blacklist, blocked, banned',
    words: ['revoked', 'blacklist', 'blocked', 'banned'],
    meaning: 'access revoked',
    message: 'Your access was revoked. Please log in again.',
    preAuthMessage: 'This account cannot sign in. Please contact support.',
  },
  EM0005: {
    statuses: [401],
    match: 'fallback: any 401 matching nothing else',
    meaning: 'session no longer valid',
    message: 'Your session is no longer valid. Please log in again.',
    preAuthMessage: 'The details you entered were not accepted. Please check them and try again.',
  },
  EM0006: {
    statuses: [401],
    match: 'ip_changed, ip_mismatch',
    words: ['ip_changed', 'ip_mismatch'],
    meaning: 'access from a different IP',
    message: 'We noticed access from a different IP address. Please log in again.',
    preAuthMessage: 'We noticed a request from a different IP address. Please try again.',
  },
  EM0007: {
    statuses: [401],
    match: 'device_changed, device_mismatch',
    words: ['device_changed', 'device_mismatch'],
    meaning: 'access from a different device',
    message: 'We noticed access from a different device. Please log in again.',
    preAuthMessage: 'We noticed a request from a different device. Please try again.',
  },
  EM0008: {
    statuses: [401],
    match: 'location_changed, geo_mismatch',
    words: ['location_changed', 'geo_mismatch'],
    meaning: 'access from a different location',
    message: 'We noticed access from a different location. Please log in again.',
    preAuthMessage: 'We noticed a request from a different location. Please try again.',
  },
  EM0009: {
    statuses: [401],
    match: 'liveness_required, kyc_required',
    words: ['liveness_required', 'kyc_required'],
    meaning: 'security verification needed',
    message: 'A security verification is needed. Please log in again to continue.',
    preAuthMessage: 'A security verification is needed before you can continue.',
  },
  EM0010: {
    statuses: [401],
    match: 'deprecated_version, legacy_version, obsolete_version',
    words: ['deprecated_version', 'legacy_version', 'obsolete_version'],
    meaning: 'old-version session',
    message: 'Your session comes from an older version of the site. Please log in again.',
    preAuthMessage: 'This page comes from an older version of the site. Please reload it and try again.',
  },
  EM0012: {
    statuses: [401],
    match: 'user_blocked, user_inactive, the words for blocked / not authorised',
    // "The words for blocked / not authorised": English "blocked" is EM0004's word, so this
    // row takes the Portuguese and Spanish words for blocked and the phrases for "not
    // authorised" about a user. Bare "unauthorized" is left out on purpose: it is the stock
    // text of any 401 and would make every unexplained 401 read "user blocked".
    words: [
      'user_blocked',
      'user_inactive',
      'bloqueado',
      'bloqueada',
      'not authorized',
      'not authorised',
      'unauthorized user',
      'não autorizado',
      'não autorizada',
      'nao autorizado',
      'nao autorizada',
      'no autorizado',
      'no autorizada',
    ],
    meaning: 'user blocked, contact support',
    message: 'Your account is blocked. Please contact support.',
  },
  EM0013: {
    statuses: [401],
    match: 'security_error, failed_auth_check',
    words: ['security_error', 'failed_auth_check'],
    meaning: 'security error while validating session',
    message: 'A security error occurred while validating your session. Please log in again.',
    preAuthMessage: 'A security error occurred while checking your details. Please try again.',
  },
  EM0014: {
    statuses: [401],
    match: 'the texts Wrong auth validation (1, 2, 3) and Wrong auth refresh!',
    // "Wrong auth validation" covers the numbered texts 1, 2 and 3 whatever their punctuation
    // ("Wrong auth validation 2", "Wrong auth validation (2)").
    words: ['Wrong auth validation', 'Wrong auth refresh!'],
    meaning: 'session failed the security validation',
    message: 'Your session failed the security validation. Please log in again.',
    preAuthMessage: 'Your details failed the security validation. Please try again.',
  },

  // Other statuses
  EM0011: {
    statuses: [403],
    match: 'any 403',
    meaning: 'no permission for the resource',
    message: 'You do not have permission to access this.',
  },
  EM0021: {
    statuses: [429],
    match: 'any 429',
    meaning: 'too many attempts in a short time',
    message: 'Too many attempts in a short time. Please wait a moment and try again.',
  },
  EM0022: {
    statuses: [409],
    match: 'any 409',
    meaning: 'conflict processing the request',
    message: 'There was a conflict processing your request. Please try again.',
  },
  EM0031: {
    statuses: [500],
    match: 'status 500',
    meaning: 'server error',
    message: 'Something went wrong on our side. Please try again later.',
  },
  EM0032: {
    statuses: [502, 503, 504],
    match: 'status 502, 503 or 504',
    meaning: 'service unavailable',
    message: 'The service is temporarily unavailable. Please try again shortly.',
  },
  EM0041: {
    statuses: [202],
    match: 'status 202 (client convention)',
    meaning: 'game session reached its time limit',
    message: 'Your game session reached its time limit.',
  },
  EM0042: {
    statuses: [0],
    match: 'status 0 (network error, no response)',
    meaning: 'network failure validating the session',
    message: 'A network failure occurred. Please check your connection and try again.',
  },
  EM0099: {
    statuses: 'any',
    match: 'status outside the buckets above, or body without a recognisable reason',
    meaning: 'final fallback',
    message: 'Something went wrong. Please try again.',
  },
} as const satisfies Readonly<Record<`EM${number}`, ErrorRow>>;

/** A code of the EM registry (spec 7.3), for example `'EM0005'`. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Key of {@link ERROR_GROUPS}. */
export type ErrorGroupKey = 'session' | 'status';

/**
 * The EM groups of spec 7.3, in the specification's order: the 401 session families
 * (numbers EM0001-EM0019 are reserved for them) and the other statuses. EM0011 ("any 403") is
 * listed among the other statuses although its number lies in the 401 range.
 */
export const ERROR_GROUPS = {
  session: { title: '401 (EM0001-EM0019)' },
  status: { title: 'Other statuses' },
} as const satisfies Readonly<Record<ErrorGroupKey, { readonly title: string }>>;

/** An EM row with its code and derived facts. */
export interface ErrorEntry extends ErrorRow {
  readonly code: ErrorCode;
  /** `'session'` for the 401 families, `'status'` for the other statuses. */
  readonly group: ErrorGroupKey;
  /** Whether the row has a reason pattern (spec 7.3 "specific") or is status only ("generic"). */
  readonly specific: boolean;
  /** Whether the browser ends the session for it: true exactly for the 401 families. */
  readonly sessionEnding: boolean;
  /** The message on a pre-authentication route: the row's own, or `message` when it has none. */
  readonly preAuthMessage: string;
}

/** Every EM row with its code, in the registry's (and the specification's) order. */
export const ERROR_LIST: readonly ErrorEntry[] = Object.freeze(
  (Object.keys(ERROR_CODES) as ErrorCode[]).map((code) => {
    const row: ErrorRow = ERROR_CODES[code];
    const is401 = row.statuses !== 'any' && row.statuses.includes(401);
    return Object.freeze({
      code,
      ...row,
      preAuthMessage: row.preAuthMessage ?? row.message,
      group: is401 ? 'session' : 'status',
      specific: (row.words?.length ?? 0) + (row.prefixes?.length ?? 0) > 0,
      sessionEnding: is401,
    } satisfies ErrorEntry);
  }),
);

const ERROR_BY_CODE: ReadonlyMap<string, ErrorEntry> = new Map(ERROR_LIST.map((e) => [e.code, e]));

/** The code of a 401 whose reason matches no 401 row (spec 7.3, docs/behaviour.md "Clarifications of the specification"): `'EM0005'`. */
export const SESSION_FALLBACK_ERROR_CODE = 'EM0005' satisfies ErrorCode;

/** The final fallback code (spec 7.3): `'EM0099'`. */
export const FALLBACK_ERROR_CODE = 'EM0099' satisfies ErrorCode;

/**
 * Type guard: whether `code` is a code of this registry (spec 7.3), for example `'EM0005'`.
 * A well-formed code from a newer registry version is not a code of this one.
 */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && ERROR_BY_CODE.has(code);
}

/**
 * The EM row of a code (spec 7.3). Total for an {@link ErrorCode}; `undefined` for any other
 * string (an unknown or malformed code). Never throws.
 * @example getError('EM0003').message // 'Your session has expired. Please log in again.'
 */
export function getError(code: ErrorCode): ErrorEntry;
export function getError(code: string): ErrorEntry | undefined;
export function getError(code: string): ErrorEntry | undefined {
  return ERROR_BY_CODE.get(code);
}

/**
 * Whether an EM code means the session is over, so the browser SDK forces a logout
 * (spec 7.3, docs/architecture.md "Habits" (habit 9)): true for the 401 families EM0001-EM0010 and EM0012-EM0014;
 * false for EM0011 (a 403: no permission for one resource, the session is fine), for the other
 * statuses (EM0021-EM0099: rate limit, conflict, 5xx, game time limit, EM0042 network failure)
 * and for any unknown or malformed code. Never throws.
 * @param code - an EM code such as `'EM0003'`
 */
export function isSessionEndingErrorCode(code: unknown): boolean {
  return typeof code === 'string' && ERROR_BY_CODE.get(code)?.sessionEnding === true;
}
