/**
 * The SDK honours `Retry-After` on 503 and 429 (issue 33), jittered and bounded: the decision table
 * (`retry-after.ts`) unit-tested, then the client against a fake proxy on a loopback socket that
 * refuses a given number of times: a read is sent again after the wait asked for, at most twice; a
 * wait that would pass the total bound is not waited for; a mutation without an `Idempotency-Key`
 * is never sent again; a money move (which carries one) only after a refusal that sent nothing
 * upstream, with the same key; an abort during the wait ends the call at once.
 */
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import {
  createProxyClient,
  mayRetry,
  memoryStorage,
  parseRetryAfter,
  type ProxyClientOptions,
  ProxyError,
  type RefusedCall,
  RETRY_AFTER_MAX_RETRIES,
  RETRY_AFTER_MAX_WAIT_MS,
  retryDelayMs,
} from '../packages/browser/src/browser/index.js';

const NOW = Date.parse('2026-11-27T12:00:00Z');

describe('the decision (retry-after.ts)', () => {
  test('parseRetryAfter: delay-seconds and HTTP dates, in ms; anything else null', () => {
    const cases: [string | null, number | null][] = [
      ['0', 0],
      ['3', 3000],
      [' 120 ', 120_000],
      ['Fri, 27 Nov 2026 12:00:05 GMT', 5000],
      ['Fri, 27 Nov 2026 11:59:00 GMT', 0],
      ['-1', null],
      ['1.5', null],
      ['soon', null],
      ['', null],
      [null, null],
    ];
    for (const [value, want] of cases) assert.equal(parseRetryAfter(value, NOW), want, JSON.stringify(value));
  });

  test('mayRetry: reads always; other methods only with a key and a refusal that sent nothing', () => {
    const cases: [Parameters<typeof mayRetry>[0], boolean][] = [
      [{ method: 'GET', idempotencyKey: false, status: 503, envelopeError: 'service_unavailable' }, true],
      [{ method: 'GET', idempotencyKey: false, status: 429, envelopeError: null }, true],
      [{ method: 'GET', idempotencyKey: false, status: 502, envelopeError: 'upstream_unavailable' }, false],
      [{ method: 'GET', idempotencyKey: false, status: 500, envelopeError: null }, false],
      [{ method: 'POST', idempotencyKey: false, status: 503, envelopeError: 'upstream_busy' }, false],
      [{ method: 'POST', idempotencyKey: true, status: 503, envelopeError: 'upstream_busy' }, true],
      [{ method: 'POST', idempotencyKey: true, status: 503, envelopeError: 'upstream_circuit_open' }, true],
      [{ method: 'POST', idempotencyKey: true, status: 503, envelopeError: 'overloaded' }, true],
      [{ method: 'POST', idempotencyKey: true, status: 429, envelopeError: 'rate_limited' }, true],
      [{ method: 'POST', idempotencyKey: true, status: 503, envelopeError: 'service_unavailable' }, false],
      [{ method: 'POST', idempotencyKey: true, status: 503, envelopeError: 'idempotency_unavailable' }, false],
      [{ method: 'POST', idempotencyKey: true, status: 503, envelopeError: null }, false],
      [{ method: 'PATCH', idempotencyKey: true, status: 502, envelopeError: 'upstream_busy' }, false],
      [{ method: 'DELETE', idempotencyKey: false, status: 429, envelopeError: 'rate_limited' }, false],
    ];
    for (const [call, want] of cases) assert.equal(mayRetry(call), want, JSON.stringify(call));
  });

  test('retryDelayMs: the wait asked for plus up to half of it (at least up to 250 ms), bounded in count and total', () => {
    const base: RefusedCall = {
      method: 'GET',
      idempotencyKey: false,
      status: 503,
      retryAfter: '2',
      envelopeError: 'upstream_busy',
      retries: 0,
      waitedMs: 0,
    };
    const cases: [Partial<RefusedCall>, number, number | null][] = [
      [{}, 0, 2000],
      [{}, 0.5, 2500],
      [{}, 0.999_999, 2999.999],
      [{ retryAfter: '0' }, 0.5, 125],
      [{ retryAfter: '0' }, 0.999_999, 249.99975],
      [{ retryAfter: '9' }, 1, 10_000], // jittered past the bound: cut to the total left
      [{ retryAfter: '10' }, 0, 10_000],
      [{ retryAfter: '11' }, 0, null], // more than the bound: not waited for at all
      [{ retries: 1, waitedMs: 3000 }, 0, 2000],
      [{ retries: 1, waitedMs: 9000 }, 0, null],
      [{ retries: RETRY_AFTER_MAX_RETRIES }, 0, null],
      [{ retryAfter: null }, 0, null],
      [{ status: 500 }, 0, null],
      [{ method: 'POST' }, 0, null],
      [{ method: 'POST', idempotencyKey: true }, 0, 2000],
    ];
    for (const [change, random, want] of cases) {
      const got = retryDelayMs({ ...base, ...change }, {}, () => random, NOW);
      if (want === null) assert.equal(got, null, JSON.stringify(change));
      else assert.ok(got !== null && Math.abs(got - want) < 1e-6, `${JSON.stringify(change)} random ${random}: ${got} ≠ ${want}`);
    }
    assert.equal(RETRY_AFTER_MAX_WAIT_MS, 10_000);
    assert.equal(
      retryDelayMs({ ...base, retryAfter: '2' }, { maxWaitMs: 1000 }, () => 0, NOW),
      null,
    );
    assert.equal(
      retryDelayMs({ ...base, retries: 1 }, { maxRetries: 1 }, () => 0, NOW),
      null,
    );
  });
});

/** One planned answer of the fake proxy. */
interface Answer {
  readonly status: number;
  readonly retryAfter?: string;
  readonly error?: string;
}

interface Hit {
  readonly method: string;
  readonly path: string;
  readonly at: number;
  readonly idempotencyKey: string | undefined;
}

describe('the client against a fake proxy on a loopback socket', () => {
  let server: Server;
  let base: string;
  /** Answers still to give, by path; when none is left, 200 `{ ok: true }`. */
  let plan = new Map<string, Answer[]>();
  let hits: Hit[] = [];

  before(async () => {
    server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const key = req.headers['idempotency-key'];
      hits.push({ method: req.method ?? '', path, at: performance.now(), idempotencyKey: typeof key === 'string' ? key : undefined });
      req.resume();
      req.on('end', () => {
        const next = plan.get(path)?.shift();
        if (!next) {
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
          return;
        }
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (next.retryAfter !== undefined) headers['retry-after'] = next.retryAfter;
        res
          .writeHead(next.status, headers)
          .end(JSON.stringify({ ok: false, error: next.error ?? 'service_unavailable', detail: 'refused' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    plan = new Map();
    hits = [];
  });

  const client = (extra: Partial<ProxyClientOptions> = {}) =>
    createProxyClient({ baseUrl: base, sendBeacon: null, storage: memoryStorage(), locale: 'en', random: () => 0, ...extra });
  const count = (path: string) => hits.filter((h) => h.path === path).length;
  const refusal = (call: Promise<unknown>) =>
    call.then(
      () => assert.fail('the call succeeded'),
      (error: unknown) => {
        assert.ok(error instanceof ProxyError, String(error));
        return error;
      },
    );

  test('a read refused twice with Retry-After: 0 is sent again twice and succeeds', async () => {
    plan.set('/api/games/list', [
      { status: 503, retryAfter: '0', error: 'upstream_busy' },
      { status: 429, retryAfter: '0', error: 'rate_limited' },
    ]);
    assert.deepEqual(await client().games.list(), { ok: true });
    assert.equal(count('/api/games/list'), 3);
  });

  test('a read refused every time: three sends in all, then the 503', async () => {
    plan.set(
      '/api/games/list',
      Array.from({ length: 5 }, () => ({ status: 503, retryAfter: '0', error: 'overloaded' })),
    );
    const e = await refusal(client().games.list());
    assert.deepEqual([e.status, e.envelopeError, e.errorCode], [503, 'overloaded', 'EM0032']);
    assert.equal(count('/api/games/list'), 1 + RETRY_AFTER_MAX_RETRIES);
  });

  test('the wait Retry-After asks for is kept (1 s), jittered upwards', async () => {
    plan.set('/api/payments/providers', [{ status: 429, retryAfter: '1', error: 'rate_limited' }]);
    await client({ random: () => 0.5 }).payments.providers();
    const [first, second] = hits;
    assert.ok(first && second);
    const waited = second.at - first.at;
    // Asked 1000 ms, jitter 0.5 × 500 ms: 1250 ms; generous above for a busy machine.
    assert.ok(waited >= 1240 && waited < 5000, `waited ${waited.toFixed(0)} ms`);
  });

  test('a Retry-After past the 10 s bound is not waited for: the call fails at once', async () => {
    plan.set('/api/games/list', [{ status: 503, retryAfter: '30', error: 'upstream_circuit_open' }]);
    const started = performance.now();
    const e = await refusal(client().games.list());
    assert.equal(e.status, 503);
    assert.equal(count('/api/games/list'), 1);
    assert.ok(performance.now() - started < 3000);
  });

  test('the total bound counts every wait: with 1.5 s in all, Retry-After 1 is honoured once', async () => {
    plan.set('/api/games/list', [
      { status: 503, retryAfter: '1', error: 'upstream_busy' },
      { status: 503, retryAfter: '1', error: 'upstream_busy' },
    ]);
    const e = await refusal(client({ retry: { maxWaitMs: 1500 } }).games.list());
    assert.equal(e.status, 503);
    assert.equal(count('/api/games/list'), 2);
  });

  test('no Retry-After, another status, or retry: false: sent once', async () => {
    plan.set('/api/games/list', [{ status: 503, error: 'service_unavailable' }]);
    await refusal(client().games.list());
    plan.set('/api/version', [{ status: 502, retryAfter: '0', error: 'upstream_unavailable' }]);
    await refusal(client().infra.version());
    plan.set('/api/games/top-wins', [{ status: 503, retryAfter: '0', error: 'upstream_busy' }]);
    await refusal(client({ retry: false }).games.topWins());
    assert.deepEqual([count('/api/games/list'), count('/api/version'), count('/api/games/top-wins')], [1, 1, 1]);
  });

  test('a mutation without an Idempotency-Key is never sent again, even after a refusal that sent nothing', async () => {
    plan.set('/api/wallet/refresh', [{ status: 503, retryAfter: '0', error: 'upstream_busy' }]);
    await refusal(client().wallet.refresh());
    plan.set('/api/games/vote', [{ status: 429, retryAfter: '0', error: 'rate_limited' }]);
    await refusal(client().games.vote({ body: { casinoGameId: 'x', vote: 'up' } }));
    assert.deepEqual([count('/api/wallet/refresh'), count('/api/games/vote')], [1, 1]);
  });

  test('a money move is sent again with the same key after a refusal that sent nothing, never after another 503', async () => {
    const body = { userId: 1, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' };
    plan.set('/api/payments/deposit', [
      { status: 503, retryAfter: '0', error: 'upstream_circuit_open' },
      { status: 503, retryAfter: '0', error: 'upstream_busy' },
    ]);
    assert.deepEqual(await client().payments.deposit({ body }), { ok: true });
    const keys = hits.map((h) => h.idempotencyKey);
    assert.equal(keys.length, 3);
    assert.ok(keys[0] && keys.every((k) => k === keys[0]), `one key for the three sends: ${keys.join(', ')}`);

    hits = [];
    plan.set('/api/payments/withdraw', [{ status: 503, retryAfter: '0', error: 'service_unavailable' }]);
    const e = await refusal(client().payments.withdraw({ body: { amount: 100, method: 'pix' } }));
    assert.deepEqual([e.status, count('/api/payments/withdraw')], [503, 1]);
  });

  test('an abort during the wait ends the call at once with the abort reason', async () => {
    plan.set('/api/games/list', [{ status: 503, retryAfter: '8', error: 'upstream_busy' }]);
    const controller = new AbortController();
    const started = performance.now();
    const call = client().games.list({ signal: controller.signal });
    setTimeout(() => controller.abort(new Error('page left')), 200);
    await assert.rejects(call, /page left/);
    assert.ok(performance.now() - started < 4000);
    assert.equal(count('/api/games/list'), 1);
  });
});
