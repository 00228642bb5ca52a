// docs/behaviour.md "Several instances" and "Money moves: exactly once": two proxy instances sharing a real
// redis-server, in front of one recording upstream, over real sockets.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { HAVE_REDIS, type RedisFleet, redisCli, startRedisFleet, type TestRedis } from './helpers/redis-server.js';
import { fakeJwt, type RecordingUpstream, send, type TestProxy } from './helpers/recording-upstream.js';

const USER_ID = 7;
const PROFILE = '/auth/user-profile';
const DEPOSIT = '/wallet/add-credit';
const WITHDRAW = '/new-withdraws';
const LIST = '/casino-games/list/';
const deposit = { userId: USER_ID, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' };
const withdraw = { amount: 2500, method: 'pix', pix_key: 'user@example.com', pix_key_type: 'email' };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const count = (upstream: RecordingUpstream, method: string, path: string) =>
  upstream.requests.filter((r) => r.method === method && r.path === path).length;

/** Polls `check` every 25 ms until it holds, for at most `limitMs`; resolves to the time it took. */
async function within(limitMs: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > limitMs) throw new Error(`not within ${limitMs} ms`);
    await sleep(25);
  }
  return Date.now() - started;
}

describe('two instances sharing Redis', { skip: HAVE_REDIS ? false : 'redis-server is not installed (.ci/run installs it)' }, () => {
  let redis: TestRedis;
  let upstream: RecordingUpstream;
  let a: TestProxy;
  let b: TestProxy;
  let token: string;
  const both = () => [a, b] as const;

  let fleet: RedisFleet | undefined;

  before(async () => {
    fleet = await startRedisFleet(2, { CACHE_PURGE_TOKEN: 'operator-secret-of-the-fleet', UPSTREAM_TIMEOUT_MS: '3000' });
    ({ redis, upstream } = fleet);
    [a, b] = fleet.proxies as [TestProxy, TestProxy];
  });
  after(() => fleet?.close());
  beforeEach(() => {
    upstream.reset();
    token = fakeJwt({ sub: String(USER_ID), n: Math.random() });
    upstream.on('GET', PROFILE, { json: { user: { id: USER_ID }, userInfo: {} } });
    upstream.on('POST', DEPOSIT, { json: { transaction_id: `ch_${Math.random()}`, status: 'pending' }, delayMs: 150 });
    upstream.on('POST', WITHDRAW, { json: { id: `wd_${Math.random()}`, status: 'requested' }, delayMs: 150 });
  });

  for (const [move, path, upstreamPath, body] of [
    ['deposit', '/api/payments/deposit', DEPOSIT, deposit],
    ['withdraw', '/api/payments/withdraw', WITHDRAW, withdraw],
  ] as const) {
    test(`10 concurrent identical ${move}s across both instances reach the upstream once`, async () => {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => send((i % 2 === 0 ? a : b).url, 'POST', path, { json: body, token })),
      );
      assert.equal(count(upstream, 'POST', upstreamPath), 1);
      const statuses = answers.map((r) => r.status);
      assert.ok(
        statuses.every((s) => s === 200 || s === 409),
        `statuses ${statuses}`,
      );
      const ok = answers.filter((r) => r.status === 200);
      assert.ok(ok.length >= 1);
      for (const r of ok) assert.equal(r.text, ok[0]?.text, 'every 200 is the one answer');
      assert.equal(answers.filter((r) => r.headers.get('idempotent-replayed') === 'true').length, ok.length - 1);
    });
  }

  test('Idempotency-Key: forwarded upstream, replayed by the other instance, 422 with another body', async () => {
    const headers = { 'idempotency-key': `key-${Math.random()}` };
    const first = await send(a.url, 'POST', '/api/payments/deposit', { json: deposit, token, headers });
    assert.equal(first.status, 200);
    assert.equal(upstream.requests.find((r) => r.path === DEPOSIT)?.headers['idempotency-key'], headers['idempotency-key']);
    const replay = await send(b.url, 'POST', '/api/payments/deposit', { json: deposit, token, headers });
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.text, first.text);
    const reused = await send(b.url, 'POST', '/api/payments/deposit', { json: { ...deposit, creditAmount: 9000 }, token, headers });
    assert.equal(reused.status, 422);
    assert.equal((reused.json as { error: string }).error, 'idempotency_key_reused');
    assert.equal(count(upstream, 'POST', DEPOSIT), 1);
    const malformed = await send(a.url, 'POST', '/api/payments/deposit', {
      json: deposit,
      token,
      headers: { 'idempotency-key': 'has space' },
    });
    assert.equal(malformed.status, 400);
    assert.equal(count(upstream, 'POST', DEPOSIT), 1);
  });

  test('a cold catalogue key under concurrency across both instances: one upstream call', async () => {
    upstream.on('GET', LIST, { json: { data: [{ slug: 'cold' }], page: 1 }, delayMs: 200 });
    const query = `?page=1&per_page=${10 + Math.floor(Math.random() * 80)}`;
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => send((i % 2 === 0 ? a : b).url, 'GET', `/api/games/list${query}`)),
    );
    assert.deepEqual([...new Set(answers.map((r) => r.status))], [200]);
    assert.equal(count(upstream, 'GET', LIST), 1);
  });

  test('a purge on one instance: the other serves fresh data within 1 s', async () => {
    let version = 1;
    upstream.on('GET', LIST, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: [{ slug: `v${version}` }], page: 1 }));
    });
    const path = '/api/games/list?page=2';
    for (const proxy of both()) assert.match((await send(proxy.url, 'GET', path)).text, /"v1"/);
    version = 2;
    assert.match((await send(b.url, 'GET', path)).text, /"v1"/, 'still cached before the purge');
    const purge = await send(a.url, 'POST', '/api/cache/purge', { headers: { authorization: 'Bearer operator-secret-of-the-fleet' } });
    assert.equal(purge.status, 200);
    const ms = await within(1_000, async () => /"v2"/.test((await send(b.url, 'GET', path)).text));
    console.log(`purge delay on the other instance: ${ms} ms`);
  });

  test('a logout on one instance: the other holds no cached profile for the session within 1 s', async () => {
    assert.equal((await send(a.url, 'GET', '/api/auth/profile', { token })).status, 200);
    assert.equal((await send(b.url, 'GET', '/api/auth/profile', { token })).status, 200);
    const reads = count(upstream, 'GET', PROFILE);
    assert.equal((await send(b.url, 'GET', '/api/auth/profile', { token })).status, 200);
    assert.equal(count(upstream, 'GET', PROFILE), reads, 'cached on b');
    assert.equal((await send(a.url, 'POST', '/api/auth/logout', { token })).status, 200);
    const ms = await within(1_000, async () => {
      const before = count(upstream, 'GET', PROFILE);
      await send(b.url, 'GET', '/api/auth/profile', { token });
      return count(upstream, 'GET', PROFILE) > before;
    });
    console.log(`eviction delay on the other instance: ${ms} ms`);
  });

  test('one server without replicas: money moves never ask Redis to WAIT for a replica', async () => {
    for (const proxy of both())
      assert.equal((await send(proxy.url, 'POST', '/api/payments/deposit', { json: deposit, token })).status, 200);
    assert.equal(count(upstream, 'POST', DEPOSIT), 1);
    const stats = await redisCli(redis.port, 'INFO', 'commandstats');
    assert.match(stats, /cmdstat_set:calls=\d+/, 'the records were written');
    assert.doesNotMatch(stats, /cmdstat_wait:/, 'no WAIT without replicas');
  });

  test('Redis down: money moves 503 with nothing sent, catalogue and readiness still serve; Redis back: all resumes without a restart', async () => {
    upstream.on('GET', LIST, { json: { data: [], page: 1 } });
    upstream.on('GET', '/', { json: { ok: true } });
    await redis.kill();
    await sleep(100);
    const refused = await send(a.url, 'POST', '/api/payments/deposit', { json: deposit, token });
    assert.equal(refused.status, 503);
    assert.equal((refused.json as { error: string }).error, 'idempotency_unavailable');
    assert.equal(count(upstream, 'POST', DEPOSIT), 0);
    assert.equal((await send(b.url, 'GET', '/api/games/list?page=3')).status, 200);
    assert.equal((await send(a.url, 'GET', '/readyz')).status, 200);
    const purge = await send(a.url, 'POST', '/api/cache/purge', { headers: { authorization: 'Bearer operator-secret-of-the-fleet' } });
    assert.equal(purge.status, 503, 'a purge that cannot reach the other instances says so');
    await redis.start();
    const ms = await within(
      5_000,
      async () => (await send(b.url, 'POST', '/api/payments/deposit', { json: deposit, token })).status === 200,
    );
    console.log(`money moves back ${ms} ms after Redis restarted`);
    assert.equal(count(upstream, 'POST', DEPOSIT), 1);
  });
});
