/**
 * The answer of an endpoint guard's refusal, byte for byte, over real sockets (docs/behaviour.md
 * "Resilience", "Error envelope"): while an endpoint's circuit is open, a request of a row that
 * forwards to it answers 503 `upstream_circuit_open` with the same header lines in the same order
 * (`X-Request-Id`, `nosniff`, `no-store`, `Retry-After`, the JSON type, `X-Error-Ref`), the same body,
 * no completion line, one aggregated warn line by reference and reason, and `upstream_rejected_total`
 * counted; nothing reaches the upstream; a request the steps before the handler refuse (a query the
 * schema refuses, the rate limit) is refused by them first; and the trial call still goes once the
 * pause is over. Then which rows get the check before their handler (`config.forwardsTo`): those
 * whose handler is `forward()` to a path without parameters, and no other.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { Type } from '@sinclair/typebox';
import { loadConfig } from '../src/config.js';
import { allRouteTables } from '../src/routes/index.js';
import { type AppDeps, activeRoutes, bff, forward, ok, registerRoutes, type RouteSpec } from '../src/routes/route.js';
import { rawRequest } from './helpers/raw-http.js';
import { fakeJwt, type RecordingUpstream, send, startProxy, startRecordingUpstream, type TestProxy } from './helpers/recording-upstream.js';

const HISTORY = '/bff/users/login-history'; // EP0032, GET /api/user/login-history
const ROUTE = '/api/user/login-history';
// Long enough that a loaded machine does not reach the trial while a test expects the circuit open.
const PAUSE_MS = 2_500;
const REFUSED_BODY =
  '{"ok":false,"error":"upstream_circuit_open","detail":"The service is failing; try again shortly","endpoint":"EP0032"}';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const token = fakeJwt({ sub: '7' });
/** Another session, for the test that uses up its rate limit. */
const limitedToken = fakeJwt({ sub: '8' });

let upstream: RecordingUpstream;
let proxy: TestProxy;
let closed = false;

/** The header lines of a raw answer without its status line and `Date`; the request id's and `Retry-After`'s values (the pause left) as placeholders. */
function headerLines(head: string): string[] {
  return head
    .split('\r\n')
    .slice(1)
    .filter((line) => !/^date:/i.test(line))
    .map((line) => line.replace(/^(x-request-id): .*/i, '$1: <id>').replace(/^(retry-after): [1-3]$/i, '$1: <s>'));
}

function calls(): number {
  return upstream.requests.filter((r) => r.path === HISTORY).length;
}

/** Opens the circuit of EP0032: `UPSTREAM_CIRCUIT_FAILURES` (3) upstream 503s in a row. */
async function openCircuit(): Promise<void> {
  upstream.on('GET', HISTORY, { status: 503, json: { message: 'down' } });
  for (let i = 0; i < 3; i++) assert.equal((await send(proxy.url, 'GET', ROUTE, { token })).status, 503);
  const refused = await send(proxy.url, 'GET', ROUTE, { token });
  assert.equal((refused.json as { error: string }).error, 'upstream_circuit_open');
}

before(async () => {
  upstream = await startRecordingUpstream();
  proxy = await startProxy(upstream.url, {
    UPSTREAM_CIRCUIT_FAILURES: '3',
    UPSTREAM_CIRCUIT_PAUSE_MS: String(PAUSE_MS),
    METRICS_PORT: '0',
    RATE_LIMIT_API_PER_MIN: '40',
  });
});
after(async () => {
  if (!closed) await proxy.close();
  await upstream.close();
});

describe('a refusal of the endpoint guard', () => {
  test('the steps before the handler refuse first: a query the schema refuses is 400, the rate limit 429', async () => {
    await openCircuit();
    const sent = calls();
    const invalid = await send(proxy.url, 'GET', `${ROUTE}?page=abc`, { token: limitedToken });
    assert.equal(invalid.status, 400);
    assert.equal((invalid.json as { error: string }).error, 'invalid_request');
    let limited: Awaited<ReturnType<typeof send>> | undefined;
    for (let i = 0; i < 50 && limited === undefined; i++) {
      const answer = await send(proxy.url, 'GET', ROUTE, { token: limitedToken });
      if (answer.status === 429) limited = answer;
      else assert.equal((answer.json as { error: string }).error, 'upstream_circuit_open');
    }
    assert.ok(limited, 'the rate limit refuses before the guard');
    assert.equal((limited.json as { error: string }).error, 'rate_limited');
    assert.equal(calls(), sent, 'nothing sent');
  });

  // Last: it closes the proxy to read the aggregated line's last counts.
  test('answers the same bytes, writes no line of its own, sends nothing; the trial call goes after the pause', async () => {
    await openCircuit();
    const sent = calls();
    const cookie = `access_token=${token}`;
    const lines = proxy.logs.lines.length;
    const expected = [
      'x-request-id: <id>',
      'x-content-type-options: nosniff',
      'cache-control: no-store',
      'retry-after: <s>',
      'content-type: application/json; charset=utf-8',
      'x-error-ref: EP0032-EM0032',
      `content-length: ${Buffer.byteLength(REFUSED_BODY)}`,
      'Connection: close',
    ];
    for (const target of [ROUTE, `${ROUTE}?page=2`]) {
      const answer = await rawRequest(proxy.url, 'GET', target, { cookie });
      assert.equal(answer.status, 503, target);
      assert.deepEqual(headerLines(answer.headers), expected, target);
      assert.equal(answer.body, REFUSED_BODY, target);
    }
    // A HEAD: the same headers, no body; its reference is classified without a body (the proxy path's EP code).
    const head = await rawRequest(proxy.url, 'HEAD', ROUTE, { cookie });
    assert.equal(head.status, 503);
    assert.deepEqual(
      headerLines(head.headers),
      expected.map((line) => (line.startsWith('x-error-ref') ? 'x-error-ref: EP0712-EM0032' : line)),
    );
    assert.equal(head.body, '');
    // An absolute-form target reaches the same route: the same answer.
    const absolute = await rawRequest(proxy.url, 'GET', `${proxy.url}${ROUTE}`, { cookie });
    assert.equal(absolute.status, 503);
    assert.equal(absolute.body, REFUSED_BODY);
    assert.ok(headerLines(absolute.headers).includes('retry-after: <s>'));
    assert.ok(/^x-error-ref: EP\d{4}-EM\d{4}$/m.test(absolute.headers), absolute.headers);

    assert.equal(calls(), sent, 'nothing sent while the circuit is open');
    const written = proxy.logs.entries.slice(lines);
    assert.ok(!written.some((e) => e.msg === 'request completed'), 'no completion line per refusal');
    const metrics = await proxy.app.metrics?.registry.metrics();
    assert.match(metrics ?? '', /upstream_rejected_total\{endpoint="EP0032",reason="circuit_open"\} [1-9]/);

    await sleep(PAUSE_MS + 100);
    upstream.on('GET', HISTORY, { json: { ok: true } });
    assert.equal((await send(proxy.url, 'GET', ROUTE, { token })).status, 200, 'the trial call');
    assert.equal(calls(), sent + 1);
    assert.equal((await send(proxy.url, 'GET', ROUTE, { token })).status, 200, 'closed again');
    // The refusals were counted into the aggregated line, keyed by the reference the answers carry.
    await proxy.close();
    closed = true;
    const keys = proxy.logs.entries
      .filter((e) => e.msg === 'upstream calls refused since the last line')
      .flatMap((e) => Object.keys(e.refused as object));
    assert.ok(keys.includes('EP0032-EM0032 upstream_circuit_open'), JSON.stringify(keys));
  });
});

describe('which rows are refused before their handler (config.forwardsTo)', () => {
  /** The `forwardsTo` of each route `rows` register, by method and URL. */
  async function forwardsOf(rows: readonly RouteSpec[]): Promise<Map<string, unknown>> {
    const app = Fastify();
    const seen = new Map<string, unknown>();
    app.addHook('onRoute', (route) => {
      seen.set(`${String(route.method)} ${route.url}`, route.config?.forwardsTo);
    });
    registerRoutes(app, rows, {} as AppDeps);
    await app.ready();
    await app.close();
    return seen;
  }
  const base = { area: 'User', spec: '4.3', summary: 'a row', auth: 'required' } as const;

  test('a forward() row with a path without parameters, and its own target; no other row', async () => {
    const target = bff('GET', '/bff/other');
    const seen = await forwardsOf([
      { ...base, method: 'GET', url: '/a', upstream: [bff('GET', '/bff/a')], handler: forward() },
      { ...base, method: 'GET', url: '/b', upstream: [bff('GET', '/bff/b')], handler: forward({ target }) },
      {
        ...base,
        method: 'GET',
        url: '/c/:id',
        params: Type.Object({ id: Type.String() }),
        upstream: [bff('GET', '/bff/c/{id}')],
        handler: forward(),
      },
      { ...base, method: 'GET', url: '/d', upstream: [bff('GET', '/bff/d')], handler: async () => ok({}) },
      { ...base, method: 'POST', url: '/e', upstream: [], handler: forward() },
    ] as RouteSpec[]);
    assert.deepEqual(seen.get('GET /a'), bff('GET', '/bff/a'));
    assert.deepEqual(seen.get('GET /b'), target);
    assert.equal(seen.get('GET /c/:id'), undefined, 'a path with parameters: the handler builds it (400 first)');
    assert.equal(seen.get('GET /d'), undefined, 'a handler with code of its own');
    assert.equal(seen.get('POST /e'), undefined, 'no upstream row');
  });

  test("the route tables: every row that gets it forwards to its own single upstream row's static path", async () => {
    const rows = activeRoutes(allRouteTables, loadConfig({ NODE_ENV: 'development' }));
    const seen = await forwardsOf(rows);
    let forwarding = 0;
    for (const row of rows) {
      const target = seen.get(`${String(row.method)} ${row.url}`) as RouteSpec['upstream'][number] | undefined;
      if (target === undefined) continue;
      forwarding++;
      assert.ok(row.upstream.includes(target), row.url);
      assert.ok(!target.path.includes('{'), row.url);
    }
    assert.ok(forwarding > 10, `${forwarding} forwarding rows`);
    assert.ok(seen.get('GET /api/user/login-history'), 'the bench row');
  });
});
