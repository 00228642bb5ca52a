/**
 * docs/behaviour.md "Which routes need a session": the algorithms a key accepts follow the key (RSA →
 * RS256/384/512 and PS256/384/512; EC → the ES algorithm of its own curve; Ed25519 → EdDSA;
 * `JWT_SECRET` → HS256/384/512; never `none`). Every algorithm × every key type (RSA 2048, EC P-256,
 * EC P-384, Ed25519 — each as `JWT_PUBLIC_KEY` and in a JWKS — and an HMAC secret), through the running
 * proxy over real sockets with a recording upstream (and, as `JWT_PUBLIC_KEY` only, RSA-PSS keys, one
 * restricted to SHA-384, and EC P-521):
 * - an algorithm the key accepts: a good signature is the session (forwarded as the Bearer); a junk
 *   signature, a signature of another key, an unknown `kid` are 401 `invalid_token`; an expired token
 *   401 `token_expired`;
 * - any other algorithm (a forged token, junk-signed or signed with a key of that algorithm's type,
 *   HS256/384/512 keyed with the public key's PEM, `none`) is 401 `invalid_token`, never `unverified`.
 * Nothing reaches the BFF for a refusal. Row by row, the answers before and after are in
 * history/2026-12-01-hardening-rounds.md ("Forged tokens: the algorithm follows the key").
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject, randomBytes, sign as cryptoSign } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { KEY_ALGORITHMS, type TokenKeyKind } from '../src/session/token.js';
import { publicJwk, type JwksServer, startJwksServer } from './helpers/jwks-server.js';
import { type RecordingUpstream, startProxy, startRecordingUpstream, type TestProxy } from './helpers/recording-upstream.js';
import { sessionOutcome } from './helpers/session-outcome.js';

/** An RSA-PSS key pair restricted to `hash`, MGF1 `mgf1` and a salt of at least `saltLength` bytes (@types/node types the salt length as a string; Node takes a number). */
function restrictedPss(hash: string, mgf1: string, saltLength: number): { publicKey: KeyObject; privateKey: KeyObject } {
  return generateKeyPairSync('rsa-pss', {
    modulusLength: 2048,
    hashAlgorithm: hash,
    mgf1HashAlgorithm: mgf1,
    saltLength: saltLength as unknown as string,
  });
}

/** Every algorithm a header may name in this table (the JWS ones jose knows but ML-DSA, plus `none`). */
const ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
  'HS256',
  'HS384',
  'HS512',
  'none',
];

const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
const nowSeconds = () => Math.floor(Date.now() / 1000);
const pemOf = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();

/** A key pair (or a secret) of one kind, as the BFF holds it. */
interface BffKey {
  name: string;
  kind: TokenKeyKind;
  /** What signs: a private key, or the secret's bytes. */
  signing: KeyObject | Uint8Array;
  /** The public key (none for a secret). */
  publicKey?: KeyObject;
  /** The proxy's variable for it (`JWT_PUBLIC_KEY` or `JWT_SECRET`). */
  env: Record<string, string>;
  /** The algorithms it accepts when not all of its kind's (an RSA-PSS key restricted to one hash). */
  accepted?: readonly string[];
}

function keyPair(
  name: string,
  kind: TokenKeyKind,
  pair: { publicKey: KeyObject; privateKey: KeyObject },
  accepted?: readonly string[],
): BffKey {
  return {
    name,
    kind,
    signing: pair.privateKey,
    publicKey: pair.publicKey,
    env: { JWT_PUBLIC_KEY: pemOf(pair.publicKey) },
    ...(accepted ? { accepted } : {}),
  };
}

const SECRET = randomBytes(48).toString('base64url');
const BFF_KEYS: BffKey[] = [
  keyPair('RSA 2048', 'rsa', generateKeyPairSync('rsa', { modulusLength: 2048 })),
  // SPKI with the id-RSASSA-PSS identifier: unrestricted, and restricted to SHA-384 (PS384 only).
  keyPair('RSA-PSS 2048', 'rsa-pss', generateKeyPairSync('rsa-pss', { modulusLength: 2048 })),
  keyPair('RSA-PSS 2048 (SHA-384)', 'rsa-pss', restrictedPss('sha384', 'sha384', 48), ['PS384']),
  keyPair('EC P-256', 'ec:P-256', generateKeyPairSync('ec', { namedCurve: 'P-256' })),
  keyPair('EC P-384', 'ec:P-384', generateKeyPairSync('ec', { namedCurve: 'P-384' })),
  keyPair('EC P-521', 'ec:P-521', generateKeyPairSync('ec', { namedCurve: 'P-521' })),
  keyPair('Ed25519', 'ed25519', generateKeyPairSync('ed25519')),
  { name: 'HMAC secret', kind: 'secret', signing: new TextEncoder().encode(SECRET), env: { JWT_SECRET: SECRET } },
];

/** An attacker's key for each algorithm: of the type the algorithm needs, never the BFF's. */
const ATTACKER_KEYS = {
  rsa: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey,
  'P-256': generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
  'P-384': generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey,
  'P-521': generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey,
  ed25519: generateKeyPairSync('ed25519').privateKey,
  secret: randomBytes(48),
};

function attackerKeyFor(alg: string): KeyObject | Uint8Array {
  if (/^(RS|PS)/.test(alg)) return ATTACKER_KEYS.rsa;
  if (alg === 'ES256') return ATTACKER_KEYS['P-256'];
  if (alg === 'ES384') return ATTACKER_KEYS['P-384'];
  if (alg === 'ES512') return ATTACKER_KEYS['P-521'];
  if (alg === 'EdDSA' || alg === 'Ed25519') return ATTACKER_KEYS.ed25519;
  return ATTACKER_KEYS.secret;
}

async function sign(alg: string, key: KeyObject | Uint8Array, kid: string | undefined, expiresInSeconds = 3600): Promise<string> {
  if (!(key instanceof Uint8Array) && key.asymmetricKeyType === 'rsa-pss') {
    // jose cannot sign with an RSA-PSS key object on Node 20 or 24: signed as a BFF on Node does it.
    const hash = `sha${alg.slice(2)}`;
    const input = `${enc({ alg, typ: 'JWT', ...(kid === undefined ? {} : { kid }) })}.${enc({ sub: '7', n: randomBytes(4).toString('hex'), iat: nowSeconds(), exp: nowSeconds() + expiresInSeconds })}`;
    const signature = cryptoSign(hash, Buffer.from(input), { key, saltLength: Number(alg.slice(2)) / 8 });
    return `${input}.${signature.toString('base64url')}`;
  }
  return new SignJWT({ sub: '7', n: randomBytes(4).toString('hex') })
    .setProtectedHeader({ alg, typ: 'JWT', ...(kid === undefined ? {} : { kid }) })
    .setIssuedAt()
    .setExpirationTime(nowSeconds() + expiresInSeconds)
    .sign(key);
}

/** `token` with its signature replaced by as many random bytes (a junk signature of the right length). */
function junkSigned(token: string): string {
  const [header, payload, signature = ''] = token.split('.');
  return `${header}.${payload}.${randomBytes(Math.max(4, Buffer.from(signature, 'base64url').length)).toString('base64url')}`;
}

/** A token naming `alg` whose signature is `AAAA` (the reproduction), or empty for `none`. */
function forgedHeader(alg: string, kid: string | undefined): string {
  return `${enc({ alg, typ: 'JWT', ...(kid === undefined ? {} : { kid }) })}.${enc({ sub: '7', exp: nowSeconds() + 3600 })}.${alg === 'none' ? '' : 'AAAA'}`;
}

/** One source of the BFF's keys the proxy is started with. */
interface Source {
  label: string;
  key: BffKey;
  /** The `kid` the BFF's tokens carry (the JWKS publishes the key under it). */
  kid: string | undefined;
  jwks: boolean;
  proxy?: TestProxy;
}

const SOURCES: Source[] = [
  ...BFF_KEYS.map((key) => ({ label: `${key.name} as ${Object.keys(key.env)[0]}`, key, kid: undefined, jwks: false })),
  // A JWK has no RSA-PSS form: a JWKS publishes such a key as an RSA key (the RSA row).
  ...BFF_KEYS.filter((key) => key.publicKey && key.kind !== 'rsa-pss').map((key) => ({
    label: `${key.name} in a JWKS`,
    key,
    kid: `bff-${key.kind}`,
    jwks: true,
  })),
];

describe('the algorithm follows the key: every alg × key type through the proxy', () => {
  let upstream: RecordingUpstream;
  let jwks: JwksServer;
  before(async () => {
    upstream = await startRecordingUpstream();
    jwks = await startJwksServer();
    for (const source of SOURCES) {
      let env = source.key.env;
      if (source.jwks) {
        const path = `/${source.key.kind}/jwks.json`;
        jwks.publish(path, [await publicJwk(source.key.publicKey as KeyObject, source.kid as string)]);
        env = { JWT_JWKS_URL: `${jwks.origin}${path}` };
      }
      source.proxy = await startProxy(upstream.url, env);
    }
  });
  after(async () => {
    for (const source of SOURCES) await source.proxy?.close();
    await upstream.close();
    await jwks.close();
  });

  /** Sends `token` to the session route: the status and reason, and whether it reached the BFF (with it as the Bearer). */
  async function outcome(source: Source, token: string): Promise<string> {
    return sessionOutcome((source.proxy as TestProxy).url, upstream, token);
  }

  for (const source of SOURCES) {
    const accepted: readonly string[] = source.key.accepted ?? KEY_ALGORITHMS[source.key.kind];
    describe(source.label, () => {
      for (const alg of ALGORITHMS) {
        if (accepted.includes(alg)) {
          test(`${alg} (accepted): good 200; junk signature, another key, unknown kid 401 invalid_token; expired 401 token_expired`, async () => {
            const { signing } = source.key;
            const good = await sign(alg, signing, source.kid);
            assert.equal(await outcome(source, good), '200', 'good signature');
            assert.equal(await outcome(source, junkSigned(good)), '401 invalid_token', 'junk signature');
            assert.equal(await outcome(source, forgedHeader(alg, source.kid)), '401 invalid_token', 'AAAA signature');
            assert.equal(await outcome(source, await sign(alg, attackerKeyFor(alg), source.kid)), '401 invalid_token', 'another key');
            assert.equal(
              await outcome(source, await sign(alg, signing, source.kid, -120)),
              '401 token_expired',
              'expired beyond the leeway',
            );
            // With a JWKS the BFF's own key under a kid the set lacks; with a PEM key or a secret (no
            // kid to look up) another key under a made-up kid.
            const unknownKid = source.jwks ? await sign(alg, signing, 'unknown-kid') : await sign(alg, attackerKeyFor(alg), 'unknown-kid');
            assert.equal(await outcome(source, unknownKid), '401 invalid_token', 'unknown kid');
          });
        } else {
          test(`${alg} (not accepted): forged 401 invalid_token`, async () => {
            assert.equal(await outcome(source, forgedHeader(alg, source.kid)), '401 invalid_token', 'AAAA signature');
            if (alg !== 'none') {
              assert.equal(
                await outcome(source, await sign(alg, attackerKeyFor(alg), source.kid)),
                '401 invalid_token',
                'signed with a key of its type',
              );
            }
            if (alg.startsWith('HS') && source.key.publicKey) {
              // The classic confusion: the public key's PEM used as an HMAC secret.
              const confused = await sign(alg, new TextEncoder().encode(pemOf(source.key.publicKey)), source.kid);
              assert.equal(await outcome(source, confused), '401 invalid_token', 'HMAC keyed with the public key');
            }
          });
        }
      }

      test('no warning that a token passed unverified', () => {
        assert.ok(!(source.proxy as TestProxy).logs.lines.some((l) => l.includes('unverified')));
      });
    });
  }

  test('the table covers every kind of key and each kind accepts its algorithms only', () => {
    assert.deepEqual(new Set(BFF_KEYS.map((k) => k.kind)), new Set(Object.keys(KEY_ALGORITHMS)));
    for (const algs of Object.values(KEY_ALGORITHMS)) {
      assert.ok(!(algs as readonly string[]).includes('none'));
      for (const alg of algs) assert.ok(ALGORITHMS.includes(alg), alg);
    }
  });
});
