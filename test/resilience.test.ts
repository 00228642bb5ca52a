/**
 * Resilience over real sockets (docs/behaviour.md "Resilience"): the proxy in front of a recording upstream
 * that turns slow, hangs, resets connections and answers 503. Each rule: busy (bounded share and
 * queue per endpoint, other endpoints unaffected), the circuit breaker and its trial call, a read
 * cancelled when its client leaves and a mutation never cut, the retry of a read and its budget, the
 * money moves' refusals leaving the idempotency key free, load shedding, readiness, and the
 * references that name the refusing upstream endpoint.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { request as httpRequest } from 'node:http';
import { after, before, beforeEach, describe, test } from 'node:test';
import { classifyError } from '../src/errors/index.js';
import { rawRequest } from './helpers/raw-http.js';
import { fakeJwt, type RecordingUpstream, send, startProxy, startRecordingUpstream, type TestProxy } from './helpers/recording-upstream.js';

const HISTORY = '/bff/users/login-history'; // EP0032, GET /api/user/login-history
const LAST_GAMES = '/bff/games/user-last-casino-games-dl'; // GET /api/user/last-casino-games
const MARKETING = '/bff/users/self-mkt'; // PATCH /api/user/update-marketing
const PROFILE = '/auth/user-profile';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let upstream: RecordingUpstream;
let proxy: TestProxy;
const token = fakeJwt({ sub: '7' });
/** Upstream answers held by a test, released at its end so that nothing stays open. */
const held: ServerResponse[] = [];

function hold(): (req: unknown, res: ServerResponse) => void {
  return (_req, res) => {
    held.push(res);
  };
}
function release(): void {
  for (const res of held.splice(0)) {
    if (!res.writableEnded && !res.destroyed) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"late":true}');
    }
  }
}
function calls(path: string): number {
  return upstream.requests.filter((r) => r.path === path).length;
}
function get(path: string, base = proxy.url) {
  return send(base, 'GET', path, { token });
}

before(async () => {
  upstream = await startRecordingUpstream();
  proxy = await startProxy(upstream.url, {
    UPSTREAM_TIMEOUT_MS: '2000',
    UPSTREAM_ENDPOINT_MAX_IN_FLIGHT: '2',
    UPSTREAM_ENDPOINT_QUEUE: '1',
    UPSTREAM_QUEUE_WAIT_MS: '300',
    UPSTREAM_CIRCUIT_FAILURES: '3',
    UPSTREAM_CIRCUIT_PAUSE_MS: '600',
  });
});
after(async () => {
  release();
  await proxy.close();
  await upstream.close();
});
beforeEach(() => {
  release();
  upstream.reset();
  upstream.on('GET', PROFILE, { json: { user: { id: 7 }, userInfo: {} } });
});

/** Waits until the circuit of every guard is closed again (a test's open circuit must not leak into the next). */
async function settleCircuits(): Promise<void> {
  release();
  await sleep(650);
  upstream.reset();
  upstream.on('GET', PROFILE, { json: { user: { id: 7 }, userInfo: {} } });
  for (const path of ['/api/user/login-history', '/api/user/last-casino-games']) await get(path);
}

describe('isolation per upstream endpoint', () => {
  test('a full endpoint answers 503 upstream_busy with Retry-After and its EP code, nothing sent; another endpoint is unaffected', async () => {
    upstream.on('GET', HISTORY, hold());
    const first = [get('/api/user/login-history'), get('/api/user/login-history'), get('/api/user/login-history')];
    await sleep(100);
    const refused = await get('/api/user/login-history');
    assert.equal(refused.status, 503);
    assert.equal((refused.json as { error: string }).error, 'upstream_busy');
    assert.equal((refused.json as { endpoint: string }).endpoint, 'EP0032');
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.equal(refused.headers.get('x-error-ref'), 'EP0032-EM0032');
    // The browser SDK's classifier computes the same reference from the same answer.
    assert.equal(
      classifyError({ status: 503, data: refused.json, rawBody: refused.text, url: '/api/user/login-history', method: 'GET' }).ref,
      'EP0032-EM0032',
    );
    assert.equal(calls(HISTORY), 2, 'two running, one waiting, the fourth never sent');

    const other = await get('/api/user/last-casino-games');
    assert.equal(other.status, 200);

    // The waiter's wait (300 ms) runs out: busy too, and it was never sent.
    const answers = await Promise.race([Promise.all(first.slice(2)), sleep(1_500).then(() => 'pending')]);
    assert.notEqual(answers, 'pending');
    assert.equal((answers as { status: number }[])[0]?.status, 503);
    assert.equal(calls(HISTORY), 2);
    release();
    const [a, b] = await Promise.all(first.slice(0, 2));
    assert.equal(a?.status, 200);
    assert.equal(b?.status, 200);
  });

  test('a waiter gets the slot freed before its wait runs out', async () => {
    upstream.on('GET', HISTORY, hold());
    const running = [get('/api/user/login-history'), get('/api/user/login-history')];
    await sleep(100);
    const waiting = get('/api/user/login-history');
    await sleep(50);
    release();
    upstream.on('GET', HISTORY, { json: { ok: true } });
    assert.equal((await waiting).status, 200);
    await Promise.all(running);
    assert.equal(calls(HISTORY), 3);
  });
});

describe('circuit breaker', () => {
  test('3 upstream 503s open the circuit: 503 upstream_circuit_open at once, nothing sent, logged at warn; one trial after the pause closes it', async () => {
    upstream.on('GET', HISTORY, { status: 503, json: { message: 'down' } });
    for (let i = 0; i < 3; i++) assert.equal((await get('/api/user/login-history')).status, 503);
    assert.equal(calls(HISTORY), 3);
    // Refused before it is sent: the answer is the guard's own and the upstream saw no fourth call.
    const open = await get('/api/user/login-history');
    assert.equal(open.status, 503);
    assert.equal((open.json as { error: string }).error, 'upstream_circuit_open');
    assert.equal(open.headers.get('x-error-ref'), 'EP0032-EM0032');
    assert.ok(Number(open.headers.get('retry-after')) >= 1);
    assert.equal(calls(HISTORY), 3, 'nothing sent while open');
    const warn = proxy.logs.entries.find((e) => e.level === 'warn' && e.endpoint === 'EP0032' && e.to === 'open');
    assert.ok(warn, 'the opening is logged at warn with the EP code');
    // Refusals come in bulk: no line each; they are counted into one warn line by EP code and reason
    // (the first of the app's refusals is written at once, the others within 10 s: see AggregatedLine).
    const linesBefore = proxy.logs.entries.length;
    for (let i = 0; i < 5; i++) assert.equal((await get('/api/user/login-history')).status, 503);
    const written = proxy.logs.entries.slice(linesBefore);
    assert.ok(!written.some((e) => e.msg === 'request completed'), 'no completion line per refusal');
    assert.ok(written.filter((e) => e.msg === 'upstream calls refused since the last line').length <= 1);
    // Keyed by the reference the answers carry, so that a reference a user reads out is found in the logs.
    const keys = proxy.logs.entries
      .filter((e) => e.msg === 'upstream calls refused since the last line')
      .flatMap((e) => Object.keys(e.refused as object));
    assert.ok(keys.length > 0 && keys.every((k) => /^EP\d{4}-EM\d{4} upstream_(busy|circuit_open)$/.test(k)), JSON.stringify(keys));

    await sleep(650);
    upstream.on('GET', HISTORY, { json: { ok: true } });
    assert.equal((await get('/api/user/login-history')).status, 200, 'the trial call');
    assert.equal((await get('/api/user/login-history')).status, 200, 'closed again');
    assert.equal(calls(HISTORY), 5);
    assert.ok(proxy.logs.entries.some((e) => e.level === 'warn' && e.endpoint === 'EP0032' && e.to === 'closed'));
  });

  test('while the trial runs, other calls are refused; a failed trial opens it again', async () => {
    upstream.on('GET', HISTORY, { status: 502, text: 'bad gateway' });
    for (let i = 0; i < 3; i++) await get('/api/user/login-history');
    await sleep(650);
    upstream.on('GET', HISTORY, hold());
    const trial = get('/api/user/login-history');
    await sleep(100);
    const during = await get('/api/user/login-history');
    assert.equal((during.json as { error: string }).error, 'upstream_circuit_open');
    assert.equal(calls(HISTORY), 4);
    for (const res of held.splice(0)) {
      res.writeHead(504);
      res.end();
    }
    assert.equal((await trial).status, 504);
    assert.equal((await get('/api/user/login-history')).status, 503, 'open again after the failed trial');
    assert.equal(calls(HISTORY), 4);
    await settleCircuits();
  });

  test('4xx and 500 answers never open it (one client can provoke them)', async () => {
    upstream.on('GET', HISTORY, { status: 500, json: { message: 'boom' } });
    for (let i = 0; i < 5; i++) await get('/api/user/login-history');
    upstream.on('GET', HISTORY, { status: 404, json: { message: 'none' } });
    for (let i = 0; i < 5; i++) await get('/api/user/login-history');
    assert.equal(calls(HISTORY), 10);
  });

  test('timeouts count: a hung endpoint is answered at once after 3 timeouts', async () => {
    const hung = await startProxy(upstream.url, {
      UPSTREAM_TIMEOUT_MS: '300',
      UPSTREAM_CIRCUIT_FAILURES: '3',
      UPSTREAM_CIRCUIT_PAUSE_MS: '60000',
    });
    try {
      upstream.on('GET', LAST_GAMES, hold());
      const timeouts = await Promise.all([1, 2, 3].map(() => get('/api/user/last-casino-games', hung.url)));
      assert.deepEqual(
        timeouts.map((r) => r.status),
        [504, 504, 504],
      );
      // Without waiting: a call that went out would hang until its 504 upstream_timeout; the guard's
      // refusal is the answer instead, and the upstream saw no fourth call.
      const fast = await get('/api/user/last-casino-games', hung.url);
      assert.equal(fast.status, 503);
      assert.equal((fast.json as { error: string }).error, 'upstream_circuit_open');
      assert.equal(calls(LAST_GAMES), 3);
      assert.equal((await get('/api/user/login-history', hung.url)).status, 200, 'another endpoint unaffected');
    } finally {
      release();
      await hung.close();
    }
  });
});

describe('client gone', () => {
  /** Sends a GET and destroys the request after `ms`. */
  function abandon(path: string, ms: number, method = 'GET', body?: string): Promise<void> {
    return new Promise((resolve) => {
      const url = new URL(path, proxy.url);
      const req = httpRequest(url, {
        method,
        headers: { cookie: `access_token=${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      });
      req.on('error', () => resolve());
      req.on('close', () => resolve());
      if (body) req.write(body);
      req.end();
      setTimeout(() => req.destroy(), ms);
    });
  }

  test("a read whose client leaves is aborted upstream; a mutation's call runs to its end", async () => {
    const closedEarly: boolean[] = [];
    upstream.on('GET', HISTORY, (_rec, res) => {
      res.on('close', () => closedEarly.push(!res.writableEnded));
      held.push(res);
    });
    await abandon('/api/user/login-history', 150);
    const seen = performance.now();
    while (closedEarly.length === 0 && performance.now() - seen < 1_500) await sleep(20);
    assert.deepEqual(closedEarly, [true], 'the upstream call of the read was aborted');

    let mutationEnded = false;
    upstream.on('PATCH', MARKETING, (_rec, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}', () => {
          mutationEnded = true;
        });
      }, 400);
    });
    await abandon('/api/user/update-marketing', 100, 'PATCH', '{"email":true}');
    await sleep(700);
    assert.equal(mutationEnded, true, 'the mutation was answered upstream in full');
    assert.equal(calls(MARKETING), 1);
  });

  test('a queued read whose client leaves is dropped from the queue and never sent', async () => {
    upstream.on('GET', HISTORY, hold());
    const running = [get('/api/user/login-history'), get('/api/user/login-history')];
    await sleep(100);
    await abandon('/api/user/login-history', 80);
    await sleep(50);
    release();
    await Promise.all(running);
    await sleep(100);
    assert.equal(calls(HISTORY), 2, 'the abandoned read never reached the upstream');
  });
});

describe('retries', () => {
  test('a read whose connection is reset before any answer byte is sent once more; a mutation never', async () => {
    let resets = 0;
    upstream.on('GET', HISTORY, (_rec, res) => {
      if (resets++ === 0) res.socket?.destroy();
      else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      }
    });
    const read = await get('/api/user/login-history');
    assert.equal(read.status, 200);
    assert.equal(calls(HISTORY), 2);

    upstream.on('PATCH', MARKETING, (_rec, res) => res.socket?.destroy());
    const write = await send(proxy.url, 'PATCH', '/api/user/update-marketing', { token, json: { email: true } });
    assert.equal(write.status, 502);
    assert.equal(calls(MARKETING), 1);
  });

  test('retries stay within the budget (10% of the calls) and a 503 is never retried', async () => {
    const budget = await startProxy(upstream.url, { UPSTREAM_CIRCUIT_FAILURES: '0' });
    try {
      upstream.on('GET', LAST_GAMES, (_rec, res) => res.socket?.destroy());
      const n = 40;
      for (let i = 0; i < n; i++) assert.equal((await get('/api/user/last-casino-games', budget.url)).status, 502);
      const total = calls(LAST_GAMES);
      assert.ok(total <= n * 1.1 + 1, `${total} upstream calls for ${n} requests`);
      assert.ok(total > n, 'some were retried');
      upstream.on('GET', HISTORY, { status: 503, json: {} });
      for (let i = 0; i < 10; i++) await get('/api/user/login-history', budget.url);
      assert.equal(calls(HISTORY), 10);
    } finally {
      await budget.close();
    }
  });
});

describe('money moves', () => {
  test('a deposit refused by an open circuit sends nothing and leaves its Idempotency-Key free', async () => {
    upstream.on('POST', '/wallet/add-credit', { status: 503, json: { message: 'down' } });
    const deposit = { userId: 7, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' };
    for (let i = 0; i < 3; i++) {
      await send(proxy.url, 'POST', '/api/payments/deposit', { token, json: deposit, headers: { 'idempotency-key': `k-${i}` } });
    }
    const refused = await send(proxy.url, 'POST', '/api/payments/deposit', {
      token,
      json: deposit,
      headers: { 'idempotency-key': 'kept' },
    });
    assert.equal((refused.json as { error: string }).error, 'upstream_circuit_open');
    assert.equal(refused.headers.get('x-error-ref'), 'EP0091-EM0032');
    assert.equal(calls('/wallet/add-credit'), 3);
    await sleep(650);
    upstream.on('POST', '/wallet/add-credit', { status: 201, json: { ok: true } });
    const again = await send(proxy.url, 'POST', '/api/payments/deposit', { token, json: deposit, headers: { 'idempotency-key': 'kept' } });
    assert.equal(again.status, 201);
    assert.equal(again.headers.get('idempotent-replayed'), null);
    assert.equal(calls('/wallet/add-credit'), 4);
  });
});

describe('load shedding', () => {
  test('over LOAD_SHED_MAX_IN_FLIGHT a new /api request answers 503 overloaded at once, nothing sent; /healthz still answers', async () => {
    const small = await startProxy(upstream.url, { LOAD_SHED_MAX_IN_FLIGHT: '2', LOAD_SHED_EVENT_LOOP_DELAY_MS: '0' });
    try {
      upstream.on('GET', HISTORY, hold());
      const running = [get('/api/user/login-history', small.url), get('/api/user/login-history', small.url)];
      await sleep(100);
      const shed = await send(small.url, 'POST', '/api/user/update-marketing', { token, json: { email: true } });
      assert.equal(shed.status, 503);
      assert.equal((shed.json as { error: string }).error, 'overloaded');
      assert.equal(shed.headers.get('retry-after'), '1');
      assert.equal(calls(MARKETING), 0);
      assert.equal((await send(small.url, 'GET', '/healthz')).status, 200);
      assert.equal((await send(small.url, 'GET', '/readyz')).status, 200);
      release();
      upstream.on('GET', HISTORY, { json: { ok: true } });
      await Promise.all(running);
      assert.equal((await get('/api/user/login-history', small.url)).status, 200, 'served again once below the threshold');
      assert.ok(small.logs.entries.some((e) => e.level === 'warn' && e.msg === 'load shedding: requests refused since the last line'));
      assert.ok(!small.logs.entries.some((e) => e.statusCode === 503 && e.msg === 'request completed'), 'no line per shed request');
    } finally {
      release();
      await small.close();
    }
  });

  test('with one request held: logout is never shed (200, cookie cleared); absolute-form request lines are shed and counted in flight like any other', async () => {
    const small = await startProxy(upstream.url, { LOAD_SHED_MAX_IN_FLIGHT: '1', LOAD_SHED_EVENT_LOOP_DELAY_MS: '0' });
    const host = new URL(small.url).host;
    try {
      upstream.on('GET', HISTORY, hold());
      const running = get('/api/user/login-history', small.url);
      await sleep(100);
      const logout = await send(small.url, 'POST', '/api/auth/logout', { token });
      assert.equal(logout.status, 200, 'spec 5.5: logout always succeeds');
      assert.deepEqual(logout.json, { ok: true });
      assert.match(logout.headers.get('set-cookie') ?? '', /access_token=;.*Max-Age=0/i);
      for (const path of ['/api/auth/logout', '/api/auth/logout-auto']) {
        const raw = await rawRequest(small.url, 'POST', `http://${host}${path}`, { 'content-length': '0' });
        assert.equal(raw.status, 200, `absolute-form ${path}`);
      }
      const absolute = await rawRequest(small.url, 'GET', `http://${host}/api/games/list`);
      assert.equal(absolute.status, 503, 'an absolute-form /api request is shed');
      assert.match(absolute.body, /"error":"overloaded"/);
      assert.equal((await rawRequest(small.url, 'GET', `http://${host}/healthz`)).status, 200);
      release();
      await running;

      // Held in absolute form, it counts in flight: the next request is shed.
      upstream.on('GET', HISTORY, hold());
      const heldAbsolute = rawRequest(small.url, 'GET', `http://${host}/api/user/login-history`, { cookie: `access_token=${token}` });
      await sleep(100);
      assert.equal(calls(HISTORY) >= 2, true, 'the absolute-form request reached the BFF');
      const shed = await send(small.url, 'GET', '/api/games/list');
      assert.equal(shed.status, 503);
      assert.equal((shed.json as { error: string }).error, 'overloaded');
      release();
      assert.equal((await heldAbsolute).status, 200);
    } finally {
      release();
      upstream.on('GET', HISTORY, { json: { ok: true } });
      await small.close();
    }
  });

  test('an event loop delayed over LOAD_SHED_EVENT_LOOP_DELAY_MS sheds /api requests, not /healthz', async () => {
    const small = await startProxy(upstream.url, { LOAD_SHED_EVENT_LOOP_DELAY_MS: '100' });
    try {
      await sleep(700); // the delay counts from two samples (500 ms) after the listener opened
      // Delay this process's event loop (the proxy runs in it) for 1 s, in 150 ms blocks: the mean
      // delay of the next sample is well over 100 ms.
      const until = performance.now() + 1_000;
      while (performance.now() < until) {
        const block = performance.now() + 150;
        while (performance.now() < block) {
          // busy
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
      const [shed, health] = await Promise.all([get('/api/user/login-history', small.url), send(small.url, 'GET', '/healthz')]);
      assert.equal(shed.status, 503);
      assert.equal((shed.json as { error: string }).error, 'overloaded');
      assert.equal(health.status, 200);
      await sleep(700);
      assert.equal((await get('/api/user/login-history', small.url)).status, 200, 'served again once the delay is gone');
    } finally {
      await small.close();
    }
  });
});

describe('readiness', () => {
  test('503 until the BFF answered once, then 200 whatever the BFF does, saying whether it answers now', async () => {
    const own = await startRecordingUpstream();
    const ready = await startProxy(own.url);
    try {
      own.setDefault((_rec, res) => res.socket?.destroy());
      const before = await send(ready.url, 'GET', '/readyz');
      assert.equal(before.status, 503);
      assert.equal((before.json as { error: string }).error, 'not_ready');
      own.setDefault({ status: 404, json: {} });
      const first = await send(ready.url, 'GET', '/readyz');
      assert.equal(first.status, 200);
      assert.deepEqual(first.json, { ok: true, bff: 'up' });
      await own.close();
      // Any failed call says the BFF does not answer now; readiness stays.
      await get('/api/user/login-history', ready.url);
      const later = await send(ready.url, 'GET', '/readyz');
      assert.equal(later.status, 200);
      assert.deepEqual(later.json, { ok: true, bff: 'down' });
    } finally {
      await ready.close();
      await own.close().catch(() => undefined);
    }
  });
});
