/**
 * Spec 5.5, docs/behaviour.md "Session cookie": `/api/auth/logout` and `/api/auth/logout-auto` answer
 * success and clear the session cookie whatever the proxy refused on the way — the rate limit (429),
 * a malformed or oversized body (400, 413), a content type (415) — and then nothing goes upstream.
 * Over real sockets, against a recording upstream.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fakeJwt, send, useProxiesWithRecorder } from '../helpers/recording-upstream.js';

const {
  upstream,
  proxies: [proxy, limited],
} = useProxiesWithRecorder([{}, { env: { RATE_LIMIT_API_PER_MIN: '2' } }]);

const ROUTES = [
  ['/api/auth/logout', '/auth/logout'],
  ['/api/auth/logout-auto', '/auth/logout-auto'],
] as const;

/** Whether an answer is logout's success: 200 `{ ok: true }`, the cleared cookie, no-store, no error reference. */
function assertSuccess(label: string, res: Awaited<ReturnType<typeof send>>): void {
  assert.equal(res.status, 200, `${label}: ${res.status} ${res.text.slice(0, 80)}`);
  assert.deepEqual(res.json, { ok: true }, label);
  assert.match(
    String(res.headers.get('set-cookie')),
    /^access_token=; Max-Age=0; Path=\/; HttpOnly; SameSite=Lax/,
    `${label}: cookie cleared`,
  );
  assert.equal(res.headers.get('cache-control'), 'no-store', `${label}: no-store`);
  assert.equal(res.headers.get('x-error-ref'), null, `${label}: no error reference`);
  assert.equal(res.headers.get('retry-after'), null, `${label}: no Retry-After`);
}

for (const [route, upstreamPath] of ROUTES) {
  for (const [label, options] of [
    ['malformed JSON (400)', { body: '{"broken', headers: { 'content-type': 'application/json' } }],
    ['a body nested too deep (400)', { body: `${'['.repeat(100)}${']'.repeat(100)}`, headers: { 'content-type': 'application/json' } }],
    ['text/plain (415)', { body: 'bye', headers: { 'content-type': 'text/plain' } }],
    ['a form (415)', { body: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }],
    ['a body over 1 MiB (413)', { body: `{"a":"${'x'.repeat(1_100_000)}"}`, headers: { 'content-type': 'application/json' } }],
  ] as const) {
    test(`${route}: ${label} → 200, cookie cleared, nothing upstream`, async () => {
      const res = await send(proxy.url, 'POST', route, { ...options, token: fakeJwt() });
      assertSuccess(`${route} ${label}`, res);
      assert.equal(upstream.requests.filter((r) => r.path === upstreamPath).length, 0, 'nothing sent upstream');
    });
  }

  test(`${route}: over the rate limit (429) → 200, cookie cleared, nothing upstream`, async () => {
    const token = fakeJwt();
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await send(limited.url, 'POST', route, { token }));
    for (const [i, res] of answers.entries()) assertSuccess(`${route} #${i + 1}`, res);
    assert.equal(
      upstream.requests.filter((r) => r.path === upstreamPath).length,
      2,
      'the two within the limit went upstream, the refused ones did not',
    );
  });
}

test('other routes keep their refusals: a session route still answers 415 and 400', async () => {
  const token = fakeJwt();
  const wrongType = await send(proxy.url, 'POST', '/api/auth/refresh', { token, body: 'x', headers: { 'content-type': 'text/plain' } });
  assert.equal(wrongType.status, 415);
  const broken = await send(proxy.url, 'POST', '/api/auth/refresh', {
    token,
    body: '{"broken',
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(broken.status, 400);
  assert.equal(broken.headers.get('set-cookie'), null);
});
