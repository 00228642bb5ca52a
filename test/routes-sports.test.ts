/**
 * spec 4.7 Sports against a recording upstream over real sockets: upstream method, path and query of
 * every row, 401 without the cookie, debug stripping of the launches, and the raw
 * `/api/core-sportbook/*` passthrough: raw query and body passed through, and encoded traversal
 * variants refused with 400 before any upstream call (sent with a raw client, since fetch normalises).
 */
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { describe, test } from 'node:test';
import { rawRequest } from './helpers/raw-http.js';
import { fakeJwt, type Recorded, send, useProxyWithRecorder } from './helpers/recording-upstream.js';

const { upstream, proxy } = useProxyWithRecorder({ UPSTREAM_TIMEOUT_MS: '2000' });

function only(): Recorded {
  assert.equal(upstream.requests.length, 1, `one upstream call, got ${upstream.requests.map((r) => `${r.method} ${r.path}`).join(', ')}`);
  return upstream.requests[0] as Recorded;
}

describe('spec 4.7 sportsbook rows', () => {
  test('search (anonymous): GET /core-sportbook/search?search=&limit=&lang=', async () => {
    upstream.on('GET', '/core-sportbook/search', { json: { data: [] } });
    const res = await send(proxy.url, 'GET', '/api/sports/search?search=rio&limit=5&lang=pt-BR&debug=1');
    assert.equal(res.status, 200);
    const rec = only();
    assert.equal(rec.path, '/core-sportbook/search');
    assert.equal(rec.query, 'search=rio&limit=5&lang=pt-BR');
    assert.equal(rec.headers.authorization, undefined);
    assert.equal((await send(proxy.url, 'GET', '/api/sports/search')).status, 400);
    assert.equal((await send(proxy.url, 'GET', '/api/sports/search?search=x&limit=500')).status, 400);
    assert.equal(upstream.requests.length, 1);
  });

  test('search forwards a present session (docs/behaviour.md "Which routes need a session")', async () => {
    const jwt = fakeJwt();
    await send(proxy.url, 'GET', '/api/sports/search?search=rio', { token: jwt });
    assert.equal(only().headers.authorization, `Bearer ${jwt}`);
  });

  test('launch, partner-a-jwt and partner-b-token answer 401 without the cookie, with no upstream call', async () => {
    for (const [method, path] of [
      ['GET', '/api/sports/launch'],
      ['POST', '/api/sports/partner-a-jwt'],
      ['GET', '/api/sports/partner-b-token'],
    ] as const) {
      const res = await send(proxy.url, method, path);
      assert.equal(res.status, 401, path);
      assert.deepEqual(res.json, { reason: 'no_token' });
    }
    assert.equal(upstream.requests.length, 0);
  });

  test('launch: GET /core-sportbook/launch with the session; debug fields removed', async () => {
    upstream.on('GET', '/core-sportbook/launch', { json: { url: 'https://sb/?t=1', debug: { api_key: 'k' }, upstream_request: {} } });
    const jwt = fakeJwt();
    const res = await send(proxy.url, 'GET', '/api/sports/launch?device=mobile', { token: jwt });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { url: 'https://sb/?t=1' });
    const rec = only();
    assert.equal(rec.path, '/core-sportbook/launch');
    assert.equal(rec.query, 'device=mobile');
    assert.equal(rec.headers.authorization, `Bearer ${jwt}`);
  });

  test('anonymous-launch: GET /core-sportbook/anonymous-launch without a session', async () => {
    upstream.on('GET', '/core-sportbook/anonymous-launch', { json: { url: 'https://sb/?guest=1', trace: 'x' } });
    const res = await send(proxy.url, 'GET', '/api/sports/anonymous-launch');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { url: 'https://sb/?guest=1' });
    const rec = only();
    assert.equal(rec.path, '/core-sportbook/anonymous-launch');
    assert.equal(rec.headers.authorization, undefined);
  });

  test('partner-a-jwt: POST /sportsbook-partner-a/get-jwt with an empty JSON body', async () => {
    const jwt = fakeJwt();
    const res = await send(proxy.url, 'POST', '/api/sports/partner-a-jwt', { token: jwt, json: { anything: 1 } });
    assert.equal(res.status, 200);
    const rec = only();
    assert.equal(rec.method, 'POST');
    assert.equal(rec.path, '/sportsbook-partner-a/get-jwt');
    assert.deepEqual(rec.json, {});
    assert.equal(rec.headers.authorization, `Bearer ${jwt}`);
  });

  test('partner-b-token: GET /sportsbook-partner-b/token, the path exactly as the specification writes it', async () => {
    await send(proxy.url, 'GET', '/api/sports/partner-b-token', { token: fakeJwt() });
    const rec = only();
    assert.equal(rec.method, 'GET');
    assert.equal(rec.path, '/sportsbook-partner-b/token');
  });
});

describe('spec 4.7 GET /api/core-sportbook/* raw passthrough', () => {
  test('the sub-path and the raw query reach GET /core-sportbook/{subPath} unchanged; the body passes through', async () => {
    const csv = 'id,home\n1,Rio Tigers\n';
    upstream.on('GET', '/core-sportbook/events/12/odds.csv', { text: csv, headers: { 'content-type': 'text/csv; charset=utf-8' } });
    const res = await rawRequest(proxy.url, 'GET', '/api/core-sportbook/events/12/odds.csv?live=1&x=%20a&arr[]=1&arr[]=2');
    assert.equal(res.status, 200);
    assert.match(res.headers, /content-type: text\/csv; charset=utf-8/i);
    assert.ok(res.body.includes(csv), res.body);
    const rec = only();
    assert.equal(rec.method, 'GET');
    assert.equal(rec.path, '/core-sportbook/events/12/odds.csv');
    assert.equal(rec.query, 'live=1&x=%20a&arr[]=1&arr[]=2');
  });

  test('a #fragment never reaches the upstream (it is not part of an HTTP/1.1 request target)', async () => {
    await rawRequest(proxy.url, 'GET', '/api/core-sportbook/a?b=1#y');
    assert.deepEqual([only().path, only().query], ['/core-sportbook/a', 'b=1']);
    upstream.reset();
    await rawRequest(proxy.url, 'GET', '/api/core-sportbook/a/b#frag?x=1');
    assert.deepEqual([only().path, only().query], ['/core-sportbook/a/b', '']);
  });

  test('a JSON answer that writes the session JWT with \\u escapes is redacted too (a browser would decode it back)', async () => {
    const jwt = fakeJwt({ n: 'escaped' });
    const escaped = [...jwt].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const body = `{"token":"${escaped}","half":"${jwt.slice(0, 10)}${escaped.slice(60)}","other":"\\u00e9t\\u00e9"}`;
    assert.equal(JSON.parse(body).token, jwt, 'the upstream body does hold the JWT');
    upstream.on('GET', '/core-sportbook/escaped', { text: body, headers: { 'content-type': 'application/json' } });
    upstream.on('GET', '/bff/games/user-last-casino-games-dl', { text: body, headers: { 'content-type': 'application/json' } });
    for (const path of ['/api/core-sportbook/escaped', '/api/user/last-casino-games']) {
      const res = await send(proxy.url, 'GET', path, { token: jwt });
      assert.equal(res.status, 200, path);
      const decoded = JSON.parse(res.text) as Record<string, string>;
      assert.equal(decoded.token, '[redacted]', path);
      assert.equal(decoded.other, 'été', 'the rest of the answer is unchanged');
      assert.ok(!JSON.stringify(decoded).includes(jwt), path);
    }
  });

  test('a trailing slash is kept; safe escapes are re-encoded once', async () => {
    await rawRequest(proxy.url, 'GET', '/api/core-sportbook/leagues/S%C3%A3o-Paulo/');
    assert.equal(only().path, '/core-sportbook/leagues/S%C3%A3o-Paulo/');
  });

  test('a present session is forwarded; an upstream 401 passes through; other failures use the envelope', async () => {
    const jwt = fakeJwt();
    upstream.on('GET', '/core-sportbook/me', {
      status: 401,
      text: '{"reason":"token_expired"}',
      headers: { 'content-type': 'application/json' },
    });
    const denied = await send(proxy.url, 'GET', '/api/core-sportbook/me', { token: jwt });
    assert.equal(denied.status, 401);
    assert.equal(denied.text, '{"reason":"token_expired"}');
    assert.equal(upstream.requests[0]?.headers.authorization, `Bearer ${jwt}`);
    upstream.on('GET', '/core-sportbook/echo', (rec, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`you sent ${rec.headers.authorization}`);
    });
    const echo = await send(proxy.url, 'GET', '/api/core-sportbook/echo?x=1', { token: jwt });
    assert.equal(echo.status, 200);
    assert.equal(echo.text, 'you sent Bearer [redacted]', 'the JWT never reaches the body');
    assert.match(echo.headers.get('content-type') ?? '', /^text\/plain/);
    upstream.on('GET', '/core-sportbook/broken', { status: 500, text: 'Traceback at http://10.0.0.1/internal' });
    const broken = await send(proxy.url, 'GET', '/api/core-sportbook/broken');
    assert.equal(broken.status, 500);
    assert.equal((broken.json as Record<string, unknown>).ok, false);
    assert.ok(!broken.text.includes('10.0.0.1'));
  });

  test('a streamed answer whose upstream resets the connection after its headers answers 502 upstream_unavailable, not 500', async () => {
    // The headers arrive first and the reset later, so the streamed body (not the call) fails, with the
    // socket's ECONNRESET, before a byte of it is sent to the client.
    upstream.on('GET', '/core-sportbook/reset', (_rec, res) => {
      const socket = res.socket as Socket;
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 50\r\n\r\n');
      setTimeout(() => socket.resetAndDestroy(), 50);
    });
    const res = await send(proxy.url, 'GET', '/api/core-sportbook/reset');
    assert.equal(res.status, 502);
    assert.equal((res.json as Record<string, unknown>).error, 'upstream_unavailable');
    assert.match(res.headers.get('x-error-ref') ?? '', /^EP\d{4}-EM\d{4}$/);
  });

  const TRAVERSALS = [
    '/api/core-sportbook/../wallet',
    '/api/core-sportbook/./events',
    '/api/core-sportbook/%2e%2e/wallet',
    '/api/core-sportbook/%2E%2E/wallet',
    '/api/core-sportbook/%2E./wallet',
    '/api/core-sportbook/.%2e/wallet',
    '/api/core-sportbook/..%2fwallet',
    '/api/core-sportbook/..%2Fwallet',
    '/api/core-sportbook/events%2f..%2f..%2fwallet',
    '/api/core-sportbook/..%5cwallet',
    '/api/core-sportbook/..\\wallet',
    '/api/core-sportbook/%252e%252e/wallet',
    '/api/core-sportbook/%25252e%25252e/wallet',
    '/api/core-sportbook//wallet',
    '/api/core-sportbook/events//x',
    '/api/core-sportbook/events;/../wallet',
    '/api/core-sportbook/events/..;/wallet',
    '/api/core-sportbook/%00/wallet',
    '/api/core-sportbook/a%0d%0aX-Injected:%201',
    '/api/core-sportbook/%EF%BC%8E%EF%BC%8E/wallet',
    '/api/core-sportbook/\uff0e\uff0e/wallet',
    '/api/core-sportbook/%u002e%u002e/wallet',
    '/api/core-sportbook/%c0%ae%c0%ae/wallet',
    '/api/core-sportbook/',
    '/api/core-sportbook/events?x=\u00e9',
  ];

  test(`${TRAVERSALS.length} encoded traversal and separator variants answer 400 with zero upstream calls`, async () => {
    for (const target of TRAVERSALS) {
      const res = await rawRequest(proxy.url, 'GET', target);
      assert.equal(res.status, 400, `${target} → ${res.status} ${res.body}`);
    }
    assert.equal(upstream.requests.length, 0, upstream.requests.map((r) => r.path).join(', '));
  });

  test('refusals use the envelope `invalid_request`', async () => {
    const res = await rawRequest(proxy.url, 'GET', '/api/core-sportbook/%2e%2e/wallet');
    assert.equal(res.status, 400);
    assert.match(res.body, /"error":"invalid_request"/);
  });
});
