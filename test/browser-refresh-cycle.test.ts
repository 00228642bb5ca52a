/**
 * spec 3.1 token refresh cycle (packages/browser/src/browser/refresh-cycle.ts), table-driven over time: due after
 * 6 hours, never while in progress, retry after the back-off, stale in-progress marks expire, and
 * the state survives JSON.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  initialRefreshState,
  isRefreshInProgress,
  markRefreshCompleted,
  markRefreshStarted,
  markTokenSaved,
  parseRefreshState,
  REFRESH_INTERVAL_MS,
  REFRESH_RETRY_BASE_MS,
  REFRESH_RETRY_MAX_MS,
  REFRESH_STUCK_MS,
  type RefreshState,
  refreshBackoffMs,
  serializeRefreshState,
  shouldRefreshToken,
} from '../packages/browser/src/browser/refresh-cycle.js';

const T0 = Date.UTC(2026, 0, 1, 8, 0, 0);
const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
const hms = (h: number, m: number, s: number) => h * H + m * MIN + s * S;

describe('spec 3.1 constants', () => {
  test('the refresh interval is 6 hours', () => {
    assert.equal(REFRESH_INTERVAL_MS, 6 * H);
  });
  test('back-off: 30 s doubling to 10 min', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 50].map(refreshBackoffMs), [
      30 * S,
      60 * S,
      2 * MIN,
      4 * MIN,
      8 * MIN,
      10 * MIN,
      10 * MIN,
      10 * MIN,
    ]);
    assert.equal(REFRESH_RETRY_BASE_MS, 30 * S);
    assert.equal(REFRESH_RETRY_MAX_MS, 10 * MIN);
    assert.equal(refreshBackoffMs(0), 30 * S);
  });
});

describe('shouldRefreshToken over time (spec 3.1)', () => {
  const saved = markTokenSaved(initialRefreshState(), T0);
  const rows: [label: string, state: RefreshState, elapsed: number, due: boolean][] = [
    ['initial state (no token saved), 7 h later', initialRefreshState(), hms(7, 0, 0), false],
    ['token saved, right away', saved, 0, false],
    ['token saved, 5:59:59 later', saved, hms(5, 59, 59), false],
    ['token saved, 6:00:00 later', saved, hms(6, 0, 0), true],
    ['token saved, 6:00:01 later', saved, hms(6, 0, 1), true],
    ['token saved, 30 h later', saved, hms(30, 0, 0), true],
    ['clock moved back 7 h after the save', saved, -hms(7, 0, 0), true],
    ['clock moved back 1 h after the save', saved, -hms(1, 0, 0), false],
    ['in progress since 6:00:01, checked at 6:00:02', markRefreshStarted(saved, T0 + hms(6, 0, 1)), hms(6, 0, 2), false],
    ['in progress since 6:00:01, checked at 6:01:59', markRefreshStarted(saved, T0 + hms(6, 0, 1)), hms(6, 1, 59), false],
    [
      'in progress since 6:00:01, checked at 6:02:01 (stale mark expired)',
      markRefreshStarted(saved, T0 + hms(6, 0, 1)),
      hms(6, 2, 1),
      true,
    ],
    [
      'in progress started before the save would be due, checked 1 min later',
      markRefreshStarted(saved, T0 + hms(1, 0, 0)),
      hms(1, 1, 0),
      false,
    ],
  ];
  for (const [label, state, elapsed, due] of rows) {
    test(`${label} → ${due ? 'due' : 'not due'}`, () => {
      assert.equal(shouldRefreshToken(state, T0 + elapsed), due);
    });
  }

  test('an in-progress refresh is never due while the mark is live, whatever the saved time', () => {
    const started = markRefreshStarted(markTokenSaved(initialRefreshState(), T0 - 100 * H), T0);
    for (let t = 0; t < REFRESH_STUCK_MS; t += 7 * S) assert.equal(shouldRefreshToken(started, T0 + t), false, `at +${t} ms`);
    assert.equal(isRefreshInProgress(started, T0 + REFRESH_STUCK_MS - 1), true);
    assert.equal(isRefreshInProgress(started, T0 + REFRESH_STUCK_MS), false);
  });

  test('now defaults to Date.now()', () => {
    assert.equal(shouldRefreshToken(markTokenSaved(initialRefreshState())), false);
    assert.equal(shouldRefreshToken(markTokenSaved(initialRefreshState(), Date.now() - REFRESH_INTERVAL_MS - 1)), true);
  });
});

describe('refresh completion (spec 3.1 markRefreshCompleted)', () => {
  const dueAt = T0 + hms(6, 0, 1);
  const started = markRefreshStarted(markTokenSaved(initialRefreshState(), T0), dueAt);

  test('success: the new saved time starts a new 6-hour period', () => {
    const done = markRefreshCompleted(started, true, dueAt + 2 * S);
    assert.equal(done.tokenSavedAt, dueAt + 2 * S);
    assert.equal(done.refreshStartedAt, null);
    assert.equal(done.failures, 0);
    assert.equal(done.retryAt, null);
    assert.equal(done.lastSuccess, true);
    assert.equal(shouldRefreshToken(done, dueAt + 2 * S + hms(5, 59, 59)), false);
    assert.equal(shouldRefreshToken(done, dueAt + 2 * S + hms(6, 0, 1)), true);
  });

  test('failure: the next check retries after the back-off, doubling up to 10 minutes', () => {
    let state = started;
    let end = dueAt + S;
    const expected = [30 * S, 60 * S, 2 * MIN, 4 * MIN, 8 * MIN, 10 * MIN, 10 * MIN];
    for (const [i, wait] of expected.entries()) {
      state = markRefreshCompleted(state, false, end);
      assert.equal(state.failures, i + 1);
      assert.equal(state.tokenSavedAt, T0, 'the old token stays saved');
      assert.equal(state.refreshStartedAt, null);
      assert.equal(state.lastSuccess, false);
      assert.equal(shouldRefreshToken(state, end + wait - 1), false, `failure ${i + 1}: not before ${wait} ms`);
      assert.equal(shouldRefreshToken(state, end + wait), true, `failure ${i + 1}: due after ${wait} ms`);
      end += wait;
      state = markRefreshStarted(state, end);
      assert.equal(shouldRefreshToken(state, end + S), false, 'a retry in progress is not due');
      end += S;
    }
    const recovered = markRefreshCompleted(state, true, end);
    assert.equal(recovered.failures, 0);
    assert.equal(recovered.retryAt, null);
    assert.equal(recovered.tokenSavedAt, end);
  });

  test('a login after failures starts afresh', () => {
    const failed = markRefreshCompleted(started, false, dueAt + S);
    const saved = markTokenSaved(failed, dueAt + 10 * S);
    assert.equal(saved.failures, 0);
    assert.equal(saved.retryAt, null);
    assert.equal(shouldRefreshToken(saved, dueAt + 10 * S + 31 * S), false);
  });
});

describe('the functions are pure and the state is serialisable', () => {
  test('no argument is mutated', () => {
    const s0 = Object.freeze(initialRefreshState());
    const s1 = Object.freeze(markTokenSaved(s0, T0));
    const s2 = Object.freeze(markRefreshStarted(s1, T0 + 1));
    const s3 = Object.freeze(markRefreshCompleted(s2, false, T0 + 2));
    markRefreshCompleted(s3, true, T0 + 3);
    assert.equal(s0.tokenSavedAt, null);
    assert.equal(s1.refreshStartedAt, null);
    assert.equal(s2.failures, 0);
  });

  test('a JSON round trip gives the same state', () => {
    const states = [
      initialRefreshState(),
      markTokenSaved(initialRefreshState(), T0),
      markRefreshStarted(markTokenSaved(initialRefreshState(), T0), T0 + 5),
      markRefreshCompleted(markRefreshStarted(markTokenSaved(initialRefreshState(), T0), T0 + 5), false, T0 + 9),
    ];
    for (const s of states) assert.deepEqual(parseRefreshState(serializeRefreshState(s)), s);
  });

  test('the stored state never holds a token, only times and counters', () => {
    const text = serializeRefreshState(markRefreshCompleted(markTokenSaved(initialRefreshState(), T0), true, T0 + 1));
    assert.deepEqual(Object.keys(JSON.parse(text)).sort(), [
      'failures',
      'lastCompletedAt',
      'lastSuccess',
      'refreshStartedAt',
      'retryAt',
      'tokenSavedAt',
      'version',
    ]);
  });

  test('malformed stored text gives the initial state', () => {
    for (const text of [null, '', 'nope', '[]', '{"version":2}', '{"version":1,"tokenSavedAt":"x"}', '{"version":1,"tokenSavedAt":1}']) {
      assert.deepEqual(parseRefreshState(text), initialRefreshState(), String(text));
    }
  });
});
