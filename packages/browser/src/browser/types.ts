/**
 * Request and response shapes of spec part 2 as the browser sends and receives them through the
 * proxy. Types only: the SDK does not validate bodies (the proxy does, and answers 400
 * `invalid_request`). Records whose fields the specification does not show stay open
 * (`JsonObject`).
 *
 * The response shapes of spec 2.2-2.6 come from the route tables' schemas (`openapi.gen.ts`,
 * generated from the proxy's OpenAPI document), imported with `import type` only (erased from the
 * bundle).
 *
 * @module
 */
import type { LoginOutcomeType } from '../contracts/shapes.js';
import type { components, operations } from './openapi.gen.js';

export type { LoginOutcomeType };

type Schemas = components['schemas'];

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

/**
 * spec 2.5 AuthUser as the proxy answers it, from the route tables' schema (`openapi.gen.ts`): a
 * closed type, the fields the specification lists (sub-records it does not show stay open); fields
 * the proxy passes on beyond them are in the answer at run time, not in the type.
 */
export type AuthUser = Schemas['AuthUser'];

/** spec 2.6 AuthUserInfo (`spa_*` are the responsible-gaming limits), closed like {@link AuthUser}. */
export type AuthUserInfo = Schemas['AuthUserInfo'];

/** A LoginResponse that opened a session (spec 2.2, without `access_token`: the token is in the HttpOnly cookie). */
export type LoginSession = Extract<Schemas['LoginResponse'], { expires_in: number }> & { type?: undefined };

/** A LoginResponse that asks for more (`two_factor_code`) or refuses (`cancelled_account`): no session. */
export type LoginOutcome = {
  // One member per `type`, so that comparing `type` narrows the union.
  [T in LoginOutcomeType]: Omit<Extract<Schemas['LoginResponse'], { type: LoginOutcomeType }>, 'type'> & { type: T };
}[LoginOutcomeType];

/**
 * spec 2.2 LoginResponse as the proxy answers it (docs/behaviour.md "Session cookie"): a union on
 * `type`. Without it, a session: `expires_in` (seconds), `token_type`, `user`, `userInfo`. With
 * `type` set, there is no session: `two_factor_code` asks for the second factor,
 * `cancelled_account` reports a cancelled account.
 */
export type LoginResult = LoginSession | LoginOutcome;

/** spec 2.3 Profile response: `user`, `userInfo`. */
export type ProfileResponse = Schemas['ProfileResponse'];

/** spec 2.3 ValidateDocumentResponse. */
export type ValidateDocumentResponse = Schemas['ValidateDocumentResponse'];

/**
 * spec 2.4 RegisterSimplifiedPayload, plus the proxy's optional social `provider` and `token`: the
 * body schema of `POST /api/auth/register` (`nationalities` is a JSON-encoded string).
 */
export type RegisterSimplifiedPayload = operations['postAuthRegister']['requestBody']['content']['application/json'];

/** spec 2.3 ForgotPasswordPayload: the body of the first recovery step (`POST /auth/passwords/reset/options`). */
export interface ForgotPasswordPayload {
  /** E-mail or national document number. */
  login: string;
  captcha_token?: string;
}

/**
 * Body of `/api/auth/recovery` (spec 4.1): one step, with only that step's fields (any other field
 * is a 400). The first step is a ForgotPasswordPayload, with no `step` (or `step: 'options'`).
 */
export type RecoveryPayload =
  | (ForgotPasswordPayload & { step?: 'options' })
  | { step: 'by-email' | 'by-sms'; login: string; captcha_token?: string }
  | { step: 'validate-code'; login: string; code: string; captcha_token?: string }
  | { step: 'confirm'; login: string; code: string; password: string; password_confirmation?: string; captcha_token?: string };

/** A field of an open body that the proxy forwards unchanged: a scalar (no nested object or array). */
export type ScalarField = string | number | boolean | null;

/**
 * Body of `/api/address/lookup-by-postal-code` (spec 4.2): the Brazilian postal code `cep`
 * (`01310-100` or `01310100`), plus any other scalar field, forwarded unchanged (at most 64 fields,
 * strings of at most 2048 characters).
 */
export interface PostalCodeLookupPayload {
  cep: string;
  [field: string]: ScalarField | undefined;
}

/**
 * Body of `/api/tracking/attribution` (spec 6.3): the known fields below, plus any other scalar field
 * of the attribution provider's, forwarded unchanged (at most 64 fields, strings of at most 2048
 * characters). The proxy adds the visitor's address and user agent.
 */
export interface AttributionEventPayload {
  /** The event's name, e.g. `sign_up`, `first_deposit`. */
  event: string;
  eventId?: string;
  /** Epoch milliseconds (default: when the proxy forwards it). */
  timestamp?: number;
  /** In the currency's units. */
  value?: number;
  /** ISO 4217 code, e.g. `BRL`. */
  currency?: string;
  clickId?: string;
  utm_source?: string;
  utm_medium?: string;
  utm_campaign?: string;
  utm_content?: string;
  ga_client_id?: string;
  /** At most 30 flat values. */
  properties?: Record<string, string | number | boolean>;
  [field: string]: ScalarField | Record<string, string | number | boolean> | undefined;
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

/**
 * spec 2.7 DepositPayload (client shape, camelCase; the proxy sends it upstream in snake_case): the
 * body schema of `POST /api/payments/deposit`. `creditAmount` is in cents; `paymentMethod` a
 * payment method slug (`pix`); `currency` an ISO code (`BRL`). A deposit never carries `src`,
 * `utm_src`, `affiliation_code` or `app_source`.
 */
export type DepositPayload = operations['postPaymentsDeposit']['requestBody']['content']['application/json'];

/** `/api/auth/refresh` and the logout routes answer `{ ok: true }`. */
export type OkAnswer = Schemas['OkAnswer'];

/**
 * `GET /api/auth/session` (a proxy route beyond the spec): the session state read from the cookie
 * alone. `expiresAt` is the token's `exp` in epoch seconds (`null` when the token has none).
 */
export type SessionStateResult = { signedIn: true; expiresAt: number | null } | { signedIn: false };
