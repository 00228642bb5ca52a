/**
 * `GET /api/auth/session` (beyond the spec; docs/behaviour.md "Which routes need a session"): the
 * session state from the cookie alone. Over real sockets against the proxy with a recording upstream:
 * no cookie, a malformed one, an expired one, a verified one and a forged one (with a PEM key
 * configured), and the same without keys. Every case answers 200 with `Cache-Control: no-store`,
 * clears a refused cookie, and sends nothing upstream. The route counts in the `api` rate limit.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { sessionState } from '../src/routes/auth.js';
import { fakeJwt, type RecordingUpstream, send, startProxy, startRecordingUpstream, type TestProxy } from './helpers/recording-upstream.js';

const ROUTE = '/api/auth/session';
const nowS = () => Math.floor(Date.now() / 1000);

async function rsaSigner() {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  return {
    publicKey,
    token: (expiresInSeconds: number) =>
      new SignJWT({ sub: '7' })
        .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
        .setIssuedAt()
        .setExpirationTime(nowS() + expiresInSeconds)
        .sign(privateKey),
  };
}

/** One case: the cookie sent (`null`: none), the expected body, and whether the answer clears the cookie. */
interface Case {
  name: string;
  cookie: () => Promise<string | null>;
  expected: (cookie: string | null) => unknown;
  cleared: boolean;
}

const expOf = (jwt: string | null): number =>
  (JSON.parse(Buffer.from((jwt ?? '').split('.')[1] ?? '', 'base64url').toString('utf8')) as { exp: number }).exp;

function runCases(setup: () => { proxy: TestProxy; upstream: RecordingUpstream }, cases: readonly Case[]): void {
  for (const c of cases) {
    test(`${c.name} → ${c.cleared ? 'signed out, cookie cleared' : 'answered from the cookie'}; nothing upstream`, async () => {
      const { proxy, upstream } = setup();
      upstream.reset();
      const cookie = await c.cookie();
      const res = await send(proxy.url, 'GET', ROUTE, cookie === null ? {} : { headers: { cookie: `access_token=${cookie}` } });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, c.expected(cookie));
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const setCookie = res.headers.get('set-cookie') ?? '';
      if (c.cleared) assert.match(setCookie, /^access_token=; Max-Age=0; Path=\/; HttpOnly; SameSite=Lax/);
      else assert.equal(setCookie, '', 'the cookie is left alone');
      if (cookie) assert.ok(!res.text.includes(cookie) && !setCookie.includes(cookie), 'the token is never echoed');
      assert.equal(upstream.requests.length, 0, 'nothing reaches the BFF');
    });
  }
}

const MALFORMED = 'qwertyuiopasdfghjklzxcvbnmqwertyuiopasdf';

describe('GET /api/auth/session without keys (the token checked for its form)', () => {
  let upstream: RecordingUpstream;
  let proxy: TestProxy;
  before(async () => {
    upstream = await startRecordingUpstream();
    proxy = await startProxy(upstream.url);
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
  });
  runCases(
    () => ({ proxy, upstream }),
    [
      { name: 'no cookie', cookie: async () => null, expected: () => ({ signedIn: false }), cleared: false },
      { name: 'a malformed cookie', cookie: async () => MALFORMED, expected: () => ({ signedIn: false }), cleared: true },
      {
        name: 'a well-formed token whose exp passed 2 h ago',
        cookie: async () => fakeJwt({ exp: nowS() - 7200 }),
        expected: () => ({ signedIn: false }),
        cleared: true,
      },
      {
        name: 'a well-formed unexpired token',
        cookie: async () => fakeJwt(),
        expected: (jwt) => ({ signedIn: true, expiresAt: expOf(jwt) }),
        cleared: false,
      },
    ],
  );
});

describe('GET /api/auth/session with a PEM key (JWT_PUBLIC_KEY)', () => {
  let upstream: RecordingUpstream;
  let proxy: TestProxy;
  let good: Awaited<ReturnType<typeof rsaSigner>>;
  let other: Awaited<ReturnType<typeof rsaSigner>>;
  before(async () => {
    good = await rsaSigner();
    other = await rsaSigner();
    upstream = await startRecordingUpstream();
    proxy = await startProxy(upstream.url, { JWT_PUBLIC_KEY: (await exportSPKI(good.publicKey)).trim() });
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
  });
  runCases(
    () => ({ proxy, upstream }),
    [
      { name: 'no cookie', cookie: async () => null, expected: () => ({ signedIn: false }), cleared: false },
      { name: 'a malformed cookie', cookie: async () => MALFORMED, expected: () => ({ signedIn: false }), cleared: true },
      {
        name: 'a verified token',
        cookie: () => good.token(3600),
        expected: (jwt) => ({ signedIn: true, expiresAt: expOf(jwt) }),
        cleared: false,
      },
      { name: 'a verified token expired 2 h ago', cookie: () => good.token(-7200), expected: () => ({ signedIn: false }), cleared: true },
      {
        name: 'a forged token (signed with another key)',
        cookie: () => other.token(3600),
        expected: () => ({ signedIn: false }),
        cleared: true,
      },
      { name: 'an unsigned well-formed token', cookie: async () => fakeJwt(), expected: () => ({ signedIn: false }), cleared: true },
    ],
  );
});

describe('GET /api/auth/session counts in the api rate limit', () => {
  let upstream: RecordingUpstream;
  let proxy: TestProxy;
  before(async () => {
    upstream = await startRecordingUpstream();
    proxy = await startProxy(upstream.url, { RATE_LIMIT_API_PER_MIN: '3' });
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
  });
  test('the fourth call of a minute answers 429 rate_limited, nothing upstream', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await send(proxy.url, 'GET', ROUTE)).status);
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    assert.equal(upstream.requests.length, 0);
  });
});

describe('sessionState (the answer from the accepted token)', () => {
  const now = 1_800_000_000_000;
  const jwt = (payload: object) => `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.c2ln`;
  const cases: [string, string | undefined, unknown][] = [
    ['no token', undefined, { signedIn: false }],
    ['exp in an hour', jwt({ exp: now / 1000 + 3600 }), { signedIn: true, expiresAt: now / 1000 + 3600 }],
    ['exp 30 s ago (within the 60 s leeway)', jwt({ exp: now / 1000 - 30 }), { signedIn: true, expiresAt: now / 1000 - 30 }],
    ['exp 61 s ago', jwt({ exp: now / 1000 - 61 }), { signedIn: false }],
    ['no exp', jwt({ sub: '1' }), { signedIn: true, expiresAt: null }],
    ['a fractional exp', jwt({ exp: now / 1000 + 10.7 }), { signedIn: true, expiresAt: now / 1000 + 10 }],
    ['an exp that is not a number', jwt({ exp: 'soon' }), { signedIn: true, expiresAt: null }],
    ['not a JWT', 'nope', { signedIn: false }],
  ];
  for (const [name, token, expected] of cases) test(name, () => assert.deepEqual(sessionState(token, now), expected));
});
