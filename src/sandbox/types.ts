/**
 * Shapes served by the sandbox BFF (specification part 2) and the records the sandbox keeps
 * about users and sessions.
 *
 * The specification names AuthUserDocument, AuthUserCountryData, AuthUserWallet, AuthLatestKyc and
 * ForceRequestKycReason without giving their fields; the fields below are the sandbox's choice and
 * only need to look plausible to a front end.
 *
 * @module
 */

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
 * AuthUser, spec 2.5. Timestamps are ISO 8601 strings, `birth_date` is `YYYY-MM-DD`,
 * `gender` is 1 (male), 2 (female) or 0 (not given), flags are 0 or 1.
 */
export interface AuthUser {
  id: number;
  email: string;
  username: string;
  name: string;
  first_name: string;
  last_name: string;
  /** National number without the country prefix, digits only. */
  phone: string;
  /** Phone country prefix without `+`. */
  ddi: string;
  birth_date: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
  language: string;
  /** ISO 4217. */
  currency: string;
  /** Opaque per-user token of the BFF (not the session JWT). */
  token: string;
  mother_name: string;
  created_at: string;
  updated_at: string;
  last_login: string;
  gender: number;
  document: AuthUserDocument | null;
  country_data: AuthUserCountryData | null;
  wallet: AuthUserWallet | null;
  is_active: number;
  cancelled_account: number;
  bonus_enabled: number;
  ftd_date: string | null;
  /** First deposit amount, in cents (0 before the first deposit). */
  ftd_value: number;
  affiliation_code?: string;
  latestKyc?: AuthLatestKyc;
}

/**
 * AuthUserInfo, spec 2.6. Responsible-gaming money limits (`spa_*_limit` except
 * `spa_time_limit`) are in cents; `spa_time_limit` is in minutes per day.
 */
export interface AuthUserInfo {
  validate_email_at: string;
  login_at: string;
  validate_sms_at: string;
  login_attempt_qty: number;
  strong_password: number;
  seven_days_since_last_login: boolean;
  force_request_kyc: boolean;
  two_factor_enabled: boolean;
  two_factor_type?: string;
  force_request_kyc_reasons?: ForceRequestKycReason[];
  two_factor_at?: string | null;
  two_factor_code?: string | null;
  latitude?: number;
  longitude?: number;
  location_at?: string;
  /** JSON-encoded array of ISO 3166-1 alpha-2 codes, as in RegisterSimplifiedPayload. */
  nationalities?: string;
  tc_accepted_at?: string | null;
  privacy_accepted_at?: string | null;
  lgpd_accepted_at?: string | null;
  law_accepted_at?: string | null;
  mkt_accepted_at?: string | null;
  spa_bet_limit?: number | null;
  spa_loss_limit?: number | null;
  spa_deposit_limit?: number | null;
  spa_withdrawal_limit?: number | null;
  spa_time_limit?: number | null;
  /** `daily`, `weekly` or `monthly`. */
  spa_period_limit?: string | null;
  spa_note?: string | null;
}

/** LoginResponse, spec 2.2. */
export interface LoginResponse {
  access_token: string;
  /** Lifetime of `access_token`, in seconds. */
  expires_in: number;
  token_type: string;
  user: AuthUser;
  userInfo: AuthUserInfo;
  type?: 'cancelled_account' | 'two_factor_code';
}

/** ValidateDocumentResponse, spec 2.3. */
export interface ValidateDocumentResponse {
  docnumber?: string;
  docnumber_valid?: boolean;
  birth_date?: string;
  /** `M`, `F` or empty. */
  gender?: string;
  mother_name?: string;
  name?: string;
}

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
