/**
 * spec 1.6 development-only routes: what each does outside production, and that a production build
 * registers none of them (the route list is inspected) so every variant of their paths answers 404
 * with no upstream call, and that nothing in a request turns debugging on in production.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { rawRequest } from './helpers/raw-http.js';
import { fakeJwt, send, useProxiesWithRecorder } from './helpers/recording-upstream.js';

/** Dev-only paths of spec 1.6 / 4.10, as registered outside production. */
const DEV_PATHS = [
  '/api/dev/cache-clear',
  '/api/dev/cache-policy',
  '/api/dev/proxy/*',
  '/api/dev/visitor-info',
  '/dev/ftd-cashback',
  '/debug',
  '/debug/analytics',
  '/favicon.ico',
];

const {
  upstream,
  proxies: [dev, prod],
} = useProxiesWithRecorder([{ env: { NODE_ENV: 'development', BUILD_ID: 'dev-build' } }, { env: { NODE_ENV: 'production' } }]);

describe('outside production', () => {
  test('every dev-only route is registered', () => {
    for (const url of DEV_PATHS) assert.ok(dev.app.hasRoute({ method: 'GET', url }), url);
    assert.ok(dev.app.hasRoute({ method: 'POST', url: '/api/dev/cache-clear' }));
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) assert.ok(dev.app.hasRoute({ method, url: '/api/dev/proxy/*' }));
  });

  test('cache-clear (GET and POST) empties the caches; cache-policy describes them', async () => {
    upstream.on('GET', '/casino-games/list/', { json: { data: [] } });
    await send(dev.url, 'GET', '/api/games/list');
    const policy = await send(dev.url, 'GET', '/api/dev/cache-policy');
    assert.equal(policy.status, 200);
    const body = policy.json as { policies: Record<string, { ttlMs: unknown }>; sizes: Record<string, number> };
    assert.equal(body.policies.catalogue?.ttlMs, 60_000);
    assert.equal(body.sizes.catalogue, 1);
    for (const method of ['GET', 'POST']) {
      const res = await send(dev.url, method, '/api/dev/cache-clear');
      assert.equal(res.status, 200);
      assert.equal((res.json as { ok: boolean }).ok, true);
    }
    assert.equal(dev.app.deps.caches.get('catalogue')?.size, 0);
    assert.ok(!policy.text.includes(upstream.url), 'no upstream address');
  });

  test('proxy/*: any method to the BFF path with the raw query, the JSON body and the session', async () => {
    const jwt = fakeJwt();
    upstream.on('PATCH', '/bff/users/self-mkt', { json: { ok: 1 } });
    const res = await send(dev.url, 'PATCH', '/api/dev/proxy/bff/users/self-mkt?a=1&b[]=2', { token: jwt, json: { mkt: true } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { ok: 1 });
    const [rec] = upstream.requests;
    assert.equal(rec?.method, 'PATCH');
    assert.equal(rec?.path, '/bff/users/self-mkt');
    assert.equal(rec?.query, 'a=1&b[]=2');
    assert.deepEqual(rec?.json, { mkt: true });
    assert.equal(rec?.headers.authorization, `Bearer ${jwt}`);
  });

  test('proxy/*: the sub-path is checked on the raw URL like the sports passthrough', async () => {
    for (const target of [
      '/api/dev/proxy/../auth/login',
      '/api/dev/proxy/%2e%2e/x',
      '/api/dev/proxy/a%2fb',
      '/api/dev/proxy/a%5cb',
      '/api/dev/proxy/%252e%252e/x',
      '/api/dev/proxy//x',
      '/api/dev/proxy/a;b',
      '/api/dev/proxy/%00',
      '/api/dev/proxy/%EF%BC%8E%EF%BC%8E/x',
      '/api/dev/proxy/',
    ]) {
      const res = await rawRequest(dev.url, 'GET', target);
      assert.equal(res.status, 400, target);
    }
    assert.equal(upstream.requests.length, 0);
  });

  test('visitor-info never echoes cookies or credentials; the pages render', async () => {
    const info = await send(dev.url, 'GET', '/api/dev/visitor-info', {
      token: fakeJwt(),
      headers: { 'cf-ipcountry': 'BR', authorization: 'Bearer secret-value', cookie: 'other=secret-cookie' },
    });
    assert.equal(info.status, 200);
    const body = info.json as Record<string, unknown>;
    assert.deepEqual(body.geo, { 'cf-ipcountry': 'BR' });
    assert.equal(body.hasSession, true);
    assert.ok(!info.text.includes('secret'), info.text);
    const ftd = await send(dev.url, 'GET', '/dev/ftd-cashback');
    assert.equal(ftd.status, 200);
    assert.match(ftd.headers.get('content-type') ?? '', /text\/html/);
    assert.match(ftd.text, /\/api\/ftd-cashback\/verify/);
    const debug = await send(dev.url, 'GET', '/debug');
    assert.equal(debug.status, 200);
    assert.match(debug.text, /dev-build/);
    assert.ok(!debug.text.includes(upstream.url));
    const analytics = await send(dev.url, 'GET', '/debug/analytics', { headers: { cookie: '_ga=GA1.1.123.456' } });
    assert.deepEqual((analytics.json as Record<string, unknown>).gaClientId, '123.456');
    assert.equal(upstream.requests.length, 0);
  });

  test('GET /favicon.ico answers 204 without a body (no 404 in a development page); production answers 404', async () => {
    const icon = await send(dev.url, 'GET', '/favicon.ico');
    assert.equal(icon.status, 204);
    assert.equal(icon.text, '');
    assert.match(icon.headers.get('cache-control') ?? '', /max-age=\d+/);
    const head = await send(dev.url, 'HEAD', '/favicon.ico');
    assert.equal(head.status, 204);
    const inProduction = await send(prod.url, 'GET', '/favicon.ico');
    assert.equal(inProduction.status, 404);
    assert.equal((inProduction.json as { error?: unknown }).error, 'not_found');
    assert.equal(upstream.requests.length, 0);
  });
});

describe('production (NODE_ENV=production)', () => {
  test('the registered routes contain no dev-only route', () => {
    const printed = prod.app.printRoutes({ commonPrefix: false });
    assert.ok(printed.includes('/api/games/list'), 'the list is the real route tree');
    for (const fragment of ['/api/dev', 'dev/', 'debug', 'ftd-cashback (GET']) {
      assert.ok(!printed.includes(fragment), `${fragment} is not registered:\n${printed}`);
    }
    for (const url of DEV_PATHS) {
      for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
        assert.equal(prod.app.hasRoute({ method, url }), false, `${method} ${url}`);
      }
    }
  });

  test('every variant of the dev paths answers 404 like any unknown path, with no upstream call', async () => {
    const probes: [string, string][] = [
      ['GET', '/api/dev/proxy/auth/user-profile'],
      ['POST', '/api/dev/proxy/auth/login'],
      ['GET', '/api/DEV/proxy/auth/user-profile'],
      ['GET', '/api/dev%2fproxy/auth/user-profile'],
      ['GET', '/api/dev%2Fproxy/auth/user-profile'],
      ['GET', '/api//dev/proxy/auth/user-profile'],
      ['GET', '/api/dev/./proxy/auth/user-profile'],
      ['GET', '/api/dev/proxy/../proxy/auth/user-profile'],
      ['GET', '/api/dev/proxy/auth/user-profile/'],
      ['GET', '/api/dev/cache-policy/'],
      ['HEAD', '/api/dev/proxy/auth/user-profile'],
      ['OPTIONS', '/api/dev/proxy/auth/user-profile'],
      ['HEAD', '/api/dev/cache-policy'],
      ['OPTIONS', '/api/dev/cache-clear'],
      ['GET', '/api/dev/cache-clear'],
      ['POST', '/api/dev/cache-clear'],
      ['GET', '/api/dev/cache-policy'],
      ['GET', '/api/dev/visitor-info'],
      ['GET', '/dev/ftd-cashback'],
      ['GET', '/debug'],
      ['GET', '/debug/'],
      ['GET', '/debug/analytics'],
      ['GET', '/DEBUG'],
      ['GET', '/debug?debug=1'],
    ];
    for (const [method, target] of probes) {
      const res = await rawRequest(prod.url, method, target);
      assert.equal(res.status, 404, `${method} ${target} → ${res.status}`);
    }
    assert.equal(upstream.requests.length, 0);
  });

  test('no query parameter, cookie or header turns debugging on: the game start answer carries no debug data', async () => {
    upstream.on('GET', '/start-game-v2', { json: { url: 'https://g/launch', debug: { secret: 's' }, trace_id: 't' } });
    const res = await send(prod.url, 'GET', '/api/games/start?slug=a&debug=1&_debug=true&trace=1', {
      token: fakeJwt(),
      cookieName: '__Host-access_token',
      headers: { 'x-debug': '1', 'x-debug-mode': 'on', cookie: 'debug=1; __debug=true' },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { url: 'https://g/launch' });
    const [rec] = upstream.requests;
    assert.equal(rec?.query, 'slug=a');
    assert.equal(rec?.headers['x-debug'], undefined);
    assert.equal(rec?.headers['x-debug-mode'], undefined);
  });
});
