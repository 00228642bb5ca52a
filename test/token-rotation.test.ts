/**
 * docs/behaviour.md "Which routes need a session", with `JWT_JWKS_URL` while the BFF rotates its keys:
 * when several keys of the set match a token's header (the token has no `kid`, or the keys share
 * one), each matching key of the algorithm's type is tried; the token is the session when one of
 * them verifies it, `token_expired` when one verifies an expired token, and `invalid_token` only
 * when none does. Through the running proxy and a local JWKS server holding two and three keys of
 * one type (RSA, RS256/PS256; EC P-256, ES256), with and without `kid`, plus a key of another type.
 * Before, any token matching two keys was 401 `invalid_token` (history/2026-12-01-hardening-rounds.md "Issue 45: keys in rotation, RSA-PSS keys, private keys, the doctor's password").
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SignJWT, type JWK } from 'jose';
const MAX_MATCHING_KEYS = 8;
import { publicJwk, type JwksServer, startJwksServer } from './helpers/jwks-server.js';
import { type RecordingUpstream, send, startProxy, startRecordingUpstream, type TestProxy } from './helpers/recording-upstream.js';
import { SESSION_ROUTE, sessionOutcome } from './helpers/session-outcome.js';

type Pair = { publicKey: KeyObject; privateKey: KeyObject };
const rsa = (): Pair => generateKeyPairSync('rsa', { modulusLength: 2048 });
const p256 = (): Pair => generateKeyPairSync('ec', { namedCurve: 'P-256' });

const RSA_KEYS = [rsa(), rsa(), rsa()];
const EC_KEYS = [p256(), p256(), p256()];
const STRANGER_RSA = rsa();
const STRANGER_EC = p256();

let serial = 0;
async function sign(alg: string, pair: Pair, kid: string | undefined, expiresInSeconds = 3600): Promise<string> {
  return new SignJWT({ sub: '7', n: ++serial })
    .setProtectedHeader({ alg, typ: 'JWT', ...(kid === undefined ? {} : { kid }) })
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + expiresInSeconds)
    .sign(pair.privateKey);
}

/** The public JWK of `pair`, under `kid` or with no `kid` at all. */
async function jwkOf(pair: Pair, kid: string | undefined): Promise<JWK> {
  const jwk = await publicJwk(pair.publicKey, kid ?? 'none');
  if (kid === undefined) delete jwk.kid;
  return jwk;
}

/** One published set: its keys' `kid` (`undefined`: none; one value for all: a shared `kid`). */
interface SetCase {
  label: string;
  alg: string;
  keys: Pair[];
  stranger: Pair;
  /** `kid` of each published key, and the `kid` the tokens carry. */
  kid: string | undefined;
  /** A key of another type published beside them (never tried for this algorithm). */
  other?: Pair;
}

const CASES: SetCase[] = [
  { label: 'two RSA keys without kid, RS256', alg: 'RS256', keys: RSA_KEYS.slice(0, 2), stranger: STRANGER_RSA, kid: undefined },
  { label: 'three RSA keys without kid, RS256', alg: 'RS256', keys: RSA_KEYS, stranger: STRANGER_RSA, kid: undefined },
  {
    label: 'three RSA keys without kid, PS256, beside an EC key',
    alg: 'PS256',
    keys: RSA_KEYS,
    stranger: STRANGER_RSA,
    kid: undefined,
    other: EC_KEYS[0],
  },
  { label: 'three RSA keys sharing one kid, RS256', alg: 'RS256', keys: RSA_KEYS, stranger: STRANGER_RSA, kid: 'bff-2026' },
  { label: 'two EC P-256 keys without kid, ES256', alg: 'ES256', keys: EC_KEYS.slice(0, 2), stranger: STRANGER_EC, kid: undefined },
  {
    label: 'three EC P-256 keys sharing one kid, ES256, beside an RSA key',
    alg: 'ES256',
    keys: EC_KEYS,
    stranger: STRANGER_EC,
    kid: 'bff-2026',
    other: RSA_KEYS[0],
  },
];

describe('a JWKS in rotation: several keys match a token', () => {
  let upstream: RecordingUpstream;
  let jwks: JwksServer;
  const proxies = new Map<string, TestProxy>();

  before(async () => {
    upstream = await startRecordingUpstream();
    jwks = await startJwksServer();
    for (const [i, c] of CASES.entries()) {
      const path = `/set-${i}/jwks.json`;
      const published = await Promise.all(c.keys.map((pair) => jwkOf(pair, c.kid)));
      if (c.other) published.splice(1, 0, await jwkOf(c.other, c.kid));
      jwks.publish(path, published);
      proxies.set(c.label, await startProxy(upstream.url, { JWT_JWKS_URL: `${jwks.origin}${path}` }));
    }
  });
  after(async () => {
    for (const proxy of proxies.values()) await proxy.close();
    await upstream.close();
    await jwks.close();
  });

  /** The status and reason of the session route with `token` ('200' when it reached the BFF with it as the Bearer). */
  async function outcome(c: SetCase, token: string): Promise<string> {
    return sessionOutcome((proxies.get(c.label) as TestProxy).url, upstream, token);
  }

  for (const c of CASES) {
    test(`${c.label}: a token of each key 200, of another key 401 invalid_token, expired 401 token_expired`, async () => {
      const proxy = proxies.get(c.label) as TestProxy;
      for (const [i, pair] of c.keys.entries()) {
        assert.equal(await outcome(c, await sign(c.alg, pair, c.kid)), '200', `key ${i + 1} of ${c.keys.length}`);
      }
      assert.equal(await outcome(c, await sign(c.alg, c.stranger, c.kid)), '401 invalid_token', 'a key outside the set');
      assert.equal(await outcome(c, await sign(c.alg, c.keys.at(-1) as Pair, c.kid, -120)), '401 token_expired', 'the last key, expired');
      // A token of one of the keys with a kid none of them carries matches no key at all.
      assert.equal(await outcome(c, await sign(c.alg, c.keys[0] as Pair, 'unknown-kid')), '401 invalid_token', 'unknown kid');
      assert.ok(!proxy.logs.lines.some((l) => l.includes('unverified')), 'no token passed unverified');
    });
  }
});

describe('a JWKS with more matching keys than are tried', () => {
  let upstream: RecordingUpstream;
  let jwks: JwksServer;
  let proxy: TestProxy;
  const many = Array.from({ length: MAX_MATCHING_KEYS + 2 }, p256);

  before(async () => {
    upstream = await startRecordingUpstream();
    jwks = await startJwksServer();
    jwks.publish('/many.json', await Promise.all(many.map((pair) => jwkOf(pair, undefined))));
    proxy = await startProxy(upstream.url, { JWT_JWKS_URL: `${jwks.origin}/many.json` });
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
    await jwks.close();
  });

  test(`the first ${MAX_MATCHING_KEYS} keys of the set verify; a token of a later one is 401 invalid_token`, async () => {
    const statusOf = async (pair: Pair) =>
      (await send(proxy.url, 'GET', SESSION_ROUTE, { token: await sign('ES256', pair, undefined) })).status;
    assert.equal(await statusOf(many[0] as Pair), 200);
    assert.equal(await statusOf(many[MAX_MATCHING_KEYS - 1] as Pair), 200);
    assert.equal(await statusOf(many[MAX_MATCHING_KEYS] as Pair), 401);
  });
});
