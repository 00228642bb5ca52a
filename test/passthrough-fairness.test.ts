/**
 * No client can close the sportsbook for others (docs/behaviour.md "Resilience", "Calls a client
 * chooses"), the real proxy over real sockets before a raw fake BFF, clients told apart by a trusted
 * load balancer's `X-Forwarded-For` (IPv6 by its /64):
 *
 * - one client's 50 provoked failures (gateway 503s, 504s, timeouts, on sub-paths of its choosing)
 *   open its own circuit only: another client's passthrough read, `/api/sports/search` and the unified
 *   search's sports half answer 200;
 * - one client's 33 concurrent slow reads hold its share of the bulkhead only;
 * - a sportsbook that fails for every client still fails fast: once several clients failed in a row,
 *   every client's call answers 503 `upstream_circuit_open` without reaching it.
 *
 * Unit rows of `ClientShares` on a fake clock: shares, the run of failures counted per client, and the
 * shared circuit's trial never sent by a failing client.
 */
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ClientShares, clientLimits } from '../src/upstream/client-shares.js';
import { CIRCUIT, EndpointGuard, type GuardLimits } from '../src/upstream/endpoint-guard.js';
import type { UpstreamError } from '../src/upstream/errors.js';
import { send, startProxy, type TestProxy } from './helpers/recording-upstream.js';
import { rawAnswer, type RawUpstream, startRawUpstream, writes } from './helpers/raw-upstream.js';

const JSON_TYPE: [string, string] = ['Content-Type', 'application/json'];
const ok = (value: unknown) => writes(rawAnswer(200, [JSON_TYPE], JSON.stringify(value)));
const status = (code: number) => writes(rawAnswer(code, [JSON_TYPE], '{"error":"gateway"}'));
/** Never answers (the socket is kept until the proxy gives up). */
const hang = (socket: Socket) => void socket;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ATTACKER = '203.0.113.7';
const OTHER = '198.51.100.9';

/** A GET from `client` (its address as the trusted balancer reports it). */
function from(proxy: TestProxy, client: string, path: string, init: { method?: string; json?: unknown } = {}) {
  return send(proxy.url, init.method ?? 'GET', path, {
    headers: { 'x-forwarded-for': client },
    ...(init.json !== undefined && { json: init.json }),
  });
}

/** A raw upstream and a production proxy before it (trusting loopback's `X-Forwarded-For`) for one `describe`. */
function useRawProxy(env: Record<string, string> = {}): { readonly up: RawUpstream; readonly proxy: TestProxy } {
  const run = {} as { up: RawUpstream; proxy: TestProxy };
  before(async () => {
    run.up = await startRawUpstream();
    run.proxy = await startProxy(run.up.url, { NODE_ENV: 'production', TRUSTED_PROXIES: '127.0.0.1', UPSTREAM_TIMEOUT_MS: '1000', ...env });
  });
  after(async () => {
    await run.proxy?.close();
    await run.up?.close();
  });
  return run;
}

/** The good answers another client relies on. */
function serveOthers(up: RawUpstream): void {
  up.on('/core-sportbook/events', ok({ events: [1] }));
  up.on('/core-sportbook/search', ok({ data: [{ id: 's1' }] }));
  up.on('/games/list', ok({ data: [], meta: {} }));
}

async function othersServed(proxy: TestProxy): Promise<void> {
  const read = await from(proxy, OTHER, '/api/core-sportbook/events/1');
  assert.equal(read.status, 200, `another client's passthrough read: ${read.text}`);
  const search = await from(proxy, OTHER, '/api/sports/search?search=flamengo');
  assert.equal(search.status, 200, `/api/sports/search: ${search.text}`);
  const unified = await from(proxy, OTHER, '/api/search/unified', { method: 'POST', json: { search: 'flamengo' } });
  assert.equal(unified.status, 200);
  assert.deepEqual((unified.json as { failed?: string[] }).failed, [], `the unified search's halves: ${unified.text}`);
}

describe('one client provokes failures', () => {
  const run = useRawProxy();

  test('50 gateway 503s, 504s and timeouts on sub-paths it chose: its own circuit opens, nobody else’s', async () => {
    const { up, proxy } = run;
    up.reset();
    serveOthers(up);
    up.on('/core-sportbook/fail503', status(503));
    up.on('/core-sportbook/fail504', status(504));
    up.on('/core-sportbook/hang', hang);
    up.on('/core-sportbook/events/9', status(503));
    const answers: number[] = [];
    for (let i = 0; i < 50; i++) {
      const path = [
        '/api/core-sportbook/fail503/x',
        '/api/core-sportbook/fail504/x',
        '/api/core-sportbook/hang/x',
        '/api/core-sportbook/events/9?boom=',
      ][i % 4];
      answers.push((await from(proxy, ATTACKER, `${path}${i}`)).status);
    }
    // Its own circuit opened after the first failures: the rest were refused without reaching the BFF.
    assert.ok(answers.filter((s) => s === 503).length >= 40, answers.join(','));
    assert.ok(up.count('/core-sportbook/') <= 10, `${up.count('/core-sportbook/')} calls reached the BFF`);
    const refused = await from(proxy, ATTACKER, '/api/core-sportbook/events/1');
    assert.equal((refused.json as { error?: string }).error, 'upstream_circuit_open');
    await othersServed(proxy);
  });

  test('an address of the same IPv6 /64 is the same client; another /64 is not', async () => {
    const { up, proxy } = run;
    up.reset();
    serveOthers(up);
    up.on('/core-sportbook/fail', status(502));
    for (let i = 0; i < 10; i++) await from(proxy, `2001:db8:1:2::${(i + 1).toString(16)}`, `/api/core-sportbook/fail/${i}`);
    const same = await from(proxy, '2001:db8:1:2:aaaa:bbbb:cccc:dddd', '/api/core-sportbook/events/1');
    assert.equal((same.json as { error?: string }).error, 'upstream_circuit_open');
    const other = await from(proxy, '2001:db8:9:9::1', '/api/core-sportbook/events/1');
    assert.equal(other.status, 200);
  });
});

describe('one client holds slow reads', () => {
  const run = useRawProxy({ UPSTREAM_TIMEOUT_MS: '3000', UPSTREAM_QUEUE_WAIT_MS: '500' });

  test('33 concurrent slow reads of one client fill its share only', async () => {
    const { up, proxy } = run;
    up.reset();
    serveOthers(up);
    up.on('/core-sportbook/slow', (socket) => setTimeout(() => socket.write(rawAnswer(200, [JSON_TYPE], '{"slow":true}')), 1_500));
    const slow = Array.from({ length: 33 }, (_, i) => from(proxy, ATTACKER, `/api/core-sportbook/slow/${i}`));
    await sleep(200);
    await othersServed(proxy);
    const answers = await Promise.all(slow);
    const share = clientLimits({ maxInFlight: 32, maxQueue: 384, queueWaitMs: 500, circuitFailures: 5, circuitPauseMs: 5_000 }).maxInFlight;
    assert.equal(answers.filter((a) => a.status === 200).length, share, 'the client’s share ran');
    assert.ok(answers.filter((a) => a.status === 503).every((a) => (a.json as { error?: string }).error === 'upstream_busy'));
    assert.equal(up.count('/core-sportbook/slow'), share);
  });
});

describe('a sportsbook that fails for everyone still fails fast', () => {
  const run = useRawProxy();

  test('timeouts of 5 clients in a row open the shared circuit: every client is then refused at once, nothing reaches the BFF', async (t) => {
    const { up, proxy } = run;
    up.reset();
    up.on('/core-sportbook/', hang);
    for (let i = 1; i <= 5; i++) assert.equal((await from(proxy, `192.0.2.${i}`, '/api/core-sportbook/events/1')).status, 504);
    const reached = up.count('/core-sportbook/');
    const times: number[] = [];
    for (let i = 0; i < 100; i++) {
      const started = performance.now();
      const res = await from(proxy, `198.18.0.${(i % 50) + 1}`, `/api/core-sportbook/events/${i}`);
      times.push(performance.now() - started);
      assert.equal(res.status, 503);
      assert.equal((res.json as { error?: string }).error, 'upstream_circuit_open');
      assert.match(res.headers.get('x-error-ref') ?? '', /^EP0195-/);
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
    }
    assert.equal(up.count('/core-sportbook/'), reached, 'no call reached the hung BFF');
    times.sort((a, b) => a - b);
    t.diagnostic(`p99 of the refusals: ${times[98]?.toFixed(1)} ms`);
  });
});

describe('ClientShares (fake clock)', () => {
  const limits: GuardLimits = { maxInFlight: 8, maxQueue: 8, queueWaitMs: 100, circuitFailures: 3, circuitPauseMs: 1_000 };
  function make() {
    let now = 0;
    const clock = () => now;
    const shared = new EndpointGuard('EP0195', 'BFF_BASE_URL', limits, undefined, undefined, clock);
    return { shares: new ClientShares(shared, limits, undefined, clock), shared, advance: (ms: number) => (now += ms) };
  }
  const ticket = (t: number | Promise<number>) => {
    assert.equal(typeof t, 'number');
    return t as number;
  };
  const code = (fn: () => unknown) => {
    try {
      fn();
      return undefined;
    } catch (error) {
      return (error as UpstreamError).code;
    }
  };

  test('a client holds a quarter of the slots; the queue beyond is its own', () => {
    const { shares, shared } = make();
    const held = Array.from({ length: 2 }, () => ticket(shares.enter('a')));
    assert.equal(shared.inFlight, 2);
    const queued = shares.enter('a');
    assert.ok(queued instanceof Promise);
    queued.catch(() => undefined);
    assert.equal(shared.inFlight, 2, 'a third call of the same client waits in its own queue');
    ticket(shares.enter('b'));
    assert.equal(shared.inFlight, 3);
    for (const t of held) shares.leave('answered', t);
  });

  test('one client’s failures count once in the shared run; three clients open it', () => {
    const { shares, shared } = make();
    for (let i = 0; i < 3; i++) shares.leave('failed', ticket(shares.enter('a')));
    assert.equal(shared.state, CIRCUIT.closed);
    assert.equal(shares.own('a').state, CIRCUIT.open);
    assert.equal(
      code(() => shares.enter('a')),
      'upstream_circuit_open',
    );
    shares.leave('failed', ticket(shares.enter('b')));
    shares.leave('failed', ticket(shares.enter('c')));
    assert.equal(shared.state, CIRCUIT.open);
    assert.equal(
      code(() => shares.enter('d')),
      'upstream_circuit_open',
    );
  });

  test('an answer ends the run', () => {
    const { shares, shared } = make();
    shares.leave('failed', ticket(shares.enter('a')));
    shares.leave('failed', ticket(shares.enter('b')));
    shares.leave('answered', ticket(shares.enter('c')));
    shares.leave('failed', ticket(shares.enter('d')));
    assert.equal(shared.state, CIRCUIT.closed);
  });

  test('a client whose own circuit is open never sends the shared circuit’s trial', () => {
    const { shares, shared, advance } = make();
    for (const client of ['a', 'a', 'a', 'b', 'c']) shares.leave('failed', ticket(shares.enter(client)));
    assert.equal(shared.state, CIRCUIT.open);
    assert.equal(shares.own('a').state, CIRCUIT.open);
    advance(1_001);
    assert.equal(
      code(() => shares.enter('a')),
      'upstream_circuit_open',
      'its own trial is due, but the shared circuit is not closed',
    );
    const trial = ticket(shares.enter('z'));
    assert.equal(shared.state, CIRCUIT.halfOpen);
    shares.leave('answered', trial);
    assert.equal(shared.state, CIRCUIT.closed);
  });
});
