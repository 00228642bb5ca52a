/**
 * The BFF's token-signing keys as the configuration gives them (docs/behaviour.md "Which routes need a
 * session"): `JWT_JWKS_URL`, `JWT_PUBLIC_KEY` or `JWT_SECRET`, checked at start, and the algorithms
 * each kind of key accepts. The token check itself is `token.ts`.
 *
 * @module
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { quoted } from '../config/problems.js';

/** The BFF's token-signing keys of the configuration: one of the three, or `undefined` (tokens checked for their form only). */
export type TokenKeys = { readonly jwksUrl?: string; readonly publicKeyPem?: string; readonly secret?: string } | undefined;

/** Shortest `JWT_SECRET`, in bytes of UTF-8 (the output size of HS256). */
export const MIN_JWT_SECRET_BYTES = 32;

/**
 * The signature algorithms each kind of key accepts (docs/behaviour.md "Which routes need a session"):
 * RSA → RS256/384/512 and PS256/384/512 (an RSA-PSS key: PS only); EC → the ES algorithm of the
 * key's own curve; Ed25519 → EdDSA (and its fully specified name `Ed25519`, RFC 9864);
 * `JWT_SECRET` → HS256/384/512. Never `none`.
 */
export const KEY_ALGORITHMS = {
  rsa: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'],
  'rsa-pss': ['PS256', 'PS384', 'PS512'],
  'ec:P-256': ['ES256'],
  'ec:P-384': ['ES384'],
  'ec:P-521': ['ES512'],
  ed25519: ['EdDSA', 'Ed25519'],
  secret: ['HS256', 'HS384', 'HS512'],
} as const satisfies Record<string, readonly string[]>;

/** A kind of key of {@link KEY_ALGORITHMS}. */
export type TokenKeyKind = keyof typeof KEY_ALGORITHMS;

/** Node's names of the EC curves a token key may use, by their JOSE names. */
const EC_CURVES: Readonly<Record<string, TokenKeyKind>> = {
  prime256v1: 'ec:P-256',
  secp384r1: 'ec:P-384',
  secp521r1: 'ec:P-521',
};

/**
 * The kind of a public key ({@link KEY_ALGORITHMS}), or `undefined` for a key no session token may be
 * signed with (an RSA key under 2,048 bits, an EC key of another curve, Ed448, X25519, DSA…).
 */
export function keyKindOf(key: KeyObject): TokenKeyKind | undefined {
  const type = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails;
  if (type === 'rsa' || type === 'rsa-pss') return (details?.modulusLength ?? 0) >= 2048 ? type : undefined;
  if (type === 'ec') return EC_CURVES[details?.namedCurve ?? ''];
  if (type === 'ed25519') return 'ed25519';
  return undefined;
}

/** The PS algorithm of each hash an RSA-PSS key may be restricted to, with its salt length in bytes (RFC 7518 §3.5: the hash's size). */
const PSS_HASHES: Readonly<Record<string, { alg: string; saltLength: number }>> = {
  sha256: { alg: 'PS256', saltLength: 32 },
  sha384: { alg: 'PS384', saltLength: 48 },
  sha512: { alg: 'PS512', saltLength: 64 },
};

/** A `JWT_PUBLIC_KEY` read for verification: the key jose is given and the algorithms it accepts. */
export interface TokenPublicKey {
  /** The key: for an RSA-PSS key, the same modulus and exponent as a plain RSA key (what jose can use on every runtime). */
  readonly key: KeyObject;
  /** The algorithms a token signed with it may name ({@link KEY_ALGORITHMS}; one PS algorithm for an RSA-PSS key restricted to one hash). */
  readonly algorithms: readonly string[];
}

/** One element of DER: its tag, where its content starts and where it ends (byte offsets). */
function derElement(der: Buffer, at: number): { tag: number; start: number; end: number } {
  const tag = der[at];
  const first = der[at + 1];
  if (tag === undefined || first === undefined) throw new Error('truncated DER');
  let start = at + 2;
  let length = first;
  if (first & 0x80) {
    const octets = first & 0x7f;
    if (octets === 0 || octets > 4) throw new Error('unsupported DER length');
    length = 0;
    for (let i = 0; i < octets; i++) length = length * 256 + (der[start + i] ?? Number.NaN);
    start += octets;
  }
  const end = start + length;
  if (!Number.isInteger(end) || end > der.length) throw new Error('truncated DER');
  return { tag, start, end };
}

/**
 * An RSA-PSS public key (SPKI with the id-RSASSA-PSS identifier) as a plain RSA key of the same
 * modulus and exponent: jose verifies PS256/384/512 with an RSA key on every runtime, while it cannot
 * use an RSA-PSS `KeyObject` (Node 20 cannot export it as a JWK, Node 24's WebCrypto refuses its
 * identifier). The SPKI's `subjectPublicKey` is the PKCS#1 `RSAPublicKey` either way (RFC 4055 §1.2).
 * @throws Error when the key's encoding is not the one expected, or the result differs from the key.
 */
function pssAsRsa(key: KeyObject): KeyObject {
  const spki = key.export({ type: 'spki', format: 'der' });
  const outer = derElement(spki, 0);
  const algorithm = derElement(spki, outer.start);
  const bits = derElement(spki, algorithm.end);
  if (
    outer.tag !== 0x30 ||
    outer.end !== spki.length ||
    algorithm.tag !== 0x30 ||
    bits.tag !== 0x03 ||
    bits.end !== outer.end ||
    spki[bits.start] !== 0
  ) {
    throw new Error('not an SPKI structure');
  }
  const rsa = createPublicKey({ key: spki.subarray(bits.start + 1, bits.end), format: 'der', type: 'pkcs1' });
  const [a, b] = [key.asymmetricKeyDetails, rsa.asymmetricKeyDetails];
  if (a?.modulusLength !== b?.modulusLength || a?.publicExponent !== b?.publicExponent) throw new Error('the RSA key read differs');
  return rsa;
}

/** A PEM header of a private key of any kind (PKCS#8, encrypted PKCS#8, PKCS#1 RSA, SEC 1 EC…). */
const PRIVATE_KEY_PEM = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;

/** Why a private key in `JWT_PUBLIC_KEY` is refused. */
const PRIVATE_KEY_PROBLEM = 'give the public key, not a private key';

/**
 * Reads `JWT_PUBLIC_KEY` (docs/behaviour.md "Which routes need a session"): a PEM public key (SPKI
 * `-----BEGIN PUBLIC KEY-----`, PKCS#1 RSA or an X.509 certificate) of a kind of {@link KEY_ALGORITHMS}.
 * An RSA-PSS key accepts PS256/384/512, or only the PS algorithm of the hash it is restricted to.
 * A private key is refused: Node would derive the public key from it, and the BFF's signing key would
 * sit unnoticed in the proxy's environment.
 * @param text - the PEM, with real line breaks.
 * @returns the key and its algorithms, or `problem`: why the text is refused (one clause of an error line).
 */
export function readTokenPublicKey(text: string): TokenPublicKey | { problem: string } {
  if (PRIVATE_KEY_PEM.test(text)) return { problem: PRIVATE_KEY_PROBLEM };
  let key: KeyObject;
  try {
    key = createPublicKey(text);
  } catch {
    return { problem: 'got text that is not one' };
  }
  if (key.type !== 'public') return { problem: 'got text that is not one' };
  try {
    // A private key under another header (createPublicKey derives a public key from one).
    createPrivateKey(text);
    return { problem: PRIVATE_KEY_PROBLEM };
  } catch {
    // Not a private key: as expected.
  }
  const kind = keyKindOf(key);
  const type = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails;
  if (kind === undefined) {
    if (type === 'rsa' || type === 'rsa-pss') return { problem: `got an RSA key of ${details?.modulusLength ?? 0} bits` };
    if (type === 'ec') return { problem: `got an EC key on curve ${quoted(details?.namedCurve ?? 'unknown')}` };
    return { problem: `got a ${quoted(type ?? 'unknown')} key` };
  }
  if (kind !== 'rsa-pss') return { key, algorithms: KEY_ALGORITHMS[kind] };
  let algorithms: readonly string[] = KEY_ALGORITHMS['rsa-pss'];
  if (details?.hashAlgorithm !== undefined) {
    const pss = PSS_HASHES[details.hashAlgorithm];
    const mgf1 = details.mgf1HashAlgorithm ?? details.hashAlgorithm;
    if (pss === undefined || mgf1 !== details.hashAlgorithm || (details.saltLength ?? 0) > pss.saltLength) {
      return {
        problem: `got an RSA-PSS key restricted to ${details.hashAlgorithm} with MGF1 ${mgf1} and a salt of ${details.saltLength ?? 0} bytes or more, which no PS256/384/512 signature meets`,
      };
    }
    algorithms = [pss.alg];
  }
  try {
    return { key: pssAsRsa(key), algorithms };
  } catch (error) {
    return { problem: `got an RSA-PSS key that cannot be read as an RSA key (${(error as Error).message})` };
  }
}

/**
 * `JWT_JWKS_URL`, `JWT_PUBLIC_KEY`, `JWT_SECRET`: at most one of them; the URL absolute http(s), the
 * PEM a public key of a kind tokens are signed with, the secret at least {@link MIN_JWT_SECRET_BYTES}
 * bytes (never echoed).
 */
export function checkTokenKeys(
  jwksUrl: string | undefined,
  pem: string | undefined,
  secret: string | undefined,
  problems: string[],
): TokenKeys {
  const set = (['JWT_JWKS_URL', 'JWT_PUBLIC_KEY', 'JWT_SECRET'] as const).filter((_, i) => [jwksUrl, pem, secret][i] !== undefined);
  if (set.length > 1) {
    problems.push(`${set[1]}: expected one of JWT_JWKS_URL, JWT_PUBLIC_KEY or JWT_SECRET, not several; got ${set.join(' and ')}`);
    return undefined;
  }
  if (jwksUrl !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(jwksUrl);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
      problems.push(`JWT_JWKS_URL: expected an absolute http(s) URL without credentials, got ${quoted(jwksUrl)}`);
      return undefined;
    }
    return Object.freeze({ jwksUrl: url.href });
  }
  if (pem !== undefined) {
    const text = pem.includes('\\n') ? pem.replaceAll('\\n', '\n') : pem;
    const read = readTokenPublicKey(text);
    if (!('problem' in read)) return Object.freeze({ publicKeyPem: text });
    if (read.problem === PRIVATE_KEY_PROBLEM) {
      problems.push(`JWT_PUBLIC_KEY: ${read.problem} (the proxy only verifies tokens; keep the BFF's signing key out of its environment)`);
    } else {
      problems.push(
        `JWT_PUBLIC_KEY: expected an RSA or RSA-PSS (2048 bits or more), EC P-256/P-384/P-521 or Ed25519 public key in PEM (-----BEGIN PUBLIC KEY-----…), ${read.problem}`,
      );
    }
    return undefined;
  }
  if (secret !== undefined) {
    const bytes = Buffer.byteLength(secret, 'utf8');
    if (bytes >= MIN_JWT_SECRET_BYTES) return Object.freeze({ secret });
    problems.push(
      `JWT_SECRET: expected at least ${MIN_JWT_SECRET_BYTES} bytes (the HMAC secret of an HS256/384/512 BFF), got ${bytes} bytes`,
    );
  }
  return undefined;
}
