/**
 * The one deadline of an upstream call (src/upstream/deadline.ts; docs/behaviour.md "Resilience",
 * "Money moves: exactly once"): the pure rules table-driven with an injected clock, and a buffered
 * call's dispatch options, which carry undici's socket limits from that deadline.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Dispatcher, Pool } from 'undici';
import { UpstreamService } from '../src/upstream/client.js';
import { connectTimeoutMs, deadlineAfter, longestCallMs, msLeft, socketLimitMs } from '../src/upstream/deadline.js';
import { PoolRegistry } from '../src/upstream/pools.js';

const LIMITS = { maxInFlight: 1, maxQueue: 1, queueWaitMs: 2_000, circuitFailures: 0, circuitPauseMs: 1 };

describe('the rules', () => {
  const longest: [string, Parameters<typeof longestCallMs>[0], number][] = [
    ['no guard: the time limit alone', { upstreamTimeoutMs: 15_000 }, 15_000],
    ['with a guard: its queue wait, then the time limit from the slot', { upstreamTimeoutMs: 15_000, upstreamLimits: LIMITS }, 17_000],
  ];
  for (const [name, times, want] of longest) test(`longestCallMs: ${name}`, () => assert.equal(longestCallMs(times), want));

  // [deadline, now, msLeft, socketLimitMs]
  const left: [number, number, number, number][] = [
    [1_000, 0, 1_000, 1_000],
    [1_000, 999.5, 0.5, 1],
    [1_000, 400.5, 599.5, 600],
    [1_000, 1_000, 0, 1],
    [1_000, 5_000, 0, 1],
  ];
  for (const [deadline, now, ms, socket] of left) {
    test(`deadline ${deadline} at ${now}: ${ms} ms left, undici's socket limit ${socket} ms (never 0, which undici reads as none)`, () => {
      assert.equal(msLeft(deadline, now), ms);
      assert.equal(socketLimitMs(deadline, now), socket);
    });
  }

  test('deadlineAfter: the time limit from the slot', () => assert.equal(deadlineAfter(15_000, 250), 15_250));

  const connect: [number, number][] = [
    [3_000, 3_000],
    [10_000, 10_000],
    [15_000, 10_000],
  ];
  for (const [timeout, want] of connect)
    test(`connectTimeoutMs(${timeout}) = ${want}`, () => assert.equal(connectTimeoutMs(timeout), want));
});

/** Pools whose dispatcher records each dispatch's options and answers 200 at once, without a socket. */
class RecordingPools extends PoolRegistry {
  readonly dispatched: Dispatcher.DispatchOptions[] = [];
  override get(): Pool {
    const pool = {
      dispatch: (options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean => {
        this.dispatched.push({ ...options });
        const controller = {} as Dispatcher.DispatchController;
        handler.onResponseStart?.(controller, 200, {}, 'OK');
        handler.onResponseEnd?.(controller, {});
        return true;
      },
    };
    return pool as unknown as Pool;
  }
}

test("a buffered call's dispatch carries undici's socket limits from its deadline, none from the pool", async () => {
  const pools = new RecordingPools(1_234, { limits: LIMITS });
  const service = new UpstreamService('BFF_BASE_URL', 'http://127.0.0.1:9', pools);
  const res = await service.request({ method: 'GET', path: '/auth/user-profile' });
  assert.equal(res.status, 200);
  const [options] = pools.dispatched;
  assert.ok(options);
  // The dispatch follows its slot within the same turn: the time left is the whole limit, less what a
  // loaded machine spends on the way (never undici's default of 300 s, never 0).
  assert.equal(options.headersTimeout, options.bodyTimeout);
  const limit = options.headersTimeout;
  assert.ok(typeof limit === 'number' && limit <= 1_234 && limit > 1_234 - 200, `socket limit ${limit}`);
});
