// docs/behaviour.md "Money moves: exactly once": the idempotency record over the in-memory store, table by table.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ProxyAnswer } from '../../src/envelope.js';
import { Idempotency, LEASE_MARGIN_MS, STORE_RETRY_MS, type Submission } from '../../src/state/idempotency.js';
import { MEMORY_STORE_BYTES_FROM, MemoryStore } from '../../src/state/memory.js';
import { type SharedStore, StateUnavailableError } from '../../src/state/store.js';
import { UpstreamError } from '../../src/upstream/errors.js';

const TOKEN = 'header.payload-of-a-session-token.signature';
const submission = (over: Partial<Submission> = {}): Submission => ({ move: 'deposit', token: TOKEN, key: undefined, body: '{"a":1}', ...over });

/** An upstream call that counts its calls, records the keys it was given and answers after `delayMs`. */
function upstream(answer: ProxyAnswer | (() => Promise<ProxyAnswer>), delayMs = 0) {
  const keys: string[] = [];
  const call = async (key: string): Promise<ProxyAnswer> => {
    keys.push(key);
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    return typeof answer === 'function' ? answer() : answer;
  };
  return { call, keys };
}

describe('idempotency over the in-memory store', () => {
  test('concurrent repeats reach the upstream once and replay its answer', async () => {
    const idem = new Idempotency(new MemoryStore(), 1_000);
    const up = upstream({ status: 201, body: { id: 'charge-1' } }, 30);
    const results = await Promise.all(Array.from({ length: 10 }, () => idem.run(submission(), up.call)));
    assert.equal(up.keys.length, 1);
    assert.deepEqual(results.map((r) => r.decision).sort(), ['forwarded', ...Array(9).fill('replayed')]);
    for (const r of results) assert.deepEqual(r.answer, { status: 201, body: { id: 'charge-1' } });
  });

  const table: { name: string; first: Partial<Submission>; second: Partial<Submission>; calls: number; decision: string; status?: number }[] = [
    { name: 'same body, no key: replayed', first: {}, second: {}, calls: 1, decision: 'replayed', status: 201 },
    { name: 'another body, no key: forwarded', first: {}, second: { body: '{"a":2}' }, calls: 2, decision: 'forwarded' },
    { name: 'another session: forwarded', first: {}, second: { token: 'another-session-token-of-sixteen' }, calls: 2, decision: 'forwarded' },
    { name: 'the other move: forwarded', first: {}, second: { move: 'withdraw' }, calls: 2, decision: 'forwarded' },
    { name: 'same header key, same body: replayed', first: { key: 'k-1' }, second: { key: 'k-1' }, calls: 1, decision: 'replayed', status: 201 },
    { name: 'same header key, another body: 422', first: { key: 'k-1' }, second: { key: 'k-1', body: '{"a":2}' }, calls: 1, decision: 'mismatch', status: 422 },
    { name: 'another header key, same body: forwarded', first: { key: 'k-1' }, second: { key: 'k-2' }, calls: 2, decision: 'forwarded' },
  ];
  for (const row of table) {
    test(`a settled submission, then: ${row.name}`, async () => {
      const idem = new Idempotency(new MemoryStore(), 1_000);
      const up = upstream({ status: 201, body: { id: 'charge-1' } });
      await idem.run(submission(row.first), up.call);
      const second = await idem.run(submission(row.second), up.call);
      assert.equal(up.keys.length, row.calls);
      assert.equal(second.decision, row.decision);
      if (row.status) assert.equal(second.answer.status, row.status);
    });
  }

  test('every upstream status is stored and replayed; the client key is forwarded as it came', async () => {
    const idem = new Idempotency(new MemoryStore(), 1_000);
    const up = upstream({ status: 500, body: '{"message":"boom"}', contentType: 'application/json' });
    const first = await idem.run(submission({ key: 'client-key' }), up.call);
    const again = await idem.run(submission({ key: 'client-key' }), up.call);
    assert.deepEqual(up.keys, ['client-key']);
    assert.equal(again.decision, 'replayed');
    assert.deepEqual(again.answer, first.answer);
  });

  test('without a client key a derived key (64 hex digits) is forwarded', async () => {
    const up = upstream({ status: 200, body: null });
    await new Idempotency(new MemoryStore(), 1_000).run(submission(), up.call);
    assert.match(up.keys[0] ?? '', /^[0-9a-f]{64}$/);
  });

  test('an unknown outcome stores nothing: repeats answer 409 until the lease ends, then go upstream with the same key', async () => {
    const idem = new Idempotency(new MemoryStore(), 100); // lease 100 + 5000 ms
    let calls = 0;
    const timeout = async (key: string): Promise<ProxyAnswer> => {
      calls++;
      assert.equal(key, 'k-timeout');
      throw new UpstreamError('upstream_timeout');
    };
    await assert.rejects(idem.run(submission({ key: 'k-timeout' }), timeout), (e: unknown) => e instanceof UpstreamError);
    const repeat = await idem.run(submission({ key: 'k-timeout' }), timeout);
    assert.equal(repeat.decision, 'in_progress');
    assert.equal(repeat.answer.status, 409);
    assert.ok((repeat.retryAfterSeconds ?? 0) >= 5, `Retry-After ${repeat.retryAfterSeconds} covers the lease`);
    assert.equal(calls, 1);
  });

  test('a call that never left (connection refused, not configured) frees the key at once', async () => {
    const idem = new Idempotency(new MemoryStore(), 1_000);
    const refused = async (): Promise<ProxyAnswer> => {
      throw new UpstreamError('upstream_unavailable', { cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) });
    };
    await assert.rejects(idem.run(submission(), refused));
    const up = upstream({ status: 201, body: { ok: true } });
    assert.equal((await idem.run(submission(), up.call)).decision, 'forwarded');
    assert.equal(up.keys.length, 1);
  });

  test('a store that cannot be reached answers 503 idempotency_unavailable and calls nothing', async () => {
    const down = new Proxy(new MemoryStore(), {
      get: (target, name) =>
        name === 'setIfAbsent' ? async () => Promise.reject(new StateUnavailableError()) : Reflect.get(target, name, target),
    }) as SharedStore;
    const up = upstream({ status: 201, body: {} });
    const result = await new Idempotency(down, 1_000).run(submission(), up.call);
    assert.equal(result.answer.status, 503);
    assert.equal((result.answer.body as { error: string }).error, 'idempotency_unavailable');
    assert.equal(up.keys.length, 0);
  });

  test('an answer the store refuses (a failover under way) is stored again until the marker\'s lease ends; a repeat then replays it', async () => {
    let refusals = 3;
    const sets: { replicated: boolean | undefined }[] = [];
    const failingOver = new Proxy(new MemoryStore(), {
      get: (target, name) => {
        if (name === 'set') {
          return async (...args: Parameters<SharedStore['set']>) => {
            sets.push({ replicated: args[3]?.replicated });
            if (refusals-- > 0) throw new StateUnavailableError();
            return target.set(...args);
          };
        }
        if (name === 'setIfAbsent') {
          return async (...args: Parameters<SharedStore['setIfAbsent']>) => {
            assert.equal(args[3]?.replicated, true, 'the pending marker is written replicated');
            return target.setIfAbsent(...args);
          };
        }
        return (Reflect.get(target, name, target) as () => unknown).bind(target);
      },
    }) as SharedStore;
    // Lease: 1 s + LEASE_MARGIN_MS, far longer than three retries of STORE_RETRY_MS.
    const idem = new Idempotency(failingOver, 1_000, { waitMs: 0 });
    const first = await idem.run(submission({ key: 'k-failover' }), upstream({ status: 201, body: { id: 'charge-9' } }).call);
    assert.equal(first.decision, 'forwarded');
    assert.equal((await idem.run(submission({ key: 'k-failover' }), upstream({ status: 500, body: {} }).call)).decision, 'in_progress');
    await new Promise((r) => setTimeout(r, 4 * STORE_RETRY_MS + 200));
    const repeat = upstream({ status: 500, body: {} });
    const replay = await idem.run(submission({ key: 'k-failover' }), repeat.call);
    assert.equal(replay.decision, 'replayed');
    assert.deepEqual(replay.answer, { status: 201, body: { id: 'charge-9' } });
    assert.equal(repeat.keys.length, 0);
    assert.equal(sets.length, 4, 'three refusals, then stored');
    assert.ok(sets.every((s) => s.replicated === true), 'the answer is written replicated');
  });

  test('an answer still refused when the lease ends is stored afterwards only where the key is free, never over a later marker', async () => {
    let refusing = true;
    const writes: string[] = [];
    const switching = new Proxy(new MemoryStore(), {
      get: (target, name) => {
        if (name === 'set') {
          return async (...args: Parameters<SharedStore['set']>) => {
            writes.push('set');
            if (refusing) throw new StateUnavailableError();
            return target.set(...args);
          };
        }
        if (name === 'setIfAbsent') {
          return async (...args: Parameters<SharedStore['setIfAbsent']>) => {
            if (String(args[1]).includes('"done"')) writes.push('setIfAbsent');
            if (refusing && String(args[1]).includes('"done"')) throw new StateUnavailableError();
            return target.setIfAbsent(...args);
          };
        }
        return (Reflect.get(target, name, target) as () => unknown).bind(target);
      },
    }) as SharedStore;
    // Lease: 1 ms + LEASE_MARGIN_MS (5 s); the store accepts writes again 0.5 s after it.
    const idem = new Idempotency(switching, 1, { waitMs: 0 });
    await idem.run(submission({ key: 'k-switch' }), upstream({ status: 201, body: { id: 'charge-1' } }).call);
    await new Promise((r) => setTimeout(r, LEASE_MARGIN_MS + 500));
    refusing = false;
    await new Promise((r) => setTimeout(r, 3 * STORE_RETRY_MS));
    const repeat = upstream({ status: 500, body: {} });
    const replay = await idem.run(submission({ key: 'k-switch' }), repeat.call);
    assert.equal(replay.decision, 'replayed');
    assert.equal(repeat.keys.length, 0);
    const first = writes.indexOf('setIfAbsent');
    assert.ok(first > 0 && writes.slice(first).every((w) => w === 'setIfAbsent'), `set during the lease, setIfAbsent after it: ${writes.join()}`);
    // A later attempt's marker in place: the late answer does not replace it.
    const other = new Idempotency(switching, 1, { waitMs: 0 });
    refusing = true;
    await other.run(submission({ key: 'k-later' }), upstream({ status: 201, body: { id: 'charge-2' } }).call);
    await new Promise((r) => setTimeout(r, LEASE_MARGIN_MS + 100));
    const later = upstream({ status: 202, body: { id: 'charge-3' } });
    let release: (() => void) | undefined;
    const held = new Promise<void>((r) => (release = r));
    const inFlight = other.run(submission({ key: 'k-later' }), async (key) => {
      refusing = false;
      await held;
      return later.call(key);
    });
    await new Promise((r) => setTimeout(r, 3 * STORE_RETRY_MS));
    // Another instance sees the later attempt in progress, not the first attempt's answer.
    assert.equal((await new Idempotency(switching, 1, { waitMs: 0 }).run(submission({ key: 'k-later' }), upstream({ status: 500, body: {} }).call)).decision, 'in_progress');
    release?.();
    assert.equal((await inFlight).decision, 'forwarded');
    assert.deepEqual((await other.run(submission({ key: 'k-later' }), upstream({ status: 500, body: {} }).call)).answer, { status: 202, body: { id: 'charge-3' } });
  });

  test('an answer the store keeps refusing is tried only until the lease ends', async () => {
    let attempts = 0;
    const down = new Proxy(new MemoryStore(), {
      get: (target, name) =>
        name === 'set'
          ? async () => {
              attempts++;
              throw new StateUnavailableError();
            }
          : (Reflect.get(target, name, target) as () => unknown).bind(target),
    }) as SharedStore;
    // Lease: 1 ms + LEASE_MARGIN_MS (5 s): at most 5,000 / STORE_RETRY_MS attempts.
    await new Idempotency(down, 1, { waitMs: 0 }).run(submission({ key: 'k-down' }), upstream({ status: 201, body: {} }).call);
    await new Promise((r) => setTimeout(r, 600));
    assert.ok(attempts >= 2, `${attempts} attempts`);
    assert.ok(attempts <= Math.ceil(5_001 / STORE_RETRY_MS) + 1, `${attempts} attempts`);
  });

  test('a long answer (kept as bytes) replays character for character, multi-byte text included', async () => {
    const idem = new Idempotency(new MemoryStore(), 1_000);
    const note = `depósito confirmado ✓ 🎰 ${'ã'.repeat(MEMORY_STORE_BYTES_FROM)}`;
    const first = await idem.run(submission({ key: 'k-long' }), upstream({ status: 200, body: { note, real_wallet: { balance: 155001 } } }).call);
    const replay = await idem.run(submission({ key: 'k-long' }), upstream({ status: 500, body: {} }).call);
    assert.equal(replay.decision, 'replayed');
    assert.deepEqual(replay.answer, first.answer);
    assert.equal((replay.answer.body as { note: string }).note, note);
  });

  test('the in-memory store reads back what it was given, below and above the length kept as bytes', async () => {
    const store = new MemoryStore();
    for (const value of ['short ✓', `long ✓ ${'é'.repeat(MEMORY_STORE_BYTES_FROM)} 🎰`]) {
      await store.set('k', value, 1_000);
      assert.equal(await store.get('k'), value);
      assert.equal(await store.setIfAbsent('k', 'other', 1_000), value);
      assert.deepEqual(await store.getBytes('k'), Buffer.from(value, 'utf8'));
      await store.deleteIfEquals('k', value);
      assert.equal(await store.get('k'), null);
    }
  });

  test('a stored answer holds no session token', async () => {
    const store = new MemoryStore();
    const idem = new Idempotency(store, 1_000);
    await idem.run(submission({ key: 'k-echo' }), upstream({ status: 200, body: { echoed: `Bearer ${TOKEN}` } }).call);
    const replay = await idem.run(submission({ key: 'k-echo' }), upstream({ status: 200, body: {} }).call);
    assert.equal(replay.decision, 'replayed');
    assert.doesNotMatch(JSON.stringify(replay.answer.body), new RegExp(TOKEN.replaceAll('.', '\\.')));
  });

  test('a repeat of a submission in flight elsewhere waits for its answer (in_progress only past the wait)', async () => {
    const store = new MemoryStore();
    const a = new Idempotency(store, 1_000);
    const b = new Idempotency(store, 1_000, { waitMs: 2_000 });
    const c = new Idempotency(store, 1_000, { waitMs: 50 });
    const slow = upstream({ status: 201, body: { id: 'slow' } }, 300);
    const first = a.run(submission(), slow.call);
    await new Promise((r) => setTimeout(r, 20));
    const [late, early] = await Promise.all([b.run(submission(), slow.call), c.run(submission(), slow.call)]);
    assert.equal((await first).decision, 'forwarded');
    assert.equal(late.decision, 'replayed');
    assert.deepEqual(late.answer.body, { id: 'slow' });
    assert.equal(early.decision, 'in_progress');
    assert.equal(slow.keys.length, 1);
  });
});
