/**
 * Shapes served by the sandbox BFF (specification part 2: the shared declarations of
 * `contracts/shapes.ts` with the sandbox's sub-records) and the records the sandbox keeps about users
 * and sessions.
 *
 * The specification names AuthUserDocument, AuthUserCountryData, AuthUserWallet, AuthLatestKyc and
 * ForceRequestKycReason without giving their fields; the fields below are the sandbox's choice and
 * only need to look plausible to a front end.
 *
 * @module
 */
import type {
  AuthUser as SharedAuthUser,
  AuthUserInfo as SharedAuthUserInfo,
  LoginResponse as SharedLoginResponse,
} from '../contracts/shapes.js';

/** Identity document of a user (spec 2.5, fields chosen by the sandbox). */
export interface AuthUserDocument {
  id: number;
  /** `cpf` for Brazil, otherwise a generic national id type. */
  type: string;
  /** Digits only, no punctuation. */
  number: string;
  /** ISO 3166-1 alpha-2 code of the issuing country. */
  country: string;
  verified: boolean;
  verified_at: string | null;
}

/** Country record attached to a user (spec 2.5, fields chosen by the sandbox). */
export interface AuthUserCountryData {
  id: number;
  name: string;
  /** ISO 3166-1 alpha-2. */
  code: string;
  /** ISO 3166-1 alpha-3. */
  iso3: string;
  /** Phone country prefix without `+`. */
  ddi: string;
  /** ISO 4217. */
  currency: string;
  /** BCP 47 language tag. */
  language: string;
  timezone: string;
}

/** Wallet summary embedded in AuthUser (spec 2.5). Every amount is an integer number of cents. */
export interface AuthUserWallet {
  id: number;
  user_id: number;
  /** ISO 4217. */
  currency: string;
  /** Real-money balance, in cents. */
  balance: number;
  /** Bonus balance, in cents. */
  bonus_balance: number;
  /** Cashback balance, in cents. */
  cashback_balance: number;
  /** Part of `balance` that can be withdrawn now, in cents. */
  withdrawable_balance: number;
  updated_at: string;
}

/** Latest KYC verification of a user (spec 2.5, fields chosen by the sandbox). */
export interface AuthLatestKyc {
  id: number;
  /** `approved`, `pending`, `rejected` or `expired`. */
  status: string;
  level: number;
  provider: string;
  created_at: string;
  updated_at: string;
}

/** Why the BFF asks for a new KYC (spec 2.6, fields chosen by the sandbox). */
export interface ForceRequestKycReason {
  code: string;
  message: string;
}

/**
 * AuthUser, spec 2.5, with the sandbox's sub-records. The sandbox's values: timestamps are ISO 8601
 * strings, `birth_date` is `YYYY-MM-DD`, `gender` is 1 (male), 2 (female) or 0 (not given), flags are
 * 0 or 1; `phone` is the national number without the country prefix, digits only, `ddi` the prefix
 * without `+`; `country` is ISO 3166-1 alpha-2 and `currency` ISO 4217; `token` is an opaque per-user
 * token of the BFF (not the session JWT); `ftd_value` is the first deposit in cents (0 before it).
 */
export type AuthUser = SharedAuthUser<AuthUserDocument, AuthUserCountryData, AuthUserWallet, AuthLatestKyc>;

/**
 * AuthUserInfo, spec 2.6, with the sandbox's ForceRequestKycReason. The sandbox's values:
 * responsible-gaming money limits (`spa_*_limit` except `spa_time_limit`) are in cents,
 * `spa_time_limit` is in minutes per day, `spa_period_limit` is `daily`, `weekly` or `monthly`;
 * `nationalities` is a JSON-encoded array of ISO 3166-1 alpha-2 codes.
 */
export type AuthUserInfo = SharedAuthUserInfo<ForceRequestKycReason>;

/** LoginResponse, spec 2.2, with the sandbox's records; `expires_in` is in seconds. */
export type LoginResponse = SharedLoginResponse<AuthUser, AuthUserInfo>;

/** ValidateDocumentResponse, spec 2.3; the sandbox's `gender` is `M`, `F` or empty. */
export type { ValidateDocumentResponse } from '../contracts/shapes.js';

/** A user as the sandbox stores it. */
export interface SandboxUser {
  /** Same as `profile.id`. */
  id: number;
  /** Plain text: this is seeded test data, never a real credential. */
  password: string;
  /** When set, login needs `two_factor_code` equal to this number. */
  twoFactorCode: number | null;
  /** What `GET /auth/user-profile` answers as `user`. */
  profile: AuthUser;
  /** What `GET /auth/user-profile` answers as `userInfo`. */
  info: AuthUserInfo;
  /** Free data from the seed for other areas (`SeedUserInput.areas`), keyed by area name. */
  areas: Record<string, unknown>;
}

/** Why a session stopped being valid before its natural expiry. */
export type SessionEndReason = 'logout' | 'logout_auto' | 'admin' | 'password_reset';

/** A session, one per issued JWT (`jti` = `id`). Times are epoch milliseconds. */
export interface SandboxSession {
  id: string;
  userId: number;
  issuedAt: number;
  /** After this instant the token answers `token_expired`. */
  expiresAt: number;
  /** Set when revoked; the token then answers `revoked`. */
  revokedAt: number | null;
  revokeReason: SessionEndReason | null;
  /** Set when a refresh replaced this session; it stays valid for the grace period only. */
  replacedBy: string | null;
}
