// Sandbox BFF: login kinds, profile, the 401 reasons of the guard, refresh and logout.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DEMO_LOGINS, type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';

let sandbox: SandboxHandle;
let clock = Date.UTC(2026, 0, 10, 12, 0, 0);

before(async () => {
  sandbox = await startSandbox({ now: () => clock, refreshGraceSeconds: 30, tokenTtlSeconds: 7 * 3600 });
});
after(async () => {
  await sandbox.close();
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function call(method: string, path: string, options: { body?: unknown; token?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(`${sandbox.bffUrl}${path}`, {
    method,
    headers,
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function login(loginName = 'demo@example.com', extra: Record<string, unknown> = {}): Promise<Answer> {
  return call('POST', '/auth/login', { body: { login: loginName, password: 'Demo#2026', ...extra } });
}

async function demoToken(): Promise<string> {
  const answer = await login();
  assert.equal(answer.status, 200);
  return answer.body.access_token as string;
}

test('demo login answers a full LoginResponse with a signed JWT', async () => {
  const answer = await login();
  assert.equal(answer.status, 200);
  const body = answer.body;
  assert.equal(body.token_type, 'bearer');
  assert.equal(body.expires_in, 7 * 3600);
  assert.equal(body.type, undefined);
  const token = body.access_token as string;
  assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
  assert.equal(claims.sub, '1001');
  assert.equal(typeof claims.jti, 'string');
  assert.equal(claims.iat, Math.floor(clock / 1000));
  assert.equal(claims.exp, Math.floor(clock / 1000) + 7 * 3600);

  const user = body.user as Record<string, unknown>;
  for (const field of [
    'id',
    'email',
    'username',
    'name',
    'first_name',
    'last_name',
    'phone',
    'ddi',
    'birth_date',
    'country',
    'language',
    'currency',
    'token',
    'mother_name',
    'created_at',
    'updated_at',
    'last_login',
    'gender',
    'document',
    'country_data',
    'wallet',
    'is_active',
    'cancelled_account',
    'bonus_enabled',
    'ftd_date',
    'ftd_value',
    'affiliation_code',
    'latestKyc',
  ]) {
    assert.ok(field in user, `AuthUser.${field}`);
  }
  assert.equal(user.id, 1001);
  assert.equal(user.email, 'demo@example.com');
  assert.equal(user.currency, 'BRL');
  assert.equal(typeof user.gender, 'number');
  assert.notEqual(user.token, token, 'AuthUser.token is not the session JWT');
  const wallet = user.wallet as Record<string, unknown>;
  assert.equal(wallet.currency, 'BRL');
  assert.ok(Number.isInteger(wallet.balance) && (wallet.balance as number) > 0, 'balance in cents');
  const document = user.document as Record<string, unknown>;
  assert.equal(document.number, DEMO_LOGINS[0]!.document);

  const info = body.userInfo as Record<string, unknown>;
  for (const field of [
    'validate_email_at',
    'login_at',
    'validate_sms_at',
    'login_attempt_qty',
    'strong_password',
    'seven_days_since_last_login',
    'force_request_kyc',
    'two_factor_enabled',
    'two_factor_type',
    'force_request_kyc_reasons',
    'two_factor_at',
    'two_factor_code',
    'latitude',
    'longitude',
    'location_at',
    'nationalities',
    'tc_accepted_at',
    'privacy_accepted_at',
    'lgpd_accepted_at',
    'law_accepted_at',
    'mkt_accepted_at',
    'spa_bet_limit',
    'spa_loss_limit',
    'spa_deposit_limit',
    'spa_withdrawal_limit',
    'spa_time_limit',
    'spa_period_limit',
    'spa_note',
  ]) {
    assert.ok(field in info, `AuthUserInfo.${field}`);
  }
  assert.equal(info.two_factor_enabled, false);
  assert.equal(info.login_at, new Date(clock).toISOString());
});

test('login by CPF, with or without punctuation', async () => {
  const cpf = DEMO_LOGINS[0]!.document;
  const plain = await login(cpf);
  assert.equal(plain.status, 200);
  assert.equal((plain.body.user as { email: string }).email, 'demo@example.com');
  const dotted = await login(`${cpf.slice(0, 3)}.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-${cpf.slice(9)}`);
  assert.equal(dotted.status, 200);
});

test('wrong credentials and missing fields', async () => {
  const wrong = await call('POST', '/auth/login', { body: { login: 'demo@example.com', password: 'nope' } });
  assert.equal(wrong.status, 401);
  assert.deepEqual(wrong.body, { message: 'Invalid credentials', reason: 'invalid_credentials' });
  const unknown = await call('POST', '/auth/login', { body: { login: 'nobody@example.com', password: 'x' } });
  assert.equal(unknown.status, 401);
  assert.equal(unknown.body.reason, 'invalid_credentials');

  const missing = await call('POST', '/auth/login', { body: { login: 'demo@example.com' } });
  assert.equal(missing.status, 422);
  assert.equal(missing.body.reason, 'validation_error');
  assert.deepEqual(Object.keys(missing.body.errors as object), ['password']);
  const noBody = await call('POST', '/auth/login');
  assert.equal(noBody.status, 422);

  const captcha = await login('demo@example.com', { captcha_token: 'invalid-captcha' });
  assert.equal(captcha.status, 422);
  assert.equal(captcha.body.reason, 'invalid_captcha');
});

test('two-factor login: type until the numeric code is sent', async () => {
  const first = await login('2fa@example.com');
  assert.equal(first.status, 200);
  assert.equal(first.body.type, 'two_factor_code');
  assert.equal(first.body.access_token, undefined);

  const asString = await login('2fa@example.com', { two_factor_code: '123456' });
  assert.equal(asString.status, 422);
  assert.equal(asString.body.reason, 'validation_error');

  const wrong = await login('2fa@example.com', { two_factor_code: 111111 });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.body.reason, 'invalid_two_factor_code');

  const right = await login('2fa@example.com', { two_factor_code: 123456 });
  assert.equal(right.status, 200);
  assert.equal(right.body.type, undefined);
  assert.equal(typeof right.body.access_token, 'string');
  assert.equal((right.body.userInfo as { two_factor_enabled: boolean }).two_factor_enabled, true);
});

test('cancelled account answers type cancelled_account and no token', async () => {
  const answer = await login('cancelled@example.com');
  assert.equal(answer.status, 200);
  assert.equal(answer.body.type, 'cancelled_account');
  assert.equal(answer.body.access_token, undefined);
});

test('profile with a token, with and without check_spa_again', async () => {
  const token = await demoToken();
  for (const path of ['/auth/user-profile', '/auth/user-profile?check_spa_again=1']) {
    const answer = await call('GET', path, { token });
    assert.equal(answer.status, 200);
    assert.equal((answer.body.user as { id: number }).id, 1001);
    assert.equal(typeof (answer.body.userInfo as { login_at: string }).login_at, 'string');
  }
});

test('profile 401: no_token, invalid_token (malformed and bad signature)', async () => {
  const none = await call('GET', '/auth/user-profile');
  assert.equal(none.status, 401);
  assert.deepEqual(none.body, { reason: 'no_token', message: 'User not logged in' });

  const malformed = await call('GET', '/auth/user-profile', { token: 'not-a-jwt' });
  assert.equal(malformed.status, 401);
  assert.equal(malformed.body.reason, 'invalid_token');

  const token = await demoToken();
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const flipped = `${header}.${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
  const badSignature = await call('GET', '/auth/user-profile', { token: flipped });
  assert.equal(badSignature.status, 401);
  assert.equal(badSignature.body.reason, 'invalid_token');

  const basic = await fetch(`${sandbox.bffUrl}/auth/user-profile`, { headers: { authorization: 'Basic abc' } });
  assert.equal(basic.status, 401);
  assert.equal(((await basic.json()) as { reason: string }).reason, 'no_token');
});

test('profile 401 token_expired: by the admin API and by the clock', async () => {
  const token = await demoToken();
  const expire = await fetch(`${sandbox.bffUrl}/__sandbox/sessions/expire`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  });
  assert.deepEqual(await expire.json(), { ok: true, sessions: 1 });
  const answer = await call('GET', '/auth/user-profile', { token });
  assert.equal(answer.status, 401);
  assert.deepEqual(answer.body, { reason: 'token_expired', message: 'Token has expired' });

  const other = await demoToken();
  clock += 7 * 3600 * 1000 + 1000;
  try {
    const late = await call('GET', '/auth/user-profile', { token: other });
    assert.equal(late.status, 401);
    assert.equal(late.body.reason, 'token_expired');
  } finally {
    clock -= 7 * 3600 * 1000 + 1000;
  }
});

test('logout revokes the session; logout-auto too', async () => {
  const token = await demoToken();
  const out = await call('POST', '/auth/logout', { token });
  assert.equal(out.status, 200);
  const after = await call('GET', '/auth/user-profile', { token });
  assert.equal(after.status, 401);
  assert.deepEqual(after.body, { reason: 'revoked', message: 'Token has been revoked' });

  const second = await demoToken();
  assert.equal((await call('POST', '/auth/logout-auto', { token: second })).status, 200);
  assert.equal((await call('GET', '/auth/user-profile', { token: second })).body.reason, 'revoked');

  const anonymous = await call('POST', '/auth/logout');
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.body.reason, 'no_token');
});

test('admin revoke by e-mail ends every session of the user', async () => {
  const a = await demoToken();
  const b = await demoToken();
  const revoke = await call('POST', '/__sandbox/sessions/revoke', { body: { email: 'demo@example.com' } });
  assert.equal(revoke.status, 200);
  assert.ok((revoke.body.sessions as number) >= 2);
  assert.equal((await call('GET', '/auth/user-profile', { token: a })).body.reason, 'revoked');
  assert.equal((await call('GET', '/auth/user-profile', { token: b })).body.reason, 'revoked');
});

test('refresh: new token; the old one works during the grace period, then expires', async () => {
  const old = await demoToken();
  clock += 1000;
  const refreshed = await call('POST', '/users/refresh-token', { token: old });
  assert.equal(refreshed.status, 200);
  assert.deepEqual(Object.keys(refreshed.body).sort(), ['access_token', 'expires_in', 'token_type']);
  const fresh = refreshed.body.access_token as string;
  assert.notEqual(fresh, old);
  assert.equal(refreshed.body.expires_in, 7 * 3600);

  assert.equal((await call('GET', '/auth/user-profile', { token: old })).status, 200, 'grace period');
  clock += 31_000;
  const stale = await call('GET', '/auth/user-profile', { token: old });
  assert.equal(stale.status, 401);
  assert.equal(stale.body.reason, 'token_expired');
  assert.equal((await call('GET', '/auth/user-profile', { token: fresh })).status, 200);

  const none = await call('POST', '/users/refresh-token');
  assert.equal(none.status, 401);
  assert.equal(none.body.reason, 'no_token');
});

test('tokens from before a reset are invalid', async () => {
  const token = await demoToken();
  assert.equal((await call('POST', '/__sandbox/reset')).status, 200);
  const answer = await call('GET', '/auth/user-profile', { token });
  assert.equal(answer.status, 401);
  assert.equal(answer.body.reason, 'invalid_token');
});
