/**
 * The response shapes of spec part 2 (2.2-2.6), declared once for the server contracts
 * (`contracts/auth.ts`), the sandbox (`sandbox/types.ts`) and the browser SDK (`browser/types.ts`).
 *
 * Types only, with no imports: every user imports it with `import type`, so that it never reaches a
 * bundle (the browser SDK stays free of server code and TypeBox). The specification names the
 * sub-records AuthUserDocument, AuthUserCountryData, AuthUserWallet, AuthLatestKyc and
 * ForceRequestKycReason without their fields, so they are type parameters here, open records by
 * default; the sandbox fills them with the records it serves.
 *
 * @example
 * import type { AuthUser, ProfileResponse } from '../contracts/shapes.js';
 * type SandboxUser = AuthUser<MyDocument, MyCountry, MyWallet, MyKyc>;
 *
 * @module
 */

/** A record whose fields the specification does not show (spec 2.5, 2.6). */
export type OpenRecord = { [key: string]: unknown };

/**
 * spec 2.5 AuthUser. The type parameters are the sub-records AuthUserDocument, AuthUserCountryData,
 * AuthUserWallet and AuthLatestKyc, whose fields the specification does not show.
 */
export interface AuthUser<Document = OpenRecord, CountryData = OpenRecord, Wallet = OpenRecord, LatestKyc = OpenRecord> {
  id: number;
  email: string;
  username: string;
  name: string;
  first_name: string;
  last_name: string;
  phone: string;
  /** Phone country prefix (spec 2.4). */
  ddi: string;
  birth_date: string;
  country: string;
  language: string;
  currency: string;
  /** A token of the BFF's user record; never the session JWT in a proxy answer (docs/behaviour.md "Session cookie"). */
  token: string;
  mother_name: string;
  created_at: string;
  updated_at: string;
  last_login: string;
  gender: number;
  document: Document | null;
  country_data: CountryData | null;
  wallet: Wallet | null;
  is_active: number;
  cancelled_account: number;
  bonus_enabled: number;
  ftd_date: string | null;
  ftd_value: number;
  affiliation_code?: string;
  latestKyc?: LatestKyc;
}

/**
 * spec 2.6 AuthUserInfo. The `spa_*` fields are the responsible-gaming limits; the type parameter is
 * ForceRequestKycReason, whose fields the specification does not show.
 */
export interface AuthUserInfo<KycReason = OpenRecord> {
  validate_email_at: string;
  login_at: string;
  validate_sms_at: string;
  login_attempt_qty: number;
  strong_password: number;
  seven_days_since_last_login: boolean;
  force_request_kyc: boolean;
  two_factor_enabled: boolean;
  two_factor_type?: string;
  force_request_kyc_reasons?: KycReason[];
  two_factor_at?: string | null;
  two_factor_code?: string | null;
  latitude?: number;
  longitude?: number;
  location_at?: string;
  /** A JSON-encoded string, as in RegisterSimplifiedPayload (spec 2.4). */
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
  spa_period_limit?: string | null;
  spa_note?: string | null;
}

/** The login outcomes that are not a session (spec 2.2 `type`, spec 3.2). */
export type LoginOutcomeType = 'cancelled_account' | 'two_factor_code';

/**
 * spec 2.2 LoginResponse, as the BFF answers it (the proxy answers it without `access_token`).
 * With `type` set there is no session: `two_factor_code` asks for the second factor,
 * `cancelled_account` reports a cancelled account.
 */
export interface LoginResponse<User = AuthUser, Info = AuthUserInfo> {
  /** The session JWT. */
  access_token: string;
  /** Lifetime of `access_token`, in seconds. */
  expires_in: number;
  token_type: string;
  user: User;
  userInfo: Info;
  type?: LoginOutcomeType;
}

/** spec 2.3 Profile response. */
export interface ProfileResponse<User = AuthUser, Info = AuthUserInfo> {
  user: User;
  userInfo: Info;
}

/** spec 2.3 RefreshTokenResponse. */
export interface RefreshTokenResponse {
  access_token: string;
}

/** spec 2.3 ValidateDocumentResponse (all optional). */
export interface ValidateDocumentResponse {
  docnumber?: string;
  docnumber_valid?: boolean;
  birth_date?: string;
  gender?: string;
  mother_name?: string;
  name?: string;
}
