/**
 * The authentication shapes of spec part 2 (2.1-2.6): the request bodies as TypeBox schemas and their
 * TypeScript types, which validate what the proxy accepts; the response types, which describe what the
 * BFF answers, are declared in `shapes.ts` and re-exported here.
 *
 * @module
 */
import { type Static, Type } from '@sinclair/typebox';
import type { LoginOutcomeType } from './shapes.js';

export type {
  AuthUser,
  AuthUserInfo,
  LoginOutcomeType,
  LoginResponse,
  ProfileResponse,
  RefreshTokenResponse,
  ValidateDocumentResponse,
} from './shapes.js';

const Str = (max = 256) => Type.String({ minLength: 1, maxLength: max });
const OptStr = (max = 256) => Type.Optional(Type.String({ maxLength: max }));

/** spec 2.1 LoginPayload (request). `two_factor_code` is a number. Unknown fields are ignored, never forwarded. */
export const LoginPayload = Type.Object({
  login: Str(320),
  password: Str(256),
  captcha_token: OptStr(4096),
  app_source: OptStr(64),
  two_factor_code: Type.Optional(Type.Integer({ minimum: 0, maximum: 99_999_999 })),
});
export type LoginPayload = Static<typeof LoginPayload>;

/** The outcomes of a login that are not a session (spec 3.2). */
export const LOGIN_OUTCOME_TYPES = ['two_factor_code', 'cancelled_account'] as const satisfies readonly LoginOutcomeType[];

/** spec 2.3 ForgotPasswordPayload. */
export const ForgotPasswordPayload = Type.Object({ login: Str(320), captcha_token: OptStr(4096) });
export type ForgotPasswordPayload = Static<typeof ForgotPasswordPayload>;

/** spec 2.3 ValidateDocumentPayload. */
export const ValidateDocumentPayload = Type.Object({ number: Str(32), captcha_token: OptStr(4096) });
export type ValidateDocumentPayload = Static<typeof ValidateDocumentPayload>;

/** Attribution fields of a registration (spec 2.4), filled from the body or the tracking cookies. */
export const ATTRIBUTION_FIELDS = ['utm_source', 'utm_campaign', 'utm_content', 'utm_medium'] as const;

/**
 * spec 2.4 RegisterSimplifiedPayload (request; the response is a LoginResponse), plus the proxy's own
 * optional `provider` (a social registration, CONTRACT.md `REGISTER_TYPE`) and `utm_src` (mapped to `src`).
 */
export const RegisterSimplifiedPayload = Type.Object({
  email: Type.String({ minLength: 3, maxLength: 320, pattern: '^[^\\s@]+@[^\\s@]+$' }),
  password: Str(256),
  country: Str(64),
  nationalities: Str(1024),
  optIn: Type.Boolean(),
  ddi: OptStr(8),
  phone: OptStr(32),
  name: OptStr(256),
  birth_date: OptStr(32),
  number: OptStr(32),
  captcha_token: OptStr(4096),
  app_source: OptStr(64),
  affiliation_code: OptStr(128),
  utm_source: OptStr(256),
  utm_campaign: OptStr(256),
  utm_content: OptStr(256),
  utm_medium: OptStr(256),
  src: OptStr(256),
  utm_src: OptStr(256),
  ga_client_id: OptStr(128),
  user_prudential_limit_active: Type.Optional(Type.Unknown()),
  provider: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,31}$' })),
  token: OptStr(8192),
});
export type RegisterSimplifiedPayload = Static<typeof RegisterSimplifiedPayload>;

/** The fields of RegisterSimplifiedPayload forwarded upstream (spec 2.4), in the specification's order. */
export const REGISTER_FIELDS = [
  'email',
  'password',
  'country',
  'nationalities',
  'optIn',
  'ddi',
  'phone',
  'name',
  'birth_date',
  'number',
  'captcha_token',
  'app_source',
  'affiliation_code',
  'utm_source',
  'utm_campaign',
  'utm_content',
  'utm_medium',
  'src',
  'ga_client_id',
  'user_prudential_limit_active',
] as const;

/** The steps of `/api/auth/recovery` (spec 4.1), chosen by the body's `step`, and their upstream paths. */
export const RECOVERY_STEPS = {
  options: '/auth/passwords/reset/options',
  'by-email': '/auth/passwords/reset/by-email',
  'by-sms': '/auth/passwords/reset/by-sms',
  'validate-code': '/auth/passwords/reset/validate-code',
  confirm: '/auth/passwords/reset/confirm',
} as const;
export type RecoveryStep = keyof typeof RECOVERY_STEPS;

/** Body of `/api/auth/recovery`: the step plus the fields that step needs. */
export const RecoveryPayload = Type.Object({
  step: Type.Union(Object.keys(RECOVERY_STEPS).map((s) => Type.Literal(s))),
  login: Str(320),
  captcha_token: OptStr(4096),
  code: Type.Optional(Type.String({ minLength: 1, maxLength: 16, pattern: '^[0-9A-Za-z]+$' })),
  password: OptStr(256),
  password_confirmation: OptStr(256),
});
export type RecoveryPayload = Static<typeof RecoveryPayload>;

/** Body of `/api/auth/social/{provider}`: the provider's token, exchanged by the BFF for a session. */
export const SocialLoginPayload = Type.Object({
  token: Str(8192),
  captcha_token: OptStr(4096),
  app_source: OptStr(64),
});
export type SocialLoginPayload = Static<typeof SocialLoginPayload>;

/**
 * spec 6.1 forced-logout beacon body: exactly the fields of spec 6.1 with their types; any other
 * field is refused (400), so that nothing but these fields can reach the log (CONTRACT.md "Rate
 * limits and client address": the beacon accepts only the fields of spec 6, 4 KB at most).
 */
export const ForcedLogoutBeacon = Type.Object(
  {
  ref: Type.String({ pattern: '^EP[0-9]{4}-EM[0-9]{4}$' }),
  endpointCode: Type.String({ pattern: '^EP[0-9]{4}$' }),
  errorCode: Type.String({ pattern: '^EM[0-9]{4}$' }),
  status: Type.Integer({ minimum: 0, maximum: 999 }),
  reason: Type.String({ maxLength: 512 }),
  url: Type.String({ maxLength: 2048 }),
  initiator: Type.String({ maxLength: 128 }),
  pathname: Type.String({ maxLength: 2048 }),
  timestamp: Type.Integer({ minimum: 0 }),
  hadCookie: Type.Boolean(),
  userAgentShort: Type.String({ maxLength: 256 }),
  },
  { additionalProperties: false },
);
export type ForcedLogoutBeacon = Static<typeof ForcedLogoutBeacon>;
