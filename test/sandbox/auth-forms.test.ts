// Sandbox BFF: registration (four paths), password recovery, social login, document validation.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { completeCpf, isValidCpf, type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';

let sandbox: SandboxHandle;

before(async () => {
  sandbox = await startSandbox();
});
after(async () => {
  await sandbox.close();
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function call(method: string, path: string, body?: unknown, token?: string): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${sandbox.bffUrl}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

function registration(email: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    email,
    password: 'Secret#123',
    country: 'BR',
    nationalities: '["BR"]',
    optIn: true,
    name: 'Paula Teixeira Gomes',
    ddi: '55',
    phone: '(11) 91234-5678',
    birth_date: '1993-07-21',
    ...extra,
  };
}

test('each registration path creates a user and answers a LoginResponse', async () => {
  const paths = ['/bff/register-simplified', '/auth/register', '/auth/register/simplified', '/bff/social/google/registerSimplified'];
  for (const [i, path] of paths.entries()) {
    const email = `new${i}@example.com`;
    const answer = await call('POST', path, registration(email));
    assert.equal(answer.status, 200, `${path}: ${JSON.stringify(answer.body)}`);
    assert.equal(typeof answer.body.access_token, 'string');
    const user = answer.body.user as Record<string, unknown>;
    assert.equal(user.email, email);
    assert.equal(user.first_name, 'Paula');
    assert.equal(user.last_name, 'Teixeira Gomes');
    assert.equal(user.phone, '11912345678');
    assert.equal(user.currency, 'BRL');
    assert.equal((user.wallet as { balance: number }).balance, 0);
    assert.equal((answer.body.userInfo as { nationalities: string }).nationalities, '["BR"]');

    const profile = await call('GET', '/auth/user-profile', undefined, answer.body.access_token as string);
    assert.equal(profile.status, 200);
    const login = await call('POST', '/auth/login', { login: email, password: 'Secret#123' });
    assert.equal(login.status, 200, `${path}: the new user can log in`);
  }
  const records = sandbox.store.registrations;
  assert.deepEqual(
    records.map((r) => [r.path, r.provider]),
    paths.map((p) => [p, p.includes('social') ? 'google' : null]),
  );
});

test('social registration needs no password', async () => {
  const body = registration('social-only@example.com');
  delete body.password;
  const answer = await call('POST', '/bff/social/apple/registerSimplified', body);
  assert.equal(answer.status, 200);
  const unknown = await call('POST', '/bff/social/myspace/registerSimplified', registration('x@example.com'));
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.reason, 'unknown_provider');
});

test('registration records the attribution fields received', async () => {
  const answer = await call(
    'POST',
    '/bff/register-simplified',
    registration('tracked@example.com', {
      utm_source: 'newsletter',
      utm_campaign: 'spring',
      utm_content: 'banner-a',
      utm_medium: 'email',
      src: 'legacy-src',
      ga_client_id: 'GA1.2.123.456',
      affiliation_code: 'AFF42',
      app_source: 'web',
      user_prudential_limit_active: true,
    }),
  );
  assert.equal(answer.status, 200);
  assert.equal((answer.body.user as { affiliation_code: string }).affiliation_code, 'AFF42');
  const viaApi = await call('GET', '/__sandbox/registrations?email=tracked@example.com');
  const [record] = viaApi.body.registrations as Array<Record<string, unknown>>;
  assert.ok(record);
  assert.deepEqual(record.attribution, {
    utm_source: 'newsletter',
    utm_campaign: 'spring',
    utm_content: 'banner-a',
    utm_medium: 'email',
    src: 'legacy-src',
    ga_client_id: 'GA1.2.123.456',
    affiliation_code: 'AFF42',
    app_source: 'web',
    user_prudential_limit_active: true,
  });
  assert.equal((record.body as { password: string }).password, '[redacted]');
});

test('registration errors: duplicate e-mail, missing fields, bad document, weak password', async () => {
  const taken = await call('POST', '/auth/register', registration('DEMO@example.com'));
  assert.equal(taken.status, 422);
  assert.equal(taken.body.reason, 'email_taken');

  const missing = await call('POST', '/bff/register-simplified', { email: 'a@example.com' });
  assert.equal(missing.status, 422);
  assert.equal(missing.body.reason, 'validation_error');
  assert.deepEqual(Object.keys(missing.body.errors as object).sort(), ['country', 'nationalities', 'optIn', 'password']);

  const badNationalities = await call('POST', '/bff/register-simplified', registration('n@example.com', { nationalities: 'BR' }));
  assert.equal(badNationalities.status, 422);

  const badCpf = await call('POST', '/bff/register-simplified', registration('cpf@example.com', { number: '123.456.789-00' }));
  assert.equal(badCpf.status, 422);
  assert.equal(badCpf.body.reason, 'invalid_document');

  const usedCpf = await call('POST', '/bff/register-simplified', registration('cpf2@example.com', { number: '529.982.247-25' }));
  assert.equal(usedCpf.status, 422);
  assert.equal(usedCpf.body.reason, 'document_taken');

  const weak = await call('POST', '/bff/register-simplified', registration('weak@example.com', { password: '123' }));
  assert.equal(weak.status, 422);
  assert.equal(weak.body.reason, 'weak_password');
});

test('password recovery: options, code by e-mail and SMS, validate, confirm', async () => {
  const options = await call('POST', '/auth/passwords/reset/options', { login: 'demo@example.com' });
  assert.equal(options.status, 200);
  assert.deepEqual(options.body, { email: 'd**o@example.com', phone: '+55 *******4321', options: ['email', 'sms'] });

  const byEmail = await call('POST', '/auth/passwords/reset/by-email', { login: 'demo@example.com' });
  assert.equal(byEmail.status, 200);
  assert.equal(byEmail.body.channel, 'email');
  const firstCode = (await call('GET', '/__sandbox/recovery-codes?login=demo@example.com')).body;
  assert.match(firstCode.code as string, /^\d{6}$/);
  assert.equal(firstCode.channel, 'email');

  const bySms = await call('POST', '/auth/passwords/reset/by-sms', { login: '52998224725' });
  assert.equal(bySms.status, 200);
  assert.equal(bySms.body.destination, '+55 *******4321');
  const code = (await call('GET', '/__sandbox/recovery-codes?login=demo@example.com')).body;
  assert.equal(code.channel, 'sms');
  const digits = code.code as string;

  const wrongDigits = digits === '000000' ? '111111' : '000000';
  const wrong = await call('POST', '/auth/passwords/reset/validate-code', { login: 'demo@example.com', code: wrongDigits });
  assert.equal(wrong.status, 422);
  assert.equal(wrong.body.reason, 'invalid_code');

  const valid = await call('POST', '/auth/passwords/reset/validate-code', { login: 'demo@example.com', code: digits });
  assert.equal(valid.status, 200);
  assert.equal(valid.body.valid, true);

  const session = (await call('POST', '/auth/login', { login: 'demo@example.com', password: 'Demo#2026' })).body.access_token as string;
  const confirm = await call('POST', '/auth/passwords/reset/confirm', {
    login: 'demo@example.com',
    code: digits,
    password: 'Changed#2026',
    password_confirmation: 'Changed#2026',
  });
  assert.equal(confirm.status, 200);
  assert.equal((await call('POST', '/auth/login', { login: 'demo@example.com', password: 'Demo#2026' })).status, 401);
  assert.equal((await call('POST', '/auth/login', { login: 'demo@example.com', password: 'Changed#2026' })).status, 200);
  assert.equal((await call('GET', '/auth/user-profile', undefined, session)).body.reason, 'revoked');

  const reused = await call('POST', '/auth/passwords/reset/confirm', { login: 'demo@example.com', code: digits, password: 'Again#2026' });
  assert.equal(reused.status, 422);
  assert.equal(reused.body.reason, 'no_recovery_code');

  const unknown = await call('POST', '/auth/passwords/reset/options', { login: 'ghost@example.com' });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.reason, 'user_not_found');
  const missing = await call('POST', '/auth/passwords/reset/by-email', {});
  assert.equal(missing.status, 422);

  assert.equal((await call('POST', '/__sandbox/reset')).status, 200);
  assert.equal((await call('POST', '/auth/login', { login: 'demo@example.com', password: 'Demo#2026' })).status, 200);
});

test('password recovery: too many wrong codes', async () => {
  await call('POST', '/auth/passwords/reset/by-email', { login: '2fa@example.com' });
  const { code } = (await call('GET', '/__sandbox/recovery-codes?login=2fa@example.com')).body as { code: string };
  const wrong = code === '999999' ? '888888' : '999999';
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) {
    statuses.push((await call('POST', '/auth/passwords/reset/validate-code', { login: '2fa@example.com', code: wrong })).status);
  }
  assert.deepEqual(statuses, [422, 422, 422, 422, 429]);
  const after = await call('POST', '/auth/passwords/reset/validate-code', { login: '2fa@example.com', code });
  assert.equal(after.status, 422);
  assert.equal(after.body.reason, 'no_recovery_code');
});

test("password recovery: each step reads only its own fields, no alias (the proxy's RECOVERY_STEPS), captcha on every step", async () => {
  const refused: [string, Record<string, unknown>, string][] = [
    ['/auth/passwords/reset/options', { email: 'demo@example.com' }, 'email'],
    ['/auth/passwords/reset/options', { login: 'demo@example.com', step: 'options' }, 'step'],
    ['/auth/passwords/reset/by-sms', { login: 'demo@example.com', phone: '11900000000' }, 'phone'],
    ['/auth/passwords/reset/by-email', { login: 'demo@example.com', user_id: 1002 }, 'user_id'],
    ['/auth/passwords/reset/validate-code', { login: 'demo@example.com', token: '123456' }, 'token'],
    ['/auth/passwords/reset/validate-code', { login: 'demo@example.com', code: 123456 }, 'code'],
    ['/auth/passwords/reset/confirm', { login: 'demo@example.com', code: '123456', new_password: 'Changed#2026' }, 'new_password'],
  ];
  for (const [path, body, field] of refused) {
    const answer = await call('POST', path, body);
    assert.equal(answer.status, 422, `${path} ${JSON.stringify(body)}`);
    assert.equal(answer.body.reason, 'validation_error');
    assert.ok(field in (answer.body.errors as Record<string, unknown>), `${path}: ${JSON.stringify(answer.body)}`);
  }
  const captcha = { captcha_token: 'invalid-captcha' };
  for (const [path, body] of [
    ['/auth/passwords/reset/options', { login: 'demo@example.com', ...captcha }],
    ['/auth/passwords/reset/validate-code', { login: 'demo@example.com', code: '123456', ...captcha }],
    ['/auth/passwords/reset/confirm', { login: 'demo@example.com', code: '123456', password: 'Changed#2026', ...captcha }],
  ] as const) {
    const answer = await call('POST', path, body);
    assert.equal(answer.status, 422, path);
    assert.equal(answer.body.reason, 'invalid_captcha', path);
  }
  assert.equal(
    (await call('POST', '/auth/login', { login: 'demo@example.com', password: 'Demo#2026' })).status,
    200,
    'the password is unchanged',
  );
});

test('social login', async () => {
  const demo = await call('POST', '/bff/social/google', { token: 'demo-google-token' });
  assert.equal(demo.status, 200);
  assert.equal((demo.body.user as { email: string }).email, 'demo@example.com');
  assert.equal(typeof demo.body.access_token, 'string');

  const byEmail = await call('POST', '/bff/social/facebook', { token: 'sandbox:2fa@example.com' });
  assert.equal(byEmail.status, 200);
  assert.equal((byEmail.body.user as { id: number }).id, 1002);

  const notLinked = await call('POST', '/bff/social/google', { token: 'sandbox:new-person@example.com' });
  assert.equal(notLinked.status, 404);
  assert.equal(notLinked.body.reason, 'social_account_not_found');

  const cancelled = await call('POST', '/bff/social/google', { token: 'sandbox:cancelled@example.com' });
  assert.equal(cancelled.body.type, 'cancelled_account');

  const bad = await call('POST', '/bff/social/google', { token: 'forged' });
  assert.equal(bad.status, 401);
  assert.equal(bad.body.reason, 'invalid_social_token');

  const missing = await call('POST', '/bff/social/google', {});
  assert.equal(missing.status, 422);

  const provider = await call('POST', '/bff/social/orkut', { token: 'demo-orkut-token' });
  assert.equal(provider.status, 404);
});

test('document validation checks the CPF digits', async () => {
  const known = await call('POST', '/documents/validate', { number: '529.982.247-25' });
  assert.equal(known.status, 200);
  assert.deepEqual(known.body, {
    docnumber: '52998224725',
    docnumber_valid: true,
    name: 'Ana Beatriz Souza',
    birth_date: '1990-04-12',
    gender: 'F',
    mother_name: 'Maria Helena Souza',
  });

  const stranger = await call('POST', '/documents/validate', { number: completeCpf('987654321') });
  assert.equal(stranger.body.docnumber_valid, true);
  assert.equal(typeof stranger.body.name, 'string');
  assert.match(stranger.body.birth_date as string, /^\d{4}-\d{2}-\d{2}$/);

  for (const number of ['529.982.247-24', '111.111.111-11', '1234', 'abc']) {
    const invalid = await call('POST', '/documents/validate', { number });
    assert.equal(invalid.status, 200);
    assert.equal(invalid.body.docnumber_valid, false, number);
  }

  const missing = await call('POST', '/documents/validate', {});
  assert.equal(missing.status, 422);
});

test('CPF helpers', () => {
  assert.equal(completeCpf('529982247'), '52998224725');
  assert.equal(completeCpf('111444777'), '11144477735');
  assert.equal(isValidCpf('390.533.447-05'), true);
  assert.equal(isValidCpf('39053344706'), false);
  assert.equal(isValidCpf('00000000000'), false);
  assert.throws(() => completeCpf('12'), RangeError);
});
