/**
 * spec 4.9 Sticker album and spec 4.10 external and infrastructure routes against a recording
 * upstream over real sockets: the handshake before each sticker call (and its reuse per session),
 * upstream method, path, query and body of every row, 401 without the cookie, the operator
 * credential of the purge, and 503 `not_configured` for missing service URLs.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { createServer } from '../src/app.js';
import { ConcurrencyBarrier, fakeJwt, type Recorded, send, useProxyWithRecorder } from './helpers/recording-upstream.js';

const OPERATOR = 'operator-secret-0123456789';
const { upstream, proxy } = useProxyWithRecorder({ UPSTREAM_TIMEOUT_MS: '2000', CACHE_PURGE_TOKEN: OPERATOR, BUILD_ID: 'build-42' });
let handshakes = 0;

function stickerUpstream(): void {
  upstream.on('POST', '/sticker/auth/token', (_rec, res) => {
    handshakes++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ access_token: `stk-${handshakes}`, token_type: 'bearer', expires_in: 900 }));
  });
}

beforeEach(() => {
  handshakes = 0;
  for (const cache of proxy.app.deps.caches.values()) cache.clear();
  stickerUpstream();
});

function sticker(): Recorded[] {
  return upstream.requests.filter((r) => r.path.startsWith('/sticker/') && r.path !== '/sticker/auth/token');
}

const ALBUM_ROWS: [string, string, unknown?][] = [
  ['GET', '/api/album/bootstrap'],
  ['POST', '/api/album/checkin?claimType=daily'],
  ['POST', '/api/album/claim-featured', { featuredId: 'feat-1' }],
  ['POST', '/api/album/open-pack'],
  ['POST', '/api/album/open-all-packs'],
  ['POST', '/api/album/mission-type', { missionType: 'casino' }],
];

describe('spec 4.9 sticker album', () => {
  test('every album row answers 401 without the cookie, with no upstream call (no handshake either)', async () => {
    for (const [method, path, json] of ALBUM_ROWS) {
      const res = await send(proxy.url, method, path, json === undefined ? {} : { json });
      assert.equal(res.status, 401, path);
      assert.deepEqual(res.json, { reason: 'no_token' });
    }
    assert.equal(upstream.requests.length, 0);
  });

  test('the handshake POST /auth/token carries the session as its Bearer and the other cookies; the call carries the handshake token', async () => {
    const jwt = fakeJwt();
    upstream.on('POST', '/sticker/users/me/packs/open', { json: { pack: { stickers: [] } } });
    const res = await send(proxy.url, 'POST', '/api/album/open-pack', { token: jwt, headers: { cookie: 'lang=pt' } });
    assert.equal(res.status, 200);
    const [hs, call] = upstream.requests;
    assert.equal(hs?.method, 'POST');
    assert.equal(hs?.path, '/sticker/auth/token');
    assert.equal(hs?.headers.authorization, `Bearer ${jwt}`);
    // The browser's other cookies go on; the session cookie never does (the token is the Bearer).
    assert.equal(hs?.headers.cookie, 'lang=pt');
    assert.equal(call?.method, 'POST');
    assert.equal(call?.path, '/sticker/users/me/packs/open');
    assert.equal(call?.headers.authorization, 'Bearer stk-1');
    assert.deepEqual(call?.json, {});
  });

  test('the handshake token is reused for the session and renewed once when the sticker API refuses it', async () => {
    const jwt = fakeJwt();
    upstream.on('POST', '/sticker/users/me/packs/open-all', { json: { packs: [] } });
    await send(proxy.url, 'POST', '/api/album/open-all-packs', { token: jwt });
    await send(proxy.url, 'POST', '/api/album/open-all-packs', { token: jwt });
    assert.equal(handshakes, 1, 'one handshake for two calls of one session');
    await send(proxy.url, 'POST', '/api/album/open-all-packs', { token: fakeJwt() });
    assert.equal(handshakes, 2, 'another session has its own handshake');

    upstream.on('POST', '/sticker/users/me/packs/open-all', (rec, res) => {
      const ok = rec.headers.authorization !== 'Bearer stk-1';
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
      res.end(ok ? '{"packs":[]}' : '{"reason":"invalid_sticker_token"}');
    });
    const res = await send(proxy.url, 'POST', '/api/album/open-all-packs', { token: jwt });
    assert.equal(res.status, 200);
    assert.equal(handshakes, 3, 'a refused remembered token is replaced once');
  });

  test('a refused handshake answers like an upstream 401 (body passed through), nothing else is called', async () => {
    upstream.on('POST', '/sticker/auth/token', { status: 401, text: '{"reason":"token_expired"}' });
    const res = await send(proxy.url, 'GET', '/api/album/bootstrap', { token: fakeJwt() });
    assert.equal(res.status, 401);
    assert.equal(res.text, '{"reason":"token_expired"}');
    assert.equal(sticker().length, 0);
  });

  test('bootstrap: one handshake, then the four targets in parallel, merged', async () => {
    const barrier = new ConcurrencyBarrier(4);
    upstream.on('GET', '/sticker/campaigns/current', barrier.reply({ id: 'c1' }));
    upstream.on('GET', '/sticker/users/me/progress', barrier.reply({ collected: 3 }));
    upstream.on('GET', '/sticker/users/me/stickers', barrier.reply({ data: [] }));
    upstream.on('GET', '/sticker/users/me/checkin', barrier.reply({ daily: {} }));
    const res = await send(proxy.url, 'GET', '/api/album/bootstrap', { token: fakeJwt() });
    assert.equal(barrier.maxInFlight, 4, 'the four targets run at once');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { campaign: { id: 'c1' }, progress: { collected: 3 }, stickers: { data: [] }, checkin: { daily: {} } });
    assert.equal(handshakes, 1);
    assert.deepEqual(
      sticker()
        .map((r) => `${r.method} ${r.path}`)
        .sort(),
      [
        'GET /sticker/campaigns/current',
        'GET /sticker/users/me/checkin',
        'GET /sticker/users/me/progress',
        'GET /sticker/users/me/stickers',
      ],
    );
    for (const r of sticker()) assert.equal(r.headers.authorization, 'Bearer stk-1');
  });

  test('bootstrap: a failing target fails the whole answer through the envelope', async () => {
    upstream.on('GET', '/sticker/users/me/stickers', { status: 500, json: { message: 'Sticker store down' } });
    const res = await send(proxy.url, 'GET', '/api/album/bootstrap', { token: fakeJwt() });
    assert.equal(res.status, 500);
    assert.equal((res.json as Record<string, unknown>).detail, 'Sticker store down');
  });

  test('checkin: POST /users/me/checkin/claim?claimType=<daily|completion>; other values are a 400', async () => {
    const jwt = fakeJwt();
    upstream.on('POST', '/sticker/users/me/checkin/claim', {
      status: 409,
      json: { reason: 'already_claimed_today', message: 'Already claimed' },
    });
    const res = await send(proxy.url, 'POST', '/api/album/checkin?claimType=completion', { token: jwt });
    assert.equal(res.status, 409);
    assert.deepEqual(res.json, { ok: false, error: 'already_claimed_today', detail: 'Already claimed' });
    const [call] = sticker();
    assert.equal(call?.path, '/sticker/users/me/checkin/claim');
    assert.equal(call?.query, 'claimType=completion');
    upstream.requests.length = 0;
    for (const q of ['', '?claimType=weekly', '?claimType=']) {
      assert.equal((await send(proxy.url, 'POST', `/api/album/checkin${q}`, { token: jwt })).status, 400, q);
    }
    assert.equal(upstream.requests.length, 0);
  });

  test('claim-featured: POST /users/me/featured/{featuredId}/redeem from the body or the query; unsafe ids are a 400', async () => {
    const jwt = fakeJwt();
    await send(proxy.url, 'POST', '/api/album/claim-featured', { token: jwt, json: { featuredId: 'feat-legend' } });
    await send(proxy.url, 'POST', '/api/album/claim-featured?featuredId=7', { token: jwt });
    assert.deepEqual(
      sticker().map((r) => `${r.method} ${r.path}`),
      ['POST /sticker/users/me/featured/feat-legend/redeem', 'POST /sticker/users/me/featured/7/redeem'],
    );
    upstream.requests.length = 0;
    for (const [path, json] of [
      ['/api/album/claim-featured', { featuredId: '../packs/open' }],
      ['/api/album/claim-featured', { featuredId: 'a/b' }],
      ['/api/album/claim-featured?featuredId=..%2Fx', undefined],
      ['/api/album/claim-featured', undefined],
      ['/api/album/claim-featured', { featuredId: true }],
    ] as const) {
      const res = await send(proxy.url, 'POST', path, json === undefined ? { token: jwt } : { token: jwt, json });
      assert.equal(res.status, 400, `${path} ${JSON.stringify(json)}`);
    }
    assert.equal(upstream.requests.length, 0);
  });

  test('open-pack and open-all-packs: POST /users/me/packs/open and /open-all', async () => {
    const jwt = fakeJwt();
    await send(proxy.url, 'POST', '/api/album/open-pack', { token: jwt, json: { packId: 'p-1' } });
    await send(proxy.url, 'POST', '/api/album/open-all-packs', { token: jwt });
    const calls = sticker();
    assert.equal(calls[0]?.path, '/sticker/users/me/packs/open');
    assert.deepEqual(calls[0]?.json, { packId: 'p-1' });
    assert.equal(calls[1]?.method, 'POST');
    assert.equal(calls[1]?.path, '/sticker/users/me/packs/open-all');
  });

  test('mission-type: GET /campaigns/current?missionType= from the body or the query; only casino or sportsbook', async () => {
    const jwt = fakeJwt();
    await send(proxy.url, 'POST', '/api/album/mission-type', { token: jwt, json: { missionType: 'sportsbook' } });
    await send(proxy.url, 'POST', '/api/album/mission-type?missionType=casino', { token: jwt });
    assert.deepEqual(
      sticker().map((r) => `${r.method} ${r.path}?${r.query}`),
      ['GET /sticker/campaigns/current?missionType=sportsbook', 'GET /sticker/campaigns/current?missionType=casino'],
    );
    upstream.requests.length = 0;
    assert.equal((await send(proxy.url, 'POST', '/api/album/mission-type', { token: jwt, json: { missionType: 'poker' } })).status, 400);
    assert.equal((await send(proxy.url, 'POST', '/api/album/mission-type?missionType=poker', { token: jwt })).status, 400);
    assert.equal((await send(proxy.url, 'POST', '/api/album/mission-type', { token: jwt })).status, 400);
    assert.equal(upstream.requests.length, 0);
  });
});

describe('spec 4.10 external services', () => {
  test('cashback routes answer 401 without the cookie, with no upstream call', async () => {
    for (const path of ['/api/ftd-cashback/verify', '/api/ftd-cashback/send-cashback']) {
      const res = await send(proxy.url, 'POST', path, { json: {} });
      assert.equal(res.status, 401);
    }
    assert.equal(upstream.requests.length, 0);
  });

  test("verify and send-cashback: POST to their function URLs with the session and the validated body, userId the session user's", async () => {
    const jwt = fakeJwt();
    upstream.on('GET', '/auth/user-profile', { json: { user: { id: 42 }, userInfo: {} } });
    upstream.on('POST', '/ftd/verify', { json: { eligible: true } });
    upstream.on('POST', '/ftd/send', { status: 409, json: { reason: 'already_sent', message: 'Already sent' } });
    const verify = await send(proxy.url, 'POST', '/api/ftd-cashback/verify', { token: jwt, json: { userId: 7 } });
    assert.equal(verify.status, 200);
    assert.deepEqual(verify.json, { eligible: true });
    const sent = await send(proxy.url, 'POST', '/api/ftd-cashback/send-cashback', { token: jwt, json: { depositId: 'd-1' } });
    assert.equal(sent.status, 409);
    assert.deepEqual(sent.json, { ok: false, error: 'already_sent', detail: 'Already sent' });
    const [v, s] = upstream.requests.filter((r) => r.path.startsWith('/ftd/'));
    assert.equal(v?.method, 'POST');
    assert.equal(v?.path, '/ftd/verify');
    assert.deepEqual(v?.json, { userId: 42 }, 'the client wrote 7: the session user is 42');
    assert.equal(v?.headers.authorization, `Bearer ${jwt}`);
    assert.equal(s?.path, '/ftd/send');
    assert.deepEqual(s?.json, { depositId: 'd-1', userId: 42 });
    upstream.requests.length = 0;
    upstream.on('GET', '/auth/user-profile', { status: 401, json: { message: 'expired' } });
    const other = fakeJwt({ n: 2 });
    assert.equal((await send(proxy.url, 'POST', '/api/ftd-cashback/verify', { token: other, json: { userId: 7 } })).status, 401);
    assert.equal(upstream.requests.filter((r) => r.path.startsWith('/ftd/')).length, 0, 'no profile, no cashback call');
    upstream.requests.length = 0;
    const bad = await send(proxy.url, 'POST', '/api/ftd-cashback/verify', { token: jwt, json: { amount: 100000 } });
    assert.equal(bad.status, 400);
    assert.equal(upstream.requests.length, 0);
  });

  test('tracking/attribution: a validated event with server fields, no session and no cookie upstream', async () => {
    upstream.on('POST', '/attribution', { status: 202, json: { id: 'e1', internal: 'x' } });
    const res = await send(proxy.url, 'POST', '/api/tracking/attribution', {
      token: fakeJwt(),
      json: { event: 'sign_up', value: 10, currency: 'BRL', properties: { plan: 'a' } },
      headers: {
        cookie: `_ga=GA1.1.111.222; cookie_tracking=${encodeURIComponent(JSON.stringify({ utm_source: 'news' }))}`,
        'user-agent': 'test-agent',
      },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { ok: true });
    const rec = only();
    assert.equal(rec.method, 'POST');
    assert.equal(rec.path, '/attribution');
    assert.equal(rec.headers.authorization, undefined);
    assert.equal(rec.headers.cookie, undefined);
    const body = rec.json as Record<string, unknown>;
    assert.equal(body.event, 'sign_up');
    assert.equal(body.utm_source, 'news');
    assert.equal(body.ga_client_id, '111.222');
    assert.equal(body.ip, '127.0.0.1');
    assert.equal(body.user_agent, 'test-agent');
    assert.equal(typeof body.timestamp, 'number');
  });

  test('tracking/attribution: invalid events are a 400; a refusal by the provider is a 502, never a 401', async () => {
    for (const json of [
      {},
      { event: 'bad event' },
      { event: 'ok', extra: { nested: 1 } },
      { event: 'ok', properties: { a: { deep: 1 } } },
    ]) {
      assert.equal((await send(proxy.url, 'POST', '/api/tracking/attribution', { json })).status, 400, JSON.stringify(json));
    }
    assert.equal(upstream.requests.length, 0);
    upstream.on('POST', '/attribution', { status: 401, json: { reason: 'invalid_api_key' } });
    const res = await send(proxy.url, 'POST', '/api/tracking/attribution', { json: { event: 'sign_up' } });
    assert.equal(res.status, 502);
    assert.equal((res.json as Record<string, unknown>).error, 'attribution_rejected');
  });
});

function only(): Recorded {
  assert.equal(upstream.requests.length, 1, upstream.requests.map((r) => r.path).join(', '));
  return upstream.requests[0] as Recorded;
}

describe('spec 4.10 infrastructure', () => {
  test('version answers { buildId } from BUILD_ID; clear-cache sends Clear-Site-Data; neither calls upstream', async () => {
    const version = await send(proxy.url, 'GET', '/api/version');
    assert.equal(version.status, 200);
    assert.deepEqual(version.json, { buildId: 'build-42' });
    const clear = await send(proxy.url, 'GET', '/api/clear-cache');
    assert.equal(clear.status, 200);
    assert.equal(clear.headers.get('clear-site-data'), '"cache"');
    assert.equal(upstream.requests.length, 0);
  });

  test('cache/purge needs the operator credential, not a session', async () => {
    const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer wrong-token-0000000000' }, { authorization: OPERATOR }];
    for (const headers of attempts) {
      const res = await send(proxy.url, 'POST', '/api/cache/purge', { headers, token: fakeJwt() });
      assert.equal(res.status, 401, JSON.stringify(headers));
    }
    assert.equal(upstream.requests.length, 0);
  });

  test("cache/purge empties the proxy's caches and calls POST {cache_purge_url} without credentials", async () => {
    upstream.on('GET', '/casino-games/list/', { json: { data: [] } });
    await send(proxy.url, 'GET', '/api/games/list');
    assert.ok((proxy.app.deps.caches.get('catalogue')?.size ?? 0) > 0);
    upstream.requests.length = 0;
    const res = await send(proxy.url, 'POST', '/api/cache/purge', {
      headers: { authorization: `Bearer ${OPERATOR}` },
      json: { paths: ['/casino'] },
    });
    assert.equal(res.status, 200);
    const body = res.json as { ok: boolean; cleared: Record<string, number>; upstream: string };
    assert.equal(body.ok, true);
    assert.equal(body.upstream, 'purged');
    assert.equal(body.cleared.catalogue, 1);
    assert.equal(proxy.app.deps.caches.get('catalogue')?.size, 0);
    const rec = only();
    assert.equal(rec.method, 'POST');
    assert.equal(rec.path, '/purge');
    assert.deepEqual(rec.json, { paths: ['/casino'] });
    assert.equal(rec.headers.authorization, undefined);
  });

  test('cache/purge: a failing purge endpoint still empties the local caches (502 purge_rejected)', async () => {
    upstream.on('POST', '/purge', { status: 500, json: {} });
    const res = await send(proxy.url, 'POST', '/api/cache/purge', { headers: { authorization: `Bearer ${OPERATOR}` } });
    assert.equal(res.status, 502);
    const body = res.json as Record<string, unknown>;
    assert.equal(body.error, 'purge_rejected');
    assert.equal(typeof body.cleared, 'object');
    assert.equal(
      (await send(proxy.url, 'POST', '/api/cache/purge', { headers: { authorization: `Bearer ${OPERATOR}` }, json: { tags: 'bogus' } }))
        .status,
      400,
    );
  });
});

describe('docs/behaviour.md "Configuration": not_configured', () => {
  test('without the external URLs the routes that need them answer 503 not_configured; purge without CACHE_PURGE_TOKEN too', async () => {
    const app = await createServer({ NODE_ENV: 'test', LOG_LEVEL: 'silent', BFF_BASE_URL: upstream.url });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const jwt = fakeJwt();
      const cases: [string, string, unknown, string][] = [
        ['POST', '/api/ftd-cashback/verify', {}, 'FTD_CASHBACK_VERIFY_URL is not set'],
        ['POST', '/api/ftd-cashback/send-cashback', {}, 'FTD_CASHBACK_SEND_URL is not set'],
        ['POST', '/api/tracking/attribution', { event: 'sign_up' }, 'ATTRIBUTION_S2S_URL is not set'],
        ['GET', '/api/album/bootstrap', undefined, 'STICKER_API_URL is not set'],
        ['POST', '/api/cache/purge', undefined, 'CACHE_PURGE_TOKEN is not set'],
      ];
      for (const [method, path, json, detail] of cases) {
        const res = await send(base, method, path, json === undefined ? { token: jwt } : { token: jwt, json });
        assert.equal(res.status, 503, path);
        assert.deepEqual(res.json, { ok: false, error: 'not_configured', detail });
      }
      assert.equal(upstream.requests.length, 0);
    } finally {
      await app.close();
    }
  });
});
