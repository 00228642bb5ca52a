/**
 * `SwrCache` (src/catalogue/swr-cache.ts) against the tables of its module documentation, with a fake
 * clock and mocked timers: one case (or more) per row of "How a read of key `k` goes" and of "how a refresh ends", and
 * every row of those tables has a case (the tables are read from the source, so that a row added to
 * the documentation without a case, or a case naming no row, fails).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, mock, test } from 'node:test';
import { SwrCache, type SwrEntry, type SwrOutcome } from '../src/catalogue/swr-cache.js';

const TTL_MS = 1_000;
const MAX_STALE_MS = 1_000;
const RETRY_MS = 300;
/** On the mocked timers (the wait is a timer); ages are on the fake clock. */
const REFRESH_WAIT_MS = 60;
/** How long a load that settles takes, on the mocked timers. */
const LOAD_MS = 5;
const T0 = 1_000_000;

interface Value extends SwrEntry {
  readonly n: number;
}

/** When the reads of a case are answered (see {@link Case}'s `answered`). */
type Answered = 'at once' | 'after the load' | 'after the wait';

/** How a load goes: resolves soon, never settles, fails, or fails with an answer that ends the entry. */
type Kind = 'ok' | 'hang' | 'fail' | 'gone';

class Gone extends Error {}

/** The first cells of one of the module's tables, verbatim. */
function rowsOf(source: string, from: string, to: string): string[] {
  const start = source.indexOf(from);
  const end = source.indexOf(to, start);
  assert.ok(start >= 0 && end > start, `the module documentation has the table after "${from}"`);
  return source
    .slice(start, end)
    .split('\n')
    .map((line) => /^ \* \| (.+?) \|/.exec(line)?.[1])
    .filter((cell): cell is string => cell !== undefined && !cell.startsWith('---') && cell !== 'state of `k`' && cell !== 'refresh');
}

const SOURCE = readFileSync(new URL('../src/catalogue/swr-cache.ts', import.meta.url), 'utf8');
const READ_ROWS = rowsOf(SOURCE, 'How a read of key `k` goes', 'And how a refresh ends');
const REFRESH_ROWS = rowsOf(SOURCE, 'And how a refresh ends', 'So when the whole upstream hangs');

interface Case {
  readonly table: 'read' | 'refresh';
  /** The row of the module's table the case checks (its first cell, verbatim). */
  readonly row: string;
  readonly name: string;
  /** An entry stored at `T0` (value `n: 0`). */
  readonly stored: boolean;
  /** Fake milliseconds after `T0` at which the first read is made. */
  readonly age: number;
  /** A read made first (its load of kind `kind`), then the clock moved on `then` ms. */
  readonly before?: { readonly kind: Kind; readonly then: number };
  /** Concurrent reads made, each with a load of kind `load`. */
  readonly reads: number;
  readonly load: Kind;
  readonly expect: {
    /** What every read answers: the stored entry, the loaded one, or the load's failure. */
    readonly value: 'stored' | 'loaded' | 'error';
    readonly outcomes?: readonly SwrOutcome[];
    /** Loads started after the entry was stored (the read made first included). */
    readonly loads: number;
    /**
     * When the reads are answered, on the mocked timers: `at once` (no timer has to fire), `after the
     * load` (once the load's 5 ms have passed, before `refreshWaitMs`), `after the wait` (once
     * `refreshWaitMs` has passed since the refresh started).
     */
    readonly answered: Answered;
    /** What the cache holds for the key once the loads have settled. */
    readonly holds: 'stored' | 'loaded' | 'nothing';
  };
}

const TOO_OLD = TTL_MS + MAX_STALE_MS + 500;

const CASES: readonly Case[] = [
  {
    table: 'read',
    row: 'fresh (younger than `ttlMs`)',
    name: 'answered from the cache',
    stored: true,
    age: 500,
    reads: 1,
    load: 'ok',
    expect: { value: 'stored', outcomes: ['hit'], loads: 0, answered: 'at once', holds: 'stored' },
  },
  {
    table: 'read',
    row: 'loading, nothing stored yet',
    name: 'concurrent reads share one load',
    stored: false,
    age: 0,
    reads: 5,
    load: 'ok',
    expect: {
      value: 'loaded',
      outcomes: ['inflight', 'inflight', 'inflight', 'inflight', 'miss'],
      loads: 1,
      answered: 'after the load',
      holds: 'loaded',
    },
  },
  {
    table: 'read',
    row: 'stale, younger than `ttlMs + maxStaleMs`',
    name: 'the stale entry at once, one refresh behind it (even a hung one)',
    stored: true,
    age: TTL_MS + 500,
    reads: 3,
    load: 'hang',
    expect: { value: 'stored', outcomes: ['stale', 'stale', 'stale'], loads: 1, answered: 'at once', holds: 'stored' },
  },
  {
    table: 'read',
    row: 'stale, its last refresh failed less than `retryMs` ago',
    name: 'too old, but its refresh just failed: the stale entry at once, no new load',
    stored: true,
    age: TOO_OLD,
    before: { kind: 'fail', then: RETRY_MS - 100 },
    reads: 3,
    load: 'ok',
    expect: { value: 'stored', outcomes: ['stale', 'stale', 'stale'], loads: 1, answered: 'at once', holds: 'stored' },
  },
  {
    table: 'read',
    row: 'stale, its last refresh failed less than `retryMs` ago',
    name: 'after `retryMs` a read tries again',
    stored: true,
    age: TOO_OLD,
    before: { kind: 'fail', then: RETRY_MS + 100 },
    reads: 1,
    load: 'ok',
    expect: { value: 'loaded', outcomes: ['miss'], loads: 2, answered: 'after the load', holds: 'loaded' },
  },
  {
    table: 'read',
    row: 'stale, older than `ttlMs + maxStaleMs`',
    name: 'a refresh that settles within `refreshWaitMs` is waited for',
    stored: true,
    age: TOO_OLD,
    reads: 3,
    load: 'ok',
    expect: { value: 'loaded', loads: 1, answered: 'after the load', holds: 'loaded' },
  },
  {
    table: 'read',
    row: 'stale, older than `ttlMs + maxStaleMs`',
    name: 'a hung refresh: the stale entry once the refresh is `refreshWaitMs` old',
    stored: true,
    age: TOO_OLD,
    reads: 3,
    load: 'hang',
    expect: { value: 'stored', outcomes: ['stale', 'stale', 'stale'], loads: 1, answered: 'after the wait', holds: 'stored' },
  },
  {
    table: 'read',
    row: 'stale, older than `ttlMs + maxStaleMs`',
    name: 'a refresh already `refreshWaitMs` old: the stale entry at once, no new load',
    stored: true,
    age: TOO_OLD,
    before: { kind: 'hang', then: REFRESH_WAIT_MS + 10 },
    reads: 3,
    load: 'ok',
    expect: { value: 'stored', outcomes: ['stale', 'stale', 'stale'], loads: 1, answered: 'at once', holds: 'stored' },
  },
  {
    table: 'read',
    row: 'absent',
    name: 'waits for the load',
    stored: false,
    age: 0,
    reads: 1,
    load: 'ok',
    expect: { value: 'loaded', outcomes: ['miss'], loads: 1, answered: 'after the load', holds: 'loaded' },
  },
  {
    table: 'read',
    row: 'absent',
    name: 'a failed load reaches every waiter and leaves nothing',
    stored: false,
    age: 0,
    reads: 3,
    load: 'fail',
    expect: { value: 'error', loads: 1, answered: 'after the load', holds: 'nothing' },
  },
  {
    table: 'refresh',
    row: 'succeeds',
    name: 'the refreshed entry replaces the stale one',
    stored: true,
    age: TTL_MS + 500,
    reads: 1,
    load: 'ok',
    expect: { value: 'stored', outcomes: ['stale'], loads: 1, answered: 'at once', holds: 'loaded' },
  },
  {
    table: 'refresh',
    row: 'fails, and `keepStale(error)` (default: every failure)',
    name: 'stale-if-error, behind the answer',
    stored: true,
    age: TTL_MS + 500,
    reads: 1,
    load: 'fail',
    expect: { value: 'stored', outcomes: ['stale'], loads: 1, answered: 'at once', holds: 'stored' },
  },
  {
    table: 'refresh',
    row: 'fails, and `keepStale(error)` (default: every failure)',
    name: 'stale-if-error, for reads that waited for it',
    stored: true,
    age: TOO_OLD,
    reads: 3,
    load: 'fail',
    expect: { value: 'stored', outcomes: ['stale', 'stale', 'stale'], loads: 1, answered: 'after the load', holds: 'stored' },
  },
  {
    table: 'refresh',
    row: 'fails, and not `keepStale(error)` (the catalogue: the BFF answered 404 or 410)',
    name: 'the entry is dropped behind the stale answer',
    stored: true,
    age: TTL_MS + 500,
    reads: 1,
    load: 'gone',
    expect: { value: 'stored', outcomes: ['stale'], loads: 1, answered: 'at once', holds: 'nothing' },
  },
  {
    table: 'refresh',
    row: 'fails, and not `keepStale(error)` (the catalogue: the BFF answered 404 or 410)',
    name: 'reads that waited for it get the failure',
    stored: true,
    age: TOO_OLD,
    reads: 3,
    load: 'gone',
    expect: { value: 'error', loads: 1, answered: 'after the load', holds: 'nothing' },
  },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Lets every promise that can settle without a timer settle (`setImmediate` is not mocked). */
const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
};
/** Moves the mocked timers on `ms`, then lets what they released settle. */
const pass = async (ms: number) => {
  mock.timers.tick(ms);
  await settle();
};

async function run(c: Case): Promise<void> {
  // The loads' delays and the cache's wait for a refresh run on mocked timers, the ages on a fake
  // clock: when a read is answered is a fact of the case, not of the machine's speed.
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    await runMocked(c);
  } finally {
    mock.timers.reset();
  }
}

async function runMocked(c: Case): Promise<void> {
  let clock = T0;
  const cache = new SwrCache<Value>({
    ttlMs: TTL_MS,
    max: 10,
    maxStaleMs: MAX_STALE_MS,
    retryMs: RETRY_MS,
    refreshWaitMs: REFRESH_WAIT_MS,
    keepStale: (error) => !(error instanceof Gone),
    now: () => clock,
  });
  let loads = 0;
  const loader = (kind: Kind) => async (): Promise<Value> => {
    const n = ++loads;
    if (kind === 'hang') return new Promise<Value>(() => undefined);
    await sleep(LOAD_MS);
    if (kind === 'fail') throw new Error('upstream down');
    if (kind === 'gone') throw new Gone('not found');
    return { fetchedAt: clock, n };
  };
  if (c.stored) {
    await cache.get('k', async () => ({ fetchedAt: T0, n: 0 }));
    loads = 0;
  }
  clock = T0 + c.age;
  if (c.before) {
    const first = cache.get('k', loader(c.before.kind)).catch(() => undefined);
    await pass(LOAD_MS); // the load made first settles (unless it hangs)
    await pass(REFRESH_WAIT_MS); // and a read waiting on a hung one gives up
    await first;
    clock += c.before.then;
  }
  const outcomes: SwrOutcome[] = [];
  let answers = 0;
  const reads = Array.from({ length: c.reads }, () => cache.get('k', loader(c.load), (how) => outcomes.push(how)).finally(() => answers++));
  const all = Promise.allSettled(reads);
  let answered: Answered | undefined;
  await settle();
  if (answers === c.reads) answered = 'at once';
  else {
    await pass(LOAD_MS);
    if (answers === c.reads) answered = 'after the load';
    else {
      await pass(REFRESH_WAIT_MS);
      if (answers === c.reads) answered = 'after the wait';
    }
  }
  assert.equal(answered, c.expect.answered, `${answers} of ${c.reads} reads answered`);
  const results = await all;

  for (const r of results) {
    if (c.expect.value === 'error') {
      assert.equal(r.status, 'rejected', 'the load failure reaches the read');
      continue;
    }
    assert.equal(r.status, 'fulfilled', r.status === 'rejected' ? String(r.reason) : '');
    if (r.status === 'fulfilled') assert.equal(r.value.n === 0 ? 'stored' : 'loaded', c.expect.value, `answered n=${r.value.n}`);
  }
  if (c.expect.outcomes) assert.deepEqual([...outcomes].sort(), [...c.expect.outcomes].sort());
  await pass(LOAD_MS); // loads behind the answers settle
  assert.equal(loads, c.expect.loads, 'loads started');
  const held = cache.peek('k');
  assert.equal(held === undefined ? 'nothing' : held.n === 0 ? 'stored' : 'loaded', c.expect.holds, 'what the cache holds afterwards');
}

describe('SwrCache, row by row of its module documentation (fake clock)', () => {
  test('every row of both tables has a case, and every case names a row', () => {
    assert.ok(READ_ROWS.length >= 6 && REFRESH_ROWS.length >= 3, `rows found: ${[...READ_ROWS, ...REFRESH_ROWS].join(' / ')}`);
    assert.deepEqual([...new Set(CASES.filter((c) => c.table === 'read').map((c) => c.row))].sort(), [...READ_ROWS].sort());
    assert.deepEqual([...new Set(CASES.filter((c) => c.table === 'refresh').map((c) => c.row))].sort(), [...REFRESH_ROWS].sort());
  });

  for (const c of CASES) test(`${c.row}: ${c.name}`, () => run(c));
});
