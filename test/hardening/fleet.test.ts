/**
 * Hardening row 14, the fleet (docs/behaviour.md "Money moves: exactly once", "Several instances"): two
 * instances sharing a real redis-server, in front of one recording upstream. Deposits, each submitted
 * four times at once across both instances, with and without `Idempotency-Key`; a purge and a logout
 * on one instance seen by the other; Redis killed mid-run (money moves refused, nothing sent) and
 * started again (money moves resume without a restart).
 *
 * Pass: one upstream call per deposit (duplicates are counted as upstream calls for rejected input);
 * every answer 200 or 409; purge and eviction seen within 1 s; with Redis down, 503
 * `idempotency_unavailable` and no upstream call; with Redis back, deposits served again within 5 s.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fakeJwt, type RecordingUpstream, send, type TestProxy } from '../helpers/recording-upstream.js';
import { HAVE_REDIS, type RedisFleet, startRedisFleet, type TestRedis } from '../helpers/redis-server.js';
import { Figures, scaled } from './helpers/figures.js';

const figures = new Figures('fleet', 14, 'Fleet on Redis');
const DEPOSITS = scaled(400, 20);
const PURGE_TOKEN = 'operator-secret-of-the-fleet-row';
const deposits = (upstream: RecordingUpstream) =>
  upstream.requests.filter((r) => r.method === 'POST' && r.path === '/wallet/add-credit').length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function within(limitMs: number, check: () => Promise<boolean>): Promise<number | undefined> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > limitMs) return undefined;
    await sleep(20);
  }
  return Date.now() - started;
}

let redis: TestRedis;
let upstream: RecordingUpstream;
let a: TestProxy;
let b: TestProxy;
let fleet: RedisFleet | undefined;

before(async () => {
  if (!HAVE_REDIS) return;
  fleet = await startRedisFleet(2, { CACHE_PURGE_TOKEN: PURGE_TOKEN }, (up) => {
    up.on('GET', '/auth/user-profile', { json: { user: { id: 7 }, userInfo: {} } });
    up.on('POST', '/wallet/add-credit', { json: { transaction_id: 'ch_row', status: 'pending' }, delayMs: 20 });
  });
  ({ redis, upstream } = fleet);
  [a, b] = fleet.proxies as [TestProxy, TestProxy];
});
after(async () => {
  await fleet?.close();
  if (HAVE_REDIS) figures.write();
});

test(
  `row 14: ${DEPOSITS} deposits submitted 4 times at once across two instances reach the upstream once each; purge, logout and a Redis outage`,
  { skip: HAVE_REDIS ? false : 'redis-server is not installed (.ci/run installs it)' },
  async () => {
    const token = fakeJwt({ sub: '7', n: Math.random() });
    await figures.run('deposits', async () => {
      const before = deposits(upstream);
      for (let start = 0; start < DEPOSITS; start += 10) {
        await Promise.all(
          Array.from({ length: Math.min(10, DEPOSITS - start) }, async (_, j) => {
            const i = start + j;
            const body = { userId: 7, creditAmount: 1_000 + i, paymentMethod: 'pix', currency: 'BRL' };
            const headers: Record<string, string> = i % 2 === 0 ? { 'idempotency-key': `row14-${i}-${Math.random()}` } : {};
            const answers = await Promise.all(
              [a, b, a, b].map((p) => send(p.url, 'POST', '/api/payments/deposit', { json: body, token, headers })),
            );
            figures.inputs += answers.length;
            for (const r of answers) {
              figures.status(r.status);
              figures.check(r.status === 200 || r.status === 409, `deposit ${i}: ${r.status}`);
            }
          }),
        );
      }
      const calls = deposits(upstream) - before;
      figures.upstreamCallsForRejected += Math.max(0, calls - DEPOSITS);
      figures.check(calls === DEPOSITS, `${calls} upstream calls for ${DEPOSITS} deposits`);
      figures.note(`${DEPOSITS * 4} submissions of ${DEPOSITS} deposits: ${calls} upstream calls`);
    });

    await figures.run('purge', async () => {
      let version = 1;
      upstream.on('GET', '/casino-games/list/', (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: [{ slug: `v${version}` }] }));
      });
      await send(b.url, 'GET', '/api/games/list?page=9');
      version = 2;
      const purge = await send(a.url, 'POST', '/api/cache/purge', { headers: { authorization: `Bearer ${PURGE_TOKEN}` } });
      figures.inputs++;
      figures.status(purge.status);
      const ms = await within(1_000, async () => /"v2"/.test((await send(b.url, 'GET', '/api/games/list?page=9')).text));
      figures.check(ms !== undefined, 'the other instance still served the purged catalogue after 1 s');
      figures.note(`purge seen by the other instance after ${ms} ms`);
    });

    await figures.run('logout', async () => {
      const session = fakeJwt({ sub: '7', n: Math.random() });
      await send(b.url, 'GET', '/api/auth/profile', { token: session });
      const out = await send(a.url, 'POST', '/api/auth/logout', { token: session });
      figures.inputs++;
      figures.status(out.status);
      const reads = () => upstream.requests.filter((r) => r.path === '/auth/user-profile').length;
      const ms = await within(1_000, async () => {
        const before = reads();
        await send(b.url, 'GET', '/api/auth/profile', { token: session });
        return reads() > before;
      });
      figures.check(ms !== undefined, 'the other instance still answered the cached profile after 1 s');
      figures.note(`logout eviction seen by the other instance after ${ms} ms`);
    });

    await figures.run('redis outage', async () => {
      await redis.kill();
      figures.faults++;
      await sleep(100);
      const before = deposits(upstream);
      for (let i = 0; i < 10; i++) {
        const r = await send((i % 2 === 0 ? a : b).url, 'POST', '/api/payments/deposit', {
          json: { userId: 7, creditAmount: 90_000 + i, paymentMethod: 'pix', currency: 'BRL' },
          token,
        });
        figures.inputs++;
        figures.status(r.status);
        figures.check(
          r.status === 503 && (r.json as { error?: string }).error === 'idempotency_unavailable',
          `Redis down: deposit ${r.status}`,
        );
      }
      figures.upstreamCallsForRejected += deposits(upstream) - before;
      await redis.start();
      const ms = await within(5_000, async () => {
        const r = await send(b.url, 'POST', '/api/payments/deposit', {
          json: { userId: 7, creditAmount: 99_999, paymentMethod: 'pix', currency: 'BRL' },
          token,
        });
        return r.status === 200;
      });
      figures.check(ms !== undefined, 'money moves did not resume within 5 s of Redis restarting');
      figures.note(`money moves resumed ${ms} ms after Redis restarted`);
    });
    assert.equal(figures.failureCount, 0, figures.summary());
  },
);
