/**
 * Request and response shapes of spec part 2 as the browser sends and receives them through the
 * proxy. Types only: the SDK does not validate bodies (the proxy does, and answers 400
 * `invalid_request`). Records whose fields the specification does not show stay open
 * (`JsonObject`).
 *
 * @module
 */

/** A JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object with fields the SDK does not know in advance. */
export type JsonObject = { [key: string]: unknown };

/** spec 2.1 LoginPayload. `two_factor_code` is a number. */
export interface LoginPayload {
  /** E-mail or national document number. */
  login: string;
  password: string;
  captcha_token?: string;
  app_source?: string;
  two_factor_code?: number;
}

/** spec 2.5 AuthUser (sub-records the specification does not show stay open). */
export interface AuthUser {
  id: number;
  email: string;
  username: string;
  name: string;
  first_name: string;
  last_name: string;
  phone: string;
  ddi: string;
  birth_date: string;
  country: string;
  language: string;
  currency: string;
  mother_name: string;
  created_at: string;
  updated_at: string;
  last_login: string;
  gender: number;
  document: JsonObject | null;
  country_data: JsonObject | null;
  wallet: JsonObject | null;
  is_active: number;
  cancelled_account: number;
  bonus_enabled: number;
  ftd_date: string | null;
  ftd_value: number;
  affiliation_code?: string;
  latestKyc?: JsonObject;
  [key: string]: unknown;
}

/** spec 2.6 AuthUserInfo (`spa_*` are the responsible-gaming limits). */
export interface AuthUserInfo {
  validate_email_at: string;
  login_at: string;
  validate_sms_at: string;
  login_attempt_qty: number;
  strong_password: number;
  seven_days_since_last_login: boolean;
  force_request_kyc: boolean;
  two_factor_enabled: boolean;
  [key: string]: unknown;
}

/** The login outcomes that are not a session (spec 3.2). */
export type LoginOutcomeType = 'cancelled_account' | 'two_factor_code';

/**
 * spec 2.2 LoginResponse as the proxy answers it: without `access_token` (the token is in the
 * HttpOnly cookie, CONTRACT.md "Session cookie"). With `type` set, there is no session:
 * `two_factor_code` asks for the second factor, `cancelled_account` reports a cancelled account.
 */
export interface LoginResult {
  expires_in?: number;
  token_type?: string;
  user?: AuthUser;
  userInfo?: AuthUserInfo;
  type?: LoginOutcomeType;
  [key: string]: unknown;
}

/** spec 2.3 Profile response. */
export interface ProfileResponse {
  user: AuthUser;
  userInfo: AuthUserInfo;
}

/** spec 2.4 RegisterSimplifiedPayload, plus the proxy's optional social `provider` and `token`. */
export interface RegisterSimplifiedPayload {
  email: string;
  password: string;
  country: string;
  /** A JSON-encoded string. */
  nationalities: string;
  optIn: boolean;
  ddi?: string;
  phone?: string;
  name?: string;
  birth_date?: string;
  number?: string;
  captcha_token?: string;
  app_source?: string;
  affiliation_code?: string;
  utm_source?: string;
  utm_campaign?: string;
  utm_content?: string;
  utm_medium?: string;
  src?: string;
  utm_src?: string;
  ga_client_id?: string;
  user_prudential_limit_active?: unknown;
  provider?: string;
  token?: string;
}

/** Body of `/api/auth/recovery` (spec 4.1): the step plus the fields it needs. */
export interface RecoveryPayload {
  step: 'options' | 'by-email' | 'by-sms' | 'validate-code' | 'confirm';
  login: string;
  captcha_token?: string;
  code?: string;
  password?: string;
  password_confirmation?: string;
}

/** Body of `/api/auth/social/{provider}`. */
export interface SocialLoginPayload {
  token: string;
  captcha_token?: string;
  app_source?: string;
}

/** spec 2.3 ValidateDocumentPayload. */
export interface ValidateDocumentPayload {
  number: string;
  captcha_token?: string;
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

/**
 * spec 2.7 DepositPayload (client shape, camelCase; the proxy sends it upstream in snake_case).
 * A deposit never carries `src`, `utm_src`, `affiliation_code` or `app_source`.
 */
export interface DepositPayload {
  userId: number;
  /** Amount in cents. */
  creditAmount: number;
  /** Payment method slug, e.g. `pix`. */
  paymentMethod: string;
  /** ISO currency code, e.g. `BRL`. */
  currency: string;
  couponCode?: string;
  utmCampaign?: string;
  utmSource?: string;
  utmMedium?: string;
  utmContent?: string;
  gaClientId?: string;
  cardNumber?: string;
  cardName?: string;
  cardExpiryMonth?: string;
  cardExpiryYear?: string;
  cardCvv?: string;
}

/** `/api/auth/refresh` and the logout routes answer `{ ok: true }`. */
export interface OkAnswer {
  ok: true;
  [key: string]: unknown;
}

