/**
 * `createServer`'s `omitSteps` (src/pipeline/steps.ts, for the instruction bench's ledger only): a
 * step named is really left out — the same request over a socket gets the step's answer from the
 * proxy with every step and not from the one without it — and the others stay (bench/README.md
 * "What each step costs").
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PipelineStepName } from '../src/pipeline/steps.js';
import { type TestProxy, useProxiesWithRecorder } from './helpers/recording-upstream.js';

const PASSTHROUGH = '/api/user/last-casino-games';
const UPSTREAM_PATH = '/bff/games/user-last-casino-games-dl';
const LOGOUT = '/api/auth/logout';
const GUARDED = '/api/user/login-history';
const GUARDED_UPSTREAM_PATH = '/bff/users/login-history';
const b64 = (text: string) => Buffer.from(text).toString('base64url');
/** A well-formed JWT (the proxy runs without token keys: well-formed is accepted). */
const TOKEN = `${b64('{"alg":"HS256","typ":"JWT"}')}.${b64('{"sub":"7","exp":4102444800}')}.${b64('signature')}`;

const OMITTED = ['request-context', 'csrf', 'auth-gate', 'error-ref', 'upstream-guard', 'answer-json-check', 'secret-scan'] as const;
const { upstream, proxies } = useProxiesWithRecorder([
  // The circuit opens after 2 upstream 503s in a row, and stays open for the test.
  { env: { UPSTREAM_CIRCUIT_FAILURES: '2', UPSTREAM_CIRCUIT_PAUSE_MS: '600000' } },
  ...OMITTED.map((step) => ({
    env: { UPSTREAM_CIRCUIT_FAILURES: '2', UPSTREAM_CIRCUIT_PAUSE_MS: '600000' },
    options: { omitSteps: new Set<PipelineStepName>([step]) },
  })),
]);
const [every] = proxies;
const without = (step: (typeof OMITTED)[number]): TestProxy => proxies[OMITTED.indexOf(step) + 1] as TestProxy;

async function get(proxy: TestProxy, path: string, init: RequestInit = {}, cookie: string | null = TOKEN): Promise<Response> {
  const name = proxy.app.deps.config.sessionCookieName;
  const headers = new Headers(init.headers);
  if (cookie !== null) headers.set('cookie', `${name}=${cookie}`);
  return fetch(`${proxy.url}${path}`, { ...init, headers });
}

/** Each row: what the proxy with every step answers, and what the proxy without the step answers. */
const ROWS: {
  step: (typeof OMITTED)[number];
  does: string;
  look: (proxy: TestProxy) => Promise<unknown>;
  on: unknown;
  off: unknown;
}[] = [
  {
    step: 'request-context',
    does: 'X-Request-Id and nosniff on every answer',
    look: async (proxy) => {
      const res = await get(proxy, PASSTHROUGH);
      return [res.status, res.headers.get('x-content-type-options'), res.headers.get('x-request-id') === null];
    },
    on: [200, 'nosniff', false],
    off: [200, null, true],
  },
  {
    step: 'csrf',
    does: 'a cross-site POST refused 403',
    look: async (proxy) => (await get(proxy, LOGOUT, { method: 'POST', headers: { 'sec-fetch-site': 'cross-site' } })).status,
    on: 403,
    off: 200,
  },
  {
    step: 'auth-gate',
    does: 'a session cookie that is no JWT refused 401; without the gate it goes upstream as the Bearer',
    look: async (proxy) => {
      const res = await get(proxy, PASSTHROUGH, {}, 'not-a-jwt');
      return [res.status, upstream.requests.at(-1)?.headers.authorization];
    },
    on: [401, undefined],
    off: [200, 'Bearer not-a-jwt'],
  },
  {
    step: 'error-ref',
    does: 'X-Error-Ref on an error answer',
    look: async (proxy) => {
      const res = await get(proxy, PASSTHROUGH, {}, null);
      return [res.status, /^EP\d{4}-EM\d{4}$/.test(res.headers.get('x-error-ref') ?? '')];
    },
    on: [401, true],
    off: [401, false],
  },
  {
    step: 'upstream-guard',
    does: "the endpoint's circuit open after 2 failures: the third call refused without an upstream call",
    look: async (proxy) => {
      // An endpoint of its own: the passthrough's circuit stays closed for the other rows.
      upstream.on('GET', GUARDED_UPSTREAM_PATH, { status: 503, json: { error: 'down' } });
      for (let n = 0; n < 2; n++) await (await get(proxy, GUARDED)).arrayBuffer();
      const before = upstream.requests.length;
      const third = await get(proxy, GUARDED);
      const body = (await third.json()) as { error?: string };
      return [third.status, body.error === 'upstream_circuit_open', upstream.requests.length - before];
    },
    on: [503, true, 0],
    off: [503, false, 1],
  },
  {
    step: 'answer-json-check',
    does: "a data row's 2xx answer that is not JSON answered 502",
    look: async (proxy) => {
      upstream.on('GET', UPSTREAM_PATH, { status: 200, text: 'not json {' });
      const res = await get(proxy, PASSTHROUGH);
      return [res.status, res.status === 200 ? await res.text() : ((await res.json()) as { error?: string }).error];
    },
    on: [502, 'upstream_bad_response'],
    off: [200, 'not json {'],
  },
  {
    step: 'secret-scan',
    does: "the session cookie's value removed from an answer",
    look: async (proxy) => {
      upstream.on('GET', UPSTREAM_PATH, { status: 200, json: { games: [], echoed: TOKEN } });
      const res = await get(proxy, PASSTHROUGH);
      return [res.status, (await res.text()).includes(TOKEN)];
    },
    on: [200, false],
    off: [200, true],
  },
];

for (const row of ROWS) {
  test(`omitSteps ${row.step}: ${row.does} with every step, not without it`, async () => {
    assert.deepEqual(await row.look(every as TestProxy), row.on, 'every step');
    upstream.reset();
    assert.deepEqual(await row.look(without(row.step)), row.off, `without ${row.step}`);
  });
}

test('omitSteps: the steps not named stay (each proxy without one step, the gate aside, still refuses a request without a session 401)', async () => {
  for (const step of OMITTED.filter((s) => s !== 'auth-gate')) {
    const res = await get(without(step), PASSTHROUGH, {}, null);
    assert.equal(res.status, 401, step);
    await res.arrayBuffer();
  }
});
