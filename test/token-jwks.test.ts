/**
 * docs/behaviour.md "Which routes need a session", with `JWT_JWKS_URL`: the last key set fetched keeps
 * serving while a refetch fails or hangs (refetched in the background after 10 minutes); an unknown
 * `kid` causes at most one refetch per 30 s, waited for at most 1 s; a failed fetch is remembered (no
 * fetch per request); only before any set was fetched does a token pass unverified. Through the
 * running proxy and a local JWKS server that answers, rotates its keys, hangs and refuses; the proxy's
 * JWKS clock is moved forward by the test (`ServerOptions.now`) instead of waiting minutes.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { JWKS_COOLDOWN_MS, JWKS_MAX_AGE_MS, JWKS_WAIT_MS } from '../src/session/token.js';
import { publicJwk, type JwksServer, startJwksServer } from './helpers/jwks-server.js';
import { fakeJwt, type RecordingUpstream, send, startProxy, startRecordingUpstream, type TestProxy } from './helpers/recording-upstream.js';

const SESSION_ROUTE = '/api/user/last-casino-games';
const SESSION_UPSTREAM = '/bff/games/user-last-casino-games-dl';
const PATH = '/.well-known/jwks.json';

/** A BFF signing key (EC P-256, ES256) under a `kid`. */
interface Key {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

function key(kid: string): Key {
  return { kid, ...generateKeyPairSync('ec', { namedCurve: 'P-256' }) };
}

let serial = 0;
async function tokenOf(k: Key): Promise<string> {
  return new SignJWT({ sub: '7', n: ++serial })
    .setProtectedHeader({ alg: 'ES256', kid: k.kid, typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(k.privateKey);
}

async function publish(jwks: JwksServer, keys: Key[]): Promise<void> {
  jwks.publish(PATH, await Promise.all(keys.map((k) => publicJwk(k.publicKey, k.kid, 'ES256'))));
}

/** Polls `condition` every 10 ms for at most `ms` milliseconds. */
async function eventually(condition: () => boolean, ms = 3_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

/** The 99th percentile of `values`. */
function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] ?? Number.NaN;
}

/** GET of the session route with `token`: the status and reason ('200' when it reached the BFF) and the time taken in ms. */
async function ask(proxy: TestProxy, upstream: RecordingUpstream, token: string): Promise<{ answer: string; ms: number }> {
  const sent = upstream.requests.length;
  const start = performance.now();
  const res = await send(proxy.url, 'GET', SESSION_ROUTE, { token });
  const ms = performance.now() - start;
  const reached = upstream.requests.slice(sent).filter((r) => r.path === SESSION_UPSTREAM);
  if (res.status === 200) {
    assert.equal(reached.length, 1);
    return { answer: '200', ms };
  }
  assert.equal(reached.length, 0, 'nothing reaches the BFF for a refusal');
  return { answer: `${res.status} ${(res.json as { reason?: string }).reason}`, ms };
}

describe('a JWKS that answers, rotates its keys, hangs and refuses', () => {
  let upstream: RecordingUpstream;
  let jwks: JwksServer;
  let proxy: TestProxy;
  let offset = 0;
  const k1 = key('k1');
  const k2 = key('k2');
  const stranger = key('k9');
  const fetches = () => jwks.fetchesOf(PATH);
  const answerOf = async (k: Key) => (await ask(proxy, upstream, await tokenOf(k))).answer;

  before(async () => {
    upstream = await startRecordingUpstream();
    jwks = await startJwksServer();
    await publish(jwks, [k1]);
    proxy = await startProxy(upstream.url, { JWT_JWKS_URL: `${jwks.origin}${PATH}` }, { now: () => Date.now() + offset });
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
    await jwks.close();
  });

  test('answers: fetched once at start; 100 requests with its key are verified without another fetch', async () => {
    assert.ok(await eventually(() => fetches() === 1), 'fetched at start');
    for (let i = 0; i < 100; i++) assert.equal(await answerOf(k1), '200');
    assert.equal(await answerOf(stranger), '401 invalid_token');
    assert.equal(fetches(), 1, 'an unknown kid within 30 s of the last fetch fetches nothing');
  });

  test('rotates: a new kid refetches the set once per 30 s and is then the session; a removed key is refused', async () => {
    await publish(jwks, [k1, k2]);
    assert.equal(await answerOf(k2), '401 invalid_token', 'within the cooldown: not fetched, unknown');
    assert.equal(fetches(), 1);
    offset += JWKS_COOLDOWN_MS + 1_000;
    assert.equal(await answerOf(k2), '200', 'the refetch was waited for');
    assert.equal(fetches(), 2);
    for (let i = 0; i < 20; i++) assert.equal(await answerOf(stranger), '401 invalid_token');
    assert.equal(fetches(), 2, '20 unknown kids within the cooldown: no fetch');
    await publish(jwks, [k2]);
    offset += JWKS_COOLDOWN_MS + 1_000;
    assert.equal(await answerOf(stranger), '401 invalid_token');
    assert.equal(fetches(), 3, 'one refetch for the unknown kid');
    assert.equal(await answerOf(k1), '401 invalid_token', 'k1 left the set');
    assert.equal(await answerOf(k2), '200');
    assert.equal(fetches(), 3);
  });

  test('hangs: with a key set held, 200 sequential requests answer within 50 ms p99 while the refetch hangs; an unknown kid waits 1 s at most', async (t) => {
    jwks.mode = 'hang';
    const before = fetches();
    // An unknown kid once the cooldown is over: it starts a refetch, which hangs, and waits for it 1 s.
    offset += JWKS_COOLDOWN_MS + 1_000;
    const unknown = await ask(proxy, upstream, await tokenOf(stranger));
    assert.equal(unknown.answer, '401 invalid_token');
    t.diagnostic(`an unknown kid while the refetch hangs: ${unknown.ms.toFixed(0)} ms`);
    assert.ok(unknown.ms >= JWKS_WAIT_MS - 100 && unknown.ms < JWKS_WAIT_MS + 1_000, `waited ${unknown.ms.toFixed(0)} ms`);
    assert.equal(fetches() - before, 1);
    // The set is stale too: the requests below would refetch it, but join the hung refetch.
    offset += JWKS_MAX_AGE_MS;
    // Up to five rounds of 200 within 20 s (a machine shared with other work may stall one); each is
    // measured while a refetch hangs (the proxy gives up on one after 5 s: then the clock moves past
    // the cooldown and the next request starts a new one). The proxy verifies the token every time.
    const rounds: string[] = [];
    const token = await tokenOf(k2);
    const deadline = Date.now() + 20_000;
    let met = false;
    for (let round = 0; round < 5 && !met && Date.now() < deadline; round++) {
      if (jwks.hanging === 0) offset += JWKS_COOLDOWN_MS + 1_000;
      const times: number[] = [];
      for (let i = 0; i < 200; i++) {
        const { answer, ms } = await ask(proxy, upstream, token);
        assert.equal(answer, '200');
        times.push(ms);
      }
      const stillHanging = jwks.hanging > 0;
      rounds.push(
        `p99 ${p99(times).toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms over 200 requests${stillHanging ? '' : ' (the refetch ended during the round)'}`,
      );
      met = stillHanging && p99(times) < 50;
    }
    t.diagnostic(rounds.join('; '));
    assert.ok(met, rounds.join('; '));
    assert.ok(fetches() - before <= rounds.length + 1, `${fetches() - before} fetches: one per hang, not one per request`);
  });

  test('refuses: the failed refetch is remembered (no fetch per request), the last set serves, one warning', async () => {
    await jwks.refuse(); // the hung refetch is cut: a failure
    assert.ok(await eventually(() => proxy.logs.lines.some((l) => l.includes('jwks_refetch_failed'))), 'the failure is logged');
    offset += JWKS_COOLDOWN_MS + 1_000;
    for (let i = 0; i < 50; i++) {
      const { answer, ms } = await ask(proxy, upstream, await tokenOf(k2));
      assert.equal(answer, '200', 'the last set serves while connections are refused');
      assert.ok(ms < JWKS_WAIT_MS, `${ms.toFixed(0)} ms: no request waits on the JWKS`);
    }
    // Listening again: a fetch per request would now be counted. The refused one was tried less than 30 s ago.
    await jwks.resume();
    jwks.mode = 'answer';
    const before = fetches();
    for (let i = 0; i < 50; i++) assert.equal(await answerOf(k2), '200');
    assert.equal(await answerOf(stranger), '401 invalid_token');
    assert.equal(fetches(), before, 'no fetch before the cooldown ends');
    offset += JWKS_COOLDOWN_MS + 1_000;
    assert.equal(await answerOf(k2), '200');
    assert.ok(await eventually(() => fetches() === before + 1), 'one background refetch once the cooldown ended');
    // An error status is a failed fetch too; the set fetched just before keeps serving.
    jwks.mode = 'error';
    offset += JWKS_MAX_AGE_MS + 1_000;
    for (let i = 0; i < 50; i++) assert.equal(await answerOf(k2), '200');
    assert.equal(fetches(), before + 2, 'one fetch for 50 requests');
    assert.equal(proxy.logs.lines.filter((l) => l.includes('jwks_refetch_failed')).length, 1, 'one warning a minute');
    assert.ok(!proxy.logs.lines.some((l) => l.includes('unverified')), 'never unverified once a set was fetched');
  });
});

describe('a JWKS never fetched yet (hung from the start)', () => {
  let upstream: RecordingUpstream;
  let jwks: JwksServer;
  let proxy: TestProxy;
  let offset = 0;
  const k1 = key('k1');
  const other = key('k1');

  before(async () => {
    upstream = await startRecordingUpstream();
    jwks = await startJwksServer();
    await publish(jwks, [k1]);
    jwks.mode = 'hang';
    proxy = await startProxy(upstream.url, { JWT_JWKS_URL: `${jwks.origin}${PATH}` }, { now: () => Date.now() + offset });
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
    await jwks.close();
  });

  test('a token passes unverified (waited 1 s at most, one warning); HS256 is still refused; once the set is fetched a forged token is refused', async () => {
    const first = await ask(proxy, upstream, await tokenOf(k1));
    assert.equal(first.answer, '200', 'unverified: the BFF decides');
    assert.ok(first.ms < JWKS_WAIT_MS + 1_000, `${first.ms.toFixed(0)} ms`);
    const later = await ask(proxy, upstream, await tokenOf(other));
    assert.equal(later.answer, '200');
    assert.ok(later.ms < JWKS_WAIT_MS / 2, `a request after the first second does not wait (${later.ms.toFixed(0)} ms)`);
    assert.equal((await ask(proxy, upstream, fakeJwt())).answer, '401 invalid_token', 'an algorithm no JWKS key takes');
    assert.equal(proxy.logs.lines.filter((l) => l.includes('tokens pass unverified')).length, 1);
    assert.equal(jwks.fetchesOf(PATH), 1);

    await jwks.refuse(); // the hung fetch fails
    await jwks.resume();
    jwks.mode = 'answer';
    assert.equal((await ask(proxy, upstream, await tokenOf(other))).answer, '200', 'the failure is remembered: still unverified, no fetch');
    assert.equal(jwks.fetchesOf(PATH), 1);
    offset += JWKS_COOLDOWN_MS + 1_000;
    assert.equal(
      (await ask(proxy, upstream, await tokenOf(other))).answer,
      '401 invalid_token',
      'fetched (waited for): the forged token is refused',
    );
    assert.equal((await ask(proxy, upstream, await tokenOf(k1))).answer, '200');
    assert.equal(jwks.fetchesOf(PATH), 2);
  });
});
