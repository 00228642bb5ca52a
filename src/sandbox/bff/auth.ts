/**
 * Auth endpoints of the sandbox BFF (spec 4.1, "Upstream" column): login, profile, logout,
 * refresh, registration (four paths), password recovery, social login and document validation.
 *
 * Behaviour worth knowing in tests:
 * - Login accepts an e-mail or the CPF digits (punctuation ignored) as `login`.
 * - `two_factor_code` must be a JSON number; a string is a 422 `validation_error`.
 * - `captcha_token: "invalid-captcha"` fails the captcha (422 `invalid_captcha`) on login,
 *   registration and every recovery step; any other value passes.
 * - Each recovery step takes only its own fields (the proxy's `RECOVERY_STEPS`): options, by-email
 *   and by-sms `{ login, captcha_token? }`; validate-code `{ login, code, captcha_token? }`; confirm
 *   `{ login, code, password, password_confirmation?, captcha_token? }`. Any other field is a 422
 *   `validation_error`; no alias (`email`, `token`, `new_password`) is read.
 * - Refresh opens a new session; the old token keeps working for `refreshGraceSeconds`
 *   (default 60 s, so requests already in flight do not fail) and then answers `token_expired`.
 * - Logout revokes the session (`revoked`); a password reset revokes every session of the user.
 * - Social tokens: `demo-<provider>-token` is the demo user; `sandbox:<email>` is that user
 *   (404 `social_account_not_found` when unknown); anything else is 401 `invalid_social_token`.
 *   Providers: google, facebook, apple.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RECOVERY_STEPS, type RecoveryField, type RecoveryStep, type RecoveryStepRow } from '../../contracts/auth.js';
import { isValidCpf, onlyDigits } from '../cpf.js';
import type { SandboxArea, SandboxContext } from '../context.js';
import { asRecord, checkFields, type FieldErrors, sendError, sendValidationError } from '../http.js';
import { DEMO_LOGINS } from '../seed.js';
import { ATTRIBUTION_FIELDS, type RecoveryCode, type RegistrationAttribution } from '../store.js';
import type { LoginResponse, SandboxUser, ValidateDocumentResponse } from '../types.js';
import { requireSession, requireUser } from './guard.js';
import { issueToken } from './session.js';

/** Captcha token that the sandbox refuses. */
export const INVALID_CAPTCHA_TOKEN = 'invalid-captcha';

/** Social providers the sandbox knows. */
export const SOCIAL_PROVIDERS: readonly string[] = Object.freeze(['google', 'facebook', 'apple']);

/** Shortest password accepted by registration and recovery. */
export const MIN_PASSWORD_LENGTH = 6;

/** Wrong recovery codes tolerated before the code is dropped (429 `too_many_attempts`). */
export const MAX_RECOVERY_ATTEMPTS = 5;

const EMAIL_PATTERN = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

/** `demo@example.com` → `d**o@example.com`. */
export function maskEmail(email: string): string {
  const [local = '', domain = ''] = email.split('@');
  const masked =
    local.length <= 2 ? `${local.charAt(0)}*` : `${local.charAt(0)}${'*'.repeat(local.length - 2)}${local.charAt(local.length - 1)}`;
  return `${masked}@${domain}`;
}

/** `('55', '11987654321')` → `+55 *******4321`. */
export function maskPhone(ddi: string, phone: string): string {
  return `+${ddi} ${'*'.repeat(Math.max(0, phone.length - 4))}${phone.slice(-4)}`;
}

function captchaFailed(body: Record<string, unknown>): boolean {
  return body.captcha_token === INVALID_CAPTCHA_TOKEN;
}

function sendCaptchaError(reply: FastifyReply): FastifyReply {
  return sendError(reply, 422, 'invalid_captcha', 'Captcha verification failed');
}

/** Marks a successful login on the user record. */
function touchLogin(ctx: SandboxContext, user: SandboxUser): void {
  const now = ctx.store.now();
  const previous = Date.parse(user.info.login_at);
  const iso = new Date(now).toISOString();
  user.info.seven_days_since_last_login = Number.isFinite(previous) && now - previous > 7 * 86_400_000;
  user.info.login_at = iso;
  user.info.location_at = iso;
  user.info.login_attempt_qty = 0;
  user.profile.last_login = iso;
}

/** Opens a session and builds the full LoginResponse (spec 2.2). */
async function loginResponse(ctx: SandboxContext, user: SandboxUser): Promise<LoginResponse> {
  touchLogin(ctx, user);
  const { token } = await issueToken(ctx.store, ctx.tokens, user);
  return { ...token, user: user.profile, userInfo: user.info };
}

function cancelledAnswer() {
  return { type: 'cancelled_account' as const, message: 'This account has been cancelled.' };
}

/** Checks a recovery code for a user; uses up an attempt when wrong. */
function checkRecoveryCode(
  ctx: SandboxContext,
  user: SandboxUser,
  code: string,
): { ok: true; record: RecoveryCode } | { ok: false; status: number; reason: string; message: string } {
  const record = ctx.store.recoveryCodes.get(user.id);
  if (!record || record.usedAt !== null) {
    return { ok: false, status: 422, reason: 'no_recovery_code', message: 'Request a new code first.' };
  }
  if (record.expiresAt <= ctx.store.now()) {
    return { ok: false, status: 422, reason: 'code_expired', message: 'The code has expired.' };
  }
  if (record.code !== code) {
    record.attempts += 1;
    if (record.attempts >= MAX_RECOVERY_ATTEMPTS) {
      ctx.store.recoveryCodes.delete(user.id);
      return { ok: false, status: 429, reason: 'too_many_attempts', message: 'Too many wrong codes; request a new one.' };
    }
    return { ok: false, status: 422, reason: 'invalid_code', message: 'The code is invalid.' };
  }
  return { ok: true, record };
}

/**
 * The body of a recovery step, held to that step's fields (`RECOVERY_STEPS` of the proxy's
 * contracts, spec 4.1): a field of another step or an alias (`email`, `token`, `new_password`…) is a
 * 422 `validation_error`, like a BFF that reads only the fields it documents, and so is a value that
 * is not a string. The `step` selector is the proxy's and never reaches the BFF.
 */
function recoveryFields(
  step: RecoveryStep,
  raw: unknown,
): { ok: true; fields: Partial<Record<RecoveryField, string>> } | { ok: false; errors: FieldErrors } {
  const body = asRecord(raw);
  const row: RecoveryStepRow = RECOVERY_STEPS[step];
  const allowed = new Set<string>([...row.required, ...row.optional]);
  const errors: FieldErrors = {};
  for (const name of Object.keys(body)) if (!allowed.has(name)) errors[name] = [`The ${name} field is not accepted here.`];
  const fields: Partial<Record<RecoveryField, string>> = {};
  for (const name of allowed as Set<RecoveryField>) {
    const value = body[name];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') errors[name] = [`The ${name} field must be a string.`];
    else if (value.trim() !== '') fields[name] = name === 'login' || name === 'code' ? value.trim() : value;
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, fields };
}

/**
 * A handler of a recovery start (`/auth/passwords/reset/options`, `/by-email`, `/by-sms`, spec 4.1)
 * that runs once the body names an account: a field outside the step's list or a missing login is a
 * 422 `validation_error`, the refused captcha a 422 `invalid_captcha`, an unknown login a 404
 * `user_not_found`.
 */
function withRecoveryUser(
  ctx: SandboxContext,
  step: 'options' | 'by-email' | 'by-sms',
  handler: (request: FastifyRequest, reply: FastifyReply, user: SandboxUser, login: string) => unknown,
): (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> {
  return async (request, reply) => {
    const checked = recoveryFields(step, request.body);
    if (!checked.ok) return sendValidationError(reply, checked.errors);
    const { login, captcha_token } = checked.fields;
    if (login === undefined) return sendValidationError(reply, { login: ['The login field is required.'] });
    if (captcha_token === INVALID_CAPTCHA_TOKEN) return sendCaptchaError(reply);
    const user = ctx.store.findUserByLogin(login);
    if (!user) return sendError(reply, 404, 'user_not_found', 'No account matches this login.');
    return handler(request, reply, user, login);
  };
}

/** Fake but stable identity data for a valid CPF nobody registered. */
function identityFor(digits: string): Omit<ValidateDocumentResponse, 'docnumber' | 'docnumber_valid'> {
  const firstNames = ['João', 'Mariana', 'Pedro', 'Juliana', 'Rafael', 'Fernanda', 'Lucas', 'Camila'];
  const lastNames = ['Silva', 'Santos', 'Oliveira', 'Pereira', 'Costa', 'Ferreira', 'Almeida', 'Ribeiro'];
  let sum = 0;
  for (const d of digits) sum += Number(d);
  const first = firstNames[sum % firstNames.length]!;
  const last = lastNames[Number(digits.slice(0, 3)) % lastNames.length]!;
  const year = 1960 + (Number(digits.slice(3, 5)) % 45);
  const month = String(1 + (Number(digits.slice(5, 7)) % 12)).padStart(2, '0');
  const day = String(1 + (Number(digits.slice(7, 9)) % 28)).padStart(2, '0');
  return {
    name: `${first} ${last}`,
    birth_date: `${year}-${month}-${day}`,
    gender: sum % 2 === 0 ? 'M' : 'F',
    mother_name: `${firstNames[(sum + 1) % firstNames.length]!} ${last}`,
  };
}

/** What the registration paths accept (RegisterSimplifiedPayload, spec 2.4). */
const REGISTER_FIELDS = {
  email: 'string',
  password: 'string',
  country: 'string',
  nationalities: 'string',
  optIn: 'boolean',
  ddi: 'string?',
  phone: 'string?',
  name: 'string?',
  birth_date: 'string?',
  number: 'string?',
  captcha_token: 'string?',
  app_source: 'string?',
  affiliation_code: 'string?',
  utm_source: 'string?',
  utm_campaign: 'string?',
  utm_content: 'string?',
  utm_medium: 'string?',
  src: 'string?',
  ga_client_id: 'string?',
} as const;

/** The auth area of the BFF. */
export const authArea: SandboxArea = {
  name: 'auth',
  register(app, ctx) {
    const { store } = ctx;

    // POST /auth/login — LoginPayload (spec 2.1) → LoginResponse (spec 2.2)
    app.post('/auth/login', async (request, reply) => {
      const body = asRecord(request.body);
      const checked = checkFields(body, {
        login: 'string',
        password: 'string',
        captcha_token: 'string?',
        app_source: 'string?',
        two_factor_code: 'number?',
      });
      if (!checked.ok) return sendValidationError(reply, checked.errors);
      if (captchaFailed(body)) return sendCaptchaError(reply);
      const { login, password, two_factor_code: code } = checked.value;
      const user = store.findUserByLogin(login.trim());
      if (!user || user.password !== password) {
        if (user) user.info.login_attempt_qty += 1;
        return sendError(reply, 401, 'invalid_credentials', 'Invalid credentials');
      }
      if (user.profile.cancelled_account === 1) return cancelledAnswer();
      if (user.twoFactorCode !== null) {
        if (code === undefined) {
          return {
            type: 'two_factor_code',
            message: 'A verification code was sent to your e-mail.',
            two_factor_type: user.info.two_factor_type ?? 'email',
          };
        }
        if (code !== user.twoFactorCode) {
          return sendError(reply, 401, 'invalid_two_factor_code', 'Invalid two-factor code');
        }
      }
      return loginResponse(ctx, user);
    });

    // GET /auth/user-profile[?check_spa_again=1] → { user, userInfo }
    app.get('/auth/user-profile', async (request, reply) => {
      const user = await requireUser(request, reply);
      if (!user) return reply;
      return { user: user.profile, userInfo: user.info };
    });

    // POST /auth/logout and /auth/logout-auto: revoke the session
    for (const [path, reason, message] of [
      ['/auth/logout', 'logout', 'Successfully logged out'],
      ['/auth/logout-auto', 'logout_auto', 'Session ended'],
    ] as const) {
      app.post(path, async (request, reply) => {
        const auth = await requireSession(request, reply);
        if (!auth) return reply;
        store.revokeSession(auth.session.id, reason);
        return { message };
      });
    }

    // POST /users/refresh-token → { access_token, expires_in, token_type }
    app.post('/users/refresh-token', async (request, reply) => {
      const auth = await requireSession(request, reply);
      if (!auth) return reply;
      const { token, session } = await issueToken(store, ctx.tokens, auth.user);
      store.supersedeSession(auth.session, session);
      return token;
    });

    // Registration, four upstream paths (spec 4.1), RegisterSimplifiedPayload → LoginResponse
    const registerAt = (path: string, social: boolean) => {
      app.post(path, async (request, reply) => {
        const params = request.params as { provider?: string };
        const provider = social ? (params.provider ?? '') : null;
        if (provider !== null && !SOCIAL_PROVIDERS.includes(provider)) {
          return sendError(reply, 404, 'unknown_provider', `Unknown social provider: ${provider}`);
        }
        const body = asRecord(request.body);
        const rules = social ? { ...REGISTER_FIELDS, password: 'string?' as const } : REGISTER_FIELDS;
        const checked = checkFields(body, rules);
        if (!checked.ok) return sendValidationError(reply, checked.errors);
        const input = checked.value;
        const errors: FieldErrors = {};
        if (!EMAIL_PATTERN.test(input.email)) errors.email = ['The email must be a valid email address.'];
        let nationalitiesOk = false;
        try {
          const parsed: unknown = JSON.parse(input.nationalities);
          nationalitiesOk = Array.isArray(parsed) && parsed.every((n) => typeof n === 'string');
        } catch {
          nationalitiesOk = false;
        }
        if (!nationalitiesOk) errors.nationalities = ['The nationalities field must be a JSON array of country codes.'];
        if (Object.keys(errors).length > 0) return sendValidationError(reply, errors);
        if (captchaFailed(body)) return sendCaptchaError(reply);
        if (store.findUserByEmail(input.email)) {
          return sendError(reply, 422, 'email_taken', 'The email has already been taken.', {
            errors: { email: ['The email has already been taken.'] },
          });
        }
        const password = input.password ?? `social-${provider}-${randomBytes(12).toString('hex')}`;
        if (password.length < MIN_PASSWORD_LENGTH) {
          return sendError(reply, 422, 'weak_password', `The password must be at least ${MIN_PASSWORD_LENGTH} characters.`);
        }
        const country = input.country.trim().toUpperCase();
        const document = input.number === undefined ? null : onlyDigits(input.number);
        if (document !== null && document !== '') {
          if (country === 'BR' && !isValidCpf(document)) {
            return sendError(reply, 422, 'invalid_document', 'The document number is invalid.');
          }
          if (store.findUserByDocument(document)) {
            return sendError(reply, 422, 'document_taken', 'The document number has already been taken.');
          }
        }
        const user = store.addUser({
          email: input.email.trim(),
          password,
          country,
          document: document || null,
          nationalities: input.nationalities,
          optIn: input.optIn,
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.phone !== undefined ? { phone: onlyDigits(input.phone) } : {}),
          ...(input.ddi !== undefined ? { ddi: onlyDigits(input.ddi) } : {}),
          ...(input.birth_date !== undefined ? { birthDate: input.birth_date } : {}),
          ...(input.affiliation_code !== undefined ? { affiliationCode: input.affiliation_code } : {}),
        });
        const attribution: RegistrationAttribution = {};
        for (const field of ATTRIBUTION_FIELDS) if (field in body) attribution[field] = body[field];
        store.registrations.push({
          at: store.now(),
          path: social ? `/bff/social/${provider}/registerSimplified` : path,
          provider,
          userId: user.id,
          email: user.profile.email,
          attribution,
          body: { ...body, ...('password' in body ? { password: '[redacted]' } : {}) },
        });
        request.log.info({ userId: user.id, path, provider }, 'sandbox user registered');
        return loginResponse(ctx, user);
      });
    };
    registerAt('/bff/register-simplified', false);
    registerAt('/auth/register', false);
    registerAt('/auth/register/simplified', false);
    registerAt('/bff/social/:provider/registerSimplified', true);

    // Password recovery (spec 4.1, /auth/passwords/reset/*)
    app.post(
      RECOVERY_STEPS.options.path,
      withRecoveryUser(ctx, 'options', (_request, _reply, user) => {
        const phone = user.profile.phone ? maskPhone(user.profile.ddi, user.profile.phone) : null;
        return {
          email: maskEmail(user.profile.email),
          phone,
          options: phone === null ? ['email'] : ['email', 'sms'],
        };
      }),
    );

    for (const channel of ['email', 'sms'] as const) {
      app.post(
        RECOVERY_STEPS[`by-${channel}`].path,
        withRecoveryUser(ctx, `by-${channel}`, (request, reply, user, login) => {
          if (channel === 'sms' && !user.profile.phone) {
            return sendError(reply, 422, 'no_phone', 'This account has no phone number.');
          }
          const code = store.createRecoveryCode(user, login, channel);
          request.log.info({ userId: user.id, channel }, 'sandbox recovery code created (read it at GET /__sandbox/recovery-codes)');
          return {
            message: channel === 'email' ? 'A code was sent to your e-mail.' : 'A code was sent by SMS.',
            channel,
            destination: channel === 'email' ? maskEmail(user.profile.email) : maskPhone(user.profile.ddi, user.profile.phone),
            expires_in: Math.round((code.expiresAt - code.createdAt) / 1000),
          };
        }),
      );
    }

    app.post(RECOVERY_STEPS['validate-code'].path, async (request, reply) => {
      const checked = recoveryFields('validate-code', request.body);
      if (!checked.ok) return sendValidationError(reply, checked.errors);
      const { login, code, captcha_token } = checked.fields;
      const errors: FieldErrors = {};
      if (login === undefined) errors.login = ['The login field is required.'];
      if (code === undefined) errors.code = ['The code field is required.'];
      if (login === undefined || code === undefined) return sendValidationError(reply, errors);
      if (captcha_token === INVALID_CAPTCHA_TOKEN) return sendCaptchaError(reply);
      const user = store.findUserByLogin(login);
      if (!user) return sendError(reply, 404, 'user_not_found', 'No account matches this login.');
      const check = checkRecoveryCode(ctx, user, code);
      if (!check.ok) return sendError(reply, check.status, check.reason, check.message);
      check.record.validatedAt = store.now();
      return { valid: true, message: 'Code validated.' };
    });

    app.post(RECOVERY_STEPS.confirm.path, async (request, reply) => {
      const checked = recoveryFields('confirm', request.body);
      if (!checked.ok) return sendValidationError(reply, checked.errors);
      const { login, code, password, password_confirmation: confirmation, captcha_token } = checked.fields;
      const errors: FieldErrors = {};
      if (login === undefined) errors.login = ['The login field is required.'];
      if (code === undefined) errors.code = ['The code field is required.'];
      if (password === undefined) errors.password = ['The password field is required.'];
      if (login === undefined || code === undefined || password === undefined) return sendValidationError(reply, errors);
      if (captcha_token === INVALID_CAPTCHA_TOKEN) return sendCaptchaError(reply);
      if (confirmation !== undefined && confirmation !== password) {
        return sendError(reply, 422, 'password_mismatch', 'The password confirmation does not match.');
      }
      if (password.length < MIN_PASSWORD_LENGTH) {
        return sendError(reply, 422, 'weak_password', `The password must be at least ${MIN_PASSWORD_LENGTH} characters.`);
      }
      const user = store.findUserByLogin(login);
      if (!user) return sendError(reply, 404, 'user_not_found', 'No account matches this login.');
      const check = checkRecoveryCode(ctx, user, code);
      if (!check.ok) return sendError(reply, check.status, check.reason, check.message);
      check.record.usedAt = store.now();
      user.password = password;
      user.profile.updated_at = new Date(store.now()).toISOString();
      for (const session of store.sessionsOf(user.id)) store.revokeSession(session.id, 'password_reset');
      return { message: 'Password changed.' };
    });

    // POST /bff/social/{provider} — { token } → LoginResponse
    app.post('/bff/social/:provider', async (request, reply) => {
      const { provider } = request.params as { provider: string };
      if (!SOCIAL_PROVIDERS.includes(provider)) {
        return sendError(reply, 404, 'unknown_provider', `Unknown social provider: ${provider}`);
      }
      const checked = checkFields(request.body, { token: 'string' });
      if (!checked.ok) return sendValidationError(reply, checked.errors);
      const token = checked.value.token.trim();
      let user: SandboxUser | undefined;
      if (token === `demo-${provider}-token`) {
        user = store.findUserByEmail(DEMO_LOGINS[0]!.login);
      } else if (token.startsWith('sandbox:')) {
        user = store.findUserByEmail(token.slice('sandbox:'.length));
        if (!user) {
          return sendError(reply, 404, 'social_account_not_found', 'No account is linked to this social login.', {
            email: token.slice('sandbox:'.length),
          });
        }
      }
      if (!user) return sendError(reply, 401, 'invalid_social_token', `The ${provider} token is invalid.`);
      if (user.profile.cancelled_account === 1) return cancelledAnswer();
      return loginResponse(ctx, user);
    });

    // POST /documents/validate — ValidateDocumentPayload → ValidateDocumentResponse (spec 2.3)
    app.post('/documents/validate', async (request, reply) => {
      const body = asRecord(request.body);
      const checked = checkFields(body, { number: 'string', captcha_token: 'string?' });
      if (!checked.ok) return sendValidationError(reply, checked.errors);
      if (captchaFailed(body)) return sendCaptchaError(reply);
      const digits = onlyDigits(checked.value.number);
      if (!isValidCpf(digits)) {
        const invalid: ValidateDocumentResponse = { docnumber: digits, docnumber_valid: false };
        return invalid;
      }
      const owner = store.findUserByDocument(digits);
      const identity = owner
        ? {
            name: owner.profile.name,
            birth_date: owner.profile.birth_date,
            gender: owner.profile.gender === 1 ? 'M' : owner.profile.gender === 2 ? 'F' : '',
            mother_name: owner.profile.mother_name,
          }
        : identityFor(digits);
      const valid: ValidateDocumentResponse = { docnumber: digits, docnumber_valid: true, ...identity };
      return valid;
    });
  },
};
