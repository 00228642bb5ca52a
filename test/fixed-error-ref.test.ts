/**
 * `fixedErrorRef` (pipeline/error-ref.ts), table-driven: the reference of a fixed refusal remembered
 * per route, method and body is the reference `errorRefOf` gives the same answer, and there is none
 * for a target that is not the route's pattern. Then over real sockets: the refusals that use it (the
 * auth gate's 401, the CSRF defence's 403, the rate limit's 429) carry the reference the browser SDK's
 * classifier computes for the answer it received, with a query, for a `HEAD` and for an absolute-form
 * target alike.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { classifyError } from '../src/errors/index.js';
import { errorRefOf, fixedErrorRef } from '../src/pipeline/error-ref.js';
import { rawRequest } from './helpers/raw-http.js';
import { send, useProxyWithRecorder } from './helpers/recording-upstream.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const NO_TOKEN = '{"reason":"no_token"}';
const PATTERN = '/api/user/last-casino-games';

function requestOf(method: string, url: string): FastifyRequest {
  return { method, url } as FastifyRequest;
}

describe('fixedErrorRef', () => {
  const rows: { name: string; method: string; url: string; status: number; body: string | undefined; fixed: boolean }[] = [
    { name: 'the pattern itself', method: 'GET', url: PATTERN, status: 401, body: NO_TOKEN, fixed: true },
    { name: 'the pattern with a query', method: 'GET', url: `${PATTERN}?page=2`, status: 401, body: NO_TOKEN, fixed: true },
    { name: 'a HEAD, classified without a body', method: 'HEAD', url: PATTERN, status: 401, body: undefined, fixed: true },
    { name: 'another status and body', method: 'POST', url: PATTERN, status: 403, body: '{"ok":false}', fixed: true },
    { name: 'an absolute-form target', method: 'GET', url: `http://proxy.test${PATTERN}`, status: 401, body: NO_TOKEN, fixed: false },
    { name: 'a percent-encoded path', method: 'GET', url: '/api/user/last%2Dcasino-games', status: 401, body: NO_TOKEN, fixed: false },
    { name: 'a longer path', method: 'GET', url: `${PATTERN}x`, status: 401, body: NO_TOKEN, fixed: false },
    { name: 'a fragment', method: 'GET', url: `${PATTERN}#x`, status: 401, body: NO_TOKEN, fixed: false },
  ];
  for (const row of rows) {
    test(`${row.name}: ${row.fixed ? 'the reference errorRefOf gives' : 'none'}`, () => {
      const route = {};
      const request = requestOf(row.method, row.url);
      const fixed = fixedErrorRef(route, PATTERN, request, row.status, JSON_TYPE, row.body);
      if (!row.fixed) {
        assert.equal(fixed, undefined);
        return;
      }
      const expected = errorRefOf({ status: row.status, method: row.method, url: row.url, contentType: JSON_TYPE, body: row.body });
      assert.equal(fixed, expected);
      // Remembered: the same again, and another route computes its own.
      assert.equal(fixedErrorRef(route, PATTERN, request, row.status, JSON_TYPE, row.body), expected);
      assert.equal(fixedErrorRef({}, PATTERN, request, row.status, JSON_TYPE, row.body), expected);
    });
  }

  test('one route, two bodies and two methods: each its own reference', () => {
    const route = {};
    const get = fixedErrorRef(route, PATTERN, requestOf('GET', PATTERN), 401, JSON_TYPE, NO_TOKEN);
    const head = fixedErrorRef(route, PATTERN, requestOf('HEAD', PATTERN), 401, JSON_TYPE, undefined);
    const expired = fixedErrorRef(route, PATTERN, requestOf('GET', PATTERN), 401, JSON_TYPE, '{"reason":"token_expired"}');
    assert.equal(get, errorRefOf({ status: 401, method: 'GET', url: PATTERN, contentType: JSON_TYPE, body: NO_TOKEN }));
    assert.equal(head, errorRefOf({ status: 401, method: 'HEAD', url: PATTERN, contentType: JSON_TYPE, body: undefined }));
    assert.equal(
      expired,
      errorRefOf({ status: 401, method: 'GET', url: PATTERN, contentType: JSON_TYPE, body: '{"reason":"token_expired"}' }),
    );
    assert.notEqual(get, expired);
  });
});

describe('the refusals with a remembered reference, over sockets', () => {
  const { proxy } = useProxyWithRecorder({ RATE_LIMIT_PREAUTH_PER_MIN: '2' });

  /** The answer's `X-Error-Ref`, and the one the SDK's classifier computes from the answer it received. */
  async function refs(method: string, target: string, headers: Record<string, string> = {}) {
    const answer = await rawRequest(proxy.url, method, target, headers);
    const header = /^x-error-ref: (.*)$/im.exec(answer.headers)?.[1];
    const path = target.startsWith('/') ? target.split('?')[0] : new URL(target).pathname;
    const data = answer.body === '' ? undefined : (JSON.parse(answer.body) as unknown);
    const sdk = classifyError({ status: answer.status, data, rawBody: answer.body, url: path, method }).ref;
    return { status: answer.status, header, sdk, body: answer.body };
  }

  test('401 no_token: with a query, a HEAD, an absolute-form target', async () => {
    for (const [method, target] of [
      ['GET', PATTERN],
      ['GET', `${PATTERN}?page=3`],
      ['HEAD', PATTERN],
    ] as const) {
      const seen = await refs(method, target);
      assert.equal(seen.status, 401, `${method} ${target}`);
      assert.equal(seen.header, seen.sdk, `${method} ${target}`);
    }
    const absolute = await refs('GET', `${proxy.url}${PATTERN}`);
    assert.equal(absolute.status, 401);
    assert.equal(absolute.body, NO_TOKEN);
    assert.match(absolute.header ?? '', /^EP\d{4}-EM0001$/);
  });

  test('403 csrf_rejected, cross-site and foreign origin: the same body as ever and the SDK reference', async () => {
    const cross = await refs('POST', '/api/auth/logout?x=1', { 'sec-fetch-site': 'cross-site', 'content-length': '0' });
    assert.equal(cross.status, 403);
    assert.equal(cross.body, '{"ok":false,"error":"csrf_rejected","detail":"Cross-site requests are not allowed"}');
    assert.equal(cross.header, cross.sdk);
    const foreign = await refs('POST', '/api/auth/logout', { origin: 'https://elsewhere.example', 'content-length': '0' });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.body, '{"ok":false,"error":"csrf_rejected","detail":"This origin may not send this request"}');
    assert.equal(foreign.header, foreign.sdk);
  });

  test('429 rate_limited: the SDK reference', async () => {
    let limited: Awaited<ReturnType<typeof send>> | undefined;
    for (let i = 0; i < 5 && limited === undefined; i++) {
      const seen = await send(proxy.url, 'POST', '/api/auth/login?from=test', { json: {} });
      if (seen.status === 429) limited = seen;
    }
    assert.ok(limited, 'the preauth limit refuses');
    assert.equal((limited.json as { error: string }).error, 'rate_limited');
    const sdk = classifyError({ status: 429, data: limited.json, rawBody: limited.text, url: '/api/auth/login', method: 'POST' }).ref;
    assert.equal(limited.headers.get('x-error-ref'), sdk);
  });
});
