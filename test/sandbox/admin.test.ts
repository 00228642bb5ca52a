// Sandbox plumbing: URLs, health, request log, fail-next, admin session control, extension points.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import {
  DEMO_LOGINS,
  defineAreaState,
  defineUserState,
  type RecordedRequest,
  requireUser,
  type SandboxArea,
  type SandboxHandle,
  startSandbox,
  withUser,
} from '../../src/sandbox/index.js';

interface Counter {
  hits: number;
}
const counterState = defineUserState<Counter>('counter', (user) => ({ hits: user.id === 1001 ? 100 : 0 }));
const globalHits = defineAreaState('counter', () => ({ total: 0 }));

const counterArea: SandboxArea = {
  name: 'counter',
  register(app, ctx) {
    app.post(
      '/test/counter',
      withUser(async (_request, _reply, user) => {
        const state = ctx.store.userState(counterState, user);
        state.hits += 1;
        ctx.store.areaState(globalHits).total += 1;
        return { hits: state.hits, total: ctx.store.areaState(globalHits).total };
      }),
    );
    app.get('/test/me', async (request, reply) => {
      const user = await requireUser(request, reply);
      if (!user) return reply;
      return { id: user.id, seeded: user.areas.counter ?? null };
    });
  },
};

const referralArea: SandboxArea = {
  name: 'referral-v2-test',
  prefix: '/referral-v2',
  register(app) {
    app.get('/echo-user/:userId', async (request) => ({ userId: (request.params as { userId: string }).userId }));
  },
};

let sandbox: SandboxHandle;
const logLines: string[] = [];

before(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      logLines.push(chunk.toString('utf8'));
      callback();
    },
  });
  sandbox = await startSandbox({
    logger: pino({ level: 'info' }, sink),
    areas: { bff: [counterArea], external: [referralArea] },
    seed: { users: [{ email: 'extra@example.com', password: 'Extra#2026', country: 'MX', areas: { counter: 'seeded' } }] },
  });
});
after(async () => {
  await sandbox.close();
});

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return json(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

async function requests(base: string, query = ''): Promise<RecordedRequest[]> {
  return (await json(`${base}/__sandbox/requests${query}`)).body.requests as RecordedRequest[];
}

test('handle: URLs of the three servers and the configuration names', async () => {
  assert.match(sandbox.bffUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.match(sandbox.stickerApiUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(sandbox.referralV1ApiUrl, `${sandbox.externalUrl}/referral-v1`);
  assert.equal(sandbox.referralV2ApiUrl, `${sandbox.externalUrl}/referral-v2`);
  assert.equal(sandbox.ftdCashbackVerifyUrl, `${sandbox.externalUrl}/ftd-cashback/verify`);
  assert.equal(sandbox.ftdCashbackSendUrl, `${sandbox.externalUrl}/ftd-cashback/send`);
  assert.equal(sandbox.attributionS2sUrl, `${sandbox.externalUrl}/attribution/s2s`);
  assert.equal(sandbox.cachePurgeUrl, `${sandbox.externalUrl}/cache/purge`);
  assert.equal(sandbox.env.BFF_BASE_URL, sandbox.bffUrl);
  assert.equal(sandbox.env.CACHE_PURGE_URL, sandbox.cachePurgeUrl);
  assert.equal(new Set([sandbox.bffUrl, sandbox.stickerApiUrl, sandbox.externalUrl]).size, 3);
  for (const [base, server] of [
    [sandbox.bffUrl, 'bff'],
    [sandbox.stickerApiUrl, 'sticker'],
    [sandbox.externalUrl, 'external'],
  ] as const) {
    assert.deepEqual((await json(`${base}/__sandbox/health`)).body, { ok: true, server });
  }
  const stats = await json(`${sandbox.referralV2ApiUrl}/echo-user/1001`);
  assert.deepEqual(stats.body, { userId: '1001' });
});

test('the log prints the demo logins at start', () => {
  const text = logLines.join('');
  for (const demo of DEMO_LOGINS) assert.ok(text.includes(demo.login) && text.includes(demo.password), demo.login);
  assert.ok(text.includes(sandbox.bffUrl));
});

test('request log: cookie, redacted authorization, token user, body, status', async () => {
  const token = await sandbox.tokenFor('demo@example.com');
  const { lastSeq } = (await json(`${sandbox.bffUrl}/__sandbox/requests`)).body as { lastSeq: number };
  await json(`${sandbox.bffUrl}/auth/user-profile?check_spa_again=1`, {
    headers: { authorization: `Bearer ${token}`, cookie: 'access_token=abc; _ga=GA1.2.3.4' },
  });
  await post(`${sandbox.bffUrl}/auth/login`, { login: 'demo@example.com', password: 'Demo#2026' });
  await json(`${sandbox.bffUrl}/auth/logout`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'a=1&b=two',
  });

  const seen = await requests(sandbox.bffUrl, `?since=${lastSeq}`);
  assert.deepEqual(
    seen.map((r) => [r.method, r.url, r.status]),
    [
      ['GET', '/auth/user-profile?check_spa_again=1', 200],
      ['POST', '/auth/login', 200],
      ['POST', '/auth/logout', 401],
    ],
  );
  const [profile, login, logout] = seen as [RecordedRequest, RecordedRequest, RecordedRequest];
  assert.equal(profile.path, '/auth/user-profile');
  assert.equal(profile.authorization, true);
  assert.equal(profile.headers.authorization, 'Bearer [redacted]');
  assert.equal(profile.tokenUserId, 1001);
  assert.equal(typeof profile.tokenSessionId, 'string');
  assert.equal(profile.cookie, 'access_token=abc; _ga=GA1.2.3.4');
  assert.ok(!JSON.stringify(seen).includes(token), 'the token never appears in the log');
  assert.equal(login.authorization, false);
  assert.equal(login.cookie, null);
  assert.deepEqual(login.body, { login: 'demo@example.com', password: 'Demo#2026' });
  assert.deepEqual(logout.body, { a: '1', b: 'two' });

  const filtered = await requests(sandbox.bffUrl, `?since=${lastSeq}&path=/auth/*&method=post`);
  assert.equal(filtered.length, 2);
  assert.ok(sandbox.store.traffic.bff.last({ path: '/auth/user-profile' })?.cookie?.includes('_ga='));
  assert.ok(
    seen.every((r) => !r.path.startsWith('/__sandbox')),
    'admin calls are not recorded',
  );
});

test('request log keeps the last 200 and can be cleared', async () => {
  await Promise.all(Array.from({ length: 210 }, (_, i) => fetch(`${sandbox.stickerApiUrl}/ring/${i}`).then((r) => r.text())));
  const seen = await requests(sandbox.stickerApiUrl);
  assert.equal(seen.length, 200);
  assert.ok(seen.every((r) => r.server === 'sticker' && r.status === 404));
  const del = await json(`${sandbox.stickerApiUrl}/__sandbox/requests`, { method: 'DELETE' });
  assert.equal(del.status, 200);
  assert.equal((await requests(sandbox.stickerApiUrl)).length, 0);
});

test('fail-next: a 401 family once, then the real answer', async () => {
  const token = await sandbox.tokenFor('demo@example.com');
  const rule = await post(`${sandbox.bffUrl}/__sandbox/fail-next`, {
    path: '/auth/user-profile',
    status: 401,
    body: { reason: 'ip_changed' },
  });
  assert.equal(rule.status, 201);
  const auth = { headers: { authorization: `Bearer ${token}` } };
  const failed = await json(`${sandbox.bffUrl}/auth/user-profile?check_spa_again=1`, auth);
  assert.equal(failed.status, 401);
  assert.deepEqual(failed.body, { reason: 'ip_changed' });
  assert.equal(sandbox.store.traffic.bff.last()?.injected, true);
  assert.equal((await json(`${sandbox.bffUrl}/auth/user-profile`, auth)).status, 200);
});

test('fail-next: raw body, content type, headers, method, times, unknown routes, prefixes', async () => {
  await post(`${sandbox.bffUrl}/__sandbox/fail-next`, [
    { method: 'GET', path: '/users/wallet', status: 401, rawBody: 'Wrong auth refresh!', times: 2 },
    { path: '/bff/users/*', status: 503, rawBody: '<html>down</html>', contentType: 'text/html', headers: { 'retry-after': '5' } },
  ]);
  const listed = await json(`${sandbox.bffUrl}/__sandbox/fail-next`);
  assert.equal((listed.body.rules as unknown[]).length, 2);

  const post1 = await fetch(`${sandbox.bffUrl}/users/wallet`, { method: 'POST' });
  assert.equal(post1.status, 404, 'the method does not match');
  await post1.text();
  for (let i = 0; i < 2; i++) {
    const response = await fetch(`${sandbox.bffUrl}/users/wallet`);
    assert.equal(response.status, 401);
    assert.equal(await response.text(), 'Wrong auth refresh!');
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
  }
  const third = await json(`${sandbox.bffUrl}/users/wallet`);
  assert.equal(third.status, 401, 'the real answer once the rule is used up');
  assert.equal(third.body.reason, 'no_token');

  const html = await fetch(`${sandbox.bffUrl}/bff/users/kyc/status?kyc_id=1`);
  assert.equal(html.status, 503);
  assert.equal(html.headers.get('content-type'), 'text/html');
  assert.equal(html.headers.get('retry-after'), '5');
  assert.equal(await html.text(), '<html>down</html>');
  assert.deepEqual((await json(`${sandbox.bffUrl}/__sandbox/fail-next`)).body, { rules: [] });
});

test('fail-next: delay, connection reset, clearing, invalid rules, other servers', async () => {
  await post(`${sandbox.bffUrl}/__sandbox/fail-next`, { path: '/auth/login', status: 200, body: { slow: true }, delayMs: 120 });
  const started = Date.now();
  const slow = await post(`${sandbox.bffUrl}/auth/login`, {});
  assert.ok(Date.now() - started >= 100);
  assert.deepEqual(slow.body, { slow: true });

  await post(`${sandbox.bffUrl}/__sandbox/fail-next`, { path: '/auth/login', action: 'reset' });
  await assert.rejects(fetch(`${sandbox.bffUrl}/auth/login`, { method: 'POST' }));

  await post(`${sandbox.bffUrl}/__sandbox/fail-next`, { path: '/auth/login', status: 500, times: 5 });
  await json(`${sandbox.bffUrl}/__sandbox/fail-next`, { method: 'DELETE' });
  assert.equal((await post(`${sandbox.bffUrl}/auth/login`, {})).status, 422);

  const invalid = await post(`${sandbox.bffUrl}/__sandbox/fail-next`, { path: 'auth/login', status: 401 });
  assert.equal(invalid.status, 400);
  assert.equal(invalid.body.reason, 'invalid_rule');
  assert.equal((await post(`${sandbox.bffUrl}/__sandbox/fail-next`, { path: '/x', status: 42 })).status, 400);

  await post(`${sandbox.externalUrl}/__sandbox/fail-next`, { path: '/ftd-cashback/verify', status: 429, body: { error: 'rate' } });
  const limited = await post(sandbox.ftdCashbackVerifyUrl, { user_id: 1 });
  assert.equal(limited.status, 429);
  assert.deepEqual(limited.body, { error: 'rate' });
  await post(`${sandbox.stickerApiUrl}/__sandbox/fail-next`, {
    method: 'POST',
    path: '/auth/token',
    status: 401,
    body: { reason: 'no_token' },
  });
  assert.equal((await post(`${sandbox.stickerApiUrl}/auth/token`, {})).status, 401);
});

test('admin: expire all sessions of a user by e-mail, users and tokens', async () => {
  const token = await sandbox.tokenFor('52998224725');
  const auth = { headers: { authorization: `Bearer ${token}` } };
  assert.equal((await json(`${sandbox.bffUrl}/auth/user-profile`, auth)).status, 200);
  const expired = await post(`${sandbox.bffUrl}/__sandbox/sessions/expire`, { email: 'demo@example.com' });
  assert.equal(expired.status, 200);
  assert.equal((await json(`${sandbox.bffUrl}/auth/user-profile`, auth)).body.reason, 'token_expired');
  const noTarget = await json(`${sandbox.bffUrl}/__sandbox/sessions/expire`, { method: 'POST' });
  assert.equal(noTarget.status, 400);

  const minted = await post(`${sandbox.bffUrl}/__sandbox/tokens`, { login: '2fa@example.com' });
  assert.equal(minted.body.token_type, 'bearer');
  const profile = await json(`${sandbox.bffUrl}/auth/user-profile`, {
    headers: { authorization: `Bearer ${minted.body.access_token as string}` },
  });
  assert.equal((profile.body.user as { id: number }).id, 1002);

  const list = await json(`${sandbox.bffUrl}/__sandbox/users`);
  const emails = (list.body.users as Array<{ email: string }>).map((u) => u.email);
  assert.deepEqual(emails, ['demo@example.com', '2fa@example.com', 'cancelled@example.com', 'extra@example.com']);
  const one = await json(`${sandbox.bffUrl}/__sandbox/users?login=extra@example.com`);
  assert.equal((one.body.user as { currency: string }).currency, 'MXN');
});

test('extension points: extra areas, per-user and area state, seeded area data, reset', async () => {
  const demo = { authorization: `Bearer ${await sandbox.tokenFor('demo@example.com')}` };
  const extra = { authorization: `Bearer ${await sandbox.tokenFor('extra@example.com')}` };
  assert.equal((await json(`${sandbox.bffUrl}/test/counter`, { method: 'POST' })).body.reason, 'no_token');
  assert.deepEqual((await json(`${sandbox.bffUrl}/test/counter`, { method: 'POST', headers: demo })).body, { hits: 101, total: 1 });
  assert.deepEqual((await json(`${sandbox.bffUrl}/test/counter`, { method: 'POST', headers: extra })).body, { hits: 1, total: 2 });
  assert.deepEqual((await json(`${sandbox.bffUrl}/test/me`, { headers: extra })).body, { id: 2001, seeded: 'seeded' });
  assert.equal((await json(`${sandbox.bffUrl}/test/me`)).status, 401);
  const dump = await json(`${sandbox.bffUrl}/__sandbox/users?login=demo@example.com`);
  assert.deepEqual(dump.body.state, { counter: { hits: 101 } });

  await post(`${sandbox.bffUrl}/__sandbox/fail-next`, { path: '/auth/login', status: 500 });
  assert.equal((await json(`${sandbox.bffUrl}/__sandbox/reset`, { method: 'POST' })).status, 200);
  assert.equal(sandbox.store.traffic.bff.rules.length, 0);
  assert.equal(sandbox.store.traffic.bff.list().length, 0);
  const again = { authorization: `Bearer ${await sandbox.tokenFor('demo@example.com')}` };
  assert.deepEqual((await json(`${sandbox.bffUrl}/test/counter`, { method: 'POST', headers: again })).body, { hits: 101, total: 1 });
});

test('bad bodies and unknown routes answer BFF-style errors', async () => {
  const malformed = await json(`${sandbox.bffUrl}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"login":',
  });
  assert.equal(malformed.status, 400);
  assert.equal(malformed.body.reason, 'invalid_json');
  const missing = await json(`${sandbox.bffUrl}/nowhere`);
  assert.deepEqual(missing.body, { message: 'Route GET /nowhere not found', reason: 'not_found' });
});

test('close() is idempotent and frees the ports', async () => {
  const other = await startSandbox();
  await Promise.all([other.close(), other.close()]);
  await assert.rejects(fetch(`${other.bffUrl}/__sandbox/health`));
});
