/**
 * The catalogue cache (src/catalogue): single flight under concurrency, parameter order, purge,
 * stats-batch from the cache only, failures never cached, sessions kept out (`shared`) or forwarded
 * (`forward`), stale-while-revalidate and stale-if-error, the switch-off (`CATALOGUE_CACHE_TTL_MS=0`),
 * and the pure helpers. The public catalogue and the outage: `catalogue-public.test.ts`.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { extractGames } from '../src/catalogue/assemble.js';
import { cacheKey, listQuery } from '../src/catalogue/query.js';
import { SwrCache, type SwrOutcome } from '../src/catalogue/swr-cache.js';
import { fakeJwt, send, startProxy, useProxyWithRecorder } from './helpers/recording-upstream.js';

const OPERATOR = 'operator-secret-0123456789';
const TTL_MS = 1_000;
const { upstream, proxy } = useProxyWithRecorder({ CACHE_PURGE_TOKEN: OPERATOR, CATALOGUE_CACHE_TTL_MS: String(TTL_MS) });
let version = 0;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeEach(() => {
  version = 0;
  for (const cache of proxy.app.deps.caches.values()) cache.clear();
  upstream.on('GET', '/casino-games/list/', (_rec, res) => {
    version++;
    const body = JSON.stringify({ data: [], version });
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    }, 60);
  });
});

function listCalls(): number {
  return upstream.requests.filter((r) => r.path === '/casino-games/list/').length;
}

describe('catalogue cache through the proxy', () => {
  test('50 concurrent identical anonymous list reads make one upstream call', async () => {
    // A TTL far longer than the test, so that a slow machine cannot turn the burst into two fills.
    const long = await startProxy(upstream.url, { CATALOGUE_CACHE_TTL_MS: '600000' });
    try {
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => send(long.url, 'GET', '/api/games/list?category=slots&page=1&per_page=24')),
      );
      for (const a of answers) {
        assert.equal(a.status, 200);
        assert.deepEqual(a.json, { data: [], version: 1 });
      }
      assert.equal(listCalls(), 1);
    } finally {
      await long.close();
    }
  });

  test('parameter order and repeated values do not matter; category and categories[] are one filter', async () => {
    const variants = [
      '/api/games/list?page=1&categories[]=slots&categories[]=crash&per_page=10&provider=p',
      '/api/games/list?per_page=10&provider=p&categories[]=crash&page=1&category=slots',
      '/api/games/list?providers[]=p&categories[]=slots&categories[]=crash&categories[]=slots&per_page=10&page=1',
      '/api/games/list?categories[]=crash&page=1&categories[]=slots&per_page=10&providers[]=p&ignored=1',
    ];
    for (const path of variants) assert.equal((await send(proxy.url, 'GET', path)).status, 200);
    assert.equal(listCalls(), 1);
    await send(proxy.url, 'POST', '/api/games/search', { json: { categories: ['slots', 'crash'], provider: 'p', page: 1, per_page: 10 } });
    assert.equal(listCalls(), 1, 'the legacy search shares the entry');
    await send(proxy.url, 'GET', '/api/games/list?page=2&categories[]=slots&categories[]=crash&per_page=10&provider=p');
    assert.equal(listCalls(), 2, 'another page is another entry');
  });

  test('the purge routes empty it', async () => {
    await send(proxy.url, 'GET', '/api/games/list');
    await send(proxy.url, 'GET', '/api/games/list');
    assert.equal(listCalls(), 1);
    const purge = await send(proxy.url, 'POST', '/api/cache/purge', { headers: { authorization: `Bearer ${OPERATOR}` } });
    assert.equal(purge.status, 200);
    await send(proxy.url, 'GET', '/api/games/list');
    assert.equal(listCalls(), 2);
    const dev = await send(proxy.url, 'POST', '/api/dev/cache-clear');
    assert.equal(dev.status, 200);
    assert.equal((dev.json as { cleared: Record<string, number> }).cleared.catalogue, 1);
    await send(proxy.url, 'GET', '/api/games/list');
    assert.equal(listCalls(), 3);
  });

  test('stats-batch makes no upstream call at all, with or without a session, cached or not', async () => {
    upstream.setDefault({ json: { data: { rtp: 95 } } });
    const empty = await send(proxy.url, 'POST', '/api/games/stats-batch', { json: { slugs: ['a', 'b'] } });
    assert.deepEqual(empty.json, { data: {}, missing: ['a', 'b'] });
    await send(proxy.url, 'GET', '/api/games/statistics-dl?slug=a');
    upstream.requests.length = 0;
    for (const token of [undefined, fakeJwt()]) {
      const res = await send(proxy.url, 'POST', '/api/games/stats-batch', {
        json: { slugs: ['a', 'b', 'a'] },
        ...(token ? { token } : {}),
      });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { data: { a: { data: { rtp: 95 } } }, missing: ['b'] });
    }
    assert.equal(upstream.requests.length, 0);
  });

  test('failures are not cached', async () => {
    upstream.on('GET', '/bff/games/top-wins-dl', { status: 500, json: { message: 'down' } });
    assert.equal((await send(proxy.url, 'GET', '/api/games/top-wins')).status, 500);
    upstream.on('GET', '/bff/games/top-wins-dl', { json: { data: [1] } });
    const res = await send(proxy.url, 'GET', '/api/games/top-wins');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { data: [1] });
    assert.equal(upstream.requests.filter((r) => r.path === '/bff/games/top-wins-dl').length, 2);
  });

  test('CATALOGUE_FOR_SESSIONS=forward: reads with a session never read or fill the cache', async () => {
    const forward = await startProxy(upstream.url, { CATALOGUE_CACHE_TTL_MS: String(TTL_MS), CATALOGUE_FOR_SESSIONS: 'forward' });
    try {
      await send(forward.url, 'GET', '/api/games/list?page=9');
      const jwt = fakeJwt();
      const personal = await send(forward.url, 'GET', '/api/games/list?page=9', { token: jwt });
      assert.deepEqual(personal.json, { data: [], version: 2 });
      const anonymous = await send(forward.url, 'GET', '/api/games/list?page=9');
      assert.deepEqual(anonymous.json, { data: [], version: 1 }, 'the anonymous entry is untouched');
      assert.equal(listCalls(), 2);
    } finally {
      await forward.close();
    }
  });

  test('stale-while-revalidate: an expired entry is answered at once while one refresh runs', async () => {
    await send(proxy.url, 'GET', '/api/games/list?page=3');
    await sleep(TTL_MS + 50);
    const [a, b] = await Promise.all([send(proxy.url, 'GET', '/api/games/list?page=3'), send(proxy.url, 'GET', '/api/games/list?page=3')]);
    assert.deepEqual(a.json, { data: [], version: 1 }, 'the stale entry');
    assert.deepEqual(b.json, { data: [], version: 1 });
    // Reads during the refresh keep getting the stale entry and start no other refresh.
    let fresh = await send(proxy.url, 'GET', '/api/games/list?page=3');
    for (let i = 0; (fresh.json as { version: number }).version === 1 && i < 250; i++) {
      await sleep(20);
      fresh = await send(proxy.url, 'GET', '/api/games/list?page=3');
    }
    assert.deepEqual(fresh.json, { data: [], version: 2 });
    assert.equal(listCalls(), 2, 'one refresh behind the stale answers');
  });

  test('stale-if-error: a failed refresh keeps answering the old entry', async () => {
    await send(proxy.url, 'GET', '/api/games/list?page=4');
    upstream.on('GET', '/casino-games/list/', { status: 503, json: { message: 'down' } });
    await sleep(TTL_MS + 50);
    for (let i = 0; i < 3; i++) {
      const res = await send(proxy.url, 'GET', '/api/games/list?page=4');
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { data: [], version: 1 });
    }
  });
});

describe('CATALOGUE_CACHE_TTL_MS=0 turns the cache off', () => {
  test('every read goes upstream; by-slugs resolves through the detail; stats-batch finds nothing', async () => {
    const off = await startProxy(upstream.url, { CATALOGUE_CACHE_TTL_MS: '0' });
    try {
      await send(off.url, 'GET', '/api/games/list');
      await send(off.url, 'GET', '/api/games/list');
      assert.equal(listCalls(), 2);
      upstream.on('GET', '/casino-games', { json: { data: { slug: 'x', name: 'X' } } });
      const bySlugs = await send(off.url, 'GET', '/api/games/by-slugs?slugs=x');
      assert.deepEqual(bySlugs.json, { data: [{ slug: 'x', name: 'X' }], missing: [] });
      assert.equal(upstream.requests.filter((r) => r.path.startsWith('/casino-games/page')).length, 0);
      await send(off.url, 'GET', '/api/games/statistics-dl?slug=x');
      const batch = await send(off.url, 'POST', '/api/games/stats-batch', { json: { slugs: ['x'] } });
      assert.deepEqual(batch.json, { data: {}, missing: ['x'] });
    } finally {
      await off.close();
    }
  });
});

describe('catalogue helpers', () => {
  test('listQuery sorts, de-duplicates and drops empty values; cacheKey ignores key order', () => {
    assert.deepEqual(listQuery({ categories: ['b', 'a', 'b'], providers: [], search: '  big   bass ', page: 2, per_page: '10' }), {
      'categories[]': ['a', 'b'],
      page: '2',
      per_page: '10',
      search: 'big bass',
    });
    assert.deepEqual(listQuery({ search: '   ' }), {});
    assert.equal(cacheKey('/x', { b: '1', a: ['2', '1'] }), cacheKey('/x', { a: ['1', '2'], b: '1' }));
    assert.notEqual(cacheKey('/x', { a: '1' }), cacheKey('/y', { a: '1' }));
  });

  test('extractGames finds games in containers and under `game`, never categories or providers', () => {
    const games = extractGames({
      categories: [{ slug: 'slots', name: 'Slots' }],
      providers: [{ slug: 'p', name: 'P' }],
      sections: [{ slug: 'slots', games: [{ slug: 'g1' }] }],
      data: [{ slug: 'g2' }, { game: { slug: 'g3' }, amount: 1 }, { slug: '../bad' }],
    });
    assert.deepEqual(games.map((g) => g.slug).sort(), ['g1', 'g2', 'g3']);
    assert.deepEqual(
      extractGames([{ slug: 'top' }]).map((g) => g.slug),
      ['top'],
    );
  });

  test('SwrCache: single flight, rejections reach every waiter and are not stored', async () => {
    const cache = new SwrCache<{ fetchedAt: number; n: number }>({ ttlMs: 1_000, max: 10 });
    let loads = 0;
    const load = async () => {
      loads++;
      await sleep(20);
      return { fetchedAt: Date.now(), n: loads };
    };
    const outcomes: SwrOutcome[] = [];
    const values = await Promise.all(Array.from({ length: 10 }, () => cache.get('k', load, (o) => outcomes.push(o))));
    assert.equal(loads, 1);
    assert.ok(values.every((v) => v.n === 1));
    assert.equal(outcomes.filter((o) => o === 'miss').length, 1);
    assert.equal((await cache.get('k', load, (o) => outcomes.push(o))).n, 1);
    assert.equal(outcomes.at(-1), 'hit');

    const failing = async (): Promise<{ fetchedAt: number; n: number }> => {
      loads++;
      await sleep(10);
      throw new Error('boom');
    };
    const results = await Promise.allSettled([cache.get('bad', failing), cache.get('bad', failing)]);
    assert.ok(results.every((r) => r.status === 'rejected'));
    assert.equal(cache.peek('bad'), undefined);
    assert.equal(cache.size, 1);
    cache.clear();
    assert.equal(cache.size, 0);
  });

  test('SwrCache: a clear during a load still answers its waiters and stores nothing (regression: purge mid-load was a 500)', async () => {
    const cache = new SwrCache<{ fetchedAt: number; n: number }>({ ttlMs: 1_000, max: 10 });
    const pending = Promise.all([
      cache.get('k', async () => {
        await sleep(30);
        return { fetchedAt: Date.now(), n: 7 };
      }),
      cache.get('k', async () => ({ fetchedAt: Date.now(), n: 8 })),
    ]);
    await sleep(5);
    cache.clear();
    const values = await pending;
    assert.deepEqual(
      values.map((v) => v.n),
      [7, 7],
    );
    assert.equal(cache.peek('k'), undefined);
  });
});
