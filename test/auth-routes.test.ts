/**
 * spec 4.1 Auth routes against a recording upstream over real sockets: what reaches the upstream
 * (method, path, body, Authorization, Cookie), the session cookie of docs/behaviour.md "Session cookie", the envelope of
 * spec 7.4, the profile cache and refresh de-duplication, and the beacon of spec 6.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { fakeJwt, send, useProxyWithRecorder } from './helpers/recording-upstream.js';

let randomValue = 0.1;
const { upstream, proxy } = useProxyWithRecorder({ UPSTREAM_TIMEOUT_MS: '2000' }, { random: () => randomValue });

const USER = { id: 7, email: 'demo@example.com', name: 'Demo' };
const USER_INFO = { login_at: '2026-01-01', two_factor_enabled: false };

beforeEach(() => {
  proxy.app.deps.profileCache.clear();
  proxy.app.deps.refreshCache.clear();
});

function loginAnswer(token: string, extra: Record<string, unknown> = {}) {
  return { access_token: token, expires_in: 21600, token_type: 'bearer', user: USER, userInfo: USER_INFO, ...extra };
}

describe('spec 4.1 /api/auth/login', () => {
  test('calls POST /auth/login, then GET /auth/user-profile with the new token, then sets the cookie', async () => {
    const jwt = fakeJwt();
    upstream.on('POST', '/auth/login', { json: loginAnswer(jwt) });
    upstream.on('GET', '/auth/user-profile', { json: { user: { ...USER, name: 'Fresh' }, userInfo: USER_INFO } });
    const res = await send(proxy.url, 'POST', '/api/auth/login', {
      json: { login: 'demo@example.com', password: 'pw', extra_field: 'dropped', two_factor_code: 123456 },
      headers: { cookie: '_ga=GA1.1.111.222' },
    });
    assert.equal(res.status, 200);
    const body = res.json as Record<string, unknown>;
    assert.equal(body.access_token, undefined);
    assert.ok(!res.text.includes(jwt), 'the JWT never appears in a response body');
    assert.deepEqual((body.user as Record<string, unknown>).name, 'Fresh');
    const [login, profile] = upstream.requests;
    assert.equal(login?.method, 'POST');
    assert.equal(login?.path, '/auth/login');
    assert.deepEqual(login?.json, { login: 'demo@example.com', password: 'pw', two_factor_code: 123456 });
    assert.equal(login?.headers.authorization, undefined);
    assert.equal(login?.headers.cookie, '_ga=GA1.1.111.222', 'the incoming Cookie header is forwarded (spec 1.3)');
    assert.equal(profile?.path, '/auth/user-profile');
    assert.equal(profile?.headers.authorization, `Bearer ${jwt}`);
    const cookie = res.headers.get('set-cookie') ?? '';
    assert.match(cookie, new RegExp(`^access_token=${jwt.replace(/\./g, '\\.')}; Max-Age=21600; Path=/; HttpOnly; SameSite=Lax$`));
    assert.equal(res.headers.get('cache-control'), 'no-store');
  });

  for (const type of ['two_factor_code', 'cancelled_account']) {
    test(`type ${type} reaches the client and sets no cookie (spec 3.2)`, async () => {
      upstream.on('POST', '/auth/login', { json: { type } });
      const res = await send(proxy.url, 'POST', '/api/auth/login', { json: { login: 'a@b.c', password: 'x' } });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { type });
      assert.equal(res.headers.get('set-cookie'), null);
      assert.equal(upstream.requests.length, 1);
    });
  }

  test('an upstream 401 becomes a form-level error, never the passthrough body (spec 7.4.4)', async () => {
    upstream.on('POST', '/auth/login', { status: 401, json: { reason: 'invalid_credentials', message: 'Wrong password' } });
    const res = await send(proxy.url, 'POST', '/api/auth/login', { json: { login: 'a@b.c', password: 'x' } });
    assert.equal(res.status, 401);
    assert.deepEqual(res.json, { ok: false, error: 'invalid_credentials', detail: 'Wrong password' });
  });

  test('invalid and malformed bodies answer 400 with zero upstream calls', async () => {
    for (const body of ['{"login":', '[]', '{"login":"a"}', '{"login":"a","password":"b","two_factor_code":"12"}', 'null']) {
      const res = await send(proxy.url, 'POST', '/api/auth/login', { body, headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 400, body);
      assert.equal((res.json as Record<string, unknown>).error, 'invalid_request');
    }
    const poisoned = await send(proxy.url, 'POST', '/api/auth/login', {
      body: '{"login":"a","password":"b","__proto__":{"polluted":1}}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(poisoned.status, 400);
    assert.equal(upstream.requests.length, 0);
  });
});

describe('docs/behaviour.md "CSRF defence"', () => {
  test('cross-site, foreign Origin and non-JSON bodies are refused before any upstream call', async () => {
    const json = { login: 'a@b.c', password: 'x' };
    const cross = await send(proxy.url, 'POST', '/api/auth/login', { json, headers: { 'sec-fetch-site': 'cross-site' } });
    assert.equal(cross.status, 403);
    assert.equal((cross.json as Record<string, unknown>).error, 'csrf_rejected');
    const foreign = await send(proxy.url, 'POST', '/api/auth/login', { json, headers: { origin: 'https://evil.example' } });
    assert.equal(foreign.status, 403);
    const form = await send(proxy.url, 'POST', '/api/auth/login', {
      body: 'login=a&password=b',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(form.status, 415);
    const plain = await send(proxy.url, 'POST', '/api/auth/login', {
      body: JSON.stringify(json),
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(plain.status, 415);
    assert.equal(upstream.requests.length, 0);
    upstream.on('POST', '/auth/login', { json: { type: 'two_factor_code' } });
    const sameOrigin = new URL(proxy.url);
    const allowed = await send(proxy.url, 'POST', '/api/auth/login', {
      json,
      headers: { origin: `https://${sameOrigin.host}`, 'sec-fetch-site': 'same-origin' },
    });
    assert.equal(allowed.status, 200);
  });
});

describe('spec 4.1 /api/auth/profile and the profile cache (spec 8)', () => {
  test('no cookie → 401 { reason: no_token } without calling upstream (spec 5.2)', async () => {
    const res = await send(proxy.url, 'GET', '/api/auth/profile');
    assert.equal(res.status, 401);
    assert.equal(res.text, '{"reason":"no_token"}');
    assert.equal(upstream.requests.length, 0);
  });

  test('20 concurrent reads with one token → one upstream call; two tokens → two', async () => {
    upstream.on('GET', '/auth/user-profile', { json: { user: USER, userInfo: USER_INFO }, delayMs: 50 });
    const a = fakeJwt({ sub: 'a' });
    const b = fakeJwt({ sub: 'b' });
    const one = await Promise.all(Array.from({ length: 20 }, () => send(proxy.url, 'GET', '/api/auth/profile', { token: a })));
    assert.ok(one.every((r) => r.status === 200));
    assert.equal(upstream.requests.length, 1);
    upstream.reset();
    upstream.on('GET', '/auth/user-profile', { json: { user: USER, userInfo: USER_INFO }, delayMs: 50 });
    const c = fakeJwt({ sub: 'c' });
    const two = await Promise.all(
      Array.from({ length: 20 }, (_, i) => send(proxy.url, 'GET', '/api/auth/profile', { token: i % 2 ? b : c })),
    );
    assert.ok(two.every((r) => r.status === 200));
    assert.equal(upstream.requests.length, 2);
    const auths = upstream.requests.map((r) => r.headers.authorization).sort();
    assert.deepEqual(auths, [`Bearer ${b}`, `Bearer ${c}`].sort());
  });

  test('a 401 passes through byte for byte and is never cached; logout evicts', async () => {
    const raw = '{"reason":"token_expired","message":"Token has expired"}';
    upstream.on('GET', '/auth/user-profile', { status: 401, text: raw, headers: { 'content-type': 'application/json' } });
    const token = fakeJwt();
    const first = await send(proxy.url, 'GET', '/api/auth/profile', { token });
    assert.equal(first.status, 401);
    assert.equal(first.text, raw);
    await send(proxy.url, 'GET', '/api/auth/profile', { token });
    assert.equal(upstream.requests.length, 2, 'a 401 is never cached');

    upstream.reset();
    upstream.on('GET', '/auth/user-profile', { json: { user: USER, userInfo: USER_INFO } });
    await send(proxy.url, 'GET', '/api/auth/profile', { token });
    await send(proxy.url, 'GET', '/api/auth/profile', { token });
    assert.equal(upstream.requests.length, 1);
    const out = await send(proxy.url, 'POST', '/api/auth/logout', { token });
    assert.equal(out.status, 200);
    await send(proxy.url, 'GET', '/api/auth/profile', { token });
    assert.equal(upstream.requests.filter((r) => r.path === '/auth/user-profile').length, 2, 'logout evicted the entry');
  });

  test("a 401 from the BFF on another route evicts the token's cached profile: the next read asks the BFF", async () => {
    upstream.on('GET', '/auth/user-profile', { json: { user: USER, userInfo: USER_INFO } });
    upstream.on('GET', '/core-sportbook/events', {
      status: 401,
      text: '{"reason":"token_expired"}',
      headers: { 'content-type': 'application/json' },
    });
    const token = fakeJwt({ sub: 'refused' });
    await send(proxy.url, 'GET', '/api/auth/profile', { token });
    await send(proxy.url, 'GET', '/api/auth/profile', { token });
    assert.equal(upstream.requests.filter((r) => r.path === '/auth/user-profile').length, 1, 'the second read came from the cache');
    const refused = await send(proxy.url, 'GET', '/api/core-sportbook/events', { token });
    assert.equal(refused.status, 401);
    await send(proxy.url, 'GET', '/api/auth/profile', { token });
    assert.equal(upstream.requests.filter((r) => r.path === '/auth/user-profile').length, 2, 'the refusal evicted the entry');
  });

  for (const status of [500, 502, 503, 409, 429, 404]) {
    test(`upstream ${status} → envelope with status ${status} (spec 7.4.1)`, async () => {
      upstream.on('GET', '/auth/user-profile', { status, json: { message: 'boom at http://10.0.0.5:8080/x' } });
      const res = await send(proxy.url, 'GET', '/api/auth/profile', { token: fakeJwt() });
      assert.equal(res.status, status);
      const body = res.json as Record<string, unknown>;
      assert.equal(body.ok, false);
      assert.equal(typeof body.error, 'string');
      assert.ok(!String(body.detail).includes('10.0.0.5'), 'no upstream address in an error body');
    });
  }

  test('timeout → 504 upstream_timeout, reset → 502 upstream_unavailable, and the proxy stays healthy', async () => {
    upstream.on('GET', '/auth/user-profile', { json: {}, delayMs: 4000 });
    const slow = await send(proxy.url, 'GET', '/api/auth/profile', { token: fakeJwt() });
    assert.equal(slow.status, 504);
    assert.equal((slow.json as Record<string, unknown>).error, 'upstream_timeout');
    upstream.on('GET', '/auth/user-profile', (_req, res) => res.socket?.destroy());
    const reset = await send(proxy.url, 'GET', '/api/auth/profile', { token: fakeJwt() });
    assert.equal(reset.status, 502);
    assert.equal((reset.json as Record<string, unknown>).error, 'upstream_unavailable');
    const health = await send(proxy.url, 'GET', '/healthz');
    assert.equal(health.status, 200);
  });
});

describe('spec 4.1 logout, refresh', () => {
  test('logout always answers 200 and clears the cookie, even when upstream fails or no cookie was sent', async () => {
    upstream.on('POST', '/auth/logout', (_req, res) => res.socket?.destroy());
    for (const token of [fakeJwt(), undefined]) {
      const res = await send(proxy.url, 'POST', '/api/auth/logout', { token });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('set-cookie') ?? '', /^access_token=; Max-Age=0; Path=\/; HttpOnly; SameSite=Lax$/);
    }
    assert.equal(upstream.requests.length, 1, 'no upstream call without a session');
  });

  test('concurrent refreshes with one token share one upstream call; each gets the new cookie', async () => {
    const fresh = fakeJwt({ sub: 'fresh' });
    upstream.on('POST', '/users/refresh-token', { json: { access_token: fresh }, delayMs: 50 });
    const old = fakeJwt();
    const results = await Promise.all(Array.from({ length: 5 }, () => send(proxy.url, 'POST', '/api/auth/refresh', { token: old })));
    assert.equal(upstream.requests.length, 1);
    for (const r of results) {
      assert.equal(r.status, 200);
      assert.deepEqual(r.json, { ok: true });
      assert.ok((r.headers.get('set-cookie') ?? '').startsWith(`access_token=${fresh};`));
    }
    assert.equal(upstream.requests[0]?.headers.authorization, `Bearer ${old}`);
  });
});

describe('spec 6 forced-logout beacon', () => {
  const beacon = {
    ref: 'EP0003-EM0003',
    endpointCode: 'EP0003',
    errorCode: 'EM0003',
    status: 401,
    reason: 'token_expired',
    url: '/api/auth/profile',
    initiator: 'fetch-interceptor',
    pathname: '/casino',
    timestamp: 1_790_000_000_000,
    hadCookie: true,
    userAgentShort: 'Chrome 156',
  };
  test('validated, logged at warn as forced-logout when sampled in, nothing upstream', async () => {
    const before = proxy.logs.lines.length;
    randomValue = 0.2;
    const logged = await send(proxy.url, 'POST', '/api/logs/auth-logout', { json: beacon });
    randomValue = 0.7;
    const skipped = await send(proxy.url, 'POST', '/api/logs/auth-logout', { json: beacon });
    assert.equal(logged.status, 204);
    assert.equal(skipped.status, 204);
    const entries = proxy.logs.entries.slice(before).filter((e) => e.msg === 'forced-logout');
    assert.equal(entries.length, 1);
    assert.equal(entries[0]?.level, 'warn');
    assert.equal((entries[0]?.beacon as Record<string, unknown> | undefined)?.ref, 'EP0003-EM0003');
    const bad = await send(proxy.url, 'POST', '/api/logs/auth-logout', { json: { ...beacon, ref: 'nope' } });
    assert.equal(bad.status, 400);
    assert.equal(upstream.requests.length, 0);
  });
});
