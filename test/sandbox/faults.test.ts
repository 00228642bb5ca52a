// Sandbox fault rules over real sockets: slow, hung and failing endpoints until removed, their
// release (rule removed, reset, client gone, server closed) and their bounds.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type FaultRule, type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';

let sandbox: SandboxHandle;

before(async () => {
  sandbox = await startSandbox();
});
after(async () => {
  await sandbox?.close();
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function json(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

function post(url: string, body: unknown): Promise<Answer> {
  return json(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

async function listFaults(base: string): Promise<{ rules: FaultRule[]; held: number; limits: Record<string, number> }> {
  return (await json(`${base}/__sandbox/faults`)).body as never;
}

/** Polls until `check` holds (every 10 ms, at most `ms`). */
async function waitFor(check: () => Promise<boolean> | boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Whether a promise is still pending after `ms`. */
async function stillPending(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const pending = Symbol('pending');
  const winner = await Promise.race([
    promise.then(
      () => 'settled',
      () => 'settled',
    ),
    new Promise((r) => setTimeout(() => r(pending), ms)),
  ]);
  return winner === pending;
}

test('slow: the real answer, about delayMs late, until the rule is removed; other paths unaffected', async () => {
  const set = await post(`${sandbox.bffUrl}/__sandbox/faults`, { method: 'post', path: '/auth/login', delayMs: 300 });
  assert.equal(set.status, 201);
  const [rule] = set.body.rules as FaultRule[];
  assert.equal(rule?.kind, 'slow');
  assert.equal(rule?.method, 'POST');

  for (let i = 0; i < 2; i++) {
    const started = Date.now();
    const answer = await post(`${sandbox.bffUrl}/auth/login`, {});
    assert.ok(Date.now() - started >= 280, `answered after ${Date.now() - started} ms`);
    assert.equal(answer.status, 422, 'the real answer');
  }
  const seen = sandbox.store.traffic.bff.last({ path: '/auth/login' });
  assert.equal(seen?.fault, 'slow');
  assert.equal(seen?.injected, false);
  assert.equal((await listFaults(sandbox.bffUrl)).rules[0]?.hits, 2, 'the rule stays and counts its hits');

  // A longer delay (the same method and path replace the rule): other methods and paths answer
  // while a login waits, and removing the rule answers the waiting login at once.
  await post(`${sandbox.bffUrl}/__sandbox/faults`, { method: 'POST', path: '/auth/login', delayMs: 60_000 });
  const waiting = post(`${sandbox.bffUrl}/auth/login`, {});
  await waitFor(async () => (await listFaults(sandbox.bffUrl)).held === 1);
  assert.equal((await json(`${sandbox.bffUrl}/auth/user-profile`)).status, 401);
  assert.equal((await json(`${sandbox.bffUrl}/auth/login`)).status, 404, 'GET is not delayed');
  assert.equal(await stillPending(waiting, 0), true, 'the slow login is still waiting');
  const removed = await json(`${sandbox.bffUrl}/__sandbox/faults?path=/auth/login`, { method: 'DELETE' });
  assert.deepEqual(removed.body, { ok: true, removed: 1, released: 1 });
  assert.equal((await waiting).status, 422, 'released with the real answer');
  assert.equal(sandbox.store.faults.bff.list().length, 0);
  assert.equal(sandbox.store.faults.bff.heldCount, 0);
});

test('hang: no answer until the client aborts; then nothing stays held', async () => {
  await post(`${sandbox.bffUrl}/__sandbox/faults`, { method: 'GET', path: '/users/*', hang: true });
  const controller = new AbortController();
  const hung = fetch(`${sandbox.bffUrl}/users/wallet`, { signal: controller.signal });
  hung.catch(() => undefined);
  await waitFor(async () => (await listFaults(sandbox.bffUrl)).held === 1);
  assert.equal(await stillPending(hung, 300), true, 'no answer while the rule stands');
  assert.equal(sandbox.store.traffic.bff.last({ path: '/users/wallet' })?.status, null);

  controller.abort();
  await assert.rejects(hung, { name: 'AbortError' });
  await waitFor(() => sandbox.store.faults.bff.heldCount === 0);
  const [rule] = (await listFaults(sandbox.bffUrl)).rules;
  assert.deepEqual([rule?.kind, rule?.hits, rule?.held], ['hang', 1, 0]);
  await json(`${sandbox.bffUrl}/__sandbox/faults`, { method: 'DELETE' });
});

test('hang: removing the rule releases every hung request with its real answer', async () => {
  await post(`${sandbox.bffUrl}/__sandbox/faults`, { path: '/users/wallet', hang: true });
  const hung = Array.from({ length: 5 }, () => json(`${sandbox.bffUrl}/users/wallet`));
  await waitFor(async () => (await listFaults(sandbox.bffUrl)).held === 5);
  // The admin API and other paths still answer while the endpoint hangs.
  assert.equal((await json(`${sandbox.bffUrl}/auth/user-profile`)).status, 401);

  const removed = await json(`${sandbox.bffUrl}/__sandbox/faults?path=/users/wallet`, { method: 'DELETE' });
  assert.deepEqual(removed.body, { ok: true, removed: 1, released: 5 });
  for (const answer of await Promise.all(hung)) {
    assert.equal(answer.status, 401);
    assert.equal(answer.body.reason, 'no_token', 'the real answer');
  }
  assert.equal(sandbox.store.faults.bff.heldCount, 0);
});

test('hang: close() destroys the hung connections and finishes promptly', async () => {
  const other = await startSandbox();
  let closed = false;
  try {
    await post(`${other.bffUrl}/__sandbox/faults`, { path: '/*', hang: true });
    assert.deepEqual((await json(`${other.bffUrl}/__sandbox/health`)).body, { ok: true, server: 'bff' }, 'admin routes never hang');
    const hung = Array.from({ length: 3 }, () => fetch(`${other.bffUrl}/casino-games/list/base`));
    for (const request of hung) request.catch(() => undefined);
    await waitFor(() => other.store.faults.bff.heldCount === 3);
    const started = Date.now();
    await other.close();
    closed = true;
    assert.ok(Date.now() - started < 5000, `close() took ${Date.now() - started} ms`);
    for (const request of hung) await assert.rejects(request);
    assert.equal(other.store.faults.bff.heldCount, 0);
  } finally {
    if (!closed) await other.close();
  }
});

test('fail: a status until removed, with a body, headers and an optional delay', async () => {
  const set = await post(`${sandbox.bffUrl}/__sandbox/faults`, [
    { path: '/auth/user-profile', status: 503, body: { message: 'down' }, headers: { 'retry-after': '3' } },
    { method: 'POST', path: '/auth/login', status: 504, rawBody: 'gateway', delayMs: 150 },
  ]);
  assert.equal(set.status, 201);
  assert.deepEqual(
    (set.body.rules as FaultRule[]).map((r) => r.kind),
    ['fail', 'fail'],
  );
  for (let i = 0; i < 3; i++) {
    const response = await fetch(`${sandbox.bffUrl}/auth/user-profile`);
    assert.equal(response.status, 503);
    assert.equal(response.headers.get('retry-after'), '3');
    assert.deepEqual(await response.json(), { message: 'down' });
  }
  const seen = sandbox.store.traffic.bff.last({ path: '/auth/user-profile' });
  assert.deepEqual([seen?.fault, seen?.injected, seen?.status], ['fail', true, 503]);
  const started = Date.now();
  const late = await fetch(`${sandbox.bffUrl}/auth/login`, { method: 'POST' });
  assert.ok(Date.now() - started >= 130);
  assert.equal(late.status, 504);
  assert.equal(await late.text(), 'gateway');
  await json(`${sandbox.bffUrl}/__sandbox/faults`, { method: 'DELETE' });
  assert.equal((await json(`${sandbox.bffUrl}/auth/user-profile`)).status, 401, 'the real answer again');
});

test('a fail-next rule is served first; fault rules work on every server', async () => {
  await post(`${sandbox.bffUrl}/__sandbox/faults`, { path: '/auth/user-profile', status: 503 });
  await post(`${sandbox.bffUrl}/__sandbox/fail-next`, { path: '/auth/user-profile', status: 401, body: { reason: 'ip_changed' } });
  assert.equal((await json(`${sandbox.bffUrl}/auth/user-profile`)).body.reason, 'ip_changed');
  assert.equal((await json(`${sandbox.bffUrl}/auth/user-profile`)).status, 503);
  await json(`${sandbox.bffUrl}/__sandbox/faults`, { method: 'DELETE' });

  await post(`${sandbox.externalUrl}/__sandbox/faults`, { path: '/ftd-cashback/verify', status: 502 });
  assert.equal((await post(sandbox.ftdCashbackVerifyUrl, { user_id: 1 })).status, 502);
  assert.equal((await listFaults(sandbox.bffUrl)).rules.length, 0, 'rules belong to one server');
  await json(`${sandbox.externalUrl}/__sandbox/faults`, { method: 'DELETE' });
});

test('list, replace and delete by path and method', async () => {
  await post(`${sandbox.bffUrl}/__sandbox/faults`, [
    { path: '/a', delayMs: 10 },
    { method: 'GET', path: '/b', hang: true },
    { method: 'POST', path: '/b', status: 500 },
    { path: '/c/*', status: 503 },
  ]);
  const first = await listFaults(sandbox.bffUrl);
  assert.deepEqual(
    first.rules.map((r) => [r.method ?? '*', r.path, r.kind]),
    [
      ['*', '/a', 'slow'],
      ['GET', '/b', 'hang'],
      ['POST', '/b', 'fail'],
      ['*', '/c/*', 'fail'],
    ],
  );
  assert.deepEqual(first.limits, { maxRules: 50, maxDelayMs: 120_000, maxHeldRequests: 1000, maxBodyChars: 65_536 });

  // The same method and path replace the standing rule (a new id, at the end).
  const replaced = await post(`${sandbox.bffUrl}/__sandbox/faults`, { path: '/a', hang: true });
  const { rules } = await listFaults(sandbox.bffUrl);
  assert.equal(rules.length, 4);
  assert.deepEqual([rules.at(-1)?.path, rules.at(-1)?.kind, rules.at(-1)?.id], ['/a', 'hang', (replaced.body.rules as FaultRule[])[0]?.id]);

  assert.deepEqual((await json(`${sandbox.bffUrl}/__sandbox/faults?path=/b&method=post`, { method: 'DELETE' })).body, {
    ok: true,
    removed: 1,
    released: 0,
  });
  assert.deepEqual((await json(`${sandbox.bffUrl}/__sandbox/faults?path=/c/*`, { method: 'DELETE' })).body.removed, 1);
  assert.deepEqual(
    (await listFaults(sandbox.bffUrl)).rules.map((r) => r.path),
    ['/b', '/a'],
  );
  assert.deepEqual((await json(`${sandbox.bffUrl}/__sandbox/faults?path=/nothing`, { method: 'DELETE' })).body.removed, 0);
  assert.deepEqual((await json(`${sandbox.bffUrl}/__sandbox/faults`, { method: 'DELETE' })).body, { ok: true, removed: 2, released: 0 });
  assert.deepEqual((await listFaults(sandbox.bffUrl)).rules, []);
});

test('reset drops the rules and releases the held requests', async () => {
  await post(`${sandbox.bffUrl}/__sandbox/faults`, [
    { path: '/users/wallet', hang: true },
    { path: '/auth/user-profile', status: 503 },
  ]);
  const hung = json(`${sandbox.bffUrl}/users/wallet`);
  await waitFor(() => sandbox.store.faults.bff.heldCount === 1);
  assert.equal((await post(`${sandbox.bffUrl}/__sandbox/reset`, {})).status, 200);
  assert.equal((await hung).status, 401, 'released with its real answer');
  assert.deepEqual((await listFaults(sandbox.bffUrl)).rules, []);
  assert.equal((await json(`${sandbox.bffUrl}/auth/user-profile`)).status, 401);
});

test('invalid rules answer 400 invalid_rule and add nothing', async () => {
  const cases: unknown[] = [
    { path: '/x', delayMs: 120_001 },
    { path: '/x', delayMs: -1 },
    { path: '/x', delayMs: 1.5 },
    { path: '/x' },
    { path: '/x', hang: true, delayMs: 10 },
    { path: '/x', hang: true, status: 503 },
    { path: '/x', hang: 'yes' },
    { path: '/x', delay: 100 },
    { path: 'x', hang: true },
    { path: '/x', status: 42 },
    { path: '/x', delayMs: 10, body: { a: 1 } },
    { path: '/x', status: 503, rawBody: 'x'.repeat(65_537) },
    [{ path: '/ok', hang: true }, { path: '/x' }],
    [],
    'hang',
  ];
  for (const body of cases) {
    const answer = await post(`${sandbox.bffUrl}/__sandbox/faults`, body);
    assert.equal(answer.status, 400, JSON.stringify(body).slice(0, 80));
    assert.equal(answer.body.reason, 'invalid_rule');
  }
  assert.equal((await post(`${sandbox.bffUrl}/__sandbox/faults`, { path: '/x', delayMs: 120_000 })).status, 201, 'the longest delay');
  assert.equal((await listFaults(sandbox.bffUrl)).rules.length, 1);
  await json(`${sandbox.bffUrl}/__sandbox/faults`, { method: 'DELETE' });
});

test('caps: rules per server (400 too_many_rules, all or none) and held requests (connection destroyed)', async () => {
  const small = await startSandbox({ faultLimits: { maxRules: 3, maxHeldRequests: 2 } });
  try {
    const url = `${small.bffUrl}/__sandbox/faults`;
    assert.equal(
      (
        await post(url, [
          { path: '/1', hang: true },
          { path: '/2', hang: true },
        ])
      ).status,
      201,
    );
    const over = await post(url, [
      { path: '/3', hang: true },
      { path: '/4', hang: true },
    ]);
    assert.equal(over.status, 400);
    assert.equal(over.body.reason, 'too_many_rules');
    assert.deepEqual(
      (await listFaults(small.bffUrl)).rules.map((r) => r.path),
      ['/1', '/2'],
      'none of them added',
    );
    assert.equal((await post(url, { path: '/1', delayMs: 5 })).status, 201, 'a replacement does not count twice');
    assert.equal((await post(url, { path: '/3', hang: true })).status, 201);
    assert.equal((await post(url, { path: '/4', hang: true })).status, 400);

    const held = [fetch(`${small.bffUrl}/3`), fetch(`${small.bffUrl}/3`)];
    for (const request of held) request.catch(() => undefined);
    await waitFor(() => small.store.faults.bff.heldCount === 2);
    await assert.rejects(fetch(`${small.bffUrl}/2`), 'the third held request is refused (connection destroyed)');
    assert.equal(small.store.faults.bff.heldCount, 2);
    const listed = await listFaults(small.bffUrl);
    assert.deepEqual([listed.held, listed.limits.maxHeldRequests], [2, 2]);

    // Releasing frees room: the next request is held again, then answered when its rule goes.
    await json(`${url}?path=/3`, { method: 'DELETE' });
    for (const request of held) assert.equal((await request).status, 404, 'released with the real answer');
    const next = fetch(`${small.bffUrl}/2`);
    await waitFor(() => small.store.faults.bff.heldCount === 1);
    await json(url, { method: 'DELETE' });
    assert.equal((await next).status, 404);
  } finally {
    await small.close();
  }
});

test('answer: the real answer compressed without being asked, truncated or empty, until removed; the proxy decodes or refuses it', async () => {
  const { brotliDecompressSync, gunzipSync } = await import('node:zlib');
  const { startProxy } = await import('../helpers/recording-upstream.js');
  const bad = await post(`${sandbox.bffUrl}/__sandbox/faults`, { path: '/auth/user-profile', answer: 'zipped' });
  assert.equal(bad.status, 400);
  const noCoding = await post(`${sandbox.bffUrl}/__sandbox/faults`, { path: '/auth/user-profile', answer: 'empty', coding: 'br' });
  assert.equal(noCoding.status, 400);

  const login = await fetch(`${sandbox.bffUrl}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ login: 'demo@example.com', password: 'Demo#2026' }),
  });
  const { access_token: token } = (await login.json()) as { access_token: string };
  const profile = (headers: Record<string, string> = {}) =>
    fetch(`${sandbox.bffUrl}/auth/user-profile`, {
      headers: { authorization: `Bearer ${token}`, 'accept-encoding': 'identity', ...headers },
    });
  const real = Buffer.from(await (await profile()).arrayBuffer());

  for (const [coding, decode] of [
    ['br', brotliDecompressSync],
    ['gzip', gunzipSync],
  ] as const) {
    const set = await post(`${sandbox.bffUrl}/__sandbox/faults`, { path: '/auth/user-profile', answer: 'compressed', coding });
    assert.deepEqual(
      (set.body.rules as FaultRule[]).map((r) => r.kind),
      ['answer'],
    );
    // undici's fetch would decode it; a raw read shows the bytes as sent.
    const { request } = await import('undici');
    const raw = await request(`${sandbox.bffUrl}/auth/user-profile`, {
      headers: { authorization: `Bearer ${token}`, 'accept-encoding': 'identity' },
    });
    assert.equal(raw.headers['content-encoding'], coding);
    assert.deepEqual(decode(Buffer.from(await raw.body.arrayBuffer())), real);
  }
  await post(`${sandbox.bffUrl}/__sandbox/faults`, { path: '/auth/user-profile', answer: 'truncated' });
  const truncated = Buffer.from(await (await profile()).arrayBuffer());
  assert.deepEqual(truncated, real.subarray(0, Math.floor(real.length / 2)));
  await post(`${sandbox.bffUrl}/__sandbox/faults`, { path: '/auth/user-profile', answer: 'empty' });
  const empty = await profile();
  assert.equal(empty.status, 200);
  assert.equal((await empty.arrayBuffer()).byteLength, 0);
  const seen = sandbox.store.traffic.bff.last({ path: '/auth/user-profile' });
  assert.deepEqual([seen?.fault, seen?.injected], ['answer', true]);

  // Through the proxy (docs/behaviour.md "Upstream answers"): compressed is decoded; truncated and empty are 502.
  const proxy = await startProxy(sandbox.bffUrl);
  try {
    const ask = async () => {
      const answer = await fetch(`${proxy.url}/api/auth/profile?check_spa_again=1`, { headers: { cookie: `access_token=${token}` } });
      return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
    };
    await post(`${sandbox.bffUrl}/__sandbox/faults`, { path: '/auth/user-profile', answer: 'compressed', coding: 'br' });
    const decoded = await ask();
    assert.equal(decoded.status, 200);
    assert.deepEqual(decoded.body, JSON.parse(real.toString()));
    for (const answer of ['truncated', 'empty'] as const) {
      await post(`${sandbox.bffUrl}/__sandbox/faults`, { path: '/auth/user-profile', answer });
      const refused = await ask();
      assert.equal(refused.status, 502, answer);
      assert.equal(refused.body.error, 'upstream_bad_response', answer);
    }
  } finally {
    await proxy.close();
  }
  await json(`${sandbox.bffUrl}/__sandbox/faults`, { method: 'DELETE' });
  assert.deepEqual(Buffer.from(await (await profile()).arrayBuffer()), real, 'the real answer again');
});

test('drifted: the real JSON answer with one field renamed, dropped or of another type, until removed', async () => {
  for (const bad of [
    { path: '/auth/user-profile', answer: 'drifted' },
    { path: '/auth/user-profile', answer: 'drifted', field: 'user id' },
    { path: '/auth/user-profile', answer: 'drifted', field: 'user.id', drift: 'swap' },
    { path: '/auth/user-profile', answer: 'drifted', field: 'user.id', drift: 'drop', value: 1 },
    { path: '/auth/user-profile', answer: 'empty', field: 'user.id' },
  ]) {
    assert.equal((await post(`${sandbox.bffUrl}/__sandbox/faults`, bad)).status, 400, JSON.stringify(bad));
  }
  const login = await post(`${sandbox.bffUrl}/auth/login`, { login: 'demo@example.com', password: 'Demo#2026' });
  const token = login.body.access_token as string;
  const profile = async () =>
    (await json(`${sandbox.bffUrl}/auth/user-profile`, { headers: { authorization: `Bearer ${token}` } })).body as {
      user: Record<string, unknown>;
    };
  const real = await profile();
  assert.equal(typeof real.user.id, 'number');
  const cases: [rule: Record<string, unknown>, check: (user: Record<string, unknown>) => void][] = [
    [{}, (user) => assert.equal(user.id, String(real.user.id))],
    [{ drift: 'type', value: 'CANARY' }, (user) => assert.equal(user.id, 'CANARY')],
    [{ drift: 'rename' }, (user) => assert.deepEqual([user.id, user.id_renamed], [undefined, real.user.id])],
    [{ drift: 'drop' }, (user) => assert.deepEqual(['id' in user, Object.keys(user).length], [false, Object.keys(real.user).length - 1])],
  ];
  for (const [rule, check] of cases) {
    const set = await post(`${sandbox.bffUrl}/__sandbox/faults`, {
      path: '/auth/user-profile',
      answer: 'drifted',
      field: 'user.id',
      ...rule,
    });
    assert.equal(set.status, 201);
    const drifted = await profile();
    check(drifted.user);
    assert.equal(drifted.user.email, real.user.email, 'the other fields as they are');
  }
  await json(`${sandbox.bffUrl}/__sandbox/faults`, { method: 'DELETE' });
  assert.deepEqual(await profile(), real, 'the real answer again');
});

test('driftAnswer: each drift, through arrays, a missing path left alone', async () => {
  const { driftAnswer } = await import('../../src/sandbox/faults.js');
  const answer = {
    data: [
      { slug: 'a', n: 1 },
      { slug: 'b', n: 2 },
    ],
    user: { id: 7, ok: true },
  };
  const rows: [field: string, drift: 'type' | 'rename' | 'drop', value: unknown, want: unknown][] = [
    ['user.id', 'type', undefined, { ...answer, user: { id: '7', ok: true } }],
    ['user.ok', 'type', undefined, { ...answer, user: { id: 7, ok: 1 } }],
    ['user.id', 'type', null, { ...answer, user: { id: null, ok: true } }],
    ['user.id', 'rename', undefined, { ...answer, user: { ok: true, id_renamed: 7 } }],
    ['user.id', 'drop', undefined, { ...answer, user: { ok: true } }],
    [
      'data[].slug',
      'type',
      undefined,
      {
        ...answer,
        data: [
          { slug: 1, n: 1 },
          { slug: 1, n: 2 },
        ],
      },
    ],
    ['data[].n', 'drop', undefined, { ...answer, data: [{ slug: 'a' }, { slug: 'b' }] }],
    ['user.nope', 'drop', undefined, answer],
    ['nope.id', 'type', undefined, answer],
  ];
  for (const [field, drift, value, want] of rows) {
    assert.deepEqual(driftAnswer(answer, field, drift, value), want, `${field} ${drift}`);
  }
  assert.deepEqual(answer.user, { id: 7, ok: true }, 'the answer itself is not changed');
});
