/**
 * docs/behaviour.md "Live streams", "The session holds the stream", over real sockets: a stream
 * opened with a session ends with `event: session-ended` at the token's `exp`, at a logout on the
 * other of two instances sharing a real redis-server (within 1 s), and when the BFF refuses the
 * token on another call; a stream of another session goes on.
 */
import assert from 'node:assert/strict';
import { after, before, describe, mock, test } from 'node:test';
import { SessionHolds } from '../src/streams/session-holds.js';
import { openSse, startStreamUpstream, type StreamUpstream } from './helpers/live-streams.js';
import { fakeJwt, send, startProxy, type TestProxy } from './helpers/recording-upstream.js';
import { HAVE_REDIS, startRedis, type TestRedis } from './helpers/redis-server.js';

describe('SessionHolds', () => {
  test('an expired token ends at once; an announced end ends every holder of its session, only once', () => {
    let now = 1_000_000;
    const holds = new SessionHolds(() => now);
    const ended: string[] = [];
    holds.hold('k1', now - 1, { endSession: (why) => ended.push(`a:${why}`) });
    holds.hold('k2', undefined, { endSession: (why) => ended.push(`b:${why}`) });
    const release = holds.hold('k2', now + 60_000, { endSession: (why) => ended.push(`c:${why}`) });
    holds.hold('k3', undefined, { endSession: (why) => ended.push(`d:${why}`) });
    holds.end('k2', 'logout');
    holds.end('k2', 'logout');
    release();
    now += 1;
    assert.deepEqual(ended, ['a:expired', 'b:logout', 'c:logout']);
    assert.equal(holds.sessions, 1);
  });
  test("a token's exp ends its holder then; one after the holder's own end (its lifetime) arms nothing", () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
    try {
      const holds = new SessionHolds(() => Date.now());
      const ended: string[] = [];
      const now = Date.now();
      holds.hold('k1', now + 2_000, { endSession: (why) => ended.push(`a:${why}@${Date.now() - now}`) }, 3_000);
      holds.hold('k2', now + 5_000, { endSession: (why) => ended.push(`b:${why}@${Date.now() - now}`) });
      const outlives = holds.hold('k3', now + 5_000, { endSession: (why) => ended.push(`c:${why}`) }, 3_000);
      mock.timers.tick(1_999);
      assert.deepEqual(ended, []);
      mock.timers.tick(1);
      assert.deepEqual(ended, ['a:expired@2000']);
      mock.timers.tick(3_000);
      assert.deepEqual(ended, ['a:expired@2000', 'b:expired@5000'], 'k3 outlives its holder: no timer of its own');
      // Its stream's lifetime ends it (as here its release); an announced end still reaches it until then.
      assert.equal(holds.sessions, 1);
      holds.end('k3', 'logout');
      assert.deepEqual(ended.at(-1), 'c:logout');
      outlives();
    } finally {
      mock.timers.reset();
    }
  });
});

describe('the session ends its streams', { skip: HAVE_REDIS ? false : 'redis-server is not installed' }, () => {
  let redis: TestRedis;
  let upstream: StreamUpstream;
  let a: TestProxy;
  let b: TestProxy;
  before(async () => {
    redis = await startRedis();
    upstream = await startStreamUpstream();
    upstream.byPath.set('/auth/logout', { kind: 'status', status: 200, body: { ok: true } });
    upstream.byPath.set('/core-sportbook/refuses', { kind: 'status', status: 401, body: { reason: 'revoked' } });
    upstream.byPath.set('/auth/login', { kind: 'status', status: 401, body: { reason: 'invalid_credentials', message: 'wrong password' } });
    a = await startProxy(upstream.url, { REDIS_URL: redis.url });
    b = await startProxy(upstream.url, { REDIS_URL: redis.url });
  });
  after(async () => {
    await a.close();
    await b.close();
    await upstream.close();
    await redis.stop();
  });

  test("at the token's exp: event session-ended (expired), then the end", async () => {
    const jwt = fakeJwt({ exp: Math.floor(Date.now() / 1000) + 2 });
    const reader = await openSse(a.url, '/api/core-sportbook/live/bets', { cookie: `access_token=${jwt}` });
    assert.equal(reader.status, 200);
    assert.equal(await reader.ended, 'clean');
    assert.match(reader.text(), /event: session-ended\ndata: \{"reason":"expired"\}\n\n$/);
  });

  test('at a logout on the other instance, within 1 s; another session goes on', async () => {
    const jwt = fakeJwt();
    const other = fakeJwt();
    const reader = await openSse(a.url, '/api/core-sportbook/live/bets', { cookie: `access_token=${jwt}` });
    const bystander = await openSse(a.url, '/api/core-sportbook/live/bets', { cookie: `access_token=${other}` });
    const logout = await send(b.url, 'POST', '/api/auth/logout', { token: jwt, json: {} });
    assert.equal(logout.status, 200);
    const outcome = await Promise.race([reader.ended, new Promise((resolve) => setTimeout(() => resolve('still open'), 1_000))]);
    assert.equal(outcome, 'clean');
    assert.match(reader.text(), /event: session-ended\ndata: \{"reason":"logout"\}\n\n$/);
    const still = await Promise.race([bystander.ended, new Promise((resolve) => setTimeout(() => resolve('open'), 200))]);
    assert.equal(still, 'open');
    bystander.close();
  });

  test('a logout the proxy refused on the way (415) still succeeds and still ends the streams', async () => {
    const jwt = fakeJwt();
    const reader = await openSse(a.url, '/api/core-sportbook/live/bets', { cookie: `access_token=${jwt}` });
    const logout = await send(b.url, 'POST', '/api/auth/logout', { token: jwt, body: 'x', headers: { 'content-type': 'text/plain' } });
    assert.equal(logout.status, 200);
    const outcome = await Promise.race([reader.ended, new Promise((resolve) => setTimeout(() => resolve('still open'), 1_000))]);
    assert.equal(outcome, 'clean');
    assert.match(reader.text(), /event: session-ended\ndata: \{"reason":"logout"\}\n\n$/);
  });

  test('when the BFF refuses the token on another call (a 401), on the other instance; not for a wrong password', async () => {
    const jwt = fakeJwt();
    const reader = await openSse(a.url, '/api/core-sportbook/live/bets', { cookie: `access_token=${jwt}` });
    const login = await send(b.url, 'POST', '/api/auth/login', {
      token: jwt,
      json: { login: 'someone@example.com', password: 'wrong-password' },
    });
    assert.equal(login.status, 401);
    const after = await Promise.race([reader.ended, new Promise((resolve) => setTimeout(() => resolve('open'), 300))]);
    assert.equal(after, 'open', 'a failed login ends no stream');
    const refused = await send(b.url, 'GET', '/api/core-sportbook/refuses', { token: jwt });
    assert.equal(refused.status, 401);
    const outcome = await Promise.race([reader.ended, new Promise((resolve) => setTimeout(() => resolve('still open'), 1_000))]);
    assert.equal(outcome, 'clean');
    assert.match(reader.text(), /event: session-ended\ndata: \{"reason":"refused"\}\n\n$/);
  });
});
