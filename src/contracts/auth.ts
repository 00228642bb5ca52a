/**
 * The authentication shapes of spec part 2 (2.1-2.6): the request bodies as TypeBox schemas and their
 * TypeScript types, which validate what the proxy accepts; the response types, which describe what the
 * BFF answers, are declared in `shapes.ts` and re-exported here.
 *
 * @module
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
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

/**
 * The fields of the password-recovery bodies (spec 2.3 ForgotPasswordPayload; spec 4.1 recovery), each
 * bounded far beyond what a real front end sends, so that no body can carry a megabyte upstream:
 *
 * | field | type | bound | why |
 * |---|---|---|---|
 * | `login` | string | 1-320 characters | an e-mail address is at most 64 + 1 + 255 characters (RFC 5321), a national document number far less |
 * | `captcha_token` | string | ≤ 4096 characters | captcha tokens run from a few hundred characters to about 2,000 (Turnstile's documented maximum is 2048); the same bound as on login |
 * | `code` | string | 1-16 letters or digits | one-time codes sent by e-mail or SMS are 4-10 characters (the sandbox's: 6 digits) |
 * | `password`, `password_confirmation` | string | ≤ 256 characters (`password` at least 1) | generated passwords rarely exceed 128 characters; the BFF sets the real rules |
 */
export const RECOVERY_FIELDS = {
  login: Type.String({ minLength: 1, maxLength: 320 }),
  captcha_token: Type.String({ maxLength: 4096 }),
  code: Type.String({ minLength: 1, maxLength: 16, pattern: '^[0-9A-Za-z]+$' }),
  password: Type.String({ minLength: 1, maxLength: 256 }),
  password_confirmation: Type.String({ maxLength: 256 }),
} as const;
export type RecoveryField = keyof typeof RECOVERY_FIELDS;

/**
 * spec 2.3 ForgotPasswordPayload: `{ login, captcha_token? }`, the body of the client contract
 * `forgotPassword(payload)` → `POST /auth/passwords/reset/options` (spec 4.1). No other field.
 */
export const ForgotPasswordPayload = Type.Object(
  { login: RECOVERY_FIELDS.login, captcha_token: Type.Optional(RECOVERY_FIELDS.captcha_token) },
  { additionalProperties: false },
);
export type ForgotPasswordPayload = Static<typeof ForgotPasswordPayload>;

/** spec 2.3 ValidateDocumentPayload. */
export const ValidateDocumentPayload = Type.Object({ number: Str(32), captcha_token: OptStr(4096) });
export type ValidateDocumentPayload = Static<typeof ValidateDocumentPayload>;

/** Attribution fields of a registration (spec 2.4), filled from the body or the tracking cookies. */
export const ATTRIBUTION_FIELDS = ['utm_source', 'utm_campaign', 'utm_content', 'utm_medium'] as const;

/**
 * spec 2.4 RegisterSimplifiedPayload (request; the response is a LoginResponse), plus the proxy's own
 * optional `provider` (a social registration, docs/behaviour.md "Configuration", `REGISTER_TYPE`) and `utm_src` (mapped to `src`).
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

/** One step of the password recovery: its upstream path and its fixed list of fields. */
export interface RecoveryStepRow {
  readonly path: string;
  readonly required: readonly RecoveryField[];
  readonly optional: readonly RecoveryField[];
}

/**
 * The steps of `/api/auth/recovery` (spec 4.1: "multi-step password recovery; the step is chosen by
 * the body"), chosen by the body's `step`, with their upstream paths and the only fields each takes.
 * The specification names the selectors and the later steps' bodies nowhere (spec 4.12); the first
 * step is its ForgotPasswordPayload (spec 2.3), sent with no `step` at all (or `step: "options"`).
 *
 * | `step` | upstream | required | optional |
 * |---|---|---|---|
 * | absent, or `options` | `POST /auth/passwords/reset/options` | `login` | `captcha_token` |
 * | `by-email` | `POST /auth/passwords/reset/by-email` | `login` | `captcha_token` |
 * | `by-sms` | `POST /auth/passwords/reset/by-sms` | `login` | `captcha_token` |
 * | `validate-code` | `POST /auth/passwords/reset/validate-code` | `login`, `code` | `captcha_token` |
 * | `confirm` | `POST /auth/passwords/reset/confirm` | `login`, `code`, `password` | `password_confirmation`, `captcha_token` |
 *
 * The lists are strict: any other field (an alias such as `email`, `token`, `new_password`, `phone`
 * or `user_id`, which a BFF might honour in place of the checked one) is a 400 and nothing is sent.
 * `captcha_token` is taken on every step: a captcha may guard any of the forms, and it stands for
 * nothing else.
 */
export const RECOVERY_STEPS = {
  options: { path: '/auth/passwords/reset/options', required: ['login'], optional: ['captcha_token'] },
  'by-email': { path: '/auth/passwords/reset/by-email', required: ['login'], optional: ['captcha_token'] },
  'by-sms': { path: '/auth/passwords/reset/by-sms', required: ['login'], optional: ['captcha_token'] },
  'validate-code': { path: '/auth/passwords/reset/validate-code', required: ['login', 'code'], optional: ['captcha_token'] },
  confirm: {
    path: '/auth/passwords/reset/confirm',
    required: ['login', 'code', 'password'],
    optional: ['password_confirmation', 'captcha_token'],
  },
} as const satisfies Record<string, RecoveryStepRow>;
export type RecoveryStep = keyof typeof RECOVERY_STEPS;

/** The step a recovery body without `step` takes: the ForgotPasswordPayload of spec 2.3. */
export const FIRST_RECOVERY_STEP = 'options' satisfies RecoveryStep;

type StepFields<S extends RecoveryStep> = { [K in (typeof RECOVERY_STEPS)[S]['required'][number]]: string } & {
  [K in (typeof RECOVERY_STEPS)[S]['optional'][number]]?: string;
};

/** Body of one recovery step: `step` (optional for the first) and that step's fields. */
export type RecoveryStepPayload<S extends RecoveryStep> = (S extends typeof FIRST_RECOVERY_STEP ? { step?: S } : { step: S }) &
  StepFields<S>;

/** Body of `/api/auth/recovery`: one of the steps of {@link RECOVERY_STEPS}. */
export type RecoveryPayload = { [S in RecoveryStep]: RecoveryStepPayload<S> }[RecoveryStep];

/**
 * Largest body of `/api/auth/recovery`, in bytes (16 KiB): the largest body a front end can write
 * with `JSON.stringify` (the confirm step with every field at its bound, 4 bytes per character
 * outside the captcha token) is under 8 KiB.
 */
export const RECOVERY_BODY_LIMIT = 16 * 1024;

const STEP_NAMES = Object.keys(RECOVERY_STEPS) as RecoveryStep[];

/** Which steps take a field, for the documentation of the body's properties. */
function stepsTaking(field: RecoveryField): string {
  const steps = STEP_NAMES.filter((s) => ([...RECOVERY_STEPS[s].required, ...RECOVERY_STEPS[s].optional] as string[]).includes(field));
  return steps.length === STEP_NAMES.length ? 'every step' : `steps ${steps.join(', ')}`;
}

/** The exact body of one step (its `step` literal, its fields, nothing else). */
function stepSchema(step: RecoveryStep) {
  const row: RecoveryStepRow = RECOVERY_STEPS[step];
  const properties: Record<string, TSchema> = {
    step: step === FIRST_RECOVERY_STEP ? Type.Optional(Type.Literal(step)) : Type.Literal(step),
  };
  for (const field of row.required) properties[field] = RECOVERY_FIELDS[field];
  for (const field of row.optional) properties[field] = Type.Optional(RECOVERY_FIELDS[field]);
  return Type.Object(properties, { additionalProperties: false });
}

/**
 * The schema of {@link RecoveryPayload}: the known fields (documented with the steps that take them)
 * and, per step, `if` the body names that step `then` exactly its fields. A body without `step` is
 * the first step. Written with `if`/`then` rather than a union so that a refusal names the real
 * problem ("must have required property 'password'") rather than a mismatch with the first branch.
 */
export const RecoveryPayload = Type.Unsafe<RecoveryPayload>({
  type: 'object',
  description:
    'One step of the password recovery, chosen by `step`; without `step`, the first step (`options`), whose body is the ForgotPasswordPayload `{ login, captcha_token? }` (spec 2.3). Each step takes only its own fields: ' +
    STEP_NAMES.map(
      (s) => `\`${s}\`: ${[...RECOVERY_STEPS[s].required, ...RECOVERY_STEPS[s].optional.map((f) => `${f}?`)].join(', ')}`,
    ).join('; ') +
    '.',
  properties: {
    step: { type: 'string', enum: STEP_NAMES, description: 'the step; absent: `options`' },
    ...Object.fromEntries(
      (Object.keys(RECOVERY_FIELDS) as RecoveryField[]).map((f) => [f, { ...RECOVERY_FIELDS[f], description: stepsTaking(f) }]),
    ),
  },
  required: ['login'],
  additionalProperties: false,
  allOf: STEP_NAMES.map((step) => ({
    if:
      step === FIRST_RECOVERY_STEP
        ? { type: 'object', properties: { step: { const: step } } }
        : { type: 'object', properties: { step: { const: step } }, required: ['step'] },
    then: stepSchema(step),
  })),
});

/** Body of `/api/auth/social/{provider}`: the provider's token, exchanged by the BFF for a session. */
export const SocialLoginPayload = Type.Object({
  token: Str(8192),
  captcha_token: OptStr(4096),
  app_source: OptStr(64),
});
export type SocialLoginPayload = Static<typeof SocialLoginPayload>;

/**
 * spec 6.1 forced-logout beacon body: exactly the fields of spec 6.1 with their types; any other
 * field is refused (400), so that nothing but these fields can reach the log (docs/behaviour.md "Rate
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
