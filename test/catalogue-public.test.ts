/**
 * The public catalogue (docs/behaviour.md "Configuration" `CATALOGUE_FOR_SESSIONS`, "Which routes need a
 * session") and the outage (docs/behaviour.md "Resilience": cached catalogue entries keep being served,
 * stale, while their refresh fails), over real sockets: the proxy in front of a recording upstream.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { after, beforeEach, describe, test } from 'node:test';
const CATALOGUE_REFRESH_WAIT_MS = 500;
import { HAVE_REDIS, startRedisFleet } from './helpers/redis-server.js';
import { fakeJwt, type Recorded, send, startProxy, type TestProxy, useProxiesWithRecorder } from './helpers/recording-upstream.js';

const TTL_MS = 200;
const UPSTREAM_TIMEOUT_MS = 5_000;
const {
  upstream,
  proxies: [shared, forward],
} = useProxiesWithRecorder([
  { env: { CATALOGUE_CACHE_TTL_MS: '600000' } },
  { env: { CATALOGUE_CACHE_TTL_MS: '600000', CATALOGUE_FOR_SESSIONS: 'forward' } },
]);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Upstream answers that say which call made them. */
let calls = 0;
beforeEach(() => {
  calls = 0;
  for (const proxy of [shared, forward]) for (const cache of proxy.app.deps.caches.values()) cache.clear();
  upstream.setDefault({ json: { data: [] } });
  for (const path of ['/casino-games/list/', '/bff/games/top-wins-dl', '/bff/games/statistics-dl', '/core-sportbook/search']) {
    upstream.on('GET', path, (rec, res) => {
      calls++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: [{ slug: 'g1' }], path: rec.path, call: calls }));
    });
  }
});

function callsTo(path: string): Recorded[] {
  return upstream.requests.filter((r) => r.path === path);
}

/** A request with a session: a well-formed JWT in the session cookie, beside other cookies. */
function loggedIn(jwt = fakeJwt({ sub: String(Math.floor(Math.random() * 1e6)) })) {
  return { token: jwt, headers: { cookie: `_ga=GA1.1.${randomBytes(4).readUInt32BE()}.1; cookie_tracking=utm_source%3Dx` } };
}

/** Fails when an upstream call carried a credential or the user's cookies. */
function assertAnonymous(requests: readonly Recorded[]): void {
  for (const rec of requests) {
    assert.equal(rec.headers.authorization, undefined, `${rec.path}: no Authorization`);
    assert.equal(rec.headers.cookie, undefined, `${rec.path}: no Cookie`);
  }
}

/** The catalogue reads of spec 4.6 that call the BFF through the cache: request and the upstream path. */
const CACHED_READS: readonly { method: 'GET' | 'POST'; path: string; json?: unknown; upstream: string }[] = [
  { method: 'GET', path: '/api/games/list?category=slots&page=1', upstream: '/casino-games/list/' },
  { method: 'POST', path: '/api/games/search', json: { categories: ['crash'], page: 2 }, upstream: '/casino-games/list/' },
  { method: 'GET', path: '/api/games/category/live?page=3', upstream: '/casino-games/list/' },
  { method: 'GET', path: '/api/games/provider/p-one?page=4', upstream: '/casino-games/list/' },
  { method: 'GET', path: '/api/games/top-wins', upstream: '/bff/games/top-wins-dl' },
  { method: 'GET', path: '/api/games/statistics-dl?slug=g1', upstream: '/bff/games/statistics-dl' },
];

describe('CATALOGUE_FOR_SESSIONS=shared (the default): the catalogue is public', () => {
  test('after an anonymous read fills an entry, logged-in reads of every cached route make no upstream call', async () => {
    for (const read of CACHED_READS) {
      const anonymous = await send(shared.url, read.method, read.path, { json: read.json });
      assert.equal(anonymous.status, 200, read.path);
      const before = upstream.requests.length;
      for (let i = 0; i < 10; i++) {
        const res = await send(shared.url, read.method, read.path, { json: read.json, ...loggedIn() });
        assert.equal(res.status, 200, read.path);
        assert.equal(res.text, anonymous.text, `${read.path}: the same entry`);
        if (read.method === 'GET') assert.equal(res.headers.get('cache-control'), 'public, max-age=30', read.path);
        assert.equal(res.headers.get('vary'), 'Accept-Encoding', `${read.path}: the answer varies with the coding, not the cookie`);
      }
      assert.equal(upstream.requests.length, before, `${read.path}: 10 logged-in reads, 0 upstream calls`);
    }
    assert.equal(upstream.requests.length, CACHED_READS.length);
    assertAnonymous(upstream.requests);
  });

  test("a cold logged-in read makes exactly one upstream call, with neither Authorization nor the user's Cookie", async () => {
    const users = Array.from({ length: 12 }, () => loggedIn());
    const answers = await Promise.all(users.map((user) => send(shared.url, 'GET', '/api/games/list?page=7', user)));
    for (const a of answers) {
      assert.equal(a.status, 200);
      assert.equal(a.text, answers[0]?.text, 'one entry for every user');
    }
    const [rec, ...more] = callsTo('/casino-games/list/');
    assert.equal(more.length, 0, 'one upstream call');
    assert.ok(rec);
    assertAnonymous([rec]);
    for (const user of users) {
      assert.ok(!JSON.stringify(rec.headers).includes(user.token), 'no token in any upstream header');
      assert.ok(!answers.some((a) => a.text.includes(user.token)), 'no token in any answer');
    }
    // Anonymous reads get the entry the logged-in read filled.
    assert.equal((await send(shared.url, 'GET', '/api/games/list?page=7')).text, answers[0]?.text);
    assert.equal(callsTo('/casino-games/list/').length, 1);
  });

  test('made-up cookie values do not bypass the cache (300 reads, one address, one upstream call)', async () => {
    const cookies = Array.from({ length: 300 }, (_, i) => {
      const junk = randomBytes(12).toString('base64url');
      if (i % 3 === 0) return `access_token=${junk}`;
      if (i % 3 === 1) return `access_token=${fakeJwt({ sub: junk })}`;
      return `access_token=${junk}.${junk}.${junk}; session=${junk}`;
    });
    for (let i = 0; i < cookies.length; i += 50) {
      const batch = cookies.slice(i, i + 50).map((cookie) => send(shared.url, 'GET', '/api/games/category/slots', { headers: { cookie } }));
      for (const res of await Promise.all(batch)) assert.equal(res.status, 200);
    }
    assert.equal(upstream.requests.length, 1);
    assertAnonymous(upstream.requests);
  });

  test('by-slugs, stats-batch and the unified search with a session send no session upstream', async () => {
    const user = loggedIn();
    assert.equal((await send(shared.url, 'GET', '/api/games/statistics-dl?slug=g1', user)).status, 200);
    const batch = await send(shared.url, 'POST', '/api/games/stats-batch', { json: { slugs: ['g1', 'g2'] }, ...user });
    assert.equal(batch.status, 200);
    assert.deepEqual((batch.json as { missing: string[] }).missing, ['g2'], 'the entry the logged-in read filled');
    const bySlugs = await send(shared.url, 'GET', '/api/games/by-slugs?slugs=g1,zz', user);
    assert.equal(bySlugs.status, 200);
    const unified = await send(shared.url, 'POST', '/api/search/unified', { json: { search: 'tigers' }, ...user });
    assert.equal(unified.status, 200);
    assert.deepEqual((unified.json as { failed: string[] }).failed, []);
    assert.equal(callsTo('/core-sportbook/search').length, 1, 'the sportsbook half went upstream');
    assert.ok(upstream.requests.length >= 4);
    assertAnonymous(upstream.requests);
    for (const a of [batch, bySlugs, unified]) assert.ok(!a.text.includes(user.token));
  });
});

describe('CATALOGUE_FOR_SESSIONS=forward: a read with a session is forwarded with it', () => {
  test('session reads carry the Bearer (never the session cookie) and are never cached; anonymous reads still are', async () => {
    const jwt = fakeJwt();
    for (let i = 0; i < 2; i++) {
      const res = await send(forward.url, 'GET', '/api/games/top-wins', { token: jwt });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('cache-control'), 'no-store');
    }
    const sessionCalls = callsTo('/bff/games/top-wins-dl');
    assert.equal(sessionCalls.length, 2, 'not cached');
    for (const rec of sessionCalls) {
      assert.equal(rec.headers.authorization, `Bearer ${jwt}`);
      // The token travels only as the Bearer (docs/behaviour.md "Upstream requests").
      assert.ok(!String(rec.headers.cookie ?? '').includes(jwt), 'no session cookie upstream');
    }
    for (let i = 0; i < 3; i++) {
      const res = await send(forward.url, 'GET', '/api/games/top-wins');
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('cache-control'), 'public, max-age=30');
      assert.equal(res.headers.get('vary'), 'Cookie, Accept-Encoding');
    }
    assert.equal(callsTo('/bff/games/top-wins-dl').length, 3, 'three anonymous reads, one upstream call');
    assertAnonymous(callsTo('/bff/games/top-wins-dl').slice(2));
  });

  test('the unified search with a session forwards it on both halves', async () => {
    const jwt = fakeJwt();
    const res = await send(forward.url, 'POST', '/api/search/unified', { json: { search: 'tigers' }, token: jwt });
    assert.equal(res.status, 200);
    for (const path of ['/casino-games/list/', '/core-sportbook/search']) {
      assert.equal(callsTo(path)[0]?.headers.authorization, `Bearer ${jwt}`, path);
    }
  });
});

describe('outage: cached catalogue entries keep being served while their refresh fails', () => {
  let proxy: TestProxy | undefined;
  /** Upstream answers held open (the BFF hangs); their sockets are destroyed at the end of each test. */
  const held: ServerResponse[] = [];
  const hang = (_rec: Recorded, res: ServerResponse) => {
    held.push(res);
  };
  const start = async () => {
    proxy = await startProxy(upstream.url, {
      CATALOGUE_CACHE_TTL_MS: String(TTL_MS),
      UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS),
    });
    return proxy;
  };
  const release = async () => {
    for (const res of held.splice(0)) res.socket?.destroy();
    await proxy?.close();
    proxy = undefined;
  };
  after(release);

  /** A read and how long it took, in milliseconds. */
  const timed = async (base: string, path: string, options: Parameters<typeof send>[3] = {}) => {
    const t0 = performance.now();
    const res = await send(base, 'GET', path, options);
    return { ...res, ms: performance.now() - t0 };
  };

  test('the whole BFF hangs: entries older than ttl + maxStale answer 200 with the stale body, promptly, with one refresh per key', async () => {
    const { url } = await start();
    try {
      const pages = ['/api/games/category/slots?page=1', '/api/games/top-wins', '/api/games/statistics-dl?slug=g1'];
      const filled = await Promise.all(pages.map((p) => send(url, 'GET', p)));
      for (const f of filled) assert.equal(f.status, 200);
      const before = upstream.requests.length;
      upstream.setDefault(hang);
      for (const path of ['/casino-games/list/', '/bff/games/top-wins-dl', '/bff/games/statistics-dl']) upstream.on('GET', path, hang);
      await sleep(2 * TTL_MS + 100); // past ttl + maxStale (maxStale = ttl)

      // The first read of each key waits for its refresh at most CATALOGUE_REFRESH_WAIT_MS.
      const first = await Promise.all(pages.map((p) => timed(url, p)));
      first.forEach((res, i) => {
        assert.equal(res.status, 200, pages[i]);
        assert.equal(res.text, filled[i]?.text, `${pages[i]}: the stale body`);
        assert.ok(res.ms < CATALOGUE_REFRESH_WAIT_MS + 700, `${pages[i]}: ${res.ms.toFixed(0)} ms, well below the upstream timeout`);
      });
      // Every later read, logged in or not, is answered at once while the refresh still hangs.
      for (let round = 0; round < 3; round++) {
        const reads = await Promise.all(pages.flatMap((p) => [timed(url, p), timed(url, p, loggedIn())]));
        for (const res of reads) {
          assert.equal(res.status, 200);
          assert.ok(res.ms < CATALOGUE_REFRESH_WAIT_MS, `answered in ${res.ms.toFixed(0)} ms, without waiting for the refresh again`);
        }
      }
      assert.equal(upstream.requests.length - before, pages.length, 'one hung refresh per key (single flight)');
      assert.equal(held.length, pages.length);
    } finally {
      await release();
    }
  });

  test('the BFF fails (503 at once): the stale entry is answered, and retried no more than once per retry period', async () => {
    const { url } = await start();
    try {
      const filled = await send(url, 'GET', '/api/games/list?page=5');
      upstream.on('GET', '/casino-games/list/', { status: 503, json: { message: 'down' } });
      await sleep(2 * TTL_MS + 100);
      const t0 = performance.now();
      for (let i = 0; i < 20; i++) {
        const res = await send(url, 'GET', '/api/games/list?page=5', i % 2 === 0 ? {} : loggedIn());
        assert.equal(res.status, 200);
        assert.equal(res.text, filled.text);
      }
      const elapsed = performance.now() - t0;
      const refreshes = callsTo('/casino-games/list/').length - 1;
      // retryMs is min(5000, ttl) = 200 ms here: at most one refresh per 200 ms, plus the first.
      assert.ok(refreshes >= 1 && refreshes <= 1 + Math.ceil(elapsed / TTL_MS), `${refreshes} refreshes in ${elapsed.toFixed(0)} ms`);
    } finally {
      await release();
    }
  });

  test('a refresh answered 404 ends the entry: the page is gone, not an outage', async () => {
    const { url } = await start();
    try {
      assert.equal((await send(url, 'GET', '/api/games/statistics-dl?slug=gone')).status, 200);
      upstream.on('GET', '/bff/games/statistics-dl', { status: 404, json: { message: 'Game not found' } });
      await sleep(2 * TTL_MS + 100);
      const res = await send(url, 'GET', '/api/games/statistics-dl?slug=gone');
      assert.equal(res.status, 404);
      const batch = await send(url, 'POST', '/api/games/stats-batch', { json: { slugs: ['gone'] } });
      assert.deepEqual(batch.json, { data: {}, missing: ['gone'] }, 'the entry is dropped');
    } finally {
      await release();
    }
  });
});

describe(
  'two instances sharing Redis (docs/behaviour.md "Several instances")',
  { skip: HAVE_REDIS ? false : 'redis-server is not installed' },
  () => {
    test('logged-in reads on either instance share one entry; when the BFF hangs, both answer it stale, promptly', async () => {
      const hung: ServerResponse[] = [];
      let hanging = false;
      const fleet = await startRedisFleet(
        2,
        { CATALOGUE_CACHE_TTL_MS: String(TTL_MS), UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS) },
        (up) =>
          up.on('GET', '/casino-games/list/', (_rec, res) => {
            if (hanging) {
              hung.push(res);
              return;
            }
            setTimeout(() => {
              res.writeHead(200, { 'content-type': 'application/json' });
              res.end(JSON.stringify({ data: [{ slug: 'g1' }] }));
            }, 30);
          }),
      );
      const [a, b] = fleet.proxies as [TestProxy, TestProxy];
      const lists = () => fleet.upstream.requests.filter((r) => r.path === '/casino-games/list/');
      try {
        const cold = await Promise.all(
          Array.from({ length: 8 }, (_, i) => send((i % 2 === 0 ? a : b).url, 'GET', '/api/games/list?page=2', loggedIn())),
        );
        for (const res of cold) assert.equal(res.status, 200);
        assert.equal(lists().length, 1, 'one upstream call for 8 logged-in reads on 2 instances');
        assertAnonymous(lists());

        hanging = true;
        await sleep(2 * TTL_MS + 100);
        const first = await Promise.all(
          [a, b].map(async (p) => {
            const t0 = performance.now();
            const res = await send(p.url, 'GET', '/api/games/list?page=2', loggedIn());
            return { ...res, ms: performance.now() - t0 };
          }),
        );
        for (const res of first) {
          assert.equal(res.status, 200);
          assert.equal(res.text, cold[0]?.text, 'the stale body');
          assert.ok(res.ms < CATALOGUE_REFRESH_WAIT_MS + 700, `${res.ms.toFixed(0)} ms`);
        }
        for (let i = 0; i < 10; i++) assert.equal((await send((i % 2 === 0 ? a : b).url, 'GET', '/api/games/list?page=2')).status, 200);
        // The shared entry lives twice the time to live in Redis: once it is gone, each instance may try its own refresh.
        assert.ok(lists().length - 1 <= 2, `${lists().length - 1} hung refreshes`);
      } finally {
        for (const res of hung) res.socket?.destroy();
        await fleet.close();
      }
    });
  },
);
