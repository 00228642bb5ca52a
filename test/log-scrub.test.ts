/**
 * docs/behaviour.md "Session cookie": the JWT never appears in a log line. Every line is scrubbed of
 * JWT-shaped values, `access_token=` parameters and `Bearer` credentials, whatever field holds them:
 * the forced-logout beacon's fields (each one given a token, in several disguises), error details and
 * request paths. The scrubbing itself is table-tested, linear time included.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { scrubSecrets } from '../src/session/redact.js';
import { rawRequest } from './helpers/raw-http.js';
import { fakeJwt, send, useProxyWithRecorder } from './helpers/recording-upstream.js';

const JWT = 'eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI3IiwiZXhwIjoxOTAwMDAwMDAwfQ.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg';
const SPACED = `${Buffer.from('{ "alg": "RS256" }').toString('base64url')}.${Buffer.from('{ "sub": "7" }').toString('base64url')}.c2lnbmF0dXJl`;

describe('scrubSecrets', () => {
  const cases: [string, string, string][] = [
    ['a JWT after a word', `token ${JWT}`, 'token [redacted]'],
    ['a JWT glued to letters (the run goes whole)', `token${JWT}!`, '[redacted]!'],
    ['a JWT whose header has spaces', `x ${SPACED}`, 'x [redacted]'],
    ['a JWT with percent-encoded dots', JWT.replaceAll('.', '%2E'), '[redacted]'],
    ['an access_token fragment', `/cb#access_token=${JWT}&state=1`, '/cb#access_token=[redacted]&state=1'],
    ['an access_token parameter of any value', '/cb?access_token=opaque-value-123&x=1', '/cb?access_token=[redacted]&x=1'],
    ['refresh_token and id_token, encoded =', 'refresh_token%3Dabc123 id_token=xyz', 'refresh_token%3D[redacted] id_token=[redacted]'],
    ['a Bearer credential', 'Authorization: Bearer abcdefgh12345678', 'Authorization: Bearer [redacted]'],
    [
      'host names and dotted paths are kept',
      'https://examples.example.com/api/games/slot.machine.v2',
      'https://examples.example.com/api/games/slot.machine.v2',
    ],
    ['three base64url parts that are no JWT are kept', 'abcdefghij.klmnopqrst.uvw', 'abcdefghij.klmnopqrst.uvw'],
    ['plain text is kept', 'token expired', 'token expired'],
  ];
  for (const [name, input, expected] of cases) {
    test(name, () => assert.equal(scrubSecrets(input), expected));
  }

  test('a header opened by any white space JSON or \\s allows is caught: the pre-check letters cover every one', () => {
    for (const space of ['', ' ', '\t', '\n', '\r', '\v', '\f', '\u00a0', '  ', ' \t']) {
      const header = Buffer.from(`{${space}"alg":"RS256"}`, 'latin1').toString('base64url');
      const token = `${header}.${Buffer.from(`{${space}"sub":"7"}`, 'latin1').toString('base64url')}.c2lnbmF0dXJl`;
      assert.equal(scrubSecrets(`x ${token} y`), 'x [redacted] y', JSON.stringify(space));
    }
  });

  test('linear on long runs (no backtracking blow-up)', () => {
    for (const text of [
      'a'.repeat(200_000),
      `${'abcdefgh.'.repeat(30_000)}`,
      `${'e'.repeat(100_000)}.${'e'.repeat(100_000)}`,
      '%2'.repeat(50_000),
    ]) {
      const started = performance.now();
      scrubSecrets(text);
      assert.ok(performance.now() - started < 500, `${Math.round(performance.now() - started)} ms`);
    }
  });
});

describe('no token reaches the log', () => {
  const { upstream, proxy } = useProxyWithRecorder({ LOG_LEVEL: 'trace' }, { random: () => 0 });
  const tokens = [JWT, SPACED, fakeJwt({ n: 'beacon' })];
  const disguises = (jwt: string) => [
    jwt,
    `token ${jwt}`,
    `x${jwt}`,
    `https://app.example.com/cb#access_token=${jwt}&state=s`,
    jwt.replaceAll('.', '%2E'),
    `Bearer ${jwt}`,
  ];
  const leaked = (jwt: string) =>
    proxy.logs.lines.filter((l) => l.includes(jwt) || l.includes(jwt.replaceAll('.', '%2E')) || l.includes(jwt.split('.')[1] ?? jwt));

  test('a token in every field of the beacon, in every disguise, is absent from the forced-logout entry', async () => {
    const valid = {
      ref: 'EP0003-EM0003',
      endpointCode: 'EP0003',
      errorCode: 'EM0003',
      status: 401,
      reason: 'token expired',
      url: '/api/auth/profile',
      initiator: 'proxy-client',
      pathname: '/casino',
      timestamp: 1_780_000_000_000,
      hadCookie: true,
      userAgentShort: 'Chrome 140 / Linux',
    };
    const stringFields = Object.entries(valid)
      .filter(([, v]) => typeof v === 'string')
      .map(([k]) => k);
    assert.equal(stringFields.length, 8);
    let accepted = 0;
    let refused = 0;
    for (const jwt of tokens) {
      for (const value of disguises(jwt)) {
        for (const field of stringFields) {
          const res = await send(proxy.url, 'POST', '/api/logs/auth-logout', { json: { ...valid, [field]: value } });
          // ref, endpointCode and errorCode have patterns, initiator 128 characters at most: a token that does not
          // fit is refused (400) and nothing of it is logged.
          assert.ok(res.status === 204 || res.status === 400, `${field}: ${res.status}`);
          if (res.status === 204) accepted++;
          else refused++;
        }
        // Every free-text field that can hold it at once.
        const all = Object.fromEntries(
          Object.entries(valid).map(([k, v]) => [k, ['reason', 'url', 'pathname', 'userAgentShort'].includes(k) ? value : v]),
        );
        assert.equal((await send(proxy.url, 'POST', '/api/logs/auth-logout', { json: all })).status, 204);
        accepted++;
      }
      assert.deepEqual(leaked(jwt), [], 'the token is in no log line');
    }
    const entries = proxy.logs.entries.filter((e) => e.msg === 'forced-logout');
    assert.equal(entries.length, accepted, 'every accepted beacon was logged (sampled in)');
    assert.ok(refused > 0 && accepted > 0);
    assert.ok(entries.some((e) => String((e.beacon as Record<string, unknown>).url).includes('access_token=[redacted]')));
    assert.equal(upstream.requests.length, 0);
  });

  test('a token in a request path and in an upstream error detail is absent from the log', async () => {
    for (const jwt of tokens) {
      await rawRequest(proxy.url, 'GET', `/api/core-sportbook/${jwt}?access_token=${jwt}`);
      await rawRequest(proxy.url, 'GET', `/api/no-such-route/${jwt}`);
      upstream.on('GET', '/bff/games/user-last-casino-games-dl', { status: 500, json: { message: `failed for token ${jwt}` } });
      await send(proxy.url, 'GET', '/api/user/last-casino-games', { token: fakeJwt() });
      assert.deepEqual(leaked(jwt), []);
    }
    assert.ok(
      proxy.logs.lines.some((l) => l.includes('/api/core-sportbook/[redacted]')),
      'the path is logged, scrubbed',
    );
  });
});
