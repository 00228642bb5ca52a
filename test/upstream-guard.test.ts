/**
 * The per-endpoint guard (src/upstream/endpoint-guard.ts, CONTRACT.md "Resilience"), as a pure
 * object with a fake clock: the circuit's table (closed → open after N failures in a row → half-open
 * for one trial after the pause → closed or open again), the bulkhead (slots, a bounded queue, a
 * bounded wait, a client's abort dropping a waiter), and the retry budget.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CIRCUIT, type CallOutcome, EndpointGuard, type GuardLimits, type ResilienceObserver, RETRY_BUDGET_RATIO } from '../src/upstream/endpoint-guard.js';
import { UpstreamError } from '../src/upstream/errors.js';

const LIMITS: GuardLimits = { maxInFlight: 2, maxQueue: 1, queueWaitMs: 50, circuitFailures: 3, circuitPauseMs: 1_000 };

class Recorder implements ResilienceObserver {
  readonly events: string[] = [];
  inFlight(endpoint: string, delta: 1 | -1): void {
    this.events.push(`${endpoint} in ${delta}`);
  }
  rejected(endpoint: string, reason: 'busy' | 'circuit_open'): void {
    this.events.push(`${endpoint} rejected ${reason}`);
  }
  circuitState(endpoint: string, state: 0 | 1 | 2): void {
    this.events.push(`${endpoint} state ${state}`);
  }
  retried(endpoint: string): void {
    this.events.push(`${endpoint} retried`);
  }
}

function guardWithClock(limits: GuardLimits = LIMITS) {
  const clock = { now: 0 };
  const observer = new Recorder();
  const changes: string[] = [];
  const guard = new EndpointGuard('EP0032', 'BFF_BASE_URL', limits, observer, (ep, _service, from, to) => changes.push(`${ep} ${from}->${to}`), () => clock.now);
  return { guard, clock, observer, changes };
}

/** Runs one call through the guard synchronously: enter (must be admitted at once) then leave. */
function call(guard: EndpointGuard, outcome: CallOutcome): 'ran' | string {
  try {
    const wait = guard.enter();
    assert.equal(wait, undefined, 'a free slot admits at once');
  } catch (error) {
    return (error as UpstreamError).code;
  }
  guard.leave(outcome);
  return 'ran';
}

describe('circuit breaker', () => {
  // Each row: the steps (advance the clock, then a call with its outcome) and what each call got.
  const rows: { name: string; steps: [advanceMs: number, outcome: CallOutcome, expect: string][]; state: number }[] = [
    {
      name: 'opens after 3 failures in a row and refuses at once',
      steps: [[0, 'failed', 'ran'], [0, 'failed', 'ran'], [0, 'failed', 'ran'], [0, 'answered', 'upstream_circuit_open'], [999, 'answered', 'upstream_circuit_open']],
      state: CIRCUIT.open,
    },
    {
      name: 'an answer in between resets the count (4xx and 500 are answers)',
      steps: [[0, 'failed', 'ran'], [0, 'failed', 'ran'], [0, 'answered', 'ran'], [0, 'failed', 'ran'], [0, 'failed', 'ran'], [0, 'answered', 'ran']],
      state: CIRCUIT.closed,
    },
    {
      name: 'after the pause one trial call runs; its answer closes the circuit',
      steps: [[0, 'failed', 'ran'], [0, 'failed', 'ran'], [0, 'failed', 'ran'], [1_000, 'answered', 'ran'], [0, 'answered', 'ran']],
      state: CIRCUIT.closed,
    },
    {
      name: 'a failed trial opens it again for a new pause',
      steps: [[0, 'failed', 'ran'], [0, 'failed', 'ran'], [0, 'failed', 'ran'], [1_000, 'failed', 'ran'], [500, 'answered', 'upstream_circuit_open'], [500, 'answered', 'ran']],
      state: CIRCUIT.closed,
    },
    {
      name: 'a trial cancelled by its client leaves the next call to try at once',
      steps: [[0, 'failed', 'ran'], [0, 'failed', 'ran'], [0, 'failed', 'ran'], [1_000, 'neutral', 'ran'], [0, 'answered', 'ran']],
      state: CIRCUIT.closed,
    },
    {
      name: 'neutral outcomes (a client gone) never count',
      steps: [[0, 'neutral', 'ran'], [0, 'neutral', 'ran'], [0, 'neutral', 'ran'], [0, 'neutral', 'ran'], [0, 'answered', 'ran']],
      state: CIRCUIT.closed,
    },
  ];
  for (const row of rows) {
    test(row.name, () => {
      const { guard, clock } = guardWithClock();
      row.steps.forEach(([advance, outcome, expected], i) => {
        clock.now += advance;
        assert.equal(call(guard, outcome), expected, `step ${i + 1}`);
      });
      assert.equal(guard.state, row.state);
      assert.equal(guard.inFlight, 0);
    });
  }

  test('while the trial runs every other call is refused; the refusal says Retry-After and the EP code', () => {
    const { guard, clock, changes, observer } = guardWithClock();
    for (let i = 0; i < 3; i++) call(guard, 'failed');
    clock.now += 400;
    const early = (() => {
      try {
        guard.enter();
      } catch (error) {
        return error as UpstreamError;
      }
      return undefined;
    })();
    assert.ok(early instanceof UpstreamError);
    assert.equal(early.code, 'upstream_circuit_open');
    assert.equal(early.status, 503);
    assert.equal(early.retryAfterSeconds, 1, 'the 600 ms left, rounded up to seconds');
    assert.equal(early.endpoint, 'EP0032');
    clock.now += 600;
    assert.equal(guard.enter(), undefined, 'the trial goes');
    assert.equal(guard.state, CIRCUIT.halfOpen);
    assert.throws(() => guard.enter(), (e: unknown) => e instanceof UpstreamError && e.code === 'upstream_circuit_open');
    guard.leave('answered');
    assert.deepEqual(changes, ['EP0032 0->1', 'EP0032 1->2', 'EP0032 2->0']);
    assert.ok(observer.events.includes('EP0032 state 1'));
    assert.equal(observer.events.filter((e) => e === 'EP0032 rejected circuit_open').length, 2);
  });

  test('UPSTREAM_CIRCUIT_FAILURES=0 turns the breaker off', () => {
    const { guard } = guardWithClock({ ...LIMITS, circuitFailures: 0 });
    for (let i = 0; i < 20; i++) assert.equal(call(guard, 'failed'), 'ran');
    assert.equal(guard.state, CIRCUIT.closed);
  });
});

describe('bulkhead', () => {
  test('slots, then one waiter, then busy at once; a freed slot goes to the waiter', async () => {
    const { guard, observer } = guardWithClock();
    assert.equal(guard.enter(), undefined);
    assert.equal(guard.enter(), undefined);
    const waiting = guard.enter();
    assert.ok(waiting instanceof Promise);
    assert.equal(guard.queued, 1);
    assert.throws(() => guard.enter(), (e: unknown) => e instanceof UpstreamError && e.code === 'upstream_busy' && e.retryAfterSeconds === 1);
    guard.leave('answered');
    await waiting;
    assert.equal(guard.inFlight, 2);
    assert.equal(guard.queued, 0);
    guard.leave('answered');
    guard.leave('answered');
    assert.equal(guard.inFlight, 0);
    assert.equal(observer.events.filter((e) => e === 'EP0032 in 1').length, 3);
    assert.equal(observer.events.filter((e) => e === 'EP0032 in -1').length, 3);
    assert.ok(observer.events.includes('EP0032 rejected busy'));
  });

  test('a waiter whose wait runs out is refused busy and leaves the queue', async () => {
    const { guard } = guardWithClock();
    guard.enter();
    guard.enter();
    const waiting = guard.enter() as Promise<void>;
    await assert.rejects(waiting, (e: unknown) => e instanceof UpstreamError && e.code === 'upstream_busy' && e.endpoint === 'EP0032');
    assert.equal(guard.queued, 0);
    guard.leave('answered');
    assert.equal(guard.inFlight, 1, 'the freed slot went to nobody');
    guard.leave('answered');
  });

  test("a client's abort drops its waiter at once (client_aborted), and the slot is not given to it", async () => {
    const { guard } = guardWithClock({ ...LIMITS, queueWaitMs: 10_000 });
    guard.enter();
    guard.enter();
    const controller = new AbortController();
    const waiting = guard.enter(controller.signal) as Promise<void>;
    controller.abort();
    await assert.rejects(waiting, (e: unknown) => e instanceof UpstreamError && e.code === 'client_aborted');
    assert.equal(guard.queued, 0);
    guard.leave('answered');
    guard.leave('answered');
    assert.equal(guard.inFlight, 0);
  });

  test('an open circuit refuses before queueing', () => {
    const { guard } = guardWithClock({ ...LIMITS, maxInFlight: 5 });
    for (let i = 0; i < 3; i++) call(guard, 'failed');
    assert.throws(() => guard.enter(), (e: unknown) => e instanceof UpstreamError && e.code === 'upstream_circuit_open');
    assert.equal(guard.queued, 0);
  });
});

describe('refuseEarly: the refusal a new call would get, with nothing taken or changed', () => {
  // [situation, set-up, expected refusal or undefined, state after]
  const cases: [string, (g: ReturnType<typeof guardWithClock>) => void, string | undefined][] = [
    ['closed, free slots', () => undefined, undefined],
    ['closed, slots taken, queue free', ({ guard }) => void [guard.enter(), guard.enter()], undefined],
    ['closed, slots and queue taken', ({ guard }) => void [guard.enter(), guard.enter(), (guard.enter() as Promise<void>).catch(() => undefined)], 'upstream_busy'],
    ['open, within its pause', ({ guard }) => void [0, 1, 2].forEach(() => call(guard, 'failed')), 'upstream_circuit_open'],
    ['open, pause over (the next call is the trial)', ({ guard, clock }) => {
      for (let i = 0; i < 3; i++) call(guard, 'failed');
      clock.now += LIMITS.circuitPauseMs;
    }, undefined],
    ['half-open, trial running', ({ guard, clock }) => {
      for (let i = 0; i < 3; i++) call(guard, 'failed');
      clock.now += LIMITS.circuitPauseMs;
      guard.enter();
    }, 'upstream_circuit_open'],
  ];
  for (const [situation, setUp, expected] of cases) {
    test(`${situation} → ${expected ?? 'no refusal'}`, () => {
      const g = guardWithClock();
      setUp(g);
      const before = { inFlight: g.guard.inFlight, queued: g.guard.queued, state: g.guard.state };
      let refused: string | undefined;
      try {
        g.guard.refuseEarly();
      } catch (error) {
        assert.ok(error instanceof UpstreamError);
        assert.equal(error.endpoint, 'EP0032');
        assert.ok((error.retryAfterSeconds ?? 0) >= 1);
        refused = error.code;
      }
      assert.equal(refused, expected);
      assert.deepEqual({ inFlight: g.guard.inFlight, queued: g.guard.queued, state: g.guard.state }, before);
    });
  }
});

describe('retry budget', () => {
  test('one retry at the start, then one per ten first calls', () => {
    const { guard, observer } = guardWithClock();
    assert.equal(guard.tryRetry(), true);
    assert.equal(guard.tryRetry(), false);
    let retries = 0;
    for (let i = 0; i < 100; i++) {
      guard.earn();
      if (guard.tryRetry()) retries++;
    }
    assert.ok(retries <= 100 * RETRY_BUDGET_RATIO + 1, `${retries} retries for 100 calls`);
    assert.ok(retries >= 100 * RETRY_BUDGET_RATIO - 1, `${retries} retries for 100 calls`);
    assert.equal(observer.events.filter((e) => e === 'EP0032 retried').length, retries + 1);
  });
});
