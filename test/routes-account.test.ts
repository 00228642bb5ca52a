/**
 * spec 4.2 Validation, 4.3 User and 4.8 KYC / rewards / income report against a recording upstream
 * over real sockets: for every row, the upstream method, path, query and body it produces; 401
 * without the cookie and no upstream call; invalid input answers 400 with zero upstream calls.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { beforeEach, describe, test } from 'node:test';
import { incomeReportRoutes } from '../src/routes/income-report.js';
import { kycRoutes } from '../src/routes/kyc.js';
import { rewardsRoutes } from '../src/routes/rewards.js';
import { userRoutes } from '../src/routes/user.js';
import { validationRoutes } from '../src/routes/validation.js';
import { fakeJwt, send, useProxyWithRecorder } from './helpers/recording-upstream.js';

const { upstream, proxy } = useProxyWithRecorder();
const token = fakeJwt({ sub: '7' });
const USER_ID = 7;
const PROFILE = '/auth/user-profile';

beforeEach(() => {
  upstream.on('GET', PROFILE, { json: { user: { id: USER_ID, email: 'demo@example.com' }, userInfo: {} } });
  proxy.app.deps.profileCache.clear();
});

/** The requests the upstream got, without the profile reads. */
function calls() {
  return upstream.requests.filter((r) => r.path !== PROFILE);
}

/** A GET sent with its path exactly as written (no URL normalisation), with the session cookie. */
function rawGet(path: string): Promise<{ status: number; text: string; json: unknown }> {
  const { hostname, port } = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path, method: 'GET', headers: { cookie: `access_token=${token}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, json: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

interface Row {
  method: string;
  url: string;
  json?: unknown;
  /** What reaches the upstream. */
  upstream: { method: string; path: string; query?: string; json?: unknown };
  /** Send no session cookie (the row needs none). */
  anonymous?: boolean;
}

function rowName(r: Row): string {
  return `${r.method} ${r.url} → ${r.upstream.method} ${r.upstream.path}${r.upstream.query ? `?${r.upstream.query}` : ''}`;
}

async function check(row: Row): Promise<void> {
  const res = await send(proxy.url, row.method, row.url, { json: row.json, token: row.anonymous ? undefined : token });
  assert.equal(res.status, 200, res.text);
  const got = calls();
  assert.equal(got.length, 1, 'one upstream call');
  const [call] = got;
  assert.equal(call?.method, row.upstream.method);
  assert.equal(call?.path, row.upstream.path);
  assert.equal(call?.query, row.upstream.query ?? '');
  if ('json' in row.upstream) assert.deepEqual(call?.json, row.upstream.json);
  if (!row.anonymous) assert.equal(call?.headers.authorization, `Bearer ${token}`);
}

const VALIDATION_ROWS: Row[] = [
  { method: 'POST', url: '/api/validation/email/send', upstream: { method: 'POST', path: '/bff/users/send-email', json: {} } },
  {
    method: 'POST',
    url: '/api/validation/email/verify',
    json: { code: '123456' },
    upstream: { method: 'POST', path: '/bff/users/validade-email-code', json: { code: '123456' } },
  },
  {
    method: 'PATCH',
    url: '/api/validation/email/change',
    json: { email: 'new@example.com' },
    upstream: { method: 'PATCH', path: '/bff/users/self-email', json: { email: 'new@example.com' } },
  },
  { method: 'POST', url: '/api/validation/sms/send', json: {}, upstream: { method: 'POST', path: '/bff/users/send-sms', json: {} } },
  {
    method: 'POST',
    url: '/api/validation/sms/verify',
    json: { code: '654321' },
    upstream: { method: 'POST', path: '/bff/users/validade-sms-code', json: { code: '654321' } },
  },
  {
    method: 'PATCH',
    url: '/api/validation/sms/change',
    json: { phone: '11999998888', ddi: '55' },
    upstream: { method: 'PATCH', path: '/bff/users/self-phone', json: { phone: '11999998888', ddi: '55' } },
  },
  {
    method: 'PATCH',
    url: '/api/validation/docs/submit',
    json: { name: 'Ana Souza', birth_date: '1990-04-12', gender: 2 },
    upstream: { method: 'PATCH', path: '/bff/users/add-initial-data', json: { name: 'Ana Souza', birth_date: '1990-04-12', gender: 2 } },
  },
  {
    method: 'PATCH',
    url: '/api/validation/address/submit',
    json: { cep: '01310-100', street: 'Av. Paulista', number: '1000' },
    upstream: { method: 'PATCH', path: '/bff/users/add-address', json: { cep: '01310-100', street: 'Av. Paulista', number: '1000' } },
  },
  {
    method: 'PATCH',
    url: '/api/validation/terms/accept',
    json: { tc: true, privacy: true },
    upstream: { method: 'PATCH', path: '/bff/users/self-contracts', json: { tc: true, privacy: true } },
  },
  {
    method: 'POST',
    url: '/api/validation/link-confirm',
    json: { token: 'confirm-abc' },
    upstream: { method: 'POST', path: '/bff/validate-confirmation', json: { token: 'confirm-abc' } },
  },
  {
    method: 'POST',
    url: '/api/address/lookup-by-postal-code',
    json: { cep: '01310-100' },
    anonymous: true,
    upstream: { method: 'POST', path: '/apicep', json: { cep: '01310-100' } },
  },
];

const USER_ROWS: Row[] = [
  {
    method: 'PATCH',
    url: '/api/user/update-profile',
    json: { name: 'Ana B', id: 999, user_id: 999, userId: 999 },
    upstream: { method: 'POST', path: `/users/update/${USER_ID}`, json: { name: 'Ana B' } },
  },
  {
    method: 'PATCH',
    url: '/api/user/update-address',
    json: { street: 'Rua A', user_id: 3 },
    upstream: { method: 'PATCH', path: '/bff/users/update-address', json: { street: 'Rua A' } },
  },
  {
    method: 'PATCH',
    url: '/api/user/add-phone',
    json: { phone: '11999998888', ddi: '55' },
    upstream: { method: 'PATCH', path: '/bff/users/add-phone', json: { phone: '11999998888', ddi: '55' } },
  },
  {
    method: 'POST',
    url: '/api/user/check-password',
    json: { password: 'Demo#2026' },
    upstream: { method: 'POST', path: '/bff/users/check-password', json: { password: 'Demo#2026' } },
  },
  {
    method: 'POST',
    url: '/api/user/change-password',
    json: { current_password: 'old', password: 'new-secret', password_confirmation: 'new-secret', id: 1 },
    upstream: {
      method: 'POST',
      path: `/users/change-password/${USER_ID}`,
      json: { current_password: 'old', password: 'new-secret', password_confirmation: 'new-secret' },
    },
  },
  {
    method: 'PATCH',
    url: '/api/user/two-factor',
    json: { enabled: true },
    upstream: { method: 'PATCH', path: '/bff/users/self-two-factor', json: { enabled: true } },
  },
  {
    method: 'PATCH',
    url: '/api/user/update-marketing',
    json: { opt_in: false },
    upstream: { method: 'PATCH', path: '/bff/users/self-mkt', json: { opt_in: false } },
  },
  {
    method: 'PATCH',
    url: '/api/user/update-preferences',
    json: { language: 'pt-BR', theme: 'dark', odds_format: 'decimal', notifications_push: false },
    upstream: {
      method: 'PATCH',
      path: '/bff/users/update-user-info-metadata',
      json: { language: 'pt-BR', theme: 'dark', odds_format: 'decimal', notifications_push: false },
    },
  },
  {
    method: 'PATCH',
    url: '/api/user/update-pending-data',
    json: { mother_name: 'Maria' },
    upstream: { method: 'PATCH', path: '/bff/users/update-pending-data', json: { mother_name: 'Maria' } },
  },
  {
    method: 'PATCH',
    url: '/api/user/update-limits',
    json: { spa_deposit_limit: 100_000, spa_period_limit: 'monthly', spa_loss_limit: null },
    upstream: {
      method: 'PATCH',
      path: '/bff/users/update-limits',
      json: { spa_deposit_limit: 100_000, spa_period_limit: 'monthly', spa_loss_limit: null },
    },
  },
  {
    method: 'PATCH',
    url: '/api/user/timeout-limits',
    json: { days: 7 },
    upstream: { method: 'PATCH', path: '/bff/users/timeout-limits', json: { days: 7 } },
  },
  {
    method: 'PATCH',
    url: '/api/user/self-exclusion',
    json: { months: 6 },
    upstream: { method: 'PATCH', path: '/bff/users/self-exclusion', json: { months: 6 } },
  },
  { method: 'GET', url: '/api/user/login-history?page=3', upstream: { method: 'GET', path: '/bff/users/login-history', query: 'page=3' } },
  { method: 'GET', url: '/api/user/login-history', upstream: { method: 'GET', path: '/bff/users/login-history', query: 'page=1' } },
  { method: 'GET', url: '/api/user/last-casino-games', upstream: { method: 'GET', path: '/bff/games/user-last-casino-games-dl' } },
  {
    method: 'GET',
    url: '/api/user/support-desk-token',
    upstream: { method: 'GET', path: '/bff/users/support-desk/create-or-update-user' },
  },
  { method: 'POST', url: '/api/user/referrals', upstream: { method: 'POST', path: '/users/list-referrals', json: {} } },
  {
    method: 'GET',
    url: '/api/user/indication-stats',
    upstream: { method: 'GET', path: `/referral-v2/indication-stats/${USER_ID}` },
  },
  { method: 'GET', url: '/api/user/referral-indicator', upstream: { method: 'GET', path: '/referral-v1/refer-friend/indicator' } },
];

const KYC_REWARDS_INCOME_ROWS: Row[] = [
  { method: 'GET', url: '/api/kyc/start?source=deposit', upstream: { method: 'GET', path: '/bff/users/kyc', query: 'source=deposit' } },
  {
    method: 'GET',
    url: '/api/kyc/start?source=deposit&recovery=1',
    upstream: { method: 'GET', path: '/bff/users/kyc/recovery', query: 'source=deposit' },
  },
  { method: 'GET', url: '/api/kyc/start', upstream: { method: 'GET', path: '/bff/users/kyc' } },
  { method: 'GET', url: '/api/kyc/status?kyc_id=kyc_1', upstream: { method: 'GET', path: '/bff/users/kyc/status', query: 'kyc_id=kyc_1' } },
  {
    method: 'GET',
    url: '/api/kyc/status?kyc_id=kyc_1&recovery=1',
    upstream: { method: 'GET', path: '/bff/users/kyc/status/recovery', query: 'kyc_id=kyc_1' },
  },
  {
    method: 'POST',
    url: '/api/rewards/list',
    json: { page: 2, per_page: 10, type: 'bonus' },
    upstream: { method: 'GET', path: '/bff/gamification/rewards', query: 'page=2&per_page=10&type=bonus' },
  },
  { method: 'POST', url: '/api/rewards/list', upstream: { method: 'GET', path: '/bff/gamification/rewards', query: 'page=1&per_page=20' } },
  {
    method: 'POST',
    url: '/api/rewards/redeem',
    json: { reward_id: 3 },
    upstream: { method: 'POST', path: '/bff/gamification/redeem', json: { reward_id: 3 } },
  },
  { method: 'GET', url: '/api/income-report/available-years', upstream: { method: 'GET', path: '/income-report/available-years' } },
  {
    method: 'POST',
    url: '/api/income-report/generate',
    json: { year: 2025 },
    upstream: { method: 'POST', path: '/income-report/generate', json: { year: 2025 } },
  },
  { method: 'GET', url: '/api/income-report/status/ir_12', upstream: { method: 'GET', path: '/income-report/ir_12' } },
];

describe('spec 4.2 Validation: what each row sends upstream', () => {
  for (const row of VALIDATION_ROWS) test(rowName(row), () => check(row));
});

describe('spec 4.3 User: what each row sends upstream', () => {
  for (const row of USER_ROWS) test(rowName(row), () => check(row));

  test('store-document streams the file as multipart to POST /documents/{endpoint} (form field)', async () => {
    const bytes = Buffer.alloc(300_000, 7);
    const form = new FormData();
    form.append('endpoint', 'document-front');
    form.append('file', new Blob([bytes], { type: 'image/png' }), 'front side.png');
    const res = await fetch(`${proxy.url}/api/user/store-document`, {
      method: 'POST',
      headers: { cookie: `access_token=${token}` },
      body: form,
    });
    assert.equal(res.status, 200, await res.text());
    const [call] = calls();
    assert.equal(call?.method, 'POST');
    assert.equal(call?.path, '/documents/document-front');
    assert.equal(call?.headers.authorization, `Bearer ${token}`);
    const boundary = /boundary=(\S+)/.exec(String(call?.headers['content-type']))?.[1];
    assert.ok(boundary, 'multipart with a boundary');
    assert.match(call?.body ?? '', /Content-Disposition: form-data; name="file"; filename="front_side.png"/);
    assert.match(call?.body ?? '', /Content-Type: image\/png/);
    assert.ok(Buffer.from(call?.body ?? '', 'latin1').length > bytes.length, 'the whole file went upstream');
    assert.ok((call?.body ?? '').endsWith(`--${boundary}--\r\n`));
  });

  test('store-document: an upstream 401 passes through byte for byte', async () => {
    upstream.on('POST', '/documents/selfie', { status: 401, text: '{"reason":"revoked"}' });
    const form = new FormData();
    form.append('file', new Blob([Buffer.alloc(64 * 1024, 1)], { type: 'image/jpeg' }), 'me.jpg');
    const res = await fetch(`${proxy.url}/api/user/store-document?endpoint=selfie`, {
      method: 'POST',
      headers: { cookie: `access_token=${token}` },
      body: form,
    });
    assert.equal(res.status, 401);
    assert.equal(await res.text(), '{"reason":"revoked"}');
  });

  test('store-document takes the endpoint from the query too', async () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('%PDF-1.4')], { type: 'application/pdf' }), 'proof.pdf');
    const res = await fetch(`${proxy.url}/api/user/store-document?endpoint=proof-of-address`, {
      method: 'POST',
      headers: { cookie: `access_token=${token}` },
      body: form,
    });
    assert.equal(res.status, 200);
    assert.equal(calls()[0]?.path, '/documents/proof-of-address');
  });

  test('store-document refuses an unknown endpoint, a wrong media type, JSON, and a file above 10 MiB', async () => {
    const upload = async (endpoint: string, type: string, size = 10, query = '') => {
      const form = new FormData();
      form.append('endpoint', endpoint);
      form.append('file', new Blob([Buffer.alloc(size, 1)], { type }), 'x.bin');
      const res = await fetch(`${proxy.url}/api/user/store-document${query}`, {
        method: 'POST',
        headers: { cookie: `access_token=${token}` },
        body: form,
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    for (const endpoint of ['passport', '../validate', 'validate', '']) {
      const res = await upload(endpoint, 'image/png');
      assert.equal(res.status, 400, endpoint);
      assert.equal(res.body.error, 'invalid_request');
    }
    assert.equal((await upload('selfie', 'image/png', 10, '?endpoint=..%2fvalidate')).status, 400);
    assert.equal((await upload('selfie', 'text/html')).status, 415);
    const json = await send(proxy.url, 'POST', '/api/user/store-document', { json: { endpoint: 'selfie' }, token });
    assert.equal(json.status, 415);
    assert.equal(calls().length, 0, 'nothing reached the upstream');
    const big = await upload('selfie', 'image/jpeg', 10 * 1024 * 1024 + 1);
    assert.equal(big.status, 413);
    assert.equal(big.body.error, 'payload_too_large');
  });

  test("the user id in the path is the session's own; a profile 401 passes through and nothing else is called", async () => {
    upstream.reset();
    const raw = '{"reason":"token_expired","message":"Token has expired"}';
    upstream.on('GET', PROFILE, { status: 401, text: raw, headers: { 'content-type': 'application/json' } });
    const res = await send(proxy.url, 'PATCH', '/api/user/update-profile', { json: { name: 'X' }, token });
    assert.equal(res.status, 401);
    assert.equal(res.text, raw);
    assert.equal(calls().length, 0);
  });
});

describe('spec 4.8 KYC, rewards, income report: what each row sends upstream', () => {
  for (const row of KYC_REWARDS_INCOME_ROWS) test(rowName(row), () => check(row));
});

describe('no session cookie → 401 { reason: no_token }, no upstream call', () => {
  const tables = [validationRoutes, userRoutes, kycRoutes, rewardsRoutes, incomeReportRoutes];
  for (const r of tables.flat()) {
    for (const method of Array.isArray(r.method) ? r.method : [r.method]) {
      const url = r.url.replace(/:([A-Za-z_]+)/g, 'x1');
      if (r.auth !== 'required') {
        test(`${method} ${url} needs no session (docs/behaviour.md "Which routes need a session")`, () =>
          assert.equal(r.url, '/api/address/lookup-by-postal-code'));
        continue;
      }
      test(`${method} ${url}`, async () => {
        const res = await send(proxy.url, method, url, method === 'GET' ? {} : { json: { any: 'body' } });
        assert.equal(res.status, 401);
        assert.equal(res.text, '{"reason":"no_token"}');
        assert.equal(upstream.requests.length, 0);
      });
    }
  }
});

describe('invalid input → 400 invalid_request, zero upstream calls', () => {
  const cases: [method: string, url: string, json?: unknown][] = [
    ['PATCH', '/api/user/update-preferences', { language: 'pt-BR', is_admin: true }],
    ['PATCH', '/api/user/update-preferences', { balance: 1000 }],
    ['PATCH', '/api/user/update-preferences', {}],
    ['PATCH', '/api/user/update-preferences', { theme: 'neon' }],
    ['PATCH', '/api/user/update-limits', { spa_deposit_limit: -5 }],
    ['PATCH', '/api/user/update-limits', { spa_deposit_limit: 10.5 }],
    ['PATCH', '/api/user/update-limits', { wallet_balance: 1 }],
    ['PATCH', '/api/user/update-profile', { name: { first: 'nested' } }],
    ['PATCH', '/api/user/update-profile', [1, 2]],
    ['POST', '/api/validation/email/verify', {}],
    ['POST', '/api/validation/email/verify', { code: '1 2' }],
    ['POST', '/api/address/lookup-by-postal-code', { cep: '../x' }],
    ['GET', '/api/user/login-history?page=-1'],
    ['GET', '/api/user/login-history?page=abc'],
    ['GET', '/api/user/login-history?page=1.5'],
    ['GET', '/api/kyc/status'],
    ['GET', '/api/kyc/status?kyc_id=..%2fadmin'],
    ['GET', '/api/kyc/status?kyc_id=a%2Fb'],
    ['GET', '/api/kyc/start?recovery=yes'],
    ['POST', '/api/rewards/list', { page: 0 }],
    ['POST', '/api/rewards/list', { per_page: 1000 }],
    ['POST', '/api/rewards/list', { page: 1.5 }],
    ['POST', '/api/rewards/list', { page: '2' }],
    ['POST', '/api/rewards/redeem', { reward_id: -1 }],
    ['POST', '/api/income-report/generate', { year: '2025' }],
    ['POST', '/api/income-report/generate', { year: 1999 }],
    ['GET', '/api/income-report/status/..%2f'],
    ['GET', '/api/income-report/status/%2e%2e'],
    ['GET', '/api/income-report/status/a%2Fb'],
    ['GET', '/api/income-report/status/..'],
    ['GET', '/api/income-report/status/%2e%2e%2fadmin'],
  ];
  for (const [method, url, json] of cases) {
    test(`${method} ${url} ${json === undefined ? '' : JSON.stringify(json)}`, async () => {
      // Dot segments are sent as written (fetch would normalise them away before they reach the proxy).
      const res = json === undefined && method === 'GET' ? await rawGet(url) : await send(proxy.url, method, url, { json, token });
      assert.equal(res.status, 400, res.text);
      assert.equal((res.json as Record<string, unknown>).error, 'invalid_request');
      assert.equal(upstream.requests.length, 0);
    });
  }
});

describe('upstream answers through the envelope (spec 7.4)', () => {
  test('403 passes through byte for byte; 422 becomes { ok: false, error, detail } with its status', async () => {
    upstream.on('POST', '/bff/users/validade-email-code', { status: 403, text: '{"reason":"kyc_required"}' });
    const forbidden = await send(proxy.url, 'POST', '/api/validation/email/verify', { json: { code: '123456' }, token });
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.text, '{"reason":"kyc_required"}');
    upstream.on('POST', '/bff/gamification/redeem', { status: 409, json: { reason: 'already_redeemed', message: 'Already redeemed' } });
    const twice = await send(proxy.url, 'POST', '/api/rewards/redeem', { json: { reward_id: 1 }, token });
    assert.equal(twice.status, 409);
    assert.deepEqual(twice.json, { ok: false, error: 'already_redeemed', detail: 'Already redeemed' });
  });
});
