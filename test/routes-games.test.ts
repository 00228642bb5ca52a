/**
 * spec 4.6 Games, favourites, search against a recording upstream over real sockets: the upstream
 * method, path, query and body of every row, 401 without the cookie on authenticated rows (no
 * upstream call), input validation, debug stripping of the game start, the by-slugs index and its
 * fallback, and the unified search with one side failing.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { ConcurrencyBarrier, fakeJwt, type Recorded, send, startProxy, useProxyWithRecorder } from './helpers/recording-upstream.js';

const { upstream, proxy } = useProxyWithRecorder({ UPSTREAM_TIMEOUT_MS: '2000' });

beforeEach(() => {
  for (const cache of proxy.app.deps.caches.values()) cache.clear();
});

function params(rec: Recorded | undefined): URLSearchParams {
  return new URLSearchParams(rec?.query ?? '');
}

function only(): Recorded {
  assert.equal(upstream.requests.length, 1, `one upstream call, got ${upstream.requests.map((r) => `${r.method} ${r.path}`).join(', ')}`);
  return upstream.requests[0] as Recorded;
}

describe('spec 4.6 GET /api/games/list', () => {
  test('forwards the accepted query, normalised, to GET /casino-games/list/ without a session', async () => {
    upstream.on('GET', '/casino-games/list/', { json: { data: [{ slug: 'a' }], total: 1 } });
    const res = await send(
      proxy.url,
      'GET',
      '/api/games/list?search=%20big%20%20bass%20&page=2&per_page=24&category=slots&categories[]=crash&providers[]=p-one&debug=1&foo=bar',
    );
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { data: [{ slug: 'a' }], total: 1 });
    assert.equal(res.headers.get('cache-control'), 'public, max-age=30');
    const rec = only();
    assert.equal(rec.method, 'GET');
    assert.equal(rec.path, '/casino-games/list/');
    const q = params(rec);
    assert.deepEqual(q.getAll('categories[]'), ['crash', 'slots']);
    assert.deepEqual(q.getAll('providers[]'), ['p-one']);
    assert.equal(q.get('search'), 'big bass');
    assert.equal(q.get('page'), '2');
    assert.equal(q.get('per_page'), '24');
    assert.equal(q.has('debug'), false);
    assert.equal(q.has('foo'), false);
    assert.equal(rec.headers.authorization, undefined);
    assert.equal(rec.headers.cookie, undefined);
  });

  test('invalid parameters answer 400 before any upstream call', async () => {
    for (const query of ['per_page=500', 'page=0', 'page=abc', 'categories[]=..%2Fx', 'provider=a%20b', `search=${'x'.repeat(101)}`]) {
      const res = await send(proxy.url, 'GET', `/api/games/list?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal((res.json as Record<string, unknown>).error, 'invalid_request');
    }
    assert.equal(upstream.requests.length, 0);
  });

  test('CATALOGUE_FOR_SESSIONS=forward: with a session the read is forwarded with it and never cached', async () => {
    const forward = await startProxy(upstream.url, { CATALOGUE_FOR_SESSIONS: 'forward' });
    try {
      const jwt = fakeJwt();
      for (let i = 0; i < 2; i++) {
        const res = await send(forward.url, 'GET', '/api/games/list?category=slots', { token: jwt, headers: { cookie: '_ga=GA1.1.1.2' } });
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('cache-control'), 'no-store');
      }
      assert.equal(upstream.requests.length, 2);
      assert.equal(upstream.requests[0]?.headers.authorization, `Bearer ${jwt}`);
      // The browser's other cookies go on; the session cookie never does (the token is the Bearer).
      assert.equal(upstream.requests[0]?.headers.cookie, '_ga=GA1.1.1.2');
    } finally {
      await forward.close();
    }
  });

  test('CATALOGUE_FOR_SESSIONS=shared (default): with a session the read is answered like one without, and sends no session upstream', async () => {
    upstream.on('GET', '/casino-games/list/', { json: { data: [{ slug: 'a' }], total: 1 } });
    const jwt = fakeJwt();
    for (let i = 0; i < 2; i++) {
      const res = await send(proxy.url, 'GET', '/api/games/list?category=slots', { token: jwt, headers: { cookie: '_ga=GA1.1.1.2' } });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { data: [{ slug: 'a' }], total: 1 });
      assert.equal(res.headers.get('cache-control'), 'public, max-age=30');
      assert.equal(res.headers.get('vary'), 'Accept-Encoding', 'the answer depends on the coding, not on the cookie');
    }
    const rec = only();
    assert.equal(rec.headers.authorization, undefined);
    assert.equal(rec.headers.cookie, undefined);
  });

  test('an upstream failure goes through the envelope (spec 7.4)', async () => {
    upstream.on('GET', '/casino-games/list/', { status: 503, json: { message: 'Under maintenance' } });
    const res = await send(proxy.url, 'GET', '/api/games/list');
    assert.equal(res.status, 503);
    assert.deepEqual(res.json, { ok: false, error: 'service_unavailable', detail: 'Under maintenance' });
    assert.equal(res.headers.get('cache-control'), 'no-store');
  });
});

describe('spec 4.6 POST /api/games/search (legacy)', () => {
  test('delegates the body parameters to GET /casino-games/list/', async () => {
    const res = await send(proxy.url, 'POST', '/api/games/search', {
      json: { search: 'wolf', providers: ['b', 'a'], category: 'slots', page: 3, per_page: '10' },
    });
    assert.equal(res.status, 200);
    const rec = only();
    assert.equal(rec.path, '/casino-games/list/');
    const q = params(rec);
    assert.deepEqual(q.getAll('providers[]'), ['a', 'b']);
    assert.deepEqual(q.getAll('categories[]'), ['slots']);
    assert.equal(q.get('search'), 'wolf');
    assert.equal(q.get('page'), '3');
    assert.equal(q.get('per_page'), '10');
  });

  test('an invalid body answers 400 with no upstream call', async () => {
    const res = await send(proxy.url, 'POST', '/api/games/search', { json: { page: 0 } });
    assert.equal(res.status, 400);
    assert.equal(upstream.requests.length, 0);
  });
});

describe('spec 4.6 GET /api/games/category/{slug} and provider/{slug}', () => {
  test('category: GET /casino-games/list/?categories[]=<slug>&page&per_page', async () => {
    const res = await send(proxy.url, 'GET', '/api/games/category/live-casino?page=2&per_page=12');
    assert.equal(res.status, 200);
    const q = params(only());
    assert.deepEqual(q.getAll('categories[]'), ['live-casino']);
    assert.equal(q.get('page'), '2');
    assert.equal(q.get('per_page'), '12');
  });

  test('provider: GET /casino-games/list/?providers[]=<slug>', async () => {
    await send(proxy.url, 'GET', '/api/games/provider/aurora-studios');
    const rec = only();
    assert.equal(rec.path, '/casino-games/list/');
    assert.deepEqual(params(rec).getAll('providers[]'), ['aurora-studios']);
  });

  test('a slug that is not a slug answers 400', async () => {
    for (const path of ['/api/games/category/..%2Fwallet', '/api/games/provider/a%20b', '/api/games/category/a.b']) {
      const res = await send(proxy.url, 'GET', path);
      assert.equal(res.status, 400, path);
    }
    assert.equal(upstream.requests.length, 0);
  });
});

describe('spec 4.6 GET /api/games/by-slugs', () => {
  function catalogue(): void {
    const game = (slug: string, extra: Record<string, unknown> = {}) => ({ id: slug.length, slug, name: slug, ...extra });
    upstream.on('GET', '/casino-games/home', { json: { sections: [{ slug: 'slots', title: 'Slots', games: [game('home-game')] }] } });
    upstream.on('GET', '/casino-games/list/base', { json: { categories: [{ slug: 'slots', name: 'Slots' }], providers: [] } });
    upstream.on('GET', '/bff/games/last-wins', { json: { data: [{ game: game('win-game'), amount: 100 }] } });
    upstream.on('GET', '/bff/games/game-high-payers-dl', { json: { data: [] } });
    upstream.on('GET', '/casino-games/page/1', { json: { data: [game('page-one'), game('home-game', { full: true })], last_page: 2 } });
    upstream.on('GET', '/casino-games/page/2', { json: { data: [game('page-two')], last_page: 2 } });
    upstream.on('GET', '/casino-games', (rec, res) => {
      const slug = new URLSearchParams(rec.query).get('slug');
      res.writeHead(slug === 'detail-game' ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(slug === 'detail-game' ? { data: { slug, name: 'Detail' } } : { message: 'not found' }));
    });
  }

  test('resolves from the assembled index in the order asked, falls back to GET /casino-games?slug= for misses', async () => {
    catalogue();
    const res = await send(proxy.url, 'GET', '/api/games/by-slugs?slugs=page-two,home-game,detail-game,win-game,unknown-game');
    assert.equal(res.status, 200);
    const body = res.json as { data: { slug: string; full?: boolean }[]; missing: string[] };
    assert.deepEqual(
      body.data.map((g) => g.slug),
      ['page-two', 'home-game', 'detail-game', 'win-game'],
    );
    assert.equal(body.data[1]?.full, true, 'the catalogue pages win over lighter sources');
    assert.deepEqual(body.missing, ['unknown-game']);
    const paths = upstream.requests.map((r) => `${r.path}${r.query ? `?${r.query}` : ''}`).sort();
    assert.deepEqual(paths, [
      '/bff/games/game-high-payers-dl',
      '/bff/games/last-wins',
      '/casino-games/home',
      '/casino-games/list/base',
      '/casino-games/page/1',
      '/casino-games/page/2',
      '/casino-games?slug=detail-game',
      '/casino-games?slug=unknown-game',
    ]);
    for (const rec of upstream.requests) {
      assert.equal(rec.method, 'GET');
      assert.equal(rec.headers.authorization, undefined);
      assert.equal(rec.headers.cookie, undefined);
    }

    upstream.requests.length = 0;
    const again = await send(proxy.url, 'GET', '/api/games/by-slugs?slugs=page-one,detail-game');
    assert.deepEqual((again.json as { missing: string[] }).missing, []);
    assert.equal(upstream.requests.length, 0, 'the index and the anonymous detail are cached');
  });

  test('more than 100 slugs, or a value that is not a slug, answers 400 with no upstream call', async () => {
    const many = Array.from({ length: 101 }, (_, i) => `g${i}`).join(',');
    assert.equal((await send(proxy.url, 'GET', `/api/games/by-slugs?slugs=${many}`)).status, 400);
    assert.equal((await send(proxy.url, 'GET', '/api/games/by-slugs?slugs=ok,..%2Fx')).status, 400);
    assert.equal((await send(proxy.url, 'GET', '/api/games/by-slugs?slugs=,,')).status, 400);
    assert.equal((await send(proxy.url, 'GET', '/api/games/by-slugs')).status, 400);
    assert.equal(upstream.requests.length, 0);
  });
});

describe('spec 4.6 GET /api/games/start', () => {
  test('401 { reason: no_token } without the cookie, no upstream call', async () => {
    const res = await send(proxy.url, 'GET', '/api/games/start?slug=a');
    assert.equal(res.status, 401);
    assert.deepEqual(res.json, { reason: 'no_token' });
    assert.equal(upstream.requests.length, 0);
  });

  test('GET /start-game-v2 with the accepted query; never a debug parameter; debug fields removed from the answer', async () => {
    upstream.on('GET', '/start-game-v2', {
      json: {
        url: 'https://games.example/launch?s=1',
        game: { slug: 'a', debug_info: { x: 1 }, stack: 'at x' },
        debug: { sql: 'select' },
        trace_id: 't-1',
        _internal: { node: 'n1' },
        internalNotes: 'x',
        provider_request: { api_key: 'k' },
        credentials: { secret: 's' },
        items: [{ keep: 1, traces: [1] }],
      },
    });
    const jwt = fakeJwt();
    const res = await send(proxy.url, 'GET', '/api/games/start?slug=a&mode=demo&device=mobile&language=pt-BR&debug=1&trace=1', {
      token: jwt,
      headers: { 'x-debug': '1', cookie: 'debug=1' },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { url: 'https://games.example/launch?s=1', game: { slug: 'a' }, items: [{ keep: 1 }] });
    const rec = only();
    assert.equal(rec.path, '/start-game-v2');
    assert.equal(rec.query, 'slug=a&mode=demo&device=mobile&language=pt-BR');
    assert.equal(rec.headers.authorization, `Bearer ${jwt}`);
    assert.equal(rec.headers['x-debug'], undefined);
  });

  test('gameId works too; neither slug nor gameId is a 400', async () => {
    const jwt = fakeJwt();
    await send(proxy.url, 'GET', '/api/games/start?gameId=10001', { token: jwt });
    assert.equal(only().query, 'gameId=10001');
    upstream.reset();
    const res = await send(proxy.url, 'GET', '/api/games/start?mode=real', { token: jwt });
    assert.equal(res.status, 400);
    assert.equal(upstream.requests.length, 0);
  });

  test('an upstream 401 passes through byte for byte (spec 7.4.1)', async () => {
    upstream.on('GET', '/start-game-v2', { status: 401, text: '{"reason":"token_expired"}' });
    const res = await send(proxy.url, 'GET', '/api/games/start?slug=a', { token: fakeJwt() });
    assert.equal(res.status, 401);
    assert.equal(res.text, '{"reason":"token_expired"}');
  });
});

describe('spec 4.6 top-wins, statistics-dl, stats-batch', () => {
  test('top-wins: GET /bff/games/top-wins-dl', async () => {
    upstream.on('GET', '/bff/games/top-wins-dl', { json: { data: [] } });
    const res = await send(proxy.url, 'GET', '/api/games/top-wins');
    assert.equal(res.status, 200);
    const rec = only();
    assert.equal(rec.path, '/bff/games/top-wins-dl');
    assert.equal(rec.query, '');
  });

  test('statistics-dl: GET /bff/games/statistics-dl?slug=<slug>; its answer feeds stats-batch', async () => {
    upstream.on('GET', '/bff/games/statistics-dl', { json: { data: { rtp: 96.5 } } });
    const res = await send(proxy.url, 'GET', '/api/games/statistics-dl?slug=big-bass');
    assert.equal(res.status, 200);
    const rec = only();
    assert.equal(rec.path, '/bff/games/statistics-dl');
    assert.equal(rec.query, 'slug=big-bass');
    const batch = await send(proxy.url, 'POST', '/api/games/stats-batch', { json: { slugs: ['big-bass', 'other'] } });
    assert.equal(batch.status, 200);
    assert.deepEqual(batch.json, { data: { 'big-bass': { data: { rtp: 96.5 } } }, missing: ['other'] });
    assert.equal(upstream.requests.length, 1, 'stats-batch calls nothing upstream');
  });

  test('statistics-dl without a slug, and stats-batch with a bad body, answer 400', async () => {
    assert.equal((await send(proxy.url, 'GET', '/api/games/statistics-dl')).status, 400);
    assert.equal((await send(proxy.url, 'POST', '/api/games/stats-batch', { json: { slugs: [] } })).status, 400);
    assert.equal((await send(proxy.url, 'POST', '/api/games/stats-batch', { json: { slugs: ['../x'] } })).status, 400);
    assert.equal(upstream.requests.length, 0);
  });
});

describe('spec 4.6 /api/games/vote and /api/favorites', () => {
  const authRows: [string, string, unknown?][] = [
    ['GET', '/api/games/vote?casinoGameId=1'],
    ['POST', '/api/games/vote', { casinoGameId: 1, vote: 'up' }],
    ['DELETE', '/api/games/vote?gameId=1'],
    ['GET', '/api/favorites'],
    ['PUT', '/api/favorites', { casinoGameId: 1 }],
  ];
  test('every vote and favourite row answers 401 without the cookie, with no upstream call', async () => {
    for (const [method, path, json] of authRows) {
      const res = await send(proxy.url, method, path, json === undefined ? {} : { json });
      assert.equal(res.status, 401, `${method} ${path}`);
      assert.deepEqual(res.json, { reason: 'no_token' });
    }
    assert.equal(upstream.requests.length, 0);
  });

  test('GET vote: GET /casino-game-votes?casinoGameId=<id>', async () => {
    await send(proxy.url, 'GET', '/api/games/vote?casinoGameId=10001', { token: fakeJwt() });
    const rec = only();
    assert.equal(rec.method, 'GET');
    assert.equal(rec.path, '/casino-game-votes');
    assert.equal(rec.query, 'casinoGameId=10001');
  });

  test('POST vote: POST /casino-game-votes/store/ with { casinoGameId, vote }', async () => {
    const res = await send(proxy.url, 'POST', '/api/games/vote', {
      token: fakeJwt(),
      json: { casinoGameId: 10001, vote: 'down', extra: 1 },
    });
    assert.equal(res.status, 200);
    const rec = only();
    assert.equal(rec.method, 'POST');
    assert.equal(rec.path, '/casino-game-votes/store/');
    assert.deepEqual(rec.json, { casinoGameId: 10001, vote: 'down' });
    const bad = await send(proxy.url, 'POST', '/api/games/vote', { token: fakeJwt(), json: { casinoGameId: 1, vote: 'sideways' } });
    assert.equal(bad.status, 400);
  });

  test('DELETE vote: DELETE /casino-game-votes/destroy/{gameId}; an unsafe gameId is a 400', async () => {
    await send(proxy.url, 'DELETE', '/api/games/vote?gameId=10001', { token: fakeJwt() });
    const rec = only();
    assert.equal(rec.method, 'DELETE');
    assert.equal(rec.path, '/casino-game-votes/destroy/10001');
    upstream.reset();
    for (const id of ['..', '..%2Fwallet', 'a%2Fb', '%2e%2e']) {
      const res = await send(proxy.url, 'DELETE', `/api/games/vote?gameId=${id}`, { token: fakeJwt() });
      assert.equal(res.status, 400, id);
    }
    assert.equal(upstream.requests.length, 0);
  });

  test('favourites: GET /bff/favorite-games; PUT /bff/favorite-games/toggle', async () => {
    const jwt = fakeJwt();
    await send(proxy.url, 'GET', '/api/favorites', { token: jwt });
    assert.equal(only().path, '/bff/favorite-games');
    upstream.reset();
    await send(proxy.url, 'PUT', '/api/favorites', { token: jwt, json: { slug: 'big-bass' } });
    const rec = only();
    assert.equal(rec.method, 'PUT');
    assert.equal(rec.path, '/bff/favorite-games/toggle');
    assert.deepEqual(rec.json, { slug: 'big-bass' });
    assert.equal(rec.headers.authorization, `Bearer ${jwt}`);
    upstream.reset();
    assert.equal((await send(proxy.url, 'PUT', '/api/favorites', { token: jwt, json: {} })).status, 400);
    assert.equal(upstream.requests.length, 0);
  });
});

describe('spec 4.6 POST /api/search/unified', () => {
  test('casino list and sportsbook search in parallel', async () => {
    const barrier = new ConcurrencyBarrier(2);
    upstream.on('GET', '/casino-games/list/', barrier.reply({ data: [{ slug: 'rio-fortune' }] }));
    upstream.on('GET', '/core-sportbook/search', barrier.reply({ data: [{ id: 1 }] }));
    const res = await send(proxy.url, 'POST', '/api/search/unified', { json: { search: ' rio ', per_page: 5 } });
    assert.equal(barrier.maxInFlight, 2, 'both sides run at once');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { casino: { data: [{ slug: 'rio-fortune' }] }, sports: { data: [{ id: 1 }] }, failed: [] });
    const casino = upstream.requests.find((r) => r.path === '/casino-games/list/');
    const sports = upstream.requests.find((r) => r.path === '/core-sportbook/search');
    assert.equal(params(casino).get('search'), 'rio');
    assert.equal(params(casino).get('per_page'), '5');
    assert.equal(sports?.query, 'search=rio');
  });

  test('one side failing still returns the other, marked in `failed`', async () => {
    upstream.on('GET', '/casino-games/list/', { json: { data: [] } });
    upstream.on('GET', '/core-sportbook/search', { status: 500, json: { message: 'boom' } });
    const res = await send(proxy.url, 'POST', '/api/search/unified', { json: { search: 'x' } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { casino: { data: [] }, sports: null, failed: ['sports'] });

    upstream.reset();
    for (const cache of proxy.app.deps.caches.values()) cache.clear();
    upstream.on('GET', '/casino-games/list/', { status: 502, json: {} });
    upstream.on('GET', '/core-sportbook/search', { json: { data: [1] } });
    const other = await send(proxy.url, 'POST', '/api/search/unified', { json: { search: 'x' } });
    assert.equal(other.status, 200);
    assert.deepEqual(other.json, { casino: null, sports: { data: [1] }, failed: ['casino'] });
  });

  test('both sides failing answers the casino failure through the envelope; a blank search is a 400', async () => {
    upstream.setDefault({ status: 500, json: { message: 'down' } });
    const res = await send(proxy.url, 'POST', '/api/search/unified', { json: { search: 'x' } });
    assert.equal(res.status, 500);
    assert.equal((res.json as Record<string, unknown>).ok, false);
    upstream.reset();
    assert.equal((await send(proxy.url, 'POST', '/api/search/unified', { json: { search: '   ' } })).status, 400);
    assert.equal((await send(proxy.url, 'POST', '/api/search/unified', { json: {} })).status, 400);
    assert.equal(upstream.requests.length, 0);
  });
});
