/**
 * docs/behaviour.md "Which routes need a session": the session token is checked before it costs anything.
 * A cookie that is not a well-formed JWT, or carries a control character, answers 401 `invalid_token`
 * on a session route with nothing sent upstream, and counts as no session elsewhere (never forwarded
 * as a Bearer). With the BFF's keys (a local JWKS server, or a PEM key) a bad signature is
 * `invalid_token` and an expired token `token_expired` (60 s leeway), except on refresh and logout.
 * The browser SDK classifies both as the 401 families they are (EM0002, EM0003).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { classifyError } from '../src/errors/index.js';
import { isWellFormedJwt, WELL_FORMED_CACHE_SIZE } from '../src/session/token.js';
import { rawRequest } from './helpers/raw-http.js';
import { fakeJwt, type RecordingUpstream, send, startProxy, startRecordingUpstream, type TestProxy } from './helpers/recording-upstream.js';

const SESSION_ROUTE = '/api/user/last-casino-games';
const SESSION_UPSTREAM = '/bff/games/user-last-casino-games-dl';
const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

describe('isWellFormedJwt', () => {
  const header = enc({ alg: 'RS256', typ: 'JWT' });
  const payload = enc({ sub: '1' });
  const cases: [string, string, boolean][] = [
    ['three parts, JSON header and payload', `${header}.${payload}.c2ln`, true],
    ['an empty signature (alg none form)', `${header}.${payload}.`, true],
    ['a fake JWT of the tests', fakeJwt(), true],
    ['40 random letters', 'qwertyuiopasdfghjklzxcvbnmqwertyuiopasdf', false],
    ['two parts', `${header}.${payload}`, false],
    ['four parts', `${header}.${payload}.c2ln.eA`, false],
    ['a header that is not JSON', `${enc('x').slice(0, 3)}abc.${payload}.c2ln`, false],
    ['a payload that is not an object', `${header}.${enc([1, 2])}.c2ln`, false],
    ['a payload that is not JSON', `${header}.bm90IGpzb24.c2ln`, false],
    ['CR/LF', `${header}.${payload}.c2ln\r\nX-Injected: yes`, false],
    ['NUL', `${header}.${payload}.c2\u0000ln`, false],
    ['U+2028', `${header}.${payload}.c2ln\u2028`, false],
    ['a space', `${header}.${payload}.c2 ln`, false],
    ['base64 padding', `${header}.${payload}.c2ln==`, false],
    ['a percent escape', `${header}.${payload}.c2ln%0d`, false],
    ['standard base64 characters', `${header}.${payload}.c2+l/n`, false],
    ['over 8,192 characters', `${header}.${enc({ sub: 'x'.repeat(8200) })}.c2ln`, false],
    ['empty', '', false],
  ];
  for (const [name, value, expected] of cases) {
    test(`${name} → ${expected}`, () => assert.equal(isWellFormedJwt(value), expected));
  }
});

describe('the well-formed-token cache', () => {
  test('holds no token nor the Cookie header it was cut from: 4,096 tokens of 6 KB cut from 14 KB headers keep under 8 MB alive', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const header = enc({ alg: 'HS256', typ: 'JWT' });
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < WELL_FORMED_CACHE_SIZE; i++) {
      // The token is a slice of the header (as the cookie parser cuts it): keeping it would keep the header.
      const cookie = `pad=${'p'.repeat(6000)}${i}; access_token=${header}.${enc({ sub: String(i), pad: 'q'.repeat(4500) })}.c2ln`;
      assert.ok(isWellFormedJwt(cookie.slice(cookie.indexOf('access_token=') + 13)));
    }
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    // Keyed by the tokens themselves, the cache kept every header alive (about 66 MB measured).
    assert.ok(grown < 8_000_000, `${(grown / 1e6).toFixed(1)} MB kept`);
  });
});

/** Raw `Cookie` header values whose session cookie is not a usable token. */
const MALFORMED_COOKIES: [string, string][] = [
  ['40 random letters (the outside run)', 'access_token=qwertyuiopasdfghjklzxcvbnmqwertyuiopasdf'],
  ['an encoded CR/LF with a header after it', 'access_token=abc%0d%0aX-Injected:%20yes'],
  ['an encoded CR/LF inside a well-formed JWT', `access_token=${fakeJwt()}%0d%0aX-Injected:%20yes`],
  ['an encoded NUL', `access_token=${fakeJwt()}%00`],
  ['an encoded U+2028', `access_token=${fakeJwt()}%E2%80%A8`],
  ['two parts', 'access_token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0'],
  ['a header that is not JSON', 'access_token=abcdefgh.eyJzdWIiOiIxIn0.c2ln'],
];

describe('the token checked for its form (no keys configured)', () => {
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
  beforeEach(() => upstream.reset());

  for (const [name, cookie] of MALFORMED_COOKIES) {
    test(`${name}: 401 invalid_token on a session route, nothing sent; no session on login and the search`, async () => {
      const res = await send(proxy.url, 'GET', SESSION_ROUTE, { headers: { cookie } });
      assert.equal(res.status, 401);
      assert.deepEqual(res.json, { reason: 'invalid_token' });
      assert.match(res.headers.get('x-error-ref') ?? '', /-EM0002$/);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      assert.equal(upstream.requests.length, 0, 'nothing reaches the BFF');

      upstream.on('POST', '/auth/login', { status: 401, json: { error: 'invalid_credentials' } });
      const login = await send(proxy.url, 'POST', '/api/auth/login', {
        json: { login: 'a@example.com', password: 'x' },
        headers: { cookie },
      });
      assert.equal(login.status, 401);
      const search = await send(proxy.url, 'GET', '/api/sports/search?search=gol', { headers: { cookie } });
      assert.equal(search.status, 200);
      assert.deepEqual(
        upstream.requests.map((r) => [r.path, r.headers.authorization]),
        [
          ['/auth/login', undefined],
          ['/core-sportbook/search', undefined],
        ],
        'counted as no session: never a Bearer',
      );
      assert.ok(!proxy.logs.lines.some((l) => l.includes('upstream failure')), 'no upstream failure logged');
    });
  }

  test('the encoded CR/LF of the outside run over a raw socket: 401, not 502', async () => {
    const res = await rawRequest(proxy.url, 'GET', SESSION_ROUTE, {
      cookie: '__Host-access_token=x; access_token=abc%0d%0aX-Injected:%20yes',
    });
    assert.equal(res.status, 401);
    assert.deepEqual(JSON.parse(res.body), { reason: 'invalid_token' });
    assert.equal(upstream.requests.length, 0);
  });

  test('a well-formed token is the session: forwarded as the Bearer; no cookie is no_token', async () => {
    const jwt = fakeJwt();
    assert.equal((await send(proxy.url, 'GET', SESSION_ROUTE, { token: jwt })).status, 200);
    assert.equal(upstream.requests[0]?.headers.authorization, `Bearer ${jwt}`);
    const none = await send(proxy.url, 'GET', SESSION_ROUTE);
    assert.equal(none.status, 401);
    assert.deepEqual(none.json, { reason: 'no_token' });
  });
});

/** A signing key pair and tokens made with it. */
interface Signer {
  alg: string;
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  token(claims?: Record<string, unknown>, expiresInSeconds?: number): Promise<string>;
}

async function signer(alg: string, kid: string): Promise<Signer> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return {
    alg,
    kid,
    privateKey,
    publicKey,
    token: (claims = {}, expiresInSeconds = 3600) =>
      new SignJWT({ sub: '7', ...claims })
        .setProtectedHeader({ alg, kid, typ: 'JWT' })
        .setIssuedAt()
        .setExpirationTime(Math.floor(Date.now() / 1000) + expiresInSeconds)
        .sign(privateKey),
  };
}

/** The checks both key sources must pass: `valid` signed with the BFF's key, `forged` with another. */
function verificationTests(ctx: () => { proxy: TestProxy; upstream: RecordingUpstream; good: Signer; other: Signer }) {
  test('a token signed with the BFF key is the session; one signed with another key is 401 invalid_token, nothing sent', async () => {
    const { proxy, upstream, good, other } = ctx();
    const token = await good.token();
    assert.equal((await send(proxy.url, 'GET', SESSION_ROUTE, { token })).status, 200);
    assert.equal(upstream.requests[0]?.headers.authorization, `Bearer ${token}`);
    upstream.reset();
    const forged = await other.token();
    const res = await send(proxy.url, 'GET', SESSION_ROUTE, { token: forged });
    assert.equal(res.status, 401);
    assert.deepEqual(res.json, { reason: 'invalid_token' });
    assert.match(res.headers.get('x-error-ref') ?? '', /-EM0002$/);
    // A well-formed token whose signature part was altered, and an HMAC token (never allowed).
    const altered = `${token.slice(0, token.lastIndexOf('.') + 1)}${Buffer.from('x'.repeat(64)).toString('base64url')}`;
    assert.deepEqual((await send(proxy.url, 'GET', SESSION_ROUTE, { token: altered })).json, { reason: 'invalid_token' });
    assert.deepEqual((await send(proxy.url, 'GET', SESSION_ROUTE, { token: fakeJwt() })).json, { reason: 'invalid_token' });
    assert.equal(upstream.requests.length, 0);
  });

  test('an expired token is 401 token_expired beyond the 60 s leeway, accepted within it; nothing sent when refused', async () => {
    const { proxy, upstream, good } = ctx();
    const expired = await good.token({}, -120);
    const res = await send(proxy.url, 'GET', SESSION_ROUTE, { token: expired });
    assert.equal(res.status, 401);
    assert.deepEqual(res.json, { reason: 'token_expired' });
    assert.match(res.headers.get('x-error-ref') ?? '', /-EM0003$/);
    assert.equal(upstream.requests.length, 0);
    assert.equal((await send(proxy.url, 'GET', SESSION_ROUTE, { token: await good.token({}, -30) })).status, 200, 'within the leeway');
  });

  test('an expired token is accepted on refresh and logout (signature checked), counts as no session on the search', async () => {
    const { proxy, upstream, good, other } = ctx();
    const expired = await good.token({ n: 'refresh' }, -3600);
    const fresh = await good.token({ n: 'fresh' });
    upstream.on('POST', '/users/refresh-token', { json: { access_token: fresh, expires_in: 3600 } });
    const refreshed = await send(proxy.url, 'POST', '/api/auth/refresh', { token: expired });
    assert.equal(refreshed.status, 200);
    assert.deepEqual(refreshed.json, { ok: true });
    assert.equal(upstream.requests.find((r) => r.path === '/users/refresh-token')?.headers.authorization, `Bearer ${expired}`);
    const logout = await send(proxy.url, 'POST', '/api/auth/logout', { token: expired });
    assert.equal(logout.status, 200);
    assert.equal(upstream.requests.find((r) => r.path === '/auth/logout')?.headers.authorization, `Bearer ${expired}`);
    await send(proxy.url, 'GET', '/api/sports/search?search=gol', { token: expired });
    assert.equal(upstream.requests.find((r) => r.path === '/core-sportbook/search')?.headers.authorization, undefined);
    // A forged token is refused on refresh too, and is no session on logout.
    upstream.reset();
    const forged = await other.token({}, -3600);
    assert.deepEqual((await send(proxy.url, 'POST', '/api/auth/refresh', { token: forged })).json, { reason: 'invalid_token' });
    const loggedOut = await send(proxy.url, 'POST', '/api/auth/logout', { token: forged });
    assert.equal(loggedOut.status, 200);
    assert.match(loggedOut.headers.get('set-cookie') ?? '', /^access_token=; Max-Age=0/);
    assert.equal(upstream.requests.length, 0, 'no session: the upstream logout is not called with a forged token');
  });
}

describe('verification with a JWKS (JWT_JWKS_URL, a local JWKS server)', () => {
  let upstream: RecordingUpstream;
  let proxy: TestProxy;
  let jwks: Server;
  let jwksFetches = 0;
  let good: Signer;
  let other: Signer;
  before(async () => {
    good = await signer('ES256', 'bff-key-1');
    other = await signer('ES256', 'bff-key-1');
    const published = { keys: [{ ...(await exportJWK(good.publicKey)), kid: good.kid, alg: good.alg, use: 'sig' }] };
    jwks = createServer((_req, res) => {
      jwksFetches++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(published));
    });
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    upstream = await startRecordingUpstream();
    proxy = await startProxy(upstream.url, {
      JWT_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`,
    });
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
    jwks.closeAllConnections();
    await new Promise((resolve) => jwks.close(resolve));
  });
  beforeEach(() => upstream.reset());

  verificationTests(() => ({ proxy, upstream, good, other }));

  test('the JWKS is fetched once and cached; an unknown kid is 401 invalid_token and refetches at most once per cooldown', async () => {
    const before = jwksFetches;
    for (let i = 0; i < 20; i++)
      assert.equal((await send(proxy.url, 'GET', SESSION_ROUTE, { token: await good.token({ i }) })).status, 200);
    assert.equal(jwksFetches, before, 'no fetch while the set is cached');
    const stranger = await signer('ES256', 'unknown-kid');
    for (let i = 0; i < 5; i++) {
      assert.deepEqual((await send(proxy.url, 'GET', SESSION_ROUTE, { token: await stranger.token() })).json, { reason: 'invalid_token' });
    }
    assert.ok(jwksFetches - before <= 1, `${jwksFetches - before} fetches for 5 unknown kids`);
    assert.ok(jwksFetches >= 1);
  });
});

describe('verification with a PEM key (JWT_PUBLIC_KEY)', () => {
  let upstream: RecordingUpstream;
  let proxy: TestProxy;
  let good: Signer;
  let other: Signer;
  before(async () => {
    good = await signer('RS256', 'pem');
    other = await signer('RS256', 'pem');
    upstream = await startRecordingUpstream();
    // Written on one line with literal \n, as an environment file holds it.
    proxy = await startProxy(upstream.url, { JWT_PUBLIC_KEY: (await exportSPKI(good.publicKey)).trim().replaceAll('\n', '\\n') });
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  verificationTests(() => ({ proxy, upstream, good, other }));
});

describe('a JWKS that cannot be fetched', () => {
  let upstream: RecordingUpstream;
  let proxy: TestProxy;
  before(async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    upstream = await startRecordingUpstream();
    proxy = await startProxy(upstream.url, { JWT_JWKS_URL: `http://127.0.0.1:${port}/jwks` });
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
  });

  test('a well-formed token passes unverified (the BFF decides), with one warning; a malformed or HMAC one is still refused', async () => {
    const bff = await signer('ES256', 'k');
    assert.equal((await send(proxy.url, 'GET', SESSION_ROUTE, { token: await bff.token() })).status, 200);
    assert.equal((await send(proxy.url, 'GET', SESSION_ROUTE, { token: await bff.token({ n: 2 }) })).status, 200);
    assert.deepEqual(
      (await send(proxy.url, 'GET', SESSION_ROUTE, { token: fakeJwt() })).json,
      { reason: 'invalid_token' },
      'HS256 is never allowed',
    );
    assert.equal(upstream.requests.filter((r) => r.path === SESSION_UPSTREAM).length, 2);
    assert.equal(proxy.logs.lines.filter((l) => l.includes('token keys could not be fetched')).length, 1);
    assert.deepEqual((await send(proxy.url, 'GET', SESSION_ROUTE, { headers: { cookie: 'access_token=abc' } })).json, {
      reason: 'invalid_token',
    });
  });
});

describe('the browser SDK classifies the refusals as their 401 families', () => {
  const cases: [string, string][] = [
    ['no_token', 'EM0001'],
    ['invalid_token', 'EM0002'],
    ['token_expired', 'EM0003'],
  ];
  for (const [reason, code] of cases) {
    test(`401 { reason: ${reason} } → ${code}`, () => {
      assert.equal(classifyError({ status: 401, data: { reason }, url: '/api/user/last-casino-games' }).errorCode, code);
    });
  }
});
