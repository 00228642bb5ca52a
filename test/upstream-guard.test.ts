/**
 * The per-endpoint guard (src/upstream/endpoint-guard.ts, docs/behaviour.md "Resilience"), as a pure
 * object with a fake clock: the circuit's table (closed → open after N failures in a row → half-open
 * for one trial after the pause → closed or open again), the bulkhead (slots, a bounded queue, a
 * bounded wait, a client's abort dropping a waiter), and the retry budget.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  CIRCUIT,
  type CallOutcome,
  EndpointGuard,
  type GuardLimits,
  MAX_TRIALS_WAITING,
  type ResilienceObserver,
  RETRY_BUDGET_RATIO,
  type Ticket,
} from '../src/upstream/endpoint-guard.js';
import { UpstreamError } from '../src/upstream/errors.js';

const LIMITS: GuardLimits = { maxInFlight: 2, maxQueue: 1, queueWaitMs: 50, circuitFailures: 3, circuitPauseMs: 1_000 };

/** Enters `guard` where it must answer at once (a slot or a trial, or a refusal thrown), never a wait. */
function takeSlot(guard: EndpointGuard): Ticket {
  const ticket = guard.enter();
  assert.ok(!(ticket instanceof Promise), 'the guard answered at once');
  return ticket;
}

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
  const guard = new EndpointGuard(
    'EP0032',
    'BFF_BASE_URL',
    limits,
    observer,
    (ep, _service, from, to) => changes.push(`${ep} ${from}->${to}`),
    () => clock.now,
  );
  return { guard, clock, observer, changes };
}

/** Runs one call through the guard synchronously: enter (must be admitted at once) then leave. */
function call(guard: EndpointGuard, outcome: CallOutcome): 'ran' | string {
  let ticket: Ticket | Promise<Ticket>;
  try {
    ticket = guard.enter();
  } catch (error) {
    return (error as UpstreamError).code;
  }
  assert.equal(typeof ticket, 'number', 'a free slot admits at once');
  guard.leave(outcome, ticket as Ticket);
  return 'ran';
}

describe('circuit breaker', () => {
  // Each row: the steps (advance the clock, then a call with its outcome) and what each call got.
  const rows: { name: string; steps: [advanceMs: number, outcome: CallOutcome, expect: string][]; state: number }[] = [
    {
      name: 'opens after 3 failures in a row and refuses at once',
      steps: [
        [0, 'failed', 'ran'],
        [0, 'failed', 'ran'],
        [0, 'failed', 'ran'],
        [0, 'answered', 'upstream_circuit_open'],
        [999, 'answered', 'upstream_circuit_open'],
      ],
      state: CIRCUIT.open,
    },
    {
      name: 'an answer in between resets the count (4xx and 500 are answers)',
      steps: [
        [0, 'failed', 'ran'],
        [0, 'failed', 'ran'],
        [0, 'answered', 'ran'],
        [0, 'failed', 'ran'],
        [0, 'failed', 'ran'],
        [0, 'answered', 'ran'],
      ],
      state: CIRCUIT.closed,
    },
    {
      name: 'after the pause one trial call runs; its answer closes the circuit',
      steps: [
        [0, 'failed', 'ran'],
        [0, 'failed', 'ran'],
        [0, 'failed', 'ran'],
        [1_000, 'answered', 'ran'],
        [0, 'answered', 'ran'],
      ],
      state: CIRCUIT.closed,
    },
    {
      name: 'a failed trial opens it again for a new pause',
      steps: [
        [0, 'failed', 'ran'],
        [0, 'failed', 'ran'],
        [0, 'failed', 'ran'],
        [1_000, 'failed', 'ran'],
        [500, 'answered', 'upstream_circuit_open'],
        [500, 'answered', 'ran'],
      ],
      state: CIRCUIT.closed,
    },
    {
      name: 'a trial cancelled by its client decides nothing: the next trial goes one pause after it',
      steps: [
        [0, 'failed', 'ran'],
        [0, 'failed', 'ran'],
        [0, 'failed', 'ran'],
        [1_000, 'neutral', 'ran'],
        [0, 'answered', 'upstream_circuit_open'],
        [999, 'answered', 'upstream_circuit_open'],
        [1, 'answered', 'ran'],
      ],
      state: CIRCUIT.closed,
    },
    {
      name: 'neutral outcomes (a client gone) never count',
      steps: [
        [0, 'neutral', 'ran'],
        [0, 'neutral', 'ran'],
        [0, 'neutral', 'ran'],
        [0, 'neutral', 'ran'],
        [0, 'answered', 'ran'],
      ],
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
        takeSlot(guard);
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
    const trial = guard.enter();
    assert.equal(typeof trial, 'number', 'the trial goes');
    assert.equal(guard.state, CIRCUIT.halfOpen);
    assert.throws(
      () => guard.enter(),
      (e: unknown) => e instanceof UpstreamError && e.code === 'upstream_circuit_open',
    );
    guard.leave('answered', trial as Ticket);
    assert.deepEqual(changes, ['EP0032 0->1', 'EP0032 1->2', 'EP0032 2->0']);
    assert.ok(observer.events.includes('EP0032 state 1'));
    assert.equal(observer.events.filter((e) => e === 'EP0032 rejected circuit_open').length, 2);
  });

  test('Retry-After: the pause left while open, 1 s while a trial runs', () => {
    const { guard, clock } = guardWithClock({ ...LIMITS, circuitPauseMs: 5_000 });
    const retryAfter = () => {
      try {
        takeSlot(guard);
      } catch (error) {
        assert.ok(error instanceof UpstreamError && error.code === 'upstream_circuit_open');
        return error.retryAfterSeconds;
      }
      assert.fail('refused');
    };
    for (let i = 0; i < 3; i++) call(guard, 'failed');
    assert.equal(retryAfter(), 5);
    clock.now += 1_500;
    assert.equal(retryAfter(), 4, '3.5 s left, rounded up');
    clock.now += 3_500;
    const trial = guard.enter() as Ticket;
    assert.equal(retryAfter(), 1, 'half-open: the trial may close it any moment');
    clock.now += 100;
    guard.leave('failed', trial);
    assert.equal(retryAfter(), 5, 'open again: a new pause from the failure');
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
    const first = guard.enter();
    assert.equal(typeof first, 'number');
    assert.equal(guard.enter(), first, 'calls of one closed period share its ticket');
    const waiting = guard.enter();
    assert.ok(waiting instanceof Promise);
    assert.equal(guard.queued, 1);
    assert.throws(
      () => guard.enter(),
      (e: unknown) => e instanceof UpstreamError && e.code === 'upstream_busy' && e.retryAfterSeconds === 1,
    );
    guard.leave('answered', first as Ticket);
    assert.equal(await waiting, first);
    assert.equal(guard.inFlight, 2);
    assert.equal(guard.queued, 0);
    guard.leave('answered', first as Ticket);
    guard.leave('answered', first as Ticket);
    assert.equal(guard.inFlight, 0);
    assert.equal(observer.events.filter((e) => e === 'EP0032 in 1').length, 3);
    assert.equal(observer.events.filter((e) => e === 'EP0032 in -1').length, 3);
    assert.ok(observer.events.includes('EP0032 rejected busy'));
  });

  test('a waiter whose wait runs out is refused busy and leaves the queue', async () => {
    const { guard } = guardWithClock();
    const ticket = guard.enter() as Ticket;
    takeSlot(guard);
    const waiting = guard.enter() as Promise<Ticket>;
    await assert.rejects(waiting, (e: unknown) => e instanceof UpstreamError && e.code === 'upstream_busy' && e.endpoint === 'EP0032');
    assert.equal(guard.queued, 0);
    guard.leave('answered', ticket);
    assert.equal(guard.inFlight, 1, 'the freed slot went to nobody');
    guard.leave('answered', ticket);
  });

  test("a client's abort drops its waiter at once (client_aborted), and the slot is not given to it", async () => {
    const { guard } = guardWithClock({ ...LIMITS, queueWaitMs: 10_000 });
    const ticket = guard.enter() as Ticket;
    takeSlot(guard);
    const controller = new AbortController();
    const waiting = guard.enter(controller.signal) as Promise<Ticket>;
    controller.abort();
    await assert.rejects(waiting, (e: unknown) => e instanceof UpstreamError && e.code === 'client_aborted');
    assert.equal(guard.queued, 0);
    guard.leave('answered', ticket);
    guard.leave('answered', ticket);
    assert.equal(guard.inFlight, 0);
  });

  test('an open circuit refuses before queueing', () => {
    const { guard } = guardWithClock({ ...LIMITS, maxInFlight: 5 });
    for (let i = 0; i < 3; i++) call(guard, 'failed');
    assert.throws(
      () => guard.enter(),
      (e: unknown) => e instanceof UpstreamError && e.code === 'upstream_circuit_open',
    );
    assert.equal(guard.queued, 0);
  });
});

describe('refuseEarly: the refusal a new call would get, with nothing taken or changed', () => {
  // [situation, set-up, expected refusal or undefined, state after]
  const cases: [string, (g: ReturnType<typeof guardWithClock>) => void, string | undefined][] = [
    ['closed, free slots', () => undefined, undefined],
    ['closed, slots taken, queue free', ({ guard }) => void [guard.enter(), guard.enter()], undefined],
    [
      'closed, slots and queue taken',
      ({ guard }) => void [guard.enter(), guard.enter(), (guard.enter() as Promise<Ticket>).catch(() => undefined)],
      'upstream_busy',
    ],
    ['open, within its pause', ({ guard }) => void [0, 1, 2].forEach(() => call(guard, 'failed')), 'upstream_circuit_open'],
    [
      'open, pause over (the next call is the trial)',
      ({ guard, clock }) => {
        for (let i = 0; i < 3; i++) call(guard, 'failed');
        clock.now += LIMITS.circuitPauseMs;
      },
      undefined,
    ],
    [
      'half-open, trial running',
      ({ guard, clock }) => {
        for (let i = 0; i < 3; i++) call(guard, 'failed');
        clock.now += LIMITS.circuitPauseMs;
        takeSlot(guard);
      },
      'upstream_circuit_open',
    ],
    [
      'half-open, a pause after the trial, every slot held (a call sent before it opened, the trial)',
      ({ guard, clock }) => {
        call(guard, 'failed');
        call(guard, 'failed');
        const hung = guard.enter() as Ticket;
        takeSlot(guard);
        (guard.enter() as Promise<Ticket>).catch(() => undefined);
        guard.leave('failed', hung);
        clock.now += LIMITS.circuitPauseMs;
        takeSlot(guard);
        clock.now += LIMITS.circuitPauseMs;
      },
      'upstream_circuit_open',
    ],
    [
      'half-open, a pause after the trial still waiting (one more trial)',
      ({ guard, clock }) => {
        for (let i = 0; i < 3; i++) call(guard, 'failed');
        clock.now += LIMITS.circuitPauseMs;
        takeSlot(guard);
        clock.now += LIMITS.circuitPauseMs;
      },
      undefined,
    ],
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

describe('circuit breaker and queue under concurrency (docs/behaviour.md "Resilience")', () => {
  // Calls overlap: each step starts a named call, ends one, moves the clock or checks the state.
  // `enter` expects: 'ran' (went at once), 'queued' (waits for a slot), or the refusal's code;
  // `settled` awaits a queued call: 'ran' when it got a slot, else its refusal's code.
  type Step =
    | ['enter', name: string, expect: 'ran' | 'queued' | 'upstream_circuit_open' | 'upstream_busy']
    | ['leave', name: string, outcome: CallOutcome]
    | ['settled', name: string, expect: 'ran' | 'upstream_circuit_open' | 'upstream_busy' | 'client_aborted']
    | ['wait', ms: number]
    | ['state', state: number];
  const FOUR: GuardLimits = { maxInFlight: 4, maxQueue: 4, queueWaitMs: 60_000, circuitFailures: 2, circuitPauseMs: 1_000 };
  // Four calls hang, two more queue; two of the four fail: the circuit opens.
  const OPENED: Step[] = [
    ['enter', 'a', 'ran'],
    ['enter', 'b', 'ran'],
    ['enter', 'c', 'ran'],
    ['enter', 'd', 'ran'],
    ['enter', 'q1', 'queued'],
    ['enter', 'q2', 'queued'],
    ['enter', 'q3', 'queued'],
    ['leave', 'a', 'failed'],
    ['settled', 'q1', 'ran'],
    ['leave', 'b', 'failed'],
    ['state', CIRCUIT.open],
  ];
  const rows: { name: string; steps: Step[]; sent: number }[] = [
    {
      name: 'calls waiting in the queue when the circuit opens are refused upstream_circuit_open, none sent',
      steps: [
        ...OPENED,
        ['settled', 'q2', 'upstream_circuit_open'],
        ['settled', 'q3', 'upstream_circuit_open'],
        ['enter', 'x', 'upstream_circuit_open'],
      ],
      sent: 5,
    },
    {
      name: 'a slot freed while the circuit is open goes to nobody; nothing queues while it is not closed',
      steps: [
        ...OPENED,
        ['leave', 'c', 'failed'],
        ['enter', 'x', 'upstream_circuit_open'],
        ['wait', 1_000],
        ['enter', 't', 'ran'],
        ['state', CIRCUIT.halfOpen],
        ['enter', 'y', 'upstream_circuit_open'],
      ],
      sent: 6,
    },
    {
      name: 'the circuit does not turn half-open before a slot is free: after the pause a call is refused while every slot is held',
      steps: [
        ['enter', 'a', 'ran'],
        ['enter', 'b', 'ran'],
        ['enter', 'c', 'ran'],
        ['enter', 'd', 'ran'],
        ['enter', 'q1', 'queued'],
        ['enter', 'q2', 'queued'],
        ['leave', 'a', 'failed'],
        ['settled', 'q1', 'ran'],
        ['leave', 'b', 'failed'],
        ['settled', 'q2', 'upstream_circuit_open'],
        // c, d, q1 hung, one slot free: the trial takes it. A pause later every slot is held.
        ['wait', 1_000],
        ['enter', 't1', 'ran'],
        ['wait', 1_000],
        ['enter', 'x', 'upstream_circuit_open'],
        ['state', CIRCUIT.halfOpen],
        // An old call ends (a slot is free): the next call is one more trial, and its answer closes the circuit.
        ['leave', 'c', 'failed'],
        ['state', CIRCUIT.halfOpen],
        ['enter', 't2', 'ran'],
        ['leave', 't2', 'answered'],
        ['state', CIRCUIT.closed],
        ['enter', 'z', 'ran'],
      ],
      sent: 8,
    },
    {
      name: "only the trial's own outcome moves the circuit: an old call's answer or failure does not",
      steps: [
        ...OPENED,
        ['wait', 1_000],
        ['enter', 't', 'ran'],
        ['leave', 'c', 'answered'],
        ['state', CIRCUIT.halfOpen],
        ['enter', 'x', 'upstream_circuit_open'],
        ['leave', 'd', 'failed'],
        ['state', CIRCUIT.halfOpen],
        ['leave', 't', 'answered'],
        ['state', CIRCUIT.closed],
        // q1 was sent before the circuit opened: its failure is stale, and two failures of this period are needed.
        ['leave', 'q1', 'failed'],
        ['enter', 'e', 'ran'],
        ['leave', 'e', 'failed'],
        ['state', CIRCUIT.closed],
        ['enter', 'f', 'ran'],
        ['leave', 'f', 'failed'],
        ['state', CIRCUIT.open],
      ],
      sent: 8,
    },
    {
      name: 'an old call answered while the circuit is open does not close it',
      steps: [...OPENED, ['leave', 'c', 'answered'], ['state', CIRCUIT.open], ['enter', 'x', 'upstream_circuit_open']],
      sent: 5,
    },
    {
      name: 'a trial still waiting when the next pause ends does not hold the circuit: one more per pause, at most 3 waiting',
      steps: [
        ...OPENED,
        ['leave', 'c', 'failed'],
        ['leave', 'd', 'failed'],
        ['leave', 'q1', 'failed'],
        ['wait', 1_000],
        ['enter', 't1', 'ran'],
        ['wait', 999],
        ['enter', 'x', 'upstream_circuit_open'],
        ['wait', 1],
        ['enter', 't2', 'ran'],
        ['wait', 1_000],
        ['enter', 't3', 'ran'],
        ['wait', 1_000],
        ['enter', 'y', 'upstream_circuit_open'],
        ['state', CIRCUIT.halfOpen],
        // The oldest fails: the circuit opens again; one trial is due (its pause is over), so one more goes.
        ['leave', 't1', 'failed'],
        ['state', CIRCUIT.open],
        ['enter', 't4', 'ran'],
        ['enter', 'z', 'upstream_circuit_open'],
        // The endpoint recovered: the newest trial's answer closes it; the older trials' failures are stale.
        ['leave', 't4', 'answered'],
        ['state', CIRCUIT.closed],
        ['leave', 't2', 'failed'],
        ['leave', 't3', 'failed'],
        ['state', CIRCUIT.closed],
        ['enter', 'u', 'ran'],
      ],
      sent: 10,
    },
    {
      name: 'a failed trial with no other waiting starts a new pause, from its failure',
      steps: [
        ...OPENED,
        ['wait', 1_000],
        ['enter', 't1', 'ran'],
        ['wait', 1_500],
        ['leave', 't1', 'failed'],
        ['state', CIRCUIT.open],
        ['wait', 999],
        ['enter', 'x', 'upstream_circuit_open'],
        ['wait', 1],
        ['enter', 't2', 'ran'],
        ['leave', 't2', 'answered'],
        ['state', CIRCUIT.closed],
      ],
      sent: 7,
    },
    {
      name: 'a trial whose client left decides nothing; with no other waiting the circuit reads open until the next',
      steps: [
        ...OPENED,
        ['wait', 1_000],
        ['enter', 't1', 'ran'],
        ['leave', 't1', 'neutral'],
        ['state', CIRCUIT.open],
        ['enter', 'x', 'upstream_circuit_open'],
        ['wait', 1_000],
        ['enter', 't2', 'ran'],
        ['leave', 't2', 'answered'],
        ['state', CIRCUIT.closed],
      ],
      sent: 7,
    },
  ];
  for (const row of rows) {
    test(row.name, async () => {
      const { guard, clock, observer } = guardWithClock(FOUR);
      const tickets = new Map<string, Ticket>();
      const queued = new Map<string, Promise<string>>();
      for (const [i, step] of row.steps.entries()) {
        const where = `step ${i + 1} ${JSON.stringify(step)}`;
        switch (step[0]) {
          case 'enter': {
            let got: string;
            try {
              const ticket = guard.enter();
              if (typeof ticket === 'number') {
                tickets.set(step[1], ticket);
                got = 'ran';
              } else {
                queued.set(
                  step[1],
                  ticket.then(
                    (t) => (tickets.set(step[1], t), 'ran'),
                    (e: UpstreamError) => e.code,
                  ),
                );
                got = 'queued';
              }
            } catch (error) {
              got = (error as UpstreamError).code;
            }
            assert.equal(got, step[2], where);
            break;
          }
          case 'leave': {
            const ticket = tickets.get(step[1]);
            assert.ok(ticket !== undefined, `${where}: ${step[1]} is not running`);
            tickets.delete(step[1]);
            guard.leave(step[2], ticket);
            break;
          }
          case 'settled':
            assert.equal(await queued.get(step[1]), step[2], where);
            break;
          case 'wait':
            clock.now += step[1];
            break;
          case 'state':
            assert.equal(guard.state, step[1], where);
            break;
        }
      }
      assert.equal(guard.inFlight, tickets.size, 'every running call holds one slot');
      assert.equal(observer.events.filter((e) => e === 'EP0032 in 1').length, row.sent, 'calls let go (sent upstream)');
      for (const ticket of tickets.values()) guard.leave('neutral', ticket);
      for (const pending of queued.values()) await pending;
    });
  }
});

describe('a hung endpoint at the default limits that recovers (simulated clock)', () => {
  // docs/behaviour.md "Resilience", target row: UPSTREAM_TIMEOUT_MS 15000, pause 5000, 200 clients looping
  // on one endpoint that hangs from 0 and answers again from `recoversAt`. A call sent while it hangs
  // hangs for its whole time limit (the BFF holds it), then fails; a call sent after answers in 20 ms.
  // Each client asks again 10 ms after an answer or a refusal. The clock moves in 10 ms steps, the
  // queue's waits with it (mock timers).
  const DEFAULTS: GuardLimits = { maxInFlight: 32, maxQueue: 64, queueWaitMs: 1_000, circuitFailures: 5, circuitPauseMs: 5_000 };
  const TIMEOUT_MS = 15_000;
  const STEP_MS = 10;
  for (const recoversAt of [30_000, 44_990, 52_000]) {
    test(`recovers at ${recoversAt / 1000} s: once open ≤ 1 call per pause, served again within the pause + 1 s`, async (t) => {
      t.mock.timers.enable({ apis: ['setTimeout'] });
      const clock = { now: 0 };
      // Every call let go and every circuit change, in the order the guard made them.
      const log: { at: number; what: 'sent' | 'closed' | 'open' | 'half-open' }[] = [];
      const observer: ResilienceObserver = {
        inFlight: (_e, delta) => void (delta === 1 && log.push({ at: clock.now, what: 'sent' })),
        rejected: () => undefined,
        circuitState: () => undefined,
        retried: () => undefined,
      };
      const names = ['closed', 'open', 'half-open'] as const;
      const guard = new EndpointGuard(
        'EP0032',
        'BFF_BASE_URL',
        DEFAULTS,
        observer,
        (_e, _s, _from, to) => log.push({ at: clock.now, what: names[to] }),
        () => clock.now,
      );
      interface Client {
        readyAt: number;
        running?: { ticket: Ticket; endsAt: number; outcome: CallOutcome };
        waiting: boolean;
      }
      // The clients start 10 ms apart over the first second, so that the calls' time limits and the queue's
      // waits do not all end in the same step.
      const clients: Client[] = Array.from({ length: 200 }, (_, i) => ({ readyAt: (i * STEP_MS) % 1_000, waiting: false }));
      const run = (client: Client, ticket: Ticket) => {
        const hung = clock.now < recoversAt;
        client.running = { ticket, endsAt: clock.now + (hung ? TIMEOUT_MS : 20), outcome: hung ? 'failed' : 'answered' };
      };
      let firstAnswerAfterRecovery = Number.NaN;
      const end = recoversAt + 15_000;
      for (; clock.now <= end; clock.now += STEP_MS) {
        t.mock.timers.tick(STEP_MS);
        for (const client of clients) {
          const running = client.running;
          if (running !== undefined && clock.now >= running.endsAt) {
            client.running = undefined;
            client.readyAt = clock.now + STEP_MS;
            guard.leave(running.outcome, running.ticket);
            if (running.outcome === 'answered' && Number.isNaN(firstAnswerAfterRecovery)) firstAnswerAfterRecovery = clock.now;
          }
          if (client.running !== undefined || client.waiting || clock.now < client.readyAt) continue;
          try {
            const ticket = guard.enter();
            if (typeof ticket === 'number') run(client, ticket);
            else {
              client.waiting = true;
              ticket.then(
                (given) => {
                  client.waiting = false;
                  run(client, given);
                },
                () => {
                  client.waiting = false;
                  client.readyAt = clock.now + STEP_MS;
                },
              );
            }
          } catch {
            client.readyAt = clock.now + STEP_MS;
          }
        }
        assert.ok(guard.trialsWaiting <= MAX_TRIALS_WAITING, `${guard.trialsWaiting} trials waiting at ${clock.now} ms`);
        // Let the queued calls' promises settle before the clock moves on.
        for (let i = 0; i < 3; i++) await Promise.resolve();
      }
      const opened = log.findIndex((e) => e.what === 'open');
      assert.ok(opened !== -1, 'the circuit opened');
      const openedAt = (log[opened] as { at: number }).at;
      assert.ok(openedAt >= TIMEOUT_MS && openedAt < TIMEOUT_MS + 1_000, `opened at ${openedAt} ms, when the first calls timed out`);
      // Once open and until the recovery: at most one call per pause reaches the endpoint.
      const sentWhileDown = log
        .slice(opened)
        .filter((e) => e.what === 'sent' && e.at < recoversAt)
        .map((e) => e.at);
      for (let i = 1; i < sentWhileDown.length; i++) {
        const gap = (sentWhileDown[i] as number) - (sentWhileDown[i - 1] as number);
        assert.ok(gap >= DEFAULTS.circuitPauseMs, `two calls ${gap} ms apart while open: ${sentWhileDown.join(', ')}`);
      }
      if (recoversAt > openedAt)
        assert.ok(
          sentWhileDown.length >= Math.floor((recoversAt - openedAt) / DEFAULTS.circuitPauseMs) - 1,
          `trials: ${sentWhileDown.join(', ')}`,
        );
      // Once it recovers, its calls are answered again within the pause + 1 s, and the circuit stays closed.
      const within = firstAnswerAfterRecovery - recoversAt;
      assert.ok(within <= DEFAULTS.circuitPauseMs + 1_000, `first answer ${within} ms after the recovery`);
      assert.equal(guard.state, CIRCUIT.closed);
      const lastChange = log.filter((e) => e.what !== 'sent').at(-1);
      assert.equal(lastChange?.what, 'closed');
      assert.ok(guard.trialsWaiting === 0 && guard.queued <= DEFAULTS.maxQueue);
    });
  }
});
