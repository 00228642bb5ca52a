/**
 * docs/behaviour.md "Which routes need a session": a token's checks that depend on the string alone
 * are made once per token string (`TokenChecks`), and a signature that held is not verified again
 * while the keys that verified it serve (`TokenVerifier.remembered`). What must still hold on every
 * request: the clock's checks of `exp` and `nbf` to the second, as jose makes them; only the exact
 * string hits (an altered or forged token is checked in full, and never remembered as signed); a key
 * that leaves the JWKS refuses the tokens it verified once the set is refetched; the memory held stays
 * bounded whatever the tokens sent.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { SignJWT } from 'jose';
import {
  EXPIRY_LEEWAY_SECONDS,
  isWellFormedJwt,
  JWKS_MAX_AGE_MS,
  MAX_TOKEN_LENGTH,
  TOKEN_CHECKS_MAX_CHARS,
  TOKEN_CHECKS_MAX_ENTRIES,
  TokenChecks,
  TokenVerifier,
} from '../src/session/token.js';
import { tokenKey } from '../src/session/hash.js';
import { publicJwk, type JwksServer, startJwksServer } from './helpers/jwks-server.js';
import { type RecordingUpstream, send, startProxy, startRecordingUpstream, type TestProxy } from './helpers/recording-upstream.js';

const SESSION_ROUTE = '/api/user/last-casino-games';
const SECRET = 'a-test-secret-of-at-least-32-bytes-long';
const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

/** An HS256 token signed with {@link SECRET} (or `secret`) with the given claims, no `iat`/`exp` added. */
function hsToken(claims: Record<string, unknown>, secret = SECRET): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(secret));
}

describe('TokenChecks: the checks of a token string, made once', () => {
  test('a well-formed token is decoded once: its digest and its exp/nbf, the same entry for an equal string', () => {
    const checks = new TokenChecks();
    const token = `${enc({ alg: 'HS256' })}.${enc({ sub: '1', exp: 2_000_000_000, nbf: 1_000_000_000 })}.c2ln`;
    const first = checks.of(token);
    assert.ok(first);
    assert.equal(first.key, tokenKey(token));
    assert.equal(first.exp, 2_000_000_000);
    assert.equal(first.nbf, 1_000_000_000);
    assert.equal(first.signedWith, undefined);
    // Another string object with the same text (as the next request's Cookie header gives it).
    const again = `x${token}`.slice(1);
    assert.equal(checks.of(again), first);
  });

  const table: [string, string, boolean][] = [
    ['a well-formed JWT', `${enc({ alg: 'HS256' })}.${enc({ sub: '1' })}.c2ln`, true],
    ['an empty signature', `${enc({ alg: 'HS256' })}.${enc({ sub: '1' })}.`, true],
    ['a payload that is not JSON', `${enc({ alg: 'HS256' })}.bm90LWpzb24.c2ln`, false],
    ['a header that is an array', `${enc([1])}.${enc({ sub: '1' })}.c2ln`, false],
    ['two parts', `${enc({ alg: 'HS256' })}.${enc({ sub: '1' })}`, false],
    ['a space', `${enc({ alg: 'HS256' })}.${enc({ sub: '1' })}.c2 ln`, false],
    ['a CR/LF', `${enc({ alg: 'HS256' })}.${enc({ sub: '1' })}.c2ln\r\nX: y`, false],
    ['too long', `${enc({ alg: 'HS256' })}.${enc({ sub: '1', pad: 'p'.repeat(MAX_TOKEN_LENGTH) })}.c2ln`, false],
  ];
  for (const [name, value, wellFormed] of table) {
    test(`${name}: ${wellFormed ? 'well-formed' : 'not a token'}, as isWellFormedJwt says, the first time and the second`, () => {
      const checks = new TokenChecks();
      assert.equal(isWellFormedJwt(value), wellFormed);
      assert.equal(checks.of(value) !== undefined, wellFormed);
      assert.equal(checks.of(value) !== undefined, wellFormed);
    });
  }

  test('only the exact string hits: a token with one character more, less or changed is checked on its own', () => {
    const checks = new TokenChecks();
    const token = `${enc({ alg: 'HS256' })}.${enc({ sub: '1' })}.c2lnbmF0dXJl`;
    const entry = checks.of(token);
    assert.ok(entry);
    for (const other of [`${token}A`, token.slice(0, -1), `${token.slice(0, -1)}Z`, `A${token.slice(1)}`]) {
      const found = checks.of(other);
      assert.notEqual(found, entry, other);
      if (found) assert.equal(found.key, tokenKey(other));
    }
    assert.equal(checks.of(`${enc({ alg: 'HS256' })}.bm90LWpzb24.c2ln`), undefined);
  });

  test(`holds no Cookie header and at most ${TOKEN_CHECKS_MAX_CHARS / 1024 / 1024} MiB of tokens: ${TOKEN_CHECKS_MAX_ENTRIES} tokens of 6 KB cut from 14 KB headers keep under 8 MB alive`, () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const checks = new TokenChecks();
    const header = enc({ alg: 'HS256', typ: 'JWT' });
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < TOKEN_CHECKS_MAX_ENTRIES; i++) {
      // The token is a slice of the header (as the cookie parser cuts it): keeping it would keep the header.
      const cookie = `pad=${'p'.repeat(6000)}${i}; access_token=${header}.${enc({ sub: String(i), pad: 'q'.repeat(4500) })}.c2ln`;
      assert.ok(checks.of(cookie.slice(cookie.indexOf('access_token=') + 13)));
    }
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    // Keeping the slices would keep every header (some 60 MB); keeping every copy, some 25 MB.
    assert.ok(grown < 8_000_000, `${(grown / 1e6).toFixed(1)} MB kept`);
  });
});

describe('TokenVerifier.remembered: a signature verified once, the clock checked every time', () => {
  test('answers as a full verification would at each second around nbf and exp (60 s leeway)', async (t) => {
    const verifier = new TokenVerifier({ secret: SECRET });
    const checks = new TokenChecks();
    const now = Math.floor(Date.now() / 1000);
    const nbf = now + 1_000;
    const exp = now + 5_000;
    const token = await hsToken({ sub: '1', nbf, exp });
    const checked = checks.of(token);
    assert.ok(checked);
    assert.equal(verifier.remembered(checked, false), undefined, 'nothing remembered before a verification');
    assert.equal(await verifier.verify(token, false, checked), 'invalid_token', 'before nbf');
    assert.equal(checked.signedWith, undefined, 'a failed check remembers no signature');
    assert.equal(await verifier.verify(token, true, checked), 'valid', 'the signature alone, where expired tokens are accepted');
    assert.ok(checked.signedWith !== undefined, 'the signature held');
    assert.equal(verifier.remembered(checked, true), 'valid');
    assert.equal(verifier.remembered(checked, false), undefined, 'the claims were not checked yet: verified in full');
    // Each instant (ms) against a fresh verification by jose at the same mocked time.
    const instants = [
      (nbf - EXPIRY_LEEWAY_SECONDS) * 1000 - 1,
      (nbf - EXPIRY_LEEWAY_SECONDS) * 1000,
      (nbf - EXPIRY_LEEWAY_SECONDS + 1) * 1000 - 1,
      (nbf - EXPIRY_LEEWAY_SECONDS + 1) * 1000,
      (exp + EXPIRY_LEEWAY_SECONDS) * 1000 - 1,
      (exp + EXPIRY_LEEWAY_SECONDS) * 1000,
      (exp + EXPIRY_LEEWAY_SECONDS) * 1000 + 999,
    ];
    t.mock.timers.enable({ apis: ['Date'], now: (nbf + 10) * 1000 });
    assert.equal(await verifier.verify(token, false, checked), 'valid');
    assert.ok(checked.claimsChecked);
    const seen: string[] = [];
    for (const instant of instants) {
      t.mock.timers.setTime(instant);
      const remembered = verifier.remembered(checked, false);
      const fresh = await verifier.verify(token, false);
      assert.equal(remembered, fresh, `at ${instant} ms`);
      seen.push(`${instant - instants[0]!}:${String(remembered)}`);
    }
    assert.deepEqual(
      seen.map((s) => s.split(':')[1]),
      ['invalid_token', 'valid', 'valid', 'valid', 'valid', 'token_expired', 'token_expired'],
    );
  });

  test('an expired token stays remembered as signed: token_expired where it is checked, valid where expired tokens are accepted', async () => {
    const verifier = new TokenVerifier({ secret: SECRET });
    const token = await hsToken({ sub: '1', exp: Math.floor(Date.now() / 1000) - 3_600 });
    const checked = new TokenChecks().of(token);
    assert.ok(checked);
    assert.equal(await verifier.verify(token, false, checked), 'token_expired');
    assert.equal(verifier.remembered(checked, false), 'token_expired');
    assert.equal(verifier.remembered(checked, true), 'valid');
  });

  test('a forged token (another secret, an altered payload or signature) is never remembered as signed', async () => {
    const verifier = new TokenVerifier({ secret: SECRET });
    const checks = new TokenChecks();
    const good = await hsToken({ sub: '1' });
    const [head, body, signature] = good.split('.') as [string, string, string];
    const forged = [
      await hsToken({ sub: '1' }, 'another-secret-of-at-least-32-bytes-long'),
      `${head}.${enc({ sub: '2' })}.${signature}`,
      `${head}.${body}.${signature.slice(0, -2)}AA`,
    ];
    const checked = checks.of(good);
    assert.ok(checked);
    assert.equal(await verifier.verify(good, false, checked), 'valid');
    for (const token of forged) {
      const entry = checks.of(token);
      assert.ok(entry);
      assert.notEqual(entry, checked);
      for (let i = 0; i < 2; i++) {
        assert.equal(verifier.remembered(entry, false), undefined);
        assert.equal(await verifier.verify(token, false, entry), 'invalid_token');
        assert.equal(entry.signedWith, undefined);
      }
    }
    assert.equal(verifier.remembered(checked, false), 'valid');
  });

  test('a token with an iat that is not a number: its signature holds, its claims never pass', async () => {
    const verifier = new TokenVerifier({ secret: SECRET });
    const token = await hsToken({ sub: '1', iat: 'yesterday' });
    const checked = new TokenChecks().of(token);
    assert.ok(checked);
    assert.equal(await verifier.verify(token, true, checked), 'valid');
    assert.equal(verifier.remembered(checked, false), undefined);
    assert.equal(await verifier.verify(token, false, checked), 'invalid_token');
    assert.equal(checked.claimsChecked, false);
    assert.equal(verifier.remembered(checked, false), undefined);
    assert.equal(verifier.remembered(checked, true), undefined, 'a failed check forgets the signature');
  });
});

describe('over sockets: the same token string, request after request', () => {
  let upstream: RecordingUpstream;
  let proxy: TestProxy;
  before(async () => {
    upstream = await startRecordingUpstream();
    proxy = await startProxy(upstream.url, { JWT_SECRET: SECRET });
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
  });

  test('a token that expires during the test: 200 until the second its exp passes the leeway, 401 token_expired from it', async () => {
    const expiresAt = Math.floor(Date.now() / 1000) + 2 - EXPIRY_LEEWAY_SECONDS;
    const token = await hsToken({ sub: '1', exp: expiresAt });
    const refusedFrom = (expiresAt + EXPIRY_LEEWAY_SECONDS) * 1000;
    let accepted = 0;
    // Requests until 300 ms before the second it expires: each one 200.
    while (Date.now() < refusedFrom - 300) {
      assert.equal((await send(proxy.url, 'GET', SESSION_ROUTE, { token })).status, 200);
      accepted++;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(accepted >= 2, `${accepted} requests before the expiry`);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, refusedFrom - Date.now())));
    const sent = upstream.requests.length;
    for (let i = 0; i < 3; i++) {
      const res = await send(proxy.url, 'GET', SESSION_ROUTE, { token });
      assert.equal(res.status, 401);
      assert.deepEqual(res.json, { reason: 'token_expired' });
    }
    assert.equal(upstream.requests.length, sent, 'nothing sent for an expired token');
    assert.equal((await send(proxy.url, 'POST', '/api/auth/logout', { token })).status, 200, 'logout takes it still');
  });

  test('a forged token after the real one was accepted: 401 invalid_token each time, the real one still 200', async () => {
    const good = await hsToken({ sub: '1', exp: Math.floor(Date.now() / 1000) + 3_600 });
    const [head, body] = good.split('.') as [string, string, string];
    const forged = `${head}.${body}.${Buffer.from('x'.repeat(32)).toString('base64url')}`;
    for (let i = 0; i < 3; i++) {
      assert.equal((await send(proxy.url, 'GET', SESSION_ROUTE, { token: good })).status, 200);
      const res = await send(proxy.url, 'GET', SESSION_ROUTE, { token: forged });
      assert.equal(res.status, 401);
      assert.deepEqual(res.json, { reason: 'invalid_token' });
    }
  });
});

describe('over sockets: a key that leaves the JWKS', () => {
  const PATH = '/.well-known/jwks.json';
  let upstream: RecordingUpstream;
  let jwks: JwksServer;
  let proxy: TestProxy;
  let offset = 0;
  const k1: { kid: string; privateKey: KeyObject; publicKey: KeyObject } = {
    kid: 'k1',
    ...generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  };
  const k2: typeof k1 = { kid: 'k2', ...generateKeyPairSync('ec', { namedCurve: 'P-256' }) };
  before(async () => {
    upstream = await startRecordingUpstream();
    jwks = await startJwksServer();
    jwks.publish(PATH, [await publicJwk(k1.publicKey, k1.kid, 'ES256')]);
    proxy = await startProxy(upstream.url, { JWT_JWKS_URL: `${jwks.origin}${PATH}` }, { now: () => Date.now() + offset });
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
    await jwks.close();
  });

  test('the token it verified, the same string, is refused once the set without it is fetched', async () => {
    const token = await new SignJWT({ sub: '7' })
      .setProtectedHeader({ alg: 'ES256', kid: k1.kid, typ: 'JWT' })
      .setExpirationTime('1h')
      .sign(k1.privateKey);
    const statusOf = async () => (await send(proxy.url, 'GET', SESSION_ROUTE, { token })).status;
    for (let i = 0; i < 3; i++) assert.equal(await statusOf(), 200);
    const fetched = jwks.fetchesOf(PATH);
    jwks.publish(PATH, [await publicJwk(k2.publicKey, k2.kid, 'ES256')]);
    offset += JWKS_MAX_AGE_MS + 1_000;
    // The stale set serves while it is refetched in the background (docs/behaviour.md "A JWKS that fails").
    assert.equal(await statusOf(), 200);
    const end = Date.now() + 3_000;
    while (jwks.fetchesOf(PATH) === fetched && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(jwks.fetchesOf(PATH), fetched + 1, 'refetched');
    // Let the refetched set be taken (the fetch's answer read and handed to jose).
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (let i = 0; i < 3; i++) {
      const res = await send(proxy.url, 'GET', SESSION_ROUTE, { token });
      assert.equal(res.status, 401);
      assert.deepEqual(res.json, { reason: 'invalid_token' });
    }
  });
});
