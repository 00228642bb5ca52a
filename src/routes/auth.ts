/**
 * spec 4.1 Auth: the auth route table, rows in the specification's order, and the session flows
 * behind them (login → profile → cookie, registration, logout, profile cache, refresh, recovery,
 * social login, document validation, the forced-logout beacon of spec 6).
 *
 * @module
 */
import { Type } from '@sinclair/typebox';
import { decodeJwt } from 'jose';
import {
  FIRST_RECOVERY_STEP,
  ForcedLogoutBeacon,
  type ForgotPasswordPayload,
  LOGIN_OUTCOME_TYPES,
  LoginPayload,
  type LoginResponse,
  RECOVERY_BODY_LIMIT,
  RECOVERY_STEPS,
  REGISTER_FIELDS,
  RecoveryPayload,
  type RecoveryStepRow,
  RegisterSimplifiedPayload,
  SocialLoginPayload,
  ValidateDocumentPayload,
} from '../contracts/auth.js';
import { badResponse, type ProxyAnswer, parseJson, upstreamAnswer, upstreamFailureAnswer } from '../envelope.js';
import { gaClientIdFromCookie, trackingFromCookie, UTM_KEYS } from '../session/attribution.js';
import { clientAddress } from '../session/client.js';
import { clearSessionCookie, sessionMaxAge, sessionTokenKey, setSessionCookie, tokenOf } from '../session/cookie.js';
import { cachedProfile } from '../session/identity.js';
import { UpstreamAnswerError } from '../session/profile-cache.js';
import { EXPIRY_LEEWAY_SECONDS } from '../session/token.js';
import { authService, type BffCaller } from '../upstream/auth-service.js';
import type { UpstreamResponse } from '../upstream/client.js';
import { bff, fail, ok, route, type RouteContext, type RouteSpec, routeTable } from './route.js';

/** The upstream of each `REGISTER_TYPE` (docs/behaviour.md "Configuration"). */
export const REGISTER_PATHS = {
  'bff-simplified': '/bff/register-simplified',
  classic: '/auth/register',
  simplified: '/auth/register/simplified',
} as const;

/** Registration upstreams that receive `user_prudential_limit_active` (spec 2.4). */
const PRUDENTIAL_LIMIT_PATHS = new Set<string>(['/bff/register-simplified', '/auth/register']);

const ProviderParams = Type.Object({ provider: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,31}$' }) });
const ProfileQuery = Type.Object({ check_spa_again: Type.Optional(Type.Union([Type.Literal('1'), Type.Literal('0')])) });

function withoutToken(data: Record<string, unknown>): Record<string, unknown> {
  const { access_token: _dropped, ...rest } = data;
  return rest;
}

/**
 * The answer with every occurrence of the new JWT replaced: some BFFs also put it in `user.token`
 * (AuthUser, spec 2.5), and the JWT never appears in a response body (docs/behaviour.md "Session cookie").
 * `undefined` when the answer cannot be written back (nested too deep for the runtime).
 */
function redactToken(answer: Record<string, unknown>, token: string | undefined): Record<string, unknown> | undefined {
  try {
    const text = JSON.stringify(answer);
    return token && text.includes(token) ? (JSON.parse(text.replaceAll(token, '[redacted]')) as Record<string, unknown>) : answer;
  } catch {
    return undefined;
  }
}

/** The 200 answer of a login-like call, or 502 when its body cannot be written back (docs/behaviour.md "Upstream answers"). */
function loginAnswer(answer: Record<string, unknown>, token: string | undefined): ProxyAnswer {
  const body = redactToken(answer, token);
  return body === undefined ? badResponse('The service sent an answer the proxy cannot pass on') : { status: 200, body };
}

/**
 * Turns a login-like upstream answer (login, registration, social login) into the proxy's answer
 * (spec 4.1, 3.2): a failure is a form-level error; a `type` of `two_factor_code` or
 * `cancelled_account` reaches the client and sets no cookie; otherwise the profile is loaded with the
 * new token (and primes the profile cache), the session cookie is asked for, and the LoginResponse is
 * answered without `access_token`. The cookie is written only if that answer is sent as a success
 * (`pipeline/session-cookie.ts`).
 *
 * Answers 502 `upstream_bad_response` (no cookie) for a 2xx whose body is not a JSON object, or whose
 * `access_token` is not a well-formed JWT (docs/behaviour.md "Upstream answers").
 */
async function establishSession(ctx: RouteContext, res: UpstreamResponse): Promise<ProxyAnswer> {
  if (res.status < 200 || res.status >= 300) return upstreamFailureAnswer(res, { preAuth: true });
  const data = parseJson(res.body);
  if (!data || typeof data !== 'object' || Array.isArray(data)) return badResponse();
  const login = data as Partial<LoginResponse> & Record<string, unknown>;
  const token = tokenOf(login);
  const outcome = (LOGIN_OUTCOME_TYPES as readonly unknown[]).includes(login.type);
  if (outcome || !token) return loginAnswer(withoutToken(login), token);

  const answer = withoutToken(login);
  try {
    const profile = await authService((req) => ctx.call('bff', req, { bearer: token })).getUserProfile(false);
    const parsed = profile.status === 200 ? parseJson(profile.body) : undefined;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const { user, userInfo } = parsed as Record<string, unknown>;
      if (user !== undefined) answer.user = user;
      if (userInfo !== undefined) answer.userInfo = userInfo;
      ctx.deps.profileCache.set(token, profile);
    }
  } catch (error) {
    // The session exists even when the profile could not be loaded; the login's own user is answered.
    ctx.request.log.warn({ err: error }, 'profile after login failed');
  }
  const reply = loginAnswer(answer, token);
  if (reply.status === 200) setSessionCookie(ctx.reply, ctx.deps.config, token, sessionMaxAge(token, login.expires_in));
  return reply;
}

/** Whether a 2xx login answer asks for the second factor (`type: "two_factor_code"`, spec 3.2). */
function asksSecondFactor(res: UpstreamResponse): boolean {
  const data = parseJson(res.body);
  return typeof data === 'object' && data !== null && (data as { type?: unknown }).type === 'two_factor_code';
}

function answerFromRejection(error: unknown): ProxyAnswer {
  if (error instanceof UpstreamAnswerError) return upstreamFailureAnswer(error.response);
  throw error;
}

async function logout(ctx: RouteContext, path: '/auth/logout' | '/auth/logout-auto'): Promise<ProxyAnswer> {
  const { token } = ctx;
  if (token) {
    ctx.deps.profileCache.evict(token);
    // The session's live streams end on every instance (docs/behaviour.md "Live streams").
    ctx.deps.state.fleet.announceSessionEnd(sessionTokenKey(ctx.request, token), 'logout');
    try {
      await ctx.call('bff', { method: 'POST', path });
    } catch (error) {
      ctx.request.log.info({ err: error }, 'upstream logout failed; cookie cleared anyway');
    }
  }
  clearSessionCookie(ctx.reply, ctx.deps.config);
  return ok({ ok: true });
}

/** The answer of `GET /api/auth/session` (see {@link sessionState}). */
export type SessionState = { readonly signedIn: true; readonly expiresAt: number | null } | { readonly signedIn: false };

/**
 * The session state of a request, from its cookie alone (never upstream): `{ signedIn: true,
 * expiresAt }` (epoch seconds of the token's `exp`, `null` when it has none) when the auth gate
 * accepted the cookie (well-formed, and with `JWT_*` keys verified and unexpired) and its `exp`, as
 * read, has not passed beyond {@link EXPIRY_LEEWAY_SECONDS}; else `{ signedIn: false }`. The gate
 * already refused a malformed, forged or (with keys) expired cookie (docs/behaviour.md "Which routes
 * need a session"); the `exp` check here also covers a deployment without keys.
 *
 * @param token - the token the auth gate accepted (`RouteContext.token`), or `undefined`.
 * @param nowMs - the clock, epoch milliseconds.
 */
export function sessionState(token: string | undefined, nowMs: number): SessionState {
  if (token === undefined) return { signedIn: false };
  let exp: unknown;
  try {
    exp = decodeJwt(token).exp;
  } catch {
    return { signedIn: false };
  }
  if (typeof exp !== 'number' || !Number.isFinite(exp)) return { signedIn: true, expiresAt: null };
  if ((exp + EXPIRY_LEEWAY_SECONDS) * 1000 <= nowMs) return { signedIn: false };
  return { signedIn: true, expiresAt: Math.floor(exp) };
}

/** spec 4.1 Auth, in the specification's order. */
export const authRoutes: readonly RouteSpec[] = routeTable('Authentication', [
  route({
    method: 'POST',
    url: '/api/auth/login',
    spec: '4.1',
    summary: 'login with credentials, optional second factor and captcha; then loads the profile and sets the session cookie',
    auth: 'none',
    preAuth: true,
    body: LoginPayload,
    upstream: [bff('POST', '/auth/login'), bff('GET', '/auth/user-profile')],
    handler: async (ctx) => {
      const { login, password, captcha_token, app_source, two_factor_code } = ctx.body;
      // Password guessing stops at RATE_LIMIT_LOGIN_FAILURES failures per login and client address
      // (RATE_LIMIT_LOGIN_FAILURES_PER_LOGIN over all addresses); second-factor codes count in the same
      // bucket: a code the BFF did not take is answered with its `two_factor_code` request again.
      const failures = ctx.deps.state.loginFailures;
      const retryAfter = await failures.refused(login, clientAddress(ctx.request));
      if (retryAfter !== undefined) {
        ctx.deps.metrics.rateLimited('login_failures');
        ctx.reply.header('retry-after', String(retryAfter));
        return fail(429, 'rate_limited', `Too many failed logins; retry in ${retryAfter} s`);
      }
      const payload = { login, password, captcha_token, app_source, two_factor_code };
      const res = await authService((req) => ctx.call('bff', req, { bearer: null })).login(payload);
      const refusedCode = two_factor_code !== undefined && res.status >= 200 && res.status < 300 && asksSecondFactor(res);
      if ((res.status >= 400 && res.status < 500 && res.status !== 429) || refusedCode)
        await failures.failed(login, clientAddress(ctx.request));
      return establishSession(ctx, res);
    },
  }),
  route({
    method: 'POST',
    url: '/api/auth/register',
    spec: '4.1',
    summary: 'registration (RegisterSimplifiedPayload, spec 2.4); REGISTER_TYPE or a social `provider` chooses the upstream',
    auth: 'none',
    preAuth: true,
    body: RegisterSimplifiedPayload,
    querystring: Type.Object({ utm_src: Type.Optional(Type.String({ maxLength: 256 })) }),
    upstream: [
      bff('POST', '/bff/register-simplified'),
      bff('POST', '/auth/register'),
      bff('POST', '/auth/register/simplified'),
      bff('POST', '/bff/social/{provider}/registerSimplified'),
      bff('GET', '/auth/user-profile'),
    ],
    handler: async (ctx) => {
      const body = ctx.body as Record<string, unknown>;
      const provider = ctx.body.provider;
      const path = provider ? '/bff/social/{provider}/registerSimplified' : REGISTER_PATHS[ctx.deps.config.registerType];
      const payload: Record<string, unknown> = {};
      for (const field of REGISTER_FIELDS) if (body[field] !== undefined) payload[field] = body[field];
      const tracking = trackingFromCookie(ctx.request.cookies.cookie_tracking);
      for (const key of UTM_KEYS) if (payload[key] === undefined && tracking[key]) payload[key] = tracking[key];
      const src = ctx.body.src ?? ctx.body.utm_src ?? ctx.query.utm_src;
      if (src) payload.src = src;
      payload.ga_client_id ??= gaClientIdFromCookie(ctx.request.cookies._ga);
      if (payload.ga_client_id === undefined) delete payload.ga_client_id;
      if (!PRUDENTIAL_LIMIT_PATHS.has(path)) delete payload.user_prudential_limit_active;
      if (provider && ctx.body.token) payload.token = ctx.body.token;
      const res = await ctx.call(
        'bff',
        { method: 'POST', path: path.replace('{provider}', encodeURIComponent(provider ?? '')), json: payload },
        { bearer: null },
      );
      return establishSession(ctx, res);
    },
  }),
  route({
    method: 'POST',
    url: '/api/auth/logout',
    spec: '4.1',
    summary: 'logout; always answers 200 and clears the session cookie',
    auth: 'none',
    upstream: [bff('POST', '/auth/logout')],
    evictsProfile: false,
    acceptsExpiredToken: true,
    alwaysSucceeds: true,
    handler: (ctx) => logout(ctx, '/auth/logout'),
  }),
  route({
    method: 'POST',
    url: '/api/auth/logout-auto',
    spec: '4.1',
    summary: 'automatic logout after session expiry; always answers 200 and clears the session cookie',
    auth: 'none',
    upstream: [bff('POST', '/auth/logout-auto')],
    evictsProfile: false,
    acceptsExpiredToken: true,
    alwaysSucceeds: true,
    handler: (ctx) => logout(ctx, '/auth/logout-auto'),
  }),
  route({
    method: 'GET',
    url: '/api/auth/session',
    spec: '4.1 (beyond the spec)',
    summary:
      "the session state from the cookie alone, never upstream: `{ signedIn: true, expiresAt }` (epoch seconds of the token's `exp`) or `{ signedIn: false }`; a refused cookie is cleared",
    auth: 'none',
    upstream: [],
    evictsProfile: false,
    handler: async (ctx) => {
      const state = sessionState(ctx.token, Date.now());
      // A cookie the gate refused (malformed, forged, expired) or an expired token is cleared, so the
      // browser stops sending it (docs/behaviour.md "Session cookie").
      if (!state.signedIn && ctx.request.cookies[ctx.deps.config.sessionCookieName]) clearSessionCookie(ctx.reply, ctx.deps.config);
      return ok(state);
    },
  }),
  route({
    method: 'GET',
    url: '/api/auth/profile',
    spec: '4.1',
    summary: 'profile, cached 10 s per token or fetched; `check_spa_again=1` fetches afresh',
    auth: 'required',
    querystring: ProfileQuery,
    upstream: [bff('GET', '/auth/user-profile')],
    handler: async (ctx) => {
      const token = ctx.token as string;
      if (ctx.query.check_spa_again === '1') {
        const res = await authService((req) => ctx.call('bff', req)).getUserProfile(true);
        const answer = upstreamAnswer(res, { bodyRequired: true });
        if (res.status === 200 && answer.status === 200) ctx.deps.profileCache.set(token, res);
        return answer;
      }
      try {
        return upstreamAnswer(await cachedProfile(ctx, token), { bodyRequired: true });
      } catch (error) {
        return answerFromRejection(error);
      }
    },
  }),
  route({
    method: 'POST',
    url: '/api/auth/recheck-spa',
    spec: '4.1',
    summary: 'revalidate the session after in-app navigation',
    auth: 'required',
    upstream: [bff('GET', '/auth/user-profile')],
    evictsProfile: false,
    handler: async (ctx) => {
      const res = await authService((req) => ctx.call('bff', req)).getUserProfile(true);
      const answer = upstreamAnswer(res, { bodyRequired: true });
      if (res.status === 200 && answer.status === 200) ctx.deps.profileCache.set(ctx.token as string, res);
      return answer;
    },
  }),
  route({
    method: 'POST',
    url: '/api/auth/refresh',
    spec: '4.1',
    summary: 'renew the JWT: sets a new session cookie and answers { ok: true }',
    auth: 'required',
    upstream: [bff('POST', '/users/refresh-token')],
    evictsProfile: false,
    acceptsExpiredToken: true,
    handler: async (ctx) => {
      const token = ctx.token as string;
      try {
        const fresh = await ctx.deps.refreshCache.get(token, ctx);
        ctx.deps.profileCache.evict(token);
        setSessionCookie(ctx.reply, ctx.deps.config, fresh.token, fresh.maxAge);
        return ok({ ok: true });
      } catch (error) {
        return answerFromRejection(error);
      }
    },
  }),
  route({
    method: 'POST',
    url: '/api/auth/recovery',
    spec: '4.1, 2.3',
    summary:
      'multi-step password recovery: a ForgotPasswordPayload `{ login, captcha_token? }` without `step` starts it (reset/options); the later steps name theirs (`step`: by-email, by-sms, validate-code, confirm), each with only its own fields',
    auth: 'none',
    preAuth: true,
    body: RecoveryPayload,
    bodyLimit: RECOVERY_BODY_LIMIT,
    upstream: Object.values(RECOVERY_STEPS).map((row) => bff('POST', row.path)),
    handler: async (ctx) => {
      const step = ctx.body.step ?? FIRST_RECOVERY_STEP;
      const row: RecoveryStepRow = RECOVERY_STEPS[step];
      // The schema admits only the step's fields; the body is rebuilt from the list all the same.
      const body = ctx.body as Readonly<Record<string, unknown>>;
      const fields: Record<string, unknown> = {};
      for (const field of [...row.required, ...row.optional]) if (body[field] !== undefined) fields[field] = body[field];
      const call: BffCaller = (req) => ctx.call('bff', req, { bearer: null });
      const res =
        step === FIRST_RECOVERY_STEP
          ? await authService(call).forgotPassword(fields as ForgotPasswordPayload)
          : await call({ method: 'POST', path: row.path, json: fields });
      return upstreamAnswer(res, { preAuth: true });
    },
  }),
  route({
    method: 'POST',
    url: '/api/auth/social/:provider',
    spec: '4.1',
    summary: 'social login: the provider token is exchanged for a session',
    auth: 'none',
    preAuth: true,
    params: ProviderParams,
    body: SocialLoginPayload,
    upstream: [bff('POST', '/bff/social/{provider}'), bff('GET', '/auth/user-profile')],
    handler: async (ctx) => {
      const { token, captcha_token, app_source } = ctx.body;
      const res = await ctx.call(
        'bff',
        {
          method: 'POST',
          path: `/bff/social/${encodeURIComponent(ctx.params.provider)}`,
          json: { token, captcha_token, app_source },
        },
        { bearer: null },
      );
      return establishSession(ctx, res);
    },
  }),
  route({
    method: 'POST',
    url: '/api/auth/validate-document',
    spec: '4.1',
    summary: 'validate a national document before registration (ValidateDocumentPayload → ValidateDocumentResponse)',
    auth: 'none',
    preAuth: true,
    body: ValidateDocumentPayload,
    upstream: [bff('POST', '/documents/validate')],
    handler: async (ctx) => {
      const { number, captcha_token } = ctx.body;
      const res = await authService((req) => ctx.call('bff', req, { bearer: null })).validateDocument({
        number,
        captcha_token,
      });
      return upstreamAnswer(res, { preAuth: true });
    },
  }),
  route({
    method: 'POST',
    url: '/api/logs/auth-logout',
    spec: '4.1, 6',
    summary: 'forced-logout beacon (spec 6.1): a warn-level `forced-logout` log entry sampled at 50%; answers 204',
    auth: 'none',
    body: ForcedLogoutBeacon,
    // docs/behaviour.md "Rate limits and client address": the beacon accepts 4 KB at most (413 beyond).
    bodyLimit: 4 * 1024,
    upstream: [],
    evictsProfile: false,
    limit: 'beacon',
    handler: async (ctx) => {
      if (ctx.deps.random() < FORCED_LOGOUT_SAMPLE_RATE) {
        ctx.request.log.warn({ event: 'forced-logout', beacon: beaconLogFields(ctx.body) }, 'forced-logout');
      }
      return { status: 204, body: null };
    },
  }),
]);

/** Share of forced-logout beacons written to the log (spec 6.2, 8). */
export const FORCED_LOGOUT_SAMPLE_RATE = 0.5;

/** The fields of spec 6.1, and only those, as logged (a validated body has no others; this keeps it so). */
function beaconLogFields(body: ForcedLogoutBeacon): ForcedLogoutBeacon {
  return {
    ref: body.ref,
    endpointCode: body.endpointCode,
    errorCode: body.errorCode,
    status: body.status,
    reason: body.reason,
    url: body.url,
    initiator: body.initiator,
    pathname: body.pathname,
    timestamp: body.timestamp,
    hadCookie: body.hadCookie,
    userAgentShort: body.userAgentShort,
  };
}
