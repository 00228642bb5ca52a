/**
 * docs/behaviour.md "Configuration": every variable validated at start, every problem reported at once
 * naming its variable, defaults as the table says, and the result frozen.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { checkHostBindable, ConfigError, loadConfig, PACKAGE_VERSION } from '../src/config.js';
import { KEY_ALGORITHMS, readTokenPublicKey } from '../src/session/token-keys.js';
import { problemsOf } from './helpers/config-problems.js';

/** An RSA-PSS key pair restricted to `hash`, MGF1 `mgf1` and a salt of at least `saltLength` bytes (@types/node types the salt length as a string; Node takes a number). */
function restrictedPss(hash: string, mgf1: string, saltLength: number): { publicKey: KeyObject; privateKey: KeyObject } {
  return generateKeyPairSync('rsa-pss', {
    modulusLength: 2048,
    hashAlgorithm: hash,
    mgf1HashAlgorithm: mgf1,
    saltLength: saltLength as unknown as string,
  });
}

/** What a production start needs (docs/behaviour.md "Configuration": the sandbox never starts in production). */
const PRODUCTION = { NODE_ENV: 'production', BFF_BASE_URL: 'https://bff.example.com/api', STICKER_API_URL: 'https://stickers.example.com' };

describe('docs/behaviour.md "Configuration"', () => {
  test('defaults of the table', () => {
    const c = loadConfig({});
    assert.equal(c.port, 3000);
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.nodeEnv, 'development');
    assert.equal(c.useSandbox, true);
    assert.equal(c.upstreamTimeoutMs, 15000);
    assert.equal(c.registerType, 'bff-simplified');
    assert.equal(c.sessionCookieName, 'access_token');
    assert.equal(c.allowedOrigins, undefined);
    assert.equal(c.buildId, PACKAGE_VERSION);
    assert.equal(c.logLevel, 'info');
    assert.equal(c.cachePurgeToken, undefined);
    assert.equal(c.workers, 1);
    assert.equal(c.catalogueCacheTtlMs, 60000);
    assert.equal(c.redis, undefined);
    assert.equal(c.metricsPort, undefined);
    assert.ok(!('metricsPort' in c));
    assert.ok(!('healthPort' in c));
    assert.equal(c.maxConnections, 0);
    assert.equal(c.keepAliveTimeoutMs, 65000);
    assert.equal(c.shutdownDelayMs, 0);
    assert.equal(c.shutdownTimeoutMs, 10000);
    assert.ok(Object.isFrozen(c));
    assert.ok(Object.isFrozen(c.upstreams));
  });

  test('production: __Host- cookie name by default', () => {
    const c = loadConfig(PRODUCTION);
    assert.equal(c.production, true);
    assert.equal(c.useSandbox, false);
    assert.equal(c.sessionCookieName, '__Host-access_token');
  });

  test('values are converted and URLs normalised', () => {
    const c = loadConfig({
      PORT: '0',
      BFF_BASE_URL: 'https://bff.example.com/api/',
      UPSTREAM_TIMEOUT_MS: '2500',
      REGISTER_TYPE: 'classic',
      ALLOWED_ORIGINS: 'https://www.example.com, https://m.example.com',
      SESSION_COOKIE_NAME: 'sid',
    });
    assert.equal(c.port, 0);
    assert.equal(c.upstreams.BFF_BASE_URL, 'https://bff.example.com/api');
    assert.equal(c.useSandbox, false);
    assert.equal(c.upstreamTimeoutMs, 2500);
    assert.equal(c.registerType, 'classic');
    assert.deepEqual(c.allowedOrigins, ['https://www.example.com', 'https://m.example.com']);
    assert.equal(c.sessionCookieName, 'sid');
  });

  test('every problem is reported at once, each naming its variable', () => {
    try {
      loadConfig({
        PORT: 'eighty',
        NODE_ENV: 'staging',
        UPSTREAM_TIMEOUT_MS: '-1',
        REGISTER_TYPE: 'fancy',
        LOG_LEVEL: 'loud',
      });
      assert.fail('expected a ConfigError');
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      for (const name of ['PORT', 'NODE_ENV', 'UPSTREAM_TIMEOUT_MS', 'REGISTER_TYPE', 'LOG_LEVEL']) {
        assert.ok(
          error.problems.some((p) => p.startsWith(`${name}:`)),
          `${name} is named`,
        );
      }
      assert.ok(!error.message.includes('\n'), 'one line');
    }
    try {
      loadConfig({ BFF_BASE_URL: 'ftp://x', STICKER_API_URL: 'not a url', ALLOWED_ORIGINS: 'https://a.com/path' });
      assert.fail('expected a ConfigError');
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      assert.deepEqual(
        error.problems.map((p) => p.split(':')[0]),
        ['BFF_BASE_URL', 'STICKER_API_URL', 'ALLOWED_ORIGINS'],
      );
    }
  });

  test('PACKAGE_VERSION follows package.json (the default BUILD_ID)', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.equal(PACKAGE_VERSION, pkg.version);
  });
});

/** Every bad value of the contract's table, each with what its error line must say. */
const BAD_VALUES: readonly (readonly [variable: string, value: string, says: RegExp])[] = [
  ...['eighty', '1e3', ' 12', '12 ', '0x10', '012', '+1', '-1', '1.5', '65536', '١٢'].map(
    (v) => ['PORT', v, /^PORT: expected a plain decimal integer from 0 to 65535, got ".*"$/] as const,
  ),
  ...['999.1.1.1', '1.2.3', '256.0.0.1', '[::1]', 'http://127.0.0.1', 'a b', 'host:3000', '-bad.example', 'x'.repeat(254), '1234'].map(
    (v) => ['HOST', v, /^HOST: expected an IPv4 or IPv6 address \(without brackets\) or a host name, got ".*"$/] as const,
  ),
  ['NODE_ENV', 'staging', /^NODE_ENV: expected one of development \| production \| test, got "staging"$/],
  ['NODE_ENV', 'Production', /^NODE_ENV: expected one of development \| production \| test, got "Production"$/],
  ...(
    [
      'BFF_BASE_URL',
      'STICKER_API_URL',
      'REFERRAL_V1_API_URL',
      'REFERRAL_V2_API_URL',
      'FTD_CASHBACK_VERIFY_URL',
      'FTD_CASHBACK_SEND_URL',
      'ATTRIBUTION_S2S_URL',
      'CACHE_PURGE_URL',
    ] as const
  ).flatMap(
    (name) =>
      [
        [name, 'not a url', new RegExp(`^${name}: expected an absolute http\\(s\\) URL, got "not a url"$`)],
        [name, 'ftp://files.example.com', new RegExp(`^${name}: expected an http or https URL, got protocol "ftp:"$`)],
        [name, 'https://user:pw@bff.example.com/?q=1', new RegExp(`^${name}: expected a URL without query, fragment or credentials$`)],
      ] as const,
  ),
  ...['0', '600001', '15s', '1e3', '1_000'].map(
    (v) => ['UPSTREAM_TIMEOUT_MS', v, /^UPSTREAM_TIMEOUT_MS: expected a plain decimal integer from 1 to 600000, got ".*"$/] as const,
  ),
  ['REGISTER_TYPE', 'fancy', /^REGISTER_TYPE: expected one of bff-simplified \| classic \| simplified, got "fancy"$/],
  ['SESSION_COOKIE_NAME', 'a b', /^SESSION_COOKIE_NAME: expected a cookie name of 1 to 64 letters, digits or .*, got "a b"$/],
  ['SESSION_COOKIE_NAME', 'sid;Path=/', /^SESSION_COOKIE_NAME: expected a cookie name/],
  [
    'ALLOWED_ORIGINS',
    'https://www.example.com/path',
    /^ALLOWED_ORIGINS: expected comma-separated origins such as https:\/\/www\.example\.com, got "https:\/\/www\.example\.com\/path"$/,
  ],
  ['ALLOWED_ORIGINS', 'www.example.com', /^ALLOWED_ORIGINS: expected comma-separated origins/],
  ['BUILD_ID', 'b'.repeat(129), /^BUILD_ID: expected at most 128 characters, got "b{80}…"$/],
  ['LOG_LEVEL', 'loud', /^LOG_LEVEL: expected one of fatal \| error \| warn \| info \| debug \| trace \| silent, got "loud"$/],
  ['CACHE_PURGE_TOKEN', 'short-secret', /^CACHE_PURGE_TOKEN: expected at least 16 characters, got 12 characters$/],
  ['REDIS_URL', 'http://redis.example.com', /^REDIS_URL: expected a redis:\/\/ or rediss:\/\/ URL, got protocol "http:"$/],
  ['REDIS_URL', 'localhost:6379', /^REDIS_URL: expected a redis:\/\/ or rediss:\/\/ URL/],
  ['WORKERS', '2', /^WORKERS: 2 processes need REDIS_URL/],
  ...['0', '65', 'two', '2.0'].map((v) => ['WORKERS', v, /^WORKERS: expected a plain decimal integer from 1 to 64, got ".*"$/] as const),
  ...['-1', '65536', '9464 ', 'metrics'].map(
    (v) => ['METRICS_PORT', v, /^METRICS_PORT: expected a plain decimal integer from 0 to 65535, got ".*"$/] as const,
  ),
  [
    'METRICS_PORT',
    '3000',
    /^METRICS_PORT: expected a port other than PORT \(3000\): metrics are never served on the public port, got "3000"$/,
  ],
  ...['-1', '65536', 'health'].map(
    (v) => ['HEALTH_PORT', v, /^HEALTH_PORT: expected a plain decimal integer from 0 to 65535, got ".*"$/] as const,
  ),
  ['HEALTH_PORT', '3000', /^HEALTH_PORT: expected a port other than PORT \(3000\), got "3000"$/],
  ...['-1', '1e3', '1000001'].map(
    (v) => ['MAX_CONNECTIONS', v, /^MAX_CONNECTIONS: expected a plain decimal integer from 0 to 1000000, got ".*"$/] as const,
  ),
  ...['0', '600001', '65s', '6.5e4'].map(
    (v) => ['KEEP_ALIVE_TIMEOUT_MS', v, /^KEEP_ALIVE_TIMEOUT_MS: expected a plain decimal integer from 1 to 600000, got ".*"$/] as const,
  ),
  ...['-1', '600001', '5s', '0x10', '05'].map(
    (v) => ['SHUTDOWN_DELAY_MS', v, /^SHUTDOWN_DELAY_MS: expected a plain decimal integer from 0 to 600000, got ".*"$/] as const,
  ),
  ...['-1', '600001', '10s', ' 10000', '1e4'].map(
    (v) => ['SHUTDOWN_TIMEOUT_MS', v, /^SHUTDOWN_TIMEOUT_MS: expected a plain decimal integer from 0 to 600000, got ".*"$/] as const,
  ),
  ...['-1', 'x', '86400001'].map(
    (v) =>
      ['CATALOGUE_CACHE_TTL_MS', v, /^CATALOGUE_CACHE_TTL_MS: expected a plain decimal integer from 0 to 86400000, got ".*"$/] as const,
  ),
  ...['-0.1', '1.5', '2', '1e-2', '.5', '0,01', '1%', ' 0.1', '0.1234567891'].map(
    (v) => ['UPSTREAM_CONTRACT_SAMPLE', v, /^UPSTREAM_CONTRACT_SAMPLE: expected a plain decimal number from 0 to 1, got ".*"$/] as const,
  ),
  ...['10.0.0.0/33', 'lb.example.com', '10.0.0.1,nope', '999.1.1.1', ','].map(
    (v) =>
      [
        'TRUSTED_PROXIES',
        v,
        /^TRUSTED_PROXIES: expected comma-separated IP addresses or CIDR ranges, such as 10\.0\.0\.0\/8,192\.168\.1\.7, got ".*"$/,
      ] as const,
  ),
  ...(['RATE_LIMIT_PREAUTH_PER_MIN', 'RATE_LIMIT_LOGIN_FAILURES', 'RATE_LIMIT_BEACON_PER_MIN', 'RATE_LIMIT_API_PER_MIN'] as const).flatMap(
    (name) =>
      ['-1', '1e3', '20/min', '1000001'].map(
        (v) => [name, v, new RegExp(`^${name}: expected a plain decimal integer from 0 to 1000000, got ".*"$`)] as const,
      ),
  ),
];

describe('docs/behaviour.md "Configuration": every bad value stops the start with one line naming the variable', () => {
  for (const [variable, value, says] of BAD_VALUES) {
    test(`${variable}=${JSON.stringify(value.length > 20 ? `${value.slice(0, 20)}…` : value)}`, () => {
      const problems = problemsOf({ [variable]: value });
      assert.equal(problems.length, 1, problems.join('\n'));
      const [line = ''] = problems;
      assert.match(line, says);
      assert.ok(!line.includes('\n'), 'one line');
    });
  }

  test('the values next to the bad ones are accepted', () => {
    const c = loadConfig({
      PORT: '0',
      HOST: '::1',
      UPSTREAM_TIMEOUT_MS: '600000',
      WORKERS: '64',
      REDIS_URL: 'rediss://:pw@redis.example.com:6380/0',
      METRICS_PORT: '0',
      KEEP_ALIVE_TIMEOUT_MS: '1',
      SHUTDOWN_DELAY_MS: '0',
      SHUTDOWN_TIMEOUT_MS: '600000',
    });
    assert.deepEqual(
      [c.port, c.host, c.upstreamTimeoutMs, c.workers, c.metricsPort, c.keepAliveTimeoutMs, c.shutdownDelayMs, c.shutdownTimeoutMs],
      [0, '::1', 600000, 64, 0, 1, 0, 600000],
    );
    for (const host of ['0.0.0.0', '127.0.0.1', '::', 'localhost', 'proxy-1.internal.example.com', 'front_proxy', 'proxy.example.com.']) {
      assert.equal(loadConfig({ HOST: host }).host, host);
    }
    assert.equal(loadConfig({}).upstreamContractSample, 0.01);
    for (const [text, value] of [
      ['0', 0],
      ['1', 1],
      ['0.5', 0.5],
      ['1.0', 1],
      ['0.001', 0.001],
    ] as const) {
      assert.equal(loadConfig({ UPSTREAM_CONTRACT_SAMPLE: text }).upstreamContractSample, value);
    }
    assert.equal(loadConfig({ PORT: '9464', METRICS_PORT: '9465' }).metricsPort, 9465);
    assert.equal(loadConfig({ PORT: '0', METRICS_PORT: '9464' }).metricsPort, 9464);
    assert.equal(loadConfig({ PORT: '9464', METRICS_PORT: '9465', HEALTH_PORT: '9466' }).healthPort, 9466);
    assert.equal(loadConfig({ PORT: '0', METRICS_PORT: '0', HEALTH_PORT: '0' }).healthPort, 0);
    assert.deepEqual(problemsOf({ PORT: '0', METRICS_PORT: '9464', HEALTH_PORT: '9464' }), [
      'HEALTH_PORT: expected a port other than METRICS_PORT (9464), got "9464"',
    ]);
    assert.equal(loadConfig({ MAX_CONNECTIONS: '512' }).maxConnections, 512);
    assert.deepEqual(loadConfig({ TRUSTED_PROXIES: ' 10.0.0.0/8, 192.168.1.7 ,::1' }).trustedProxies, ['10.0.0.0/8', '192.168.1.7', '::1']);
    assert.deepEqual(loadConfig({ RATE_LIMIT_API_PER_MIN: '0', RATE_LIMIT_PREAUTH_PER_MIN: '1000000' }).rateLimits, {
      preAuthPerMin: 1_000_000,
      loginFailures: 5,
      loginFailuresPerLogin: 50,
      beaconPerMin: 10,
      apiPerMin: 0,
      apiPerAddressPerMin: 6_000,
    });
    assert.equal(loadConfig({ RATE_LIMIT_API_PER_ADDRESS_PER_MIN: '0' }).rateLimits.apiPerAddressPerMin, 0);
  });

  test('JWT_JWKS_URL, JWT_PUBLIC_KEY or JWT_SECRET: one of them, a URL, a PEM public key of a token-signing kind, a secret of 32 bytes or more', () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const pemOf = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();
    assert.equal(loadConfig({}).tokenKeys, undefined);
    assert.deepEqual(loadConfig({ JWT_JWKS_URL: 'https://bff.example.com/.well-known/jwks.json' }).tokenKeys, {
      jwksUrl: 'https://bff.example.com/.well-known/jwks.json',
    });
    assert.deepEqual(loadConfig({ JWT_PUBLIC_KEY: pem }).tokenKeys, { publicKeyPem: pem });
    assert.deepEqual(loadConfig({ JWT_PUBLIC_KEY: pem.replaceAll('\n', '\\n') }).tokenKeys, { publicKeyPem: pem });
    const secret = 's'.repeat(32);
    assert.deepEqual(loadConfig({ JWT_SECRET: secret }).tokenKeys, { secret });
    assert.deepEqual(loadConfig({ JWT_SECRET: 'é'.repeat(16) }).tokenKeys, { secret: 'é'.repeat(16) }, '32 bytes of UTF-8');
    assert.equal(loadConfig({ JWT_SECRET: '' }).tokenKeys, undefined, 'empty counts as unset');
    for (const key of [
      generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey,
      generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey,
      generateKeyPairSync('ec', { namedCurve: 'P-521' }).publicKey,
      generateKeyPairSync('ed25519').publicKey,
    ]) {
      assert.deepEqual(loadConfig({ JWT_PUBLIC_KEY: pemOf(key) }).tokenKeys, { publicKeyPem: pemOf(key) }, key.asymmetricKeyType);
    }
    const cases: [Record<string, string>, RegExp][] = [
      [{ JWT_JWKS_URL: 'ftp://bff.example.com/jwks' }, /^JWT_JWKS_URL: expected an absolute http\(s\) URL/],
      [{ JWT_JWKS_URL: 'not a url' }, /^JWT_JWKS_URL: expected an absolute http\(s\) URL/],
      [{ JWT_PUBLIC_KEY: 'hello' }, /^JWT_PUBLIC_KEY: expected an RSA .* public key in PEM .*, got text that is not one$/],
      [
        { JWT_PUBLIC_KEY: pemOf(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey) },
        /^JWT_PUBLIC_KEY: expected .*, got an RSA key of 1024 bits$/,
      ],
      [
        { JWT_PUBLIC_KEY: pemOf(generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey) },
        /^JWT_PUBLIC_KEY: expected .*, got an EC key on curve "secp256k1"$/,
      ],
      [{ JWT_PUBLIC_KEY: pemOf(generateKeyPairSync('ed448').publicKey) }, /^JWT_PUBLIC_KEY: expected .*, got a "ed448" key$/],
      [
        { JWT_SECRET: 'hunter2-is-a-short-secret' },
        /^JWT_SECRET: expected at least 32 bytes \(the HMAC secret of an HS256\/384\/512 BFF\), got 25 bytes$/,
      ],
      [
        { JWT_JWKS_URL: 'https://bff.example.com/jwks', JWT_PUBLIC_KEY: pem },
        /^JWT_PUBLIC_KEY: expected one of JWT_JWKS_URL, JWT_PUBLIC_KEY or JWT_SECRET, not several; got JWT_JWKS_URL and JWT_PUBLIC_KEY$/,
      ],
      [{ JWT_PUBLIC_KEY: pem, JWT_SECRET: secret }, /^JWT_SECRET: expected one of .*; got JWT_PUBLIC_KEY and JWT_SECRET$/],
      [
        { JWT_JWKS_URL: 'https://bff.example.com/jwks', JWT_SECRET: secret },
        /^JWT_SECRET: expected one of .*; got JWT_JWKS_URL and JWT_SECRET$/,
      ],
    ];
    for (const [env, expected] of cases) {
      const problems = problemsOf(env);
      assert.equal(problems.length, 1, JSON.stringify(problems));
      assert.match(problems[0] ?? '', expected);
    }
  });

  test('JWT_PUBLIC_KEY: an RSA-PSS public key is read as the RSA key jose verifies with; a private key of any form is refused', () => {
    const pemOf = (key: KeyObject) => key.export({ type: 'spki', format: 'pem' }).toString();
    const pss = generateKeyPairSync('rsa-pss', { modulusLength: 2048 });
    const pss256 = restrictedPss('sha256', 'sha256', 32);
    // The PEM really is the id-RSASSA-PSS form (OID 1.2.840.113549.1.1.10), not rsaEncryption.
    assert.ok(pss.publicKey.export({ type: 'spki', format: 'der' }).includes(Buffer.from('06092a864886f70d01010a', 'hex')));
    const table: [string, KeyObject, readonly string[]][] = [
      ['RSA-PSS', pss.publicKey, ['PS256', 'PS384', 'PS512']],
      ['RSA-PSS restricted to SHA-256', pss256.publicKey, ['PS256']],
      ['RSA', generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey, KEY_ALGORITHMS.rsa],
      ['EC P-521', generateKeyPairSync('ec', { namedCurve: 'P-521' }).publicKey, ['ES512']],
      ['Ed25519', generateKeyPairSync('ed25519').publicKey, ['EdDSA', 'Ed25519']],
    ];
    for (const [label, key, algorithms] of table) {
      assert.deepEqual(loadConfig({ JWT_PUBLIC_KEY: pemOf(key) }).tokenKeys, { publicKeyPem: pemOf(key) }, label);
      const read = readTokenPublicKey(pemOf(key));
      assert.ok(!('problem' in read), label);
      assert.deepEqual(read.algorithms, algorithms, label);
      assert.equal(read.key.type, 'public');
      // The same modulus and exponent: what jose gets is the key given, as an RSA key for an RSA-PSS one.
      if (key.asymmetricKeyType === 'rsa-pss') {
        assert.equal(read.key.asymmetricKeyType, 'rsa', label);
        assert.deepEqual(read.key.asymmetricKeyDetails, { modulusLength: 2048, publicExponent: 65537n });
        const rsaSpki = read.key.export({ type: 'spki', format: 'der' });
        const pssSpki = key.export({ type: 'spki', format: 'der' });
        assert.ok(pssSpki.includes(rsaSpki.subarray(rsaSpki.length - 270)), 'same RSAPublicKey');
      }
    }
    const privatePems: [string, string][] = [
      ['PKCS#8 RSA', generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()],
      ['PKCS#8 RSA-PSS', pss.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()],
      ['PKCS#1 RSA', generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString()],
      ['SEC 1 EC', generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'sec1', format: 'pem' }).toString()],
      ['PKCS#8 Ed25519', generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()],
      [
        'encrypted PKCS#8',
        generateKeyPairSync('ec', { namedCurve: 'P-256' })
          .privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'x' })
          .toString(),
      ],
    ];
    for (const [label, pem] of privatePems) {
      for (const value of [pem, pem.replaceAll('\n', '\\n')]) {
        assert.deepEqual(
          problemsOf({ JWT_PUBLIC_KEY: value }),
          [
            "JWT_PUBLIC_KEY: give the public key, not a private key (the proxy only verifies tokens; keep the BFF's signing key out of its environment)",
          ],
          label,
        );
      }
    }
    const sha1 = restrictedPss('sha1', 'sha1', 20).publicKey;
    const mixed = restrictedPss('sha256', 'sha1', 32).publicKey;
    const longSalt = restrictedPss('sha256', 'sha256', 64).publicKey;
    for (const [key, says] of [
      [sha1, 'restricted to sha1 with MGF1 sha1 and a salt of 20 bytes or more'],
      [mixed, 'restricted to sha256 with MGF1 sha1 and a salt of 32 bytes or more'],
      [longSalt, 'restricted to sha256 with MGF1 sha256 and a salt of 64 bytes or more'],
    ] as const) {
      assert.deepEqual(problemsOf({ JWT_PUBLIC_KEY: pemOf(key) }), [
        `JWT_PUBLIC_KEY: expected an RSA or RSA-PSS (2048 bits or more), EC P-256/P-384/P-521 or Ed25519 public key in PEM (-----BEGIN PUBLIC KEY-----…), got an RSA-PSS key ${says}, which no PS256/384/512 signature meets`,
      ]);
    }
  });

  test('a secret is never echoed in its error line', () => {
    const [token = ''] = problemsOf({ CACHE_PURGE_TOKEN: 'hunter2-secret' });
    assert.ok(!token.includes('hunter2'), token);
    const [redis = ''] = problemsOf({ REDIS_URL: 'http://:hunter2@redis.example.com' });
    assert.ok(!redis.includes('hunter2'), redis);
    const [jwt = ''] = problemsOf({ JWT_SECRET: 'hunter2-hunter2' });
    assert.match(jwt, /^JWT_SECRET: /);
    assert.ok(!jwt.includes('hunter2'), jwt);
    const [both = ''] = problemsOf({ JWT_SECRET: 'hunter2'.repeat(8), JWT_JWKS_URL: 'https://bff.example.com/jwks' });
    assert.ok(both.startsWith('JWT_SECRET: ') && !both.includes('hunter2'), both);
  });

  test('production never starts the sandbox: BFF_BASE_URL and STICKER_API_URL missing, both lines at once', () => {
    assert.deepEqual(problemsOf({ NODE_ENV: 'production' }), [
      "BFF_BASE_URL: expected the BFF's absolute http(s) URL, required with NODE_ENV=production (the sandbox never starts in production)",
      "STICKER_API_URL: expected the sticker API's absolute http(s) URL, required with NODE_ENV=production (the sandbox never starts in production)",
    ]);
    assert.deepEqual(
      problemsOf({ NODE_ENV: 'production', BFF_BASE_URL: PRODUCTION.BFF_BASE_URL }).map((p) => p.split(':')[0]),
      ['STICKER_API_URL'],
    );
    assert.deepEqual(
      problemsOf({ NODE_ENV: 'production', STICKER_API_URL: PRODUCTION.STICKER_API_URL }).map((p) => p.split(':')[0]),
      ['BFF_BASE_URL'],
    );
    // Outside production a missing URL is the sandbox's (BFF) or a 503 not_configured route's (the others).
    assert.equal(loadConfig({ NODE_ENV: 'development' }).useSandbox, true);
    assert.equal(loadConfig({ BFF_BASE_URL: PRODUCTION.BFF_BASE_URL }).upstreams.STICKER_API_URL, undefined);
  });

  test('every problem of a bad environment comes at once', () => {
    const problems = problemsOf({ NODE_ENV: 'production', PORT: '1e3', HOST: '999.1.1.1', SHUTDOWN_DELAY_MS: '5s', LOG_LEVEL: 'loud' });
    assert.deepEqual(problems.map((p) => p.split(':')[0]).sort(), [
      'BFF_BASE_URL',
      'HOST',
      'LOG_LEVEL',
      'PORT',
      'SHUTDOWN_DELAY_MS',
      'STICKER_API_URL',
    ]);
  });
});

describe('checkHostBindable (HOST must be an address this machine can bind)', () => {
  test('a loopback address binds', async () => {
    assert.equal(await checkHostBindable('127.0.0.1'), undefined);
  });

  test('an address of no interface here answers one line naming HOST and the reason', async () => {
    // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never assigned to a machine.
    const problem = await checkHostBindable('192.0.2.1');
    assert.match(problem ?? '', /^HOST: cannot bind "192\.0\.2\.1": .*EADDRNOTAVAIL/);
    assert.ok(!(problem ?? '').includes('\n'));
  });
});

describe('CATALOGUE_FOR_SESSIONS (docs/behaviour.md "Configuration", "Which routes need a session")', () => {
  test('default shared; shared and forward accepted', () => {
    assert.equal(loadConfig({}).catalogueForSessions, 'shared');
    assert.equal(loadConfig({ CATALOGUE_FOR_SESSIONS: 'shared' }).catalogueForSessions, 'shared');
    assert.equal(loadConfig({ CATALOGUE_FOR_SESSIONS: 'forward' }).catalogueForSessions, 'forward');
    assert.equal(loadConfig({ CATALOGUE_FOR_SESSIONS: '' }).catalogueForSessions, 'shared', 'empty counts as unset');
  });

  for (const value of ['private', 'Shared', 'forward ', 'shared,forward']) {
    test(`CATALOGUE_FOR_SESSIONS=${JSON.stringify(value)} stops the start with one line naming it and the allowed values`, () => {
      const problems = problemsOf({ CATALOGUE_FOR_SESSIONS: value });
      assert.deepEqual(problems, [`CATALOGUE_FOR_SESSIONS: expected one of shared | forward, got ${JSON.stringify(value)}`]);
    });
  }
});
