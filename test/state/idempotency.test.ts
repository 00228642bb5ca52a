// docs/behaviour.md "Money moves: exactly once": the idempotency record over the in-memory store, table by table.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ProxyAnswer } from '../../src/envelope.js';
import {
  IMPLICIT_KEY_TTL_MS,
  Idempotency,
  LEASE_MARGIN_MS,
  MARKER_WAIT_MS,
  recordKey,
  STORE_RETRY_MS,
  type Submission,
} from '../../src/state/idempotency.js';
import { tokenKey } from '../../src/session/hash.js';
import { MEMORY_STORE_BYTES_FROM, MemoryStore } from '../../src/state/memory.js';
import { type SharedStore, StateUnavailableError } from '../../src/state/store.js';
import { UpstreamError } from '../../src/upstream/errors.js';
import { longestCallMs } from '../../src/upstream/deadline.js';

const TOKEN = 'header.payload-of-a-session-token.signature';
const submission = (over: Partial<Submission> = {}): Submission => ({
  move: 'deposit',
  token: TOKEN,
  key: undefined,
  body: '{"a":1}',
  ...over,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A clock the test moves, in epoch milliseconds, shared by the store's lifetimes and the records' leases. */
function clock() {
  let now = 1_800_000_000_000;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

type WriteMethod = 'set' | 'setIfAbsent' | 'replaceIf';

/**
 * A store over `target` whose writes are refused (StateUnavailableError, as Redis in a failover) while
 * `refuse(method, value)` says so; `writes` records each write attempt (method, value, ttl).
 */
function flaky(target: SharedStore, refuse: (method: WriteMethod, value: string) => boolean) {
  const writes: { method: WriteMethod; key: string; value: string; ttlMs: number; replicated: boolean | undefined }[] = [];
  const store = new Proxy(target, {
    get: (t, name) => {
      if (name === 'set' || name === 'setIfAbsent' || name === 'replaceIf') {
        return async (...args: unknown[]) => {
          const value = String(args[1]);
          const options = (name === 'replaceIf' ? args[4] : args[3]) as { replicated?: boolean } | undefined;
          writes.push({ method: name, key: String(args[0]), value, ttlMs: Number(args[2]), replicated: options?.replicated });
          if (refuse(name, value)) throw new StateUnavailableError();
          return (Reflect.get(t, name, t) as (...a: unknown[]) => unknown).apply(t, args);
        };
      }
      return (Reflect.get(t, name, t) as () => unknown).bind(t);
    },
  }) as SharedStore;
  return { store, writes };
}

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

  const table: {
    name: string;
    first: Partial<Submission>;
    second: Partial<Submission>;
    calls: number;
    decision: string;
    status?: number;
  }[] = [
    { name: 'same body, no key: replayed', first: {}, second: {}, calls: 1, decision: 'replayed', status: 201 },
    { name: 'another body, no key: forwarded', first: {}, second: { body: '{"a":2}' }, calls: 2, decision: 'forwarded' },
    {
      name: 'another session: forwarded',
      first: {},
      second: { token: 'another-session-token-of-sixteen' },
      calls: 2,
      decision: 'forwarded',
    },
    { name: 'the other move: forwarded', first: {}, second: { move: 'withdraw' }, calls: 2, decision: 'forwarded' },
    {
      name: 'same header key, same body: replayed',
      first: { key: 'k-1' },
      second: { key: 'k-1' },
      calls: 1,
      decision: 'replayed',
      status: 201,
    },
    {
      name: 'same header key, another body: 422',
      first: { key: 'k-1' },
      second: { key: 'k-1', body: '{"a":2}' },
      calls: 1,
      decision: 'mismatch',
      status: 422,
    },
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

  test('without a client key each submission sends a fresh id: a double click within 5 s is one, two deposits 6 s apart are two', async () => {
    const time = clock();
    const idem = new Idempotency(new MemoryStore({ now: time.now }), 1_000, { now: time.now });
    const up = upstream({ status: 201, body: { id: 'charge' } });
    assert.equal((await idem.run(submission(), up.call)).decision, 'forwarded');
    time.advance(IMPLICIT_KEY_TTL_MS - 1_000);
    assert.equal((await idem.run(submission(), up.call)).decision, 'replayed', 'a double click 4 s later');
    time.advance(2_000);
    assert.equal((await idem.run(submission(), up.call)).decision, 'forwarded', 'a second deposit of the same amount 6 s after the first');
    assert.equal(up.keys.length, 2);
    for (const key of up.keys) assert.match(key, UUID);
    assert.notEqual(up.keys[0], up.keys[1], 'two submissions, two upstream keys');
  });

  test('the lease covers the queue wait and the time limit: a call still queued is never taken over', async () => {
    const longest = longestCallMs({
      upstreamTimeoutMs: 15_000,
      upstreamLimits: { maxInFlight: 1, maxQueue: 1, queueWaitMs: 10_000, circuitFailures: 0, circuitPauseMs: 1 },
    });
    assert.equal(longest, 25_000);
    const time = clock();
    const store = new MemoryStore({ now: time.now });
    const recorded = flaky(store, () => false);
    const a = new Idempotency(recorded.store, longest, { now: time.now, waitMs: 0 });
    const b = new Idempotency(store, longest, { now: time.now, waitMs: 0 });
    assert.equal(a.leaseMs, 25_000 + LEASE_MARGIN_MS);
    let answer: ((value: ProxyAnswer) => void) | undefined;
    const queued = upstream(() => new Promise<ProxyAnswer>((resolve) => (answer = resolve)));
    const first = a.run(submission({ key: 'k-queued' }), queued.call);
    await new Promise((r) => setImmediate(r));
    assert.ok((recorded.writes[0]?.ttlMs ?? 0) >= a.leaseMs, 'the marker lives at least the lease');
    // 10 s in the queue, then nearly 15 s upstream: the other instance still answers 409.
    time.advance(25_000 + LEASE_MARGIN_MS - 1);
    const other = upstream({ status: 500, body: {} });
    const during = await b.run(submission({ key: 'k-queued' }), other.call);
    assert.equal(during.decision, 'in_progress');
    assert.equal(other.keys.length, 0);
    answer?.({ status: 201, body: { id: 'queued' } });
    assert.equal((await first).decision, 'forwarded');
    assert.deepEqual((await b.run(submission({ key: 'k-queued' }), other.call)).answer, { status: 201, body: { id: 'queued' } });
    assert.equal(other.keys.length, 0);
  });

  test('a marker whose instance is gone is taken over after its lease, with the same upstream key', async () => {
    const time = clock();
    const store = new MemoryStore({ now: time.now });
    const a = new Idempotency(store, 1_000, { now: time.now, waitMs: 0 });
    const b = new Idempotency(store, 1_000, { now: time.now, waitMs: 0 });
    const lost = upstream(() => new Promise<ProxyAnswer>(() => {}));
    void a.run(submission(), lost.call);
    await new Promise((r) => setImmediate(r));
    const early = upstream({ status: 201, body: {} });
    assert.equal((await b.run(submission(), early.call)).decision, 'in_progress');
    time.advance(1_000 + LEASE_MARGIN_MS);
    const after = upstream({ status: 201, body: { id: 'retried' } });
    assert.equal((await b.run(submission(), after.call)).decision, 'forwarded');
    assert.deepEqual(after.keys, lost.keys, 'the same upstream key as the lost attempt');
    assert.match(after.keys[0] ?? '', UUID);
    assert.equal(early.keys.length, 0);
  });

  for (const key of ['k-timeout', undefined]) {
    test(`an unknown outcome stores nothing: repeats answer 409 until the lease ends, then go upstream with the same key (${key ? 'client key' : 'no client key'})`, async () => {
      const time = clock();
      const idem = new Idempotency(new MemoryStore({ now: time.now }), 100, { now: time.now }); // lease 100 + 5000 ms
      const keys: string[] = [];
      const timeout = async (upstreamKey: string): Promise<ProxyAnswer> => {
        keys.push(upstreamKey);
        throw new UpstreamError('upstream_timeout');
      };
      await assert.rejects(idem.run(submission({ key }), timeout), (e: unknown) => e instanceof UpstreamError);
      const repeat = await idem.run(submission({ key }), timeout);
      assert.equal(repeat.decision, 'in_progress');
      assert.equal(repeat.answer.status, 409);
      assert.ok((repeat.retryAfterSeconds ?? 0) >= 5, `Retry-After ${repeat.retryAfterSeconds} covers the lease`);
      assert.equal(keys.length, 1);
      time.advance(100 + LEASE_MARGIN_MS);
      const answered = upstream({ status: 201, body: { id: 'after-timeout' } });
      assert.equal((await idem.run(submission({ key }), answered.call)).decision, 'forwarded');
      assert.deepEqual(answered.keys, keys, 'the retry sends the key of the attempt whose outcome is unknown');
      if (key === undefined) assert.match(keys[0] ?? '', UUID);
    });
  }

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
        name === 'setIfAbsent'
          ? async () => Promise.reject(new StateUnavailableError())
          : (Reflect.get(target, name, target) as () => unknown).bind(target),
    }) as SharedStore;
    const up = upstream({ status: 201, body: {} });
    const started = performance.now();
    const result = await new Idempotency(down, 1_000).run(submission(), up.call);
    const waited = performance.now() - started;
    assert.equal(result.answer.status, 503);
    assert.equal((result.answer.body as { error: string }).error, 'idempotency_unavailable');
    assert.equal(result.retryAfterSeconds, 1, 'a 503 idempotency_unavailable carries Retry-After');
    assert.equal(up.keys.length, 0);
    assert.ok(
      waited >= MARKER_WAIT_MS - 2 * STORE_RETRY_MS && waited < MARKER_WAIT_MS + 500,
      `tried for ${Math.round(waited)} ms before failing closed`,
    );
  });

  test('a store that refuses the marker for a moment (a switchover) costs a wait, not a refusal', async () => {
    let refusals = 2;
    const { store, writes } = flaky(new MemoryStore(), (method) => method === 'setIfAbsent' && refusals-- > 0);
    const up = upstream({ status: 201, body: { id: 'after-switch' } });
    const result = await new Idempotency(store, 1_000).run(submission(), up.call);
    assert.equal(result.decision, 'forwarded');
    assert.equal(up.keys.length, 1);
    const markers = writes.filter((w) => w.method === 'setIfAbsent').map((w) => JSON.parse(w.value) as { a: string; k: string });
    assert.equal(markers.length, 3);
    assert.equal(new Set(markers.map((m) => m.a)).size, 3, 'each attempt a marker of its own');
  });

  test('a refused attempt whose marker stayed (its delete failed too) is replaced by the next attempt, not taken for a move in flight', async () => {
    const backing = new MemoryStore();
    let first = true;
    const store = new Proxy(backing, {
      get: (target, name) => {
        if (name === 'setIfAbsent') {
          return async (...args: Parameters<SharedStore['setIfAbsent']>) => {
            const previous = await target.setIfAbsent(...args);
            // Written on the primary, not acknowledged, and the delete that should follow lost.
            if (first && previous === null) {
              first = false;
              throw new StateUnavailableError();
            }
            return previous;
          };
        }
        return (Reflect.get(target, name, target) as () => unknown).bind(target);
      },
    }) as SharedStore;
    const up = upstream({ status: 201, body: { id: 'once' } });
    const result = await new Idempotency(store, 1_000, { waitMs: 0 }).run(submission({ key: 'k-left' }), up.call);
    assert.equal(result.decision, 'forwarded');
    assert.equal(up.keys.length, 1);
    const repeat = await new Idempotency(backing, 1_000, { waitMs: 0 }).run(submission({ key: 'k-left' }), up.call);
    assert.equal(repeat.decision, 'replayed');
    assert.equal(up.keys.length, 1);
  });

  const isAnswer = (value: string) => value.includes('"s":"done"');

  test('an answer the store refuses (a failover under way) waits in the queue: replayed here at once, 409 elsewhere, stored once writes are taken', async () => {
    let refusing = true;
    const backing = new MemoryStore();
    const { store, writes } = flaky(backing, (method, value) => refusing && isAnswer(value));
    const a = new Idempotency(store, 1_000, { waitMs: 0 });
    const b = new Idempotency(backing, 1_000, { waitMs: 0 });
    const first = await a.run(submission({ key: 'k-failover' }), upstream({ status: 201, body: { id: 'charge-9' } }).call);
    assert.equal(first.decision, 'forwarded');
    assert.equal(a.unstored, 1);
    const repeat = upstream({ status: 500, body: {} });
    const here = await a.run(submission({ key: 'k-failover' }), repeat.call);
    assert.equal(here.decision, 'replayed');
    assert.deepEqual(here.answer, { status: 201, body: { id: 'charge-9' } });
    assert.equal((await b.run(submission({ key: 'k-failover' }), repeat.call)).decision, 'in_progress');
    await new Promise((r) => setTimeout(r, 2 * STORE_RETRY_MS + 100));
    refusing = false;
    await new Promise((r) => setTimeout(r, 2 * STORE_RETRY_MS + 100));
    assert.equal(a.unstored, 0);
    const replay = await b.run(submission({ key: 'k-failover' }), repeat.call);
    assert.equal(replay.decision, 'replayed');
    assert.deepEqual(replay.answer, { status: 201, body: { id: 'charge-9' } });
    assert.equal(repeat.keys.length, 0);
    const answers = writes.filter((w) => isAnswer(w.value));
    assert.ok(answers.length >= 3, `${answers.length} attempts`);
    assert.ok(
      writes.every((w) => w.replicated === true),
      'every record is written replicated',
    );
  });

  test('an answer still refused at shutdown is handed to the other instances: replayed there at once, stored by them once writes are taken', async () => {
    let refusing = true;
    const backing = new MemoryStore();
    const refuse = (_method: WriteMethod, value: string) => refusing && isAnswer(value);
    const a = new Idempotency(flaky(backing, refuse).store, 1_000, { waitMs: 0 });
    const b = new Idempotency(flaky(backing, refuse).store, 1_000, { waitMs: 0 });
    await a.run(submission({ key: 'k-stopping' }), upstream({ status: 201, body: { id: 'charge-7' } }).call);
    assert.equal(await a.flush(2 * STORE_RETRY_MS), 1, 'still refused at shutdown');
    assert.equal(b.unstored, 0);
    assert.equal(await a.handOff(), 1);
    assert.equal(b.unstored, 1, 'the other instance queued it');
    assert.equal(a.unstored, 1, 'the sender ignores its own hand-off');
    const repeat = upstream({ status: 500, body: {} });
    const there = await b.run(submission({ key: 'k-stopping' }), repeat.call);
    assert.equal(there.decision, 'replayed');
    assert.deepEqual(there.answer, { status: 201, body: { id: 'charge-7' } });
    refusing = false;
    await new Promise((r) => setTimeout(r, 2 * STORE_RETRY_MS + 100));
    assert.equal(b.unstored, 0, 'stored by the instance that took it');
    const later = await new Idempotency(backing, 1_000, { waitMs: 0 }).run(submission({ key: 'k-stopping' }), repeat.call);
    assert.equal(later.decision, 'replayed');
    assert.deepEqual(later.answer, { status: 201, body: { id: 'charge-7' } });
    assert.equal(repeat.keys.length, 0, 'never sent again');
  });

  test('a hand-off the store cannot relay publishes nothing; malformed hand-offs are ignored', async () => {
    const backing = new MemoryStore();
    const { store } = flaky(backing, (_method, value) => isAnswer(value));
    const a = new Idempotency(
      Object.assign(Object.create(store) as SharedStore, { publish: () => Promise.reject(new StateUnavailableError()) }),
      1_000,
      { waitMs: 0 },
    );
    await a.run(submission({ key: 'k-alone' }), upstream({ status: 201, body: { id: 'charge-8' } }).call);
    assert.equal(await a.flush(0), 1);
    assert.equal(await a.handOff(), 0);
    const b = new Idempotency(backing, 1_000, { waitMs: 0 });
    const marker = JSON.stringify({ s: 'pending', f: 'x', until: 1 });
    const key = `front-proxy:idem:${'0'.repeat(64)}`;
    await backing.publish({
      type: 'answers',
      from: 'another',
      answers: [
        { key, record: 'not json', marker, ttlMs: 1_000 },
        { key, record: marker, marker, ttlMs: 1_000 },
      ],
    });
    assert.equal(b.unstored, 0);
  });

  test('an answer still refused when its lease ends is never given up: its marker is renewed, no one takes it over, it is stored when the store is back', async () => {
    const time = clock();
    let refusing = true;
    const backing = new MemoryStore({ now: time.now });
    const { store } = flaky(backing, (method, value) => refusing && isAnswer(value));
    const a = new Idempotency(store, 1, { now: time.now, waitMs: 0 });
    const b = new Idempotency(backing, 1, { now: time.now, waitMs: 0 });
    await a.run(submission(), upstream({ status: 201, body: { id: 'charge-1' } }).call);
    // Far past the lease (1 ms + 5 s) and the marker's own lifetime, in steps the retries follow.
    for (let i = 0; i < 6; i++) {
      time.advance(LEASE_MARGIN_MS);
      await new Promise((r) => setTimeout(r, STORE_RETRY_MS + 50));
    }
    const elsewhere = upstream({ status: 500, body: {} });
    assert.equal((await b.run(submission(), elsewhere.call)).decision, 'in_progress', 'the renewed marker holds the key');
    assert.equal(elsewhere.keys.length, 0);
    assert.equal(a.unstored, 1);
    refusing = false;
    await new Promise((r) => setTimeout(r, STORE_RETRY_MS + 100));
    assert.equal(a.unstored, 0);
    assert.deepEqual((await b.run(submission(), elsewhere.call)).answer, { status: 201, body: { id: 'charge-1' } });
    assert.equal(elsewhere.keys.length, 0);
  });

  test('a queued answer leaves the queue when another record holds its key, and never replaces it', async () => {
    let refusing = true;
    const backing = new MemoryStore();
    const { store, writes } = flaky(backing, (method, value) => refusing && isAnswer(value));
    const a = new Idempotency(store, 1_000, { waitMs: 0 });
    await a.run(submission({ key: 'k-other' }), upstream({ status: 201, body: { id: 'mine' } }).call);
    assert.equal(a.unstored, 1);
    // Another attempt's answer in the key's place (another instance, after this one's lease).
    const key = writes[0]?.key ?? '';
    const theirs = JSON.stringify({
      s: 'done',
      f: JSON.parse(writes[0]?.value ?? '{}').f,
      status: 202,
      body: '{"id":"theirs"}',
      enc: 'json',
    });
    await backing.set(key, theirs, 60_000);
    refusing = false;
    await new Promise((r) => setTimeout(r, STORE_RETRY_MS + 100));
    assert.equal(a.unstored, 0);
    assert.equal(await backing.get(key), theirs);
  });

  test('flush writes the queued answers at shutdown; what the store still refuses is counted', async () => {
    let refusing = true;
    const backing = new MemoryStore();
    const { store } = flaky(backing, (method, value) => refusing && isAnswer(value));
    const a = new Idempotency(store, 1_000, { waitMs: 0 });
    await a.run(submission({ key: 'k-1' }), upstream({ status: 201, body: { id: 'one' } }).call);
    await a.run(submission({ key: 'k-2' }), upstream({ status: 201, body: { id: 'two' } }).call);
    assert.equal(await a.flush(3 * STORE_RETRY_MS), 2, 'the store still refuses both');
    setTimeout(() => (refusing = false), STORE_RETRY_MS);
    assert.equal(await a.flush(), 0);
    const b = new Idempotency(backing, 1_000, { waitMs: 0 });
    assert.deepEqual((await b.run(submission({ key: 'k-2' }), upstream({ status: 500, body: {} }).call)).answer, {
      status: 201,
      body: { id: 'two' },
    });
  });

  test('while the queue of unstored answers is full, new moves are refused 503 with nothing sent', async () => {
    const { store } = flaky(new MemoryStore(), (method, value) => isAnswer(value));
    const a = new Idempotency(store, 1_000, { waitMs: 0, maxUnstored: 1 });
    await a.run(submission({ key: 'k-1' }), upstream({ status: 201, body: {} }).call);
    const next = upstream({ status: 201, body: {} });
    const refused = await a.run(submission({ key: 'k-2' }), next.call);
    assert.equal(refused.decision, 'unavailable');
    assert.equal(refused.answer.status, 503);
    assert.equal(next.keys.length, 0);
    assert.equal(await a.flush(0), 1);
  });

  test('a repeat on the same instance waits at most its bound, then answers 409', async () => {
    const idem = new Idempotency(new MemoryStore(), 1_000, { waitMs: 100 });
    let release: (() => void) | undefined;
    const slow = upstream(() => new Promise<ProxyAnswer>((resolve) => (release = () => resolve({ status: 201, body: {} }))));
    const first = idem.run(submission(), slow.call);
    await new Promise((r) => setImmediate(r));
    const started = performance.now();
    const repeat = await idem.run(submission(), slow.call);
    assert.equal(repeat.decision, 'in_progress');
    assert.ok(performance.now() - started < 1_000, 'not the whole upstream call');
    assert.ok((repeat.retryAfterSeconds ?? 0) >= 1);
    release?.();
    assert.equal((await first).decision, 'forwarded');
  });

  test('a long answer (kept as bytes) replays character for character, multi-byte text included', async () => {
    const idem = new Idempotency(new MemoryStore(), 1_000);
    const note = `depósito confirmado ✓ 🎰 ${'ã'.repeat(MEMORY_STORE_BYTES_FROM)}`;
    const first = await idem.run(
      submission({ key: 'k-long' }),
      upstream({ status: 200, body: { note, real_wallet: { balance: 155001 } } }).call,
    );
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

test("the record key is the same whether the caller gives the token's digest or not (instances of either kind find each other's records)", () => {
  const token = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0MiJ9.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg';
  const cases: Pick<Submission, 'move' | 'key' | 'body'>[] = [
    { move: 'deposit', key: undefined, body: '{"user_id":7,"credit_amount":5000}' },
    { move: 'deposit', key: 'client-key-1', body: '{"user_id":7,"credit_amount":5000}' },
    { move: 'withdraw', key: undefined, body: '{"amount":100}' },
  ];
  for (const c of cases) {
    const without = recordKey({ ...c, token });
    assert.equal(recordKey({ ...c, token, tokenKey: tokenKey(token) }), without, `${c.move} ${String(c.key)}`);
    // The digest is what scopes the key: another session's gives another key.
    assert.notEqual(recordKey({ ...c, token, tokenKey: tokenKey(`${token}x`) }), without, `${c.move} ${String(c.key)}`);
    assert.match(without, /idem:[0-9a-f]{64}$/);
  }
});
