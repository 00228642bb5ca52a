// docs/behaviour.md "Rate limits and client address": the limits over real sockets, counted upstream calls.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  fakeJwt,
  type RecordingUpstream,
  send,
  startProxy,
  startRecordingUpstream,
  type TestProxy,
  type UpstreamReply,
} from './helpers/recording-upstream.js';
import { canonicalLogin } from '../src/state/login-failures.js';
import { HAVE_REDIS, type RedisFleet, startRedisFleet, type TestRedis } from './helpers/redis-server.js';

const LOGIN = '/auth/login';
const OFF = {
  RATE_LIMIT_PREAUTH_PER_MIN: '0',
  RATE_LIMIT_LOGIN_FAILURES: '0',
  RATE_LIMIT_BEACON_PER_MIN: '0',
  RATE_LIMIT_API_PER_MIN: '0',
};
const login = (name: string) => ({ login: name, password: 'wrong-password' });
const calls = (upstream: RecordingUpstream, path: string) => upstream.requests.filter((r) => r.path === path).length;
const RIGHT = 'the-right-password';
/** The BFF's login: 200 with a session for the right password, else 401. */
const rightPassword: UpstreamReply = (req, res) => {
  const ok = (req.json as { password?: string }).password === RIGHT;
  res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify(
      ok
        ? { access_token: fakeJwt({ sub: '7' }), token_type: 'bearer', expires_in: 3600, user: { id: 7 } }
        : { error: 'invalid_credentials' },
    ),
  );
};
const BEACON = {
  ref: 'EP0003-EM0003',
  endpointCode: 'EP0003',
  errorCode: 'EM0003',
  status: 401,
  reason: 'token_expired',
  url: '/api/auth/profile',
  initiator: 'test',
  pathname: '/wallet',
  timestamp: 1,
  hadCookie: true,
  userAgentShort: 'test',
};

function assertRefused(res: Awaited<ReturnType<typeof send>>) {
  assert.equal(res.status, 429);
  assert.equal((res.json as { error: string }).error, 'rate_limited');
  assert.ok(Number(res.headers.get('retry-after')) >= 1, `Retry-After ${res.headers.get('retry-after')}`);
}

describe('canonicalLogin', () => {
  const cases: [string, string][] = [
    ['52998224725', '52998224725'],
    ['529.982.247-25', '52998224725'],
    ['529.982.247/25', '52998224725'],
    [' 529 982 247 25\t', '52998224725'],
    ['５２９.９８２.２４７-２５', '52998224725'],
    ['12.345.678/0001-95', '12345678000195'],
    ['  Victim@Example.COM ', 'victim@example.com'],
    ['ｖｉｃｔｉｍ@example.com', 'victim@example.com'],
    ['user-1.2', 'user-1.2'],
    ['---', '---'],
  ];
  for (const [login, expected] of cases)
    test(`${JSON.stringify(login)} → ${expected}`, () => assert.equal(canonicalLogin(login), expected));
});

describe('rate limits', () => {
  let upstream: RecordingUpstream;
  const proxies: TestProxy[] = [];
  const reset = () => {
    upstream.reset();
    upstream.on('POST', LOGIN, { status: 401, json: { error: 'invalid_credentials', message: 'wrong login or password' } });
  };
  const start = async (env: Record<string, string>) => {
    const proxy = await startProxy(upstream.url, { ...OFF, ...env });
    proxies.push(proxy);
    return proxy;
  };
  before(async () => {
    upstream = await startRecordingUpstream();
    upstream.on('POST', LOGIN, { status: 401, json: { error: 'invalid_credentials', message: 'wrong login or password' } });
  });
  after(async () => {
    for (const p of proxies) await p.close();
    await upstream.close();
  });

  test('password guessing stops at RATE_LIMIT_LOGIN_FAILURES failures per login and address; another login is not locked', async () => {
    const proxy = await start({ RATE_LIMIT_LOGIN_FAILURES: '5' });
    reset();
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await send(proxy.url, 'POST', '/api/auth/login', { json: login('victim@example.com') });
      statuses.push(res.status);
      if (i >= 5) assertRefused(res);
    }
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429, 429]);
    assert.equal(calls(upstream, LOGIN), 5, 'the BFF saw 5 attempts of 8');
    assert.equal((await send(proxy.url, 'POST', '/api/auth/login', { json: login('Other@Example.com') })).status, 401);
    assertRefused(await send(proxy.url, 'POST', '/api/auth/login', { json: login('  VICTIM@example.com') }));
  });

  test('pre-authentication routes share one limit per address; nothing reaches the BFF past it', async () => {
    const proxy = await start({ RATE_LIMIT_PREAUTH_PER_MIN: '3' });
    reset();
    const recovery = { step: 'options', login: 'a@example.com' };
    const requests: [string, unknown][] = [
      ['/api/auth/login', login('a@example.com')],
      ['/api/auth/recovery', recovery],
      ['/api/auth/login', login('a@example.com')],
    ];
    for (const [path, json] of requests) {
      const res = await send(proxy.url, 'POST', path, { json });
      assert.ok(res.status !== 429 && res.status !== 404 && res.status !== 400, `${path}: ${res.status}`);
    }
    const seen = upstream.requests.length;
    assert.equal(seen, 3);
    assertRefused(await send(proxy.url, 'POST', '/api/auth/recovery', { json: recovery }));
    assertRefused(await send(proxy.url, 'POST', '/api/auth/login', { json: login('b@example.com') }));
    assert.equal(upstream.requests.length, seen, 'refused requests call nothing upstream');
  });

  test('behind a trusted proxy: two client addresses counted apart, the chain sent upstream ends in the client', async () => {
    const proxy = await start({ RATE_LIMIT_PREAUTH_PER_MIN: '2', TRUSTED_PROXIES: '127.0.0.1' });
    reset();
    const from = (address: string) => ({ 'x-forwarded-for': `198.51.100.9, ${address}` });
    for (const address of ['203.0.113.1', '203.0.113.2']) {
      for (let i = 0; i < 2; i++) {
        assert.equal(
          (await send(proxy.url, 'POST', '/api/auth/login', { json: login('x@example.com'), headers: from(address) })).status,
          401,
        );
      }
      assertRefused(await send(proxy.url, 'POST', '/api/auth/login', { json: login('x@example.com'), headers: from(address) }));
    }
    const chains = upstream.requests.filter((r) => r.path === LOGIN).map((r) => r.headers['x-forwarded-for']);
    assert.deepEqual(chains, [
      '198.51.100.9, 203.0.113.1',
      '198.51.100.9, 203.0.113.1',
      '198.51.100.9, 203.0.113.2',
      '198.51.100.9, 203.0.113.2',
    ]);
  });

  test('from an untrusted peer a spoofed X-Forwarded-For is ignored: counted and sent as the socket address', async () => {
    const proxy = await start({ RATE_LIMIT_PREAUTH_PER_MIN: '2' });
    reset();
    for (let i = 0; i < 2; i++) {
      const res = await send(proxy.url, 'POST', '/api/auth/login', {
        json: login('y@example.com'),
        headers: { 'x-forwarded-for': `192.0.2.${i}` },
      });
      assert.equal(res.status, 401);
    }
    assertRefused(
      await send(proxy.url, 'POST', '/api/auth/login', { json: login('y@example.com'), headers: { 'x-forwarded-for': '192.0.2.77' } }),
    );
    assert.deepEqual(
      upstream.requests.map((r) => r.headers['x-forwarded-for']),
      ['127.0.0.1', '127.0.0.1'],
    );
  });

  test('the beacon: a flood stops at RATE_LIMIT_BEACON_PER_MIN', async () => {
    const proxy = await start({ RATE_LIMIT_BEACON_PER_MIN: '10' });
    const beacon = {
      ref: 'EP0003-EM0003',
      endpointCode: 'EP0003',
      errorCode: 'EM0003',
      status: 401,
      reason: 'token_expired',
      url: '/api/auth/profile',
      initiator: 'test',
      pathname: '/wallet',
      timestamp: 1,
      hadCookie: true,
      userAgentShort: 'test',
    };
    const statuses = [];
    for (let i = 0; i < 12; i++) statuses.push((await send(proxy.url, 'POST', '/api/logs/auth-logout', { json: beacon })).status);
    assert.deepEqual(statuses, [...Array(10).fill(204), 429, 429]);
  });

  test('the general limit counts per session: one session refused, another one served', async () => {
    const proxy = await start({ RATE_LIMIT_API_PER_MIN: '5' });
    reset();
    const [a, b] = [fakeJwt({ n: 1 }), fakeJwt({ n: 2 })];
    for (let i = 0; i < 5; i++) assert.equal((await send(proxy.url, 'GET', '/api/user/last-casino-games', { token: a })).status, 200);
    assertRefused(await send(proxy.url, 'GET', '/api/user/last-casino-games', { token: a }));
    assert.equal((await send(proxy.url, 'GET', '/api/user/last-casino-games', { token: b })).status, 200);
    assert.equal(calls(upstream, '/bff/games/user-last-casino-games-dl'), 6);
  });

  test("a refusal of the session, pre-auth and beacon limits carries X-RateLimit-* beside Retry-After; an answer let through and the ceiling's refusal none", async () => {
    const proxy = await start({ RATE_LIMIT_API_PER_MIN: '2', RATE_LIMIT_PREAUTH_PER_MIN: '1', RATE_LIMIT_BEACON_PER_MIN: '1' });
    reset();
    const names = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];
    const none = (res: Awaited<ReturnType<typeof send>>, what: string) => {
      for (const name of names) assert.equal(res.headers.get(name), null, `${what}: ${name}`);
    };
    const refusedWith = (res: Awaited<ReturnType<typeof send>>, limit: number) => {
      assertRefused(res);
      const retryAfter = Number(res.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
      assert.equal(res.headers.get('x-ratelimit-limit'), String(limit));
      assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
      assert.equal(res.headers.get('x-ratelimit-reset'), String(retryAfter));
    };
    const token = fakeJwt({ n: 'headers' });
    for (let i = 0; i < 2; i++) {
      const res = await send(proxy.url, 'GET', '/api/user/last-casino-games', { token });
      assert.equal(res.status, 200);
      none(res, `session request ${i + 1}`);
    }
    refusedWith(await send(proxy.url, 'GET', '/api/user/last-casino-games', { token }), 2);
    const first = await send(proxy.url, 'POST', '/api/auth/login', { json: login('h@example.com') });
    assert.equal(first.status, 401);
    none(first, 'the first login');
    refusedWith(await send(proxy.url, 'POST', '/api/auth/login', { json: login('h@example.com') }), 1);
    assert.equal((await send(proxy.url, 'POST', '/api/logs/auth-logout', { json: BEACON })).status, 204);
    refusedWith(await send(proxy.url, 'POST', '/api/logs/auth-logout', { json: BEACON }), 1);

    const ceiling = await start({ RATE_LIMIT_API_PER_MIN: '5', RATE_LIMIT_API_PER_ADDRESS_PER_MIN: '1' });
    assert.equal((await send(ceiling.url, 'GET', '/api/user/last-casino-games', { token: fakeJwt({ n: 'one' }) })).status, 200);
    const refused = await send(ceiling.url, 'GET', '/api/user/last-casino-games', { token: fakeJwt({ n: 'two' }) });
    assertRefused(refused);
    none(refused, "the ceiling's refusal");
  });

  test('the address ceiling holds over rotating session cookies (RATE_LIMIT_API_PER_ADDRESS_PER_MIN), beside the per-session limit', async () => {
    const proxy = await start({ RATE_LIMIT_API_PER_MIN: '3', RATE_LIMIT_API_PER_ADDRESS_PER_MIN: '8' });
    reset();
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await send(proxy.url, 'GET', '/api/user/last-casino-games', { token: fakeJwt({ n: i, rotating: true }) });
      statuses.push(res.status);
      if (i >= 8) assertRefused(res);
    }
    assert.deepEqual(statuses, [...Array(8).fill(200), 429, 429, 429, 429]);
    assert.equal(calls(upstream, '/bff/games/user-last-casino-games-dl'), 8, 'the BFF saw only what the ceiling let through');
    // Requests without a session count in the same ceiling.
    assertRefused(await send(proxy.url, 'GET', '/api/games/list'));

    // Another address (behind a trusted proxy) has its own ceiling; one session still stops at its own limit.
    const behind = await start({ RATE_LIMIT_API_PER_MIN: '3', RATE_LIMIT_API_PER_ADDRESS_PER_MIN: '8', TRUSTED_PROXIES: '127.0.0.1' });
    reset();
    const session = fakeJwt({ n: 'one' });
    const from = { 'x-forwarded-for': '203.0.113.50' };
    for (let i = 0; i < 3; i++)
      assert.equal((await send(behind.url, 'GET', '/api/user/last-casino-games', { token: session, headers: from })).status, 200);
    assertRefused(await send(behind.url, 'GET', '/api/user/last-casino-games', { token: session, headers: from }));
    assert.equal((await send(behind.url, 'GET', '/api/user/last-casino-games', { token: fakeJwt(), headers: from })).status, 200);
    assert.equal(
      (await send(behind.url, 'GET', '/api/user/last-casino-games', { token: fakeJwt(), headers: { 'x-forwarded-for': '203.0.113.51' } }))
        .status,
      200,
    );
  });

  test('behind a trusted proxy, 30 addresses of one IPv6 /64 are one client: login failures, pre-auth and the beacon each stop at their limit', async () => {
    const proxy = await start({ RATE_LIMIT_LOGIN_FAILURES: '5', TRUSTED_PROXIES: '127.0.0.1' });
    reset();
    upstream.on('POST', LOGIN, rightPassword);
    const statuses: number[] = [];
    for (let i = 1; i <= 30; i++) {
      const res = await send(proxy.url, 'POST', '/api/auth/login', {
        json: login('victim@example.com'),
        headers: { 'x-forwarded-for': `2001:db8:7:7:${i.toString(16)}::${i}` },
      });
      statuses.push(res.status);
    }
    assert.deepEqual(statuses, [...Array(5).fill(401), ...Array(25).fill(429)]);
    const right = await send(proxy.url, 'POST', '/api/auth/login', {
      json: { login: 'victim@example.com', password: RIGHT },
      headers: { 'x-forwarded-for': '2001:db8:7:7:ffff::1' },
    });
    assertRefused(right);
    assert.equal(calls(upstream, LOGIN), 5, 'the BFF saw 5 guesses, never the right password from the /64');
    const elsewhere = await send(proxy.url, 'POST', '/api/auth/login', {
      json: { login: 'victim@example.com', password: RIGHT },
      headers: { 'x-forwarded-for': '2001:db8:7:8::1' },
    });
    assert.equal(elsewhere.status, 200, 'the user, from another /64, is not locked out');

    const preauth = await start({ RATE_LIMIT_PREAUTH_PER_MIN: '3', RATE_LIMIT_BEACON_PER_MIN: '2', TRUSTED_PROXIES: '127.0.0.1' });
    reset();
    const pre = [];
    for (let i = 1; i <= 6; i++) {
      pre.push(
        (
          await send(preauth.url, 'POST', '/api/auth/login', {
            json: login(`u${i}@example.com`),
            headers: { 'x-forwarded-for': `2001:db8:9:9::${i}` },
          })
        ).status,
      );
    }
    assert.deepEqual(pre, [401, 401, 401, 429, 429, 429]);
    const beacons = [];
    for (let i = 1; i <= 4; i++) {
      beacons.push(
        (await send(preauth.url, 'POST', '/api/logs/auth-logout', { json: BEACON, headers: { 'x-forwarded-for': `2001:db8:9:9:${i}::1` } }))
          .status,
      );
    }
    assert.deepEqual(beacons, [204, 204, 429, 429]);
  });

  test('a document number counts as its digits: every spelling of one CPF is one count, the right password refused after it', async () => {
    const proxy = await start({ RATE_LIMIT_LOGIN_FAILURES: '5' });
    reset();
    upstream.on('POST', LOGIN, rightPassword);
    for (let i = 0; i < 5; i++)
      assert.equal((await send(proxy.url, 'POST', '/api/auth/login', { json: login('52998224725') })).status, 401);
    for (const spelling of [
      '529.982.247-25',
      '529982247-25',
      '5299822472-5',
      '529.982.247/25',
      ' 529 982 247 25 ',
      '５２９９８２２４７２５',
    ]) {
      assertRefused(await send(proxy.url, 'POST', '/api/auth/login', { json: { login: spelling, password: RIGHT } }));
    }
    assert.equal(calls(upstream, LOGIN), 5);
    assert.equal(
      (await send(proxy.url, 'POST', '/api/auth/login', { json: login('111.444.777-35') })).status,
      401,
      'another CPF has its own count',
    );
  });

  test('RATE_LIMIT_LOGIN_FAILURES_PER_LOGIN caps one login over all addresses; the second-factor step counts in the same bucket', async () => {
    const proxy = await start({ RATE_LIMIT_LOGIN_FAILURES: '5', RATE_LIMIT_LOGIN_FAILURES_PER_LOGIN: '8', TRUSTED_PROXIES: '127.0.0.1' });
    reset();
    const statuses: number[] = [];
    for (let i = 1; i <= 10; i++) {
      statuses.push(
        (
          await send(proxy.url, 'POST', '/api/auth/login', {
            json: login('Spread@Example.com'),
            headers: { 'x-forwarded-for': `198.51.100.${i}` },
          })
        ).status,
      );
    }
    assert.deepEqual(statuses, [...Array(8).fill(401), 429, 429], 'a guess spread over ten addresses stops at 8');
    assert.equal(
      (
        await send(proxy.url, 'POST', '/api/auth/login', {
          json: login('other@example.com'),
          headers: { 'x-forwarded-for': '198.51.100.1' },
        })
      ).status,
      401,
    );

    // The BFF answers `type: "two_factor_code"` again to a wrong code: each counts as a failure.
    upstream.on('POST', LOGIN, { json: { type: 'two_factor_code' } });
    const codes: number[] = [];
    for (let code = 100_000; code < 100_007; code++) {
      codes.push(
        (await send(proxy.url, 'POST', '/api/auth/login', { json: { login: '2fa@example.com', password: RIGHT, two_factor_code: code } }))
          .status,
      );
    }
    assert.deepEqual(codes, [200, 200, 200, 200, 200, 429, 429]);
    for (let i = 0; i < 6; i++) {
      const res = await send(proxy.url, 'POST', '/api/auth/login', { json: { login: 'first@example.com', password: RIGHT } });
      assert.equal(res.status, 200, 'being asked for the code without sending one is no failure');
    }
  });

  test('health and readiness are never limited', async () => {
    const proxy = await start({ RATE_LIMIT_API_PER_MIN: '1' });
    for (let i = 0; i < 5; i++) assert.equal((await send(proxy.url, 'GET', '/healthz')).status, 200);
  });
});

describe('rate limits shared through Redis', { skip: HAVE_REDIS ? false : 'redis-server is not installed (.ci/run installs it)' }, () => {
  let redis: TestRedis;
  let upstream: RecordingUpstream;
  let a: TestProxy;
  let b: TestProxy;
  let fleet: RedisFleet | undefined;
  before(async () => {
    fleet = await startRedisFleet(2, { ...OFF, RATE_LIMIT_PREAUTH_PER_MIN: '4', RATE_LIMIT_LOGIN_FAILURES: '3' }, (up) =>
      up.on('POST', LOGIN, { status: 401, json: { error: 'invalid_credentials' } }),
    );
    ({ redis, upstream } = fleet);
    [a, b] = fleet.proxies as [TestProxy, TestProxy];
  });
  after(() => fleet?.close());

  test('every instance counts the same failed logins and pre-authentication requests; Redis down: each counts for itself', async () => {
    const attempt = (proxy: TestProxy, who: string) => send(proxy.url, 'POST', '/api/auth/login', { json: login(who) });
    assert.equal((await attempt(a, 'z@example.com')).status, 401);
    assert.equal((await attempt(b, 'z@example.com')).status, 401);
    assert.equal((await attempt(a, 'z@example.com')).status, 401);
    assertRefused(await attempt(b, 'z@example.com'));
    assert.equal(calls(upstream, LOGIN), 3, 'three failures in all, whichever instance saw them');
    assertRefused(await attempt(a, 'w@example.com'));
    await redis.kill();
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await attempt(a, 'v@example.com')).status, 401, 'per-process counting while Redis is down');
    await redis.start();
  });
});
