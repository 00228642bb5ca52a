/**
 * Instructions per request of the proxy's rows and of the reference's passthrough, counted by
 * valgrind's callgrind (`npm run bench:instructions`): the yardstick that a shared machine cannot move
 * the way it moves requests per second. callgrind counts the instructions the process executes, not
 * seconds, so the same build and inputs give nearly the same count whatever else the machine is doing;
 * a request's CPU cost is about proportional to it (memory stalls aside).
 *
 * Each variant ({@link variants}: a row of the load bench, or a tracing configuration of the
 * passthrough) gets a process of its own, as the load bench starts it: the proxy with `npm start`'s
 * options, `NODE_ENV=production`, metrics on, the default limits (load shedding by event-loop delay off,
 * which callgrind's slowness would set off); the reference (`reference.ts`) with its own. It runs under
 * `valgrind --tool=callgrind --instr-atstart=no` in front of the bench's upstream. After
 * `BENCH_INSTR_WARMUP` requests (4,000) the instrumentation is turned on (`callgrind_control -i on`),
 * `BENCH_INSTR_WINDOWS` windows (5) of `BENCH_INSTR_REQUESTS` requests (2,000) are sent, the counts
 * written after each; then, with no request, as long as a window (20 s at most), and written again.
 * Each window's figure is its instructions less the idle window's rate over its time, divided by its
 * requests; the variant's figure is their mean, and their lowest and highest are printed beside it:
 * work that comes in bursts (V8 compiling the code again, the collector's major cycles) falls in one
 * window of a run and not the next, up to twice the others (a run of 2,000 requests after 2,000 of
 * warm-up, as before, read 773,000 per passthrough; after 8,000 of warm-up, 522,000; after 16,000,
 * 571,000), and only a mean over many requests holds its share. The idle rate is taken off because
 * the timers' work (metrics, load-shedding samples) depends on time, and under callgrind a second
 * holds some 40 times fewer requests than at full speed. Each request takes the next of 4,096
 * client addresses (and sessions, for a row with one), 4 at a time. Every answer must have the row's
 * status, and the upstream calls of the counted windows are checked: one per request for a
 * passthrough, none for a refusal or a revalidation; for a deposit, one per request and a profile
 * fetch per session. Variants run one after the other; nothing is
 * pinned.
 *
 * callgrind counts each thread apart (`--separate-threads=yes`): the main thread, which runs the
 * JavaScript and Node.js's own work on each request, and V8's helper threads (the collector's
 * concurrent marking and sweeping, the optimising compiler). The helpers' work comes in bursts: in one
 * run of the passthrough the five windows' main thread counted 470,000, 464,000, 450,000, 448,000 and
 * 412,000 instructions per request, every thread together 589,000, 560,000, 539,000, 1,177,000 and
 * 444,000 (the fourth window's helper threads counted 1.47 billion instructions, the others' 0.07 to
 * 0.25 billion). So the main thread's count is the yardstick of a change to the request's path; every
 * thread's is printed beside it, the cost the collector and the compiler add, with its spread.
 *
 * Each figure is also given as a ratio to the reference's passthrough (the round's headline figures),
 * and each tracing, contract-check or step variant's to the passthrough at the defaults (tracing off).
 *
 * Needs `valgrind` (Debian's package). `BENCH_NODE` as for the load bench (default `24`);
 * `BENCH_INSTR_ONLY` (comma-separated words) runs the variants whose names contain one. Each variant
 * takes two to five minutes (the process runs some 40 times slower under callgrind).
 *
 * @module
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { COOKIE_NAME, clientHeaders } from './clients.js';
import {
  call,
  children,
  containerHeapOptions,
  envelopeError,
  resetUpstream,
  resolveNode,
  sleep,
  startBenchServer,
  startProxy,
  startNodeOptions,
  stop,
  upstreamCalls,
} from './harness.js';
import { PIPELINE_STEP_NAMES } from '../src/pipeline/steps.js';
import { BROWSER_ACCEPT_ENCODING } from './page-bytes.js';
import { DEPOSIT_REQUEST, DEPOSIT_UPSTREAM, PROFILE_UPSTREAM } from './scenarios/routes.js';

/** Where a run's {@link InstructionReport} goes unless `BENCH_INSTR_RESULTS` says otherwise. */
export const DEFAULT_RESULTS = 'bench/instructions.json';

/** The passthrough route and its upstream call (the load bench's passthrough row). */
export const PASSTHROUGH = { path: '/api/user/last-casino-games', upstreamPath: '/bff/games/user-last-casino-games-dl' };
/** The 503 row's route and its upstream call, which the bench upstream answers 503 (the load bench's `circuit-open` row). */
export const REFUSAL = { path: '/api/user/login-history', upstreamPath: '/bff/users/login-history' };
/** The catalogue route of the 304 row. */
export const CATALOGUE_PATH = '/api/games/list';

/**
 * What the variant's process is: the proxy, the reference proxy (`reference.ts`), or a floor of the
 * 401 (`refusal-floor.ts`): `node:http` alone, or a bare Fastify app.
 */
export type InstructionTarget = 'proxy' | 'reference' | 'floor-http' | 'floor-fastify';

/** The 401 row's variants that say what its parts cost: its request log lines, every optional step but the auth gate. */
export const REFUSAL_PARTS = {
  logLines: '401 without cookie, request log lines off (LOG_LEVEL=warn)',
  gateOnly: '401 without cookie, every optional step off but the auth gate',
} as const;

/** The floors' variants of the 401 row: what Node.js's HTTP server, then a bare Fastify app, cost that refusal. */
export const REFUSAL_FLOORS = {
  'floor-http': 'floor: node:http answering the 401',
  'floor-fastify': 'floor: Fastify answering the 401',
} as const;

/** Where a variant's process runs, for its {@link InstructionVariant.prepare}. */
export interface VariantPlace {
  /** The bench upstream's origin. */
  upstream: string;
  /** The process's port on 127.0.0.1. */
  port: number;
}

/** One configuration measured. */
export interface InstructionVariant {
  id: string;
  /**
   * `rows`: a row of the load bench; `tracing`: the passthrough with a tracing configuration;
   * `contract`: with a contract-check sample; `steps`: with one step of the pipeline turned off (what
   * that step costs a passthrough).
   */
  group: 'rows' | 'tracing' | 'contract' | 'steps';
  target: InstructionTarget;
  /** The proxy's extra environment. */
  env: Record<string, string>;
  /**
   * Pipeline steps the proxy is built without (comma-separated names of `src/pipeline/steps.ts`):
   * the process is the ledger's entry (`steps-off.ts`) instead of `dist/server.js`. Absent: `dist/server.js`.
   */
  stepsOff?: string;
  /** The method sent; absent: `GET`. */
  method?: 'GET' | 'POST';
  /** The path sent, with the headers of every request (each also gets its client address). */
  path: string;
  headers: Record<string, string>;
  /**
   * The body of a POST: `__N__` becomes a number of its own for every request of the process (from 1),
   * as the load bench's deposit row sends it (equal deposits within 5 s would be answered by the
   * double-submit guard).
   */
  body?: string;
  /** Whether each request carries the next of the 4,096 sessions. */
  session: boolean;
  /**
   * Consecutive requests that carry one client (session and address) before the next one's; absent:
   * 1, every request the next client. The deposit's is the load bench's `SESSION_BURST`.
   */
  burst?: number;
  /** The status every answer must have. */
  expect: number;
  /**
   * Upstream calls in the counted window: one per request (to `upstreamPath`), and with `perSession`
   * one call of that path per session the window begins (the deposit's profile fetch: the session's
   * user id, cached `perSessionTtlMs`, 10 s: under callgrind a session's burst can outlast it, and
   * its profile is fetched again); or none at all.
   */
  upstream: { perRequest: 1; upstreamPath: string; perSession?: string; perSessionTtlMs?: number } | { perRequest: 0 };
  /**
   * Run once the process has started, before the warm-up (opens a circuit, fetches an ETag): extra
   * headers for every request. @throws when the row cannot be set up.
   */
  prepare?: (place: VariantPlace) => Promise<Record<string, string>>;
}

/** The endpoint's circuit: `UPSTREAM_CIRCUIT_FAILURES` (default 5) failures in a row open it. */
const CIRCUIT_FAILURES = 5;

/** Opens the 503 row's circuit: the upstream answers its path 503, then requests until the proxy refuses at once. */
async function openCircuit({ upstream, port }: VariantPlace): Promise<Record<string, string>> {
  await call(`${upstream}/__bench/unavailable`, { method: 'POST', body: REFUSAL.upstreamPath });
  const headers = clientHeaders(1, true)[0] as Record<string, string>;
  for (let sent = 0; sent < CIRCUIT_FAILURES + 3; sent++) {
    const res = await call(`http://127.0.0.1:${port}${REFUSAL.path}`, { headers });
    if (res.status === 503 && envelopeError(res.text) === 'upstream_circuit_open') return {};
  }
  throw new Error(`GET ${REFUSAL.path}: the circuit did not open after ${CIRCUIT_FAILURES + 3} upstream 503s`);
}

/** The proxy's own ETag of the catalogue page, for the 304 row's `If-None-Match`. */
async function catalogueEtag({ port }: VariantPlace): Promise<Record<string, string>> {
  const res = await call(`http://127.0.0.1:${port}${CATALOGUE_PATH}`, { headers: { 'accept-encoding': BROWSER_ACCEPT_ENCODING } });
  const etag = res.header('etag');
  if (res.status !== 200 || etag === null) throw new Error(`GET ${CATALOGUE_PATH} answered ${res.status} with ETag ${String(etag)}`);
  return { 'if-none-match': etag };
}

/**
 * The variants, in the table's order: the reference's passthrough (the base of every ratio), the
 * proxy's passthrough (tracing off), its 401 without a cookie, the 401's floors (`refusal-floor.ts`:
 * the same answer from `node:http` alone and from a bare Fastify app), its 503 with the endpoint's circuit open
 * (the circuit's trial call put 10 minutes away, the most the proxy takes, so that the window counts refusals only, as at full
 * speed where a 5 s pause holds some 100,000 of them), its 304 revalidation of the cached catalogue;
 * the reference's deposit and the proxy's (the load bench's deposit row: `POST /api/payments/deposit`
 * with its DepositPayload, a new amount per request, each session for `SESSION_BURST` requests in a
 * row, so that the proxy fetches a session's profile once, at its first deposit);
 * then the passthrough at the sampling ratios of the load bench's tracing rows, exporting OTLP/HTTP
 * JSON to `collector` (the bench's collector, `…/v1/traces`) a batch at a time (512 spans; the 5 s
 * timer set aside); then the passthrough with the upstream contract checks off and on every answer
 * (every other variant runs the default sample, 0.01); then the passthrough with one step of the
 * pipeline turned off each (the request log lines, the API rate limits).
 */
export function variants(collector: string): InstructionVariant[] {
  const passthrough = {
    path: PASSTHROUGH.path,
    headers: {},
    session: true,
    expect: 200,
    upstream: { perRequest: 1, upstreamPath: PASSTHROUGH.upstreamPath },
  } as const;
  // A batch leaves when it holds 512 spans, not every 5 s: under callgrind 5 s are some 40 times fewer
  // requests than at full speed, where the sampled rows fill their batches faster than the timer.
  const exporter = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: collector, OTEL_BSP_SCHEDULE_DELAY: '600000' };
  const none = { perRequest: 0 } as const;
  const deposit = {
    ...DEPOSIT_REQUEST,
    headers: { ...DEPOSIT_REQUEST.headers },
    expect: 200,
    upstream: { perRequest: 1, upstreamPath: DEPOSIT_UPSTREAM, perSession: PROFILE_UPSTREAM, perSessionTtlMs: 10_000 },
  } as const;
  return [
    { id: 'reference passthrough', group: 'rows', target: 'reference', env: {}, ...passthrough },
    { id: 'passthrough (tracing off)', group: 'rows', target: 'proxy', env: {}, ...passthrough },
    { id: '401 without cookie', group: 'rows', target: 'proxy', env: {}, ...passthrough, session: false, expect: 401, upstream: none },
    // What stands between the 401 and its floors: the proxy without its request log lines, and with every
    // step it can be built without left out but the auth gate (no logger, no metrics, no X-Error-Ref).
    {
      id: REFUSAL_PARTS.logLines,
      group: 'rows',
      target: 'proxy',
      env: { LOG_LEVEL: 'warn' },
      ...passthrough,
      session: false,
      expect: 401,
      upstream: none,
    },
    {
      id: REFUSAL_PARTS.gateOnly,
      group: 'rows',
      target: 'proxy',
      env: {},
      stepsOff: PIPELINE_STEP_NAMES.filter((name) => name !== 'auth-gate').join(','),
      ...passthrough,
      session: false,
      expect: 401,
      upstream: none,
    },
    // The 401's floors: the proxy's answer, bytes and headers, from node:http alone and from a bare Fastify app.
    ...(['floor-http', 'floor-fastify'] as const).map((target): InstructionVariant => ({
      id: REFUSAL_FLOORS[target],
      group: 'rows',
      target,
      env: {},
      ...passthrough,
      session: false,
      expect: 401,
      upstream: none,
    })),
    {
      id: '503 circuit open',
      group: 'rows',
      target: 'proxy',
      env: { UPSTREAM_CIRCUIT_PAUSE_MS: '600000' },
      path: REFUSAL.path,
      headers: {},
      session: true,
      expect: 503,
      upstream: none,
      prepare: openCircuit,
    },
    {
      id: '304 revalidation',
      group: 'rows',
      target: 'proxy',
      // The cached page must outlive the counted windows (under callgrind, minutes): a refresh would be an upstream call in them.
      env: { CATALOGUE_CACHE_TTL_MS: '3600000' },
      path: CATALOGUE_PATH,
      headers: { 'accept-encoding': BROWSER_ACCEPT_ENCODING },
      session: false,
      expect: 304,
      upstream: none,
      prepare: catalogueEtag,
    },
    // The load bench's deposit row: each session for SESSION_BURST deposits in a row, a new amount each.
    {
      id: 'reference deposit',
      group: 'rows',
      target: 'reference',
      env: {},
      ...deposit,
      upstream: { perRequest: 1, upstreamPath: DEPOSIT_UPSTREAM },
    },
    { id: 'deposit', group: 'rows', target: 'proxy', env: {}, ...deposit },
    ...[0, 0.01, 0.1].map((ratio) => ({
      id: `parentbased_traceidratio ${ratio}`,
      group: 'tracing' as const,
      target: 'proxy' as const,
      env: { ...exporter, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: String(ratio) },
      ...passthrough,
    })),
    { id: 'every request (parentbased_always_on)', group: 'tracing', target: 'proxy', env: exporter, ...passthrough },
    // The live upstream contract checks (UPSTREAM_CONTRACT_SAMPLE), tracing off: every answer checked
    // (checks off is the ledger's `step off: contract sampling`).
    {
      id: 'contract checks on every answer (UPSTREAM_CONTRACT_SAMPLE=1)',
      group: 'contract',
      target: 'proxy',
      env: { UPSTREAM_CONTRACT_SAMPLE: '1' },
      ...passthrough,
    },
    // The ledger: one step turned off each, what it costs a passthrough (the passthrough at the
    // defaults less the variant), then the floor.
    ...ledger(passthrough),
  ];
}

/** The ledger's variants of a passthrough: its entry with every step on, each step of {@link LEDGER_STEPS} off alone, then the floor. */
function ledger(passthrough: Pick<InstructionVariant, 'path' | 'headers' | 'session' | 'expect' | 'upstream'>): InstructionVariant[] {
  // The ledger's entry with nothing left out: what the entry itself differs from dist/server.js by (nothing, if it is the same app).
  const none: InstructionVariant = { id: LEDGER_ENTRY_ID, group: 'steps', target: 'proxy', env: {}, stepsOff: '', ...passthrough };
  const steps = LEDGER_STEPS.map((step): InstructionVariant => ({
    id: `step off: ${step.name}`,
    group: 'steps',
    target: 'proxy',
    ...step.off,
    ...passthrough,
  }));
  // Every step the app can be built without, and the contract sampling: Fastify, the route and its upstream call.
  const floor: InstructionVariant = {
    id: 'floor: every optional step off',
    group: 'steps',
    target: 'proxy',
    env: { UPSTREAM_CONTRACT_SAMPLE: '0' },
    stepsOff: PIPELINE_STEP_NAMES.join(','),
    ...passthrough,
  };
  return [none, ...steps, floor];
}

/** The ledger's variant of its entry (`steps-off.ts`) with every step on: the same app as `dist/server.js`'s passthrough. */
export const LEDGER_ENTRY_ID = "step off: none (the ledger's entry, every step on)";

/** One row of the ledger: a step's name in the table, and how it is turned off (the ledger's entry's `stepsOff`, or an environment). */
export interface LedgerStep {
  name: string;
  off: Pick<InstructionVariant, 'env'> & Partial<Pick<InstructionVariant, 'stepsOff'>>;
}

/**
 * The ledger's steps, in the request's order: each step of `src/pipeline/steps.ts` left out of the
 * app (`stepsOff`; what each leaves out is its row there); the request log lines alone, whose honest
 * switch is the log level (`LOG_LEVEL=warn`: the logger stays, the info lines go), beside the whole
 * logger (`logging`); and the contract sampling, turned off by its own variable
 * (`UPSTREAM_CONTRACT_SAMPLE=0`). The auth gate cannot go whole: the passthrough's upstream call must
 * still carry the session, so its variant keeps the cookie parse and takes the cookie's value
 * unchecked (no well-formedness check, no digest, no verification, no refusal).
 */
export const LEDGER_STEPS: readonly LedgerStep[] = [
  ...PIPELINE_STEP_NAMES.flatMap((name): LedgerStep[] => {
    const own: LedgerStep = { name, off: { env: {}, stepsOff: name } };
    return name === 'logging' ? [own, { name: 'the request log lines (LOG_LEVEL=warn)', off: { env: { LOG_LEVEL: 'warn' } } }] : [own];
  }),
  { name: 'contract sampling (UPSTREAM_CONTRACT_SAMPLE=0)', off: { env: { UPSTREAM_CONTRACT_SAMPLE: '0' } } },
];

/** One measured variant: instructions per request. */
export interface InstructionResult {
  id: string;
  group: InstructionVariant['group'];
  /**
   * The main thread's instructions per request: the mean of its processes' means (each the mean of its
   * counted windows, which hold as many requests each).
   */
  perRequest: number;
  /** Each counted window's main-thread instructions per request, in order (of the first process when there are several). */
  windows?: readonly number[];
  /** Each process's main-thread instructions per request (the mean of its windows), in order; absent or one for a single process. */
  processes?: readonly number[];
  /** Every thread's instructions per request (the main thread's and V8's helpers': the collector, the compiler), the mean of its processes'. */
  allThreads?: number;
  /** Each counted window's every-thread instructions per request, in order (of the first process). */
  allWindows?: readonly number[];
  /** Each process's every-thread instructions per request. */
  allProcesses?: readonly number[];
}

/** What `npm run bench:instructions` writes to `BENCH_INSTR_RESULTS`: the run's settings and its results, from which the table is made again. */
export interface InstructionReport {
  /** The Node.js version the variants ran on. */
  node: string;
  warmup: number;
  windows: number;
  requests: number;
  processes: number;
  /** When the run ended (ISO 8601). */
  date: string;
  results: InstructionResult[];
}

/** The mean of `values`; NaN for none. */
export function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/**
 * The result of a variant measured in several processes, in order: the mean of their means, the first
 * process's windows, and each process's mean (main thread and every thread).
 * @throws when `measured` is empty.
 */
export function combineProcesses(
  variant: Pick<InstructionVariant, 'id' | 'group'>,
  measured: readonly { main: readonly number[]; all: readonly number[] }[],
): InstructionResult {
  const first = measured[0];
  if (first === undefined) throw new Error(`${variant.id}: no process measured`);
  const processes = measured.map((m) => mean(m.main));
  const allProcesses = measured.map((m) => mean(m.all));
  return {
    id: variant.id,
    group: variant.group,
    perRequest: mean(processes),
    windows: first.main,
    processes,
    allThreads: mean(allProcesses),
    allWindows: first.all,
    allProcesses,
  };
}

/** The lowest and highest of a result's main-thread figures: its processes' means when there are several, else its windows. */
function spreadOf(result: InstructionResult): readonly number[] | undefined {
  return result.processes !== undefined && result.processes.length > 1 ? result.processes : result.windows;
}

/**
 * The table of a run: each variant's main-thread instructions per request, the lowest and highest of
 * its processes' means (several processes) and of its windows, its ratio to the reference's
 * passthrough and, for a tracing, contract-check or step variant, to the passthrough at the defaults
 * (tracing off); for a step variant the step's cost, the passthrough's figure less the variant's, with
 * ± half the sum of the two spreads (processes', or windows' for a single process); then every
 * thread's instructions per request, its windows' spread and ratio to the reference's (`—` where a
 * base or a count was not measured); with both deposits, a line under the table with the proxy's
 * deposit as a ratio to the reference's deposit (main thread and every thread).
 */
export function formatInstructions(results: readonly InstructionResult[]): string {
  const reference = results.find((r) => r.id === 'reference passthrough');
  const off = results.find((r) => r.id === 'passthrough (tracing off)');
  const ratio = (value: number | undefined, of: number | undefined) =>
    value === undefined || of === undefined || !(of > 0) ? '—' : `${(value / of).toFixed(3)}×`;
  const count = (value: number | undefined) => (value === undefined ? '—' : Math.round(value).toLocaleString('en-US'));
  const spread = (values: readonly number[] | undefined) =>
    values === undefined || values.length < 2 ? '—' : `${count(Math.min(...values))}-${count(Math.max(...values))}`;
  const halfRange = (values: readonly number[] | undefined) =>
    values === undefined || values.length < 2 ? 0 : (Math.max(...values) - Math.min(...values)) / 2;
  const cost = (r: InstructionResult) => {
    if (r.group !== 'steps' || off === undefined) return '—';
    const within = halfRange(spreadOf(off)) + halfRange(spreadOf(r));
    return `${count(off.perRequest - r.perRequest)} ± ${count(within)}`;
  };
  const lines = [
    '| variant | main thread: instructions per request | processes: lowest-highest | windows: lowest-highest | vs the reference passthrough | vs the passthrough | the step costs (passthrough less variant) | every thread: instructions per request | windows: lowest-highest | vs the reference passthrough |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const versusOff = r.group !== 'rows' ? ratio(r.perRequest, off?.perRequest) : '—';
    lines.push(
      `| ${r.id} | ${count(r.perRequest)} | ${spread(r.processes)} | ${spread(r.windows)} | ${ratio(r.perRequest, reference?.perRequest)} | ${versusOff} | ${cost(r)} | ${count(r.allThreads)} | ${spread(r.allWindows)} | ${ratio(r.allThreads, reference?.allThreads)} |`,
    );
  }
  // The deposit's own base: the reference's deposit (the load bench's paired ratio of its deposit row).
  const deposit = results.find((r) => r.id === 'deposit');
  const referenceDeposit = results.find((r) => r.id === 'reference deposit');
  if (deposit !== undefined && referenceDeposit !== undefined) {
    lines.push(
      '',
      `deposit against the reference's deposit: ${ratio(deposit.perRequest, referenceDeposit.perRequest)} on the main thread, ${ratio(deposit.allThreads, referenceDeposit.allThreads)} on every thread`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The `totals:` line of a callgrind output file: instructions executed (`Ir`) while the instrumentation
 * was on (`summary:` counts from the last dump only: 0 with `--instr-atstart=no`).
 */
export function callgrindTotal(text: string): number {
  const line = /^totals:\s+(\d+)/m.exec(text);
  if (!line) throw new Error('no totals line in the callgrind output');
  return Number(line[1]);
}

/** Instructions of a dump: the main thread's (JavaScript, Node.js's own work on each request) and every thread's. */
export interface ThreadCounts {
  main: number;
  all: number;
}

/**
 * A dump's counts by callgrind thread number (`'01'`, `'02'`, …, the suffixes of its files) as
 * {@link ThreadCounts}: thread 1 is the process's first, the main thread; the others are V8's and
 * libuv's helper threads (the collector's concurrent marking and sweeping, the optimising compiler,
 * the file system pool). @throws when thread 1 is missing.
 */
export function threadCounts(byThread: Readonly<Record<string, number>>): ThreadCounts {
  const main = byThread['01'];
  if (main === undefined) throw new Error(`no main thread in the dump (threads ${Object.keys(byThread).join(', ') || 'none'})`);
  return { main, all: Object.values(byThread).reduce((a, b) => a + b, 0) };
}

/** The client (index into the headers) of request `n` of a process: the next one every `burst` requests. */
export function clientOf(variant: Pick<InstructionVariant, 'burst'>, n: number, clients: number): number {
  return Math.floor(n / (variant.burst ?? 1)) % clients;
}

/** The body of request `n` of a process (from 0): the variant's, `__N__` made `n + 1`; `undefined` without one. */
export function bodyOf(variant: Pick<InstructionVariant, 'body'>, n: number): string | undefined {
  return variant.body?.replace('__N__', String(n + 1));
}

/**
 * Sends `count` requests of `variant`, 4 at a time, request `offset + n` with the headers of its
 * client ({@link clientOf}) and its body ({@link bodyOf}); every answer must have its status.
 * @throws naming the variant and the status otherwise.
 */
export async function send(
  pool: Pool,
  variant: InstructionVariant,
  headers: readonly Record<string, string>[],
  extra: Record<string, string>,
  count: number,
  offset: number,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const n = offset + next++;
      const options = {
        method: variant.method ?? 'GET',
        path: variant.path,
        headers: { ...variant.headers, ...extra, ...headers[clientOf(variant, n, headers.length)] },
        body: bodyOf(variant, n),
      } as const;
      // A kept-alive connection the server closed while idle (the reference's 5 s keep-alive, with the
      // instrumentation being turned on between the windows) is a request sent again, once (a POST's
      // too: the server closed the connection before reading it, so it was never answered).
      const res = await pool.request(options).catch((error: unknown) => {
        if ((error as { code?: string }).code !== 'ECONNRESET' && (error as { code?: string }).code !== 'UND_ERR_SOCKET') throw error;
        return pool.request(options);
      });
      await res.body.dump();
      if (res.statusCode !== variant.expect) throw new Error(`${variant.id}: expected ${variant.expect}, got ${res.statusCode}`);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}

/**
 * The check of the counted window's upstream calls (`byPath`: the bench upstream's counts since its
 * reset) for `requests` requests from request `first` of the process: one call of the variant's path
 * per request, or none at all; with `perSession`, at least one call of that path for each session
 * whose first request is among them and at most one for each session they carry (a session begun
 * before them may have had its call already), and with `perSessionTtlMs` two more per time to live
 * in `elapsedMs` (the requests' time). @throws when they differ.
 */
export function checkUpstreamCalls(
  variant: Pick<InstructionVariant, 'id' | 'upstream' | 'burst'>,
  byPath: Readonly<Record<string, number>>,
  requests: number,
  first = 0,
  elapsedMs = 0,
): void {
  const total = Object.values(byPath).reduce((a, b) => a + b, 0);
  if (variant.upstream.perRequest === 0) {
    if (total !== 0) throw new Error(`${variant.id}: expected no upstream call, got ${JSON.stringify(byPath)}`);
    return;
  }
  const own = byPath[variant.upstream.upstreamPath] ?? 0;
  if (own !== requests)
    throw new Error(`${variant.id}: expected ${requests} calls of ${variant.upstream.upstreamPath}, got ${JSON.stringify(byPath)}`);
  const perSession = variant.upstream.perSession;
  if (perSession === undefined) return;
  const burst = variant.burst ?? 1;
  const carried = Math.floor((first + requests - 1) / burst) - Math.floor(first / burst) + 1;
  const begun = carried - (first % burst === 0 ? 0 : 1);
  // A cached entry that ends while its session's requests go on is fetched again: with 4 requests
  // in flight, at most the two sessions they span, once per time to live elapsed.
  const ttl = variant.upstream.perSessionTtlMs;
  const most = carried + (ttl === undefined ? 0 : 2 * Math.floor(elapsedMs / ttl));
  const calls = byPath[perSession] ?? 0;
  if (calls < begun || calls > most)
    throw new Error(
      `${variant.id}: expected ${begun === most ? begun : `${begun} to ${most}`} calls of ${perSession} (one per session), got ${JSON.stringify(byPath)}`,
    );
}

/** The user vgdb names its pipes after, the same for the process and for `callgrind_control`. */
const VGDB_ENV = 'LOGNAME=bench USER=bench';

/**
 * Tells callgrind in `pid` to turn its instrumentation on or off, or to write its counts so far
 * (`--dump`: `<out>.1`). @throws when `callgrind_control` does not say `OK`.
 */
function control(prefix: string, args: readonly string[], pid: number): void {
  // HOST as the proxy's (`startProxy` binds 127.0.0.1): vgdb reads it too.
  const env = {
    ...process.env,
    HOST: '127.0.0.1',
    ...Object.fromEntries(VGDB_ENV.split(' ').map((pair) => pair.split('=') as [string, string])),
  };
  const out = execFileSync('callgrind_control', [`--vgdb-prefix=${prefix}`, ...args, String(pid)], {
    encoding: 'utf8',
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (!out.includes('OK')) throw new Error(`callgrind_control ${args.join(' ')}: ${out.trim()}`);
}

/** `value` as one word of a shell command (single-quoted), whatever spaces or quotes it holds. */
function shellWord(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** How long a process under callgrind may take to start (some 40 times slower, more on a loaded machine), in milliseconds. */
const START_TIMEOUT_MS = 600_000;

/** Longest idle window measured after the requests' one (its rate is taken off), in milliseconds. */
const IDLE_WINDOW_MS = 20_000;

/**
 * The instructions of one callgrind dump by thread (`--separate-threads=yes` writes a file per thread,
 * `<name>-01`, `<name>-02`, …), once every file of it is written (60 s at most).
 */
async function dumped(dir: string, name: string): Promise<ThreadCounts> {
  const files = () => readdirSync(dir).filter((file) => file.startsWith(`${name}-`));
  const complete = (list: readonly string[]) =>
    list.length > 0 && list.every((file) => /^totals:/m.test(readFileSync(join(dir, file), 'utf8')));
  let seen: string[] = [];
  for (let waited = 0; waited < 60_000; waited += 250) {
    const now = files();
    // Complete, and no file more since the last look: the dump has written every thread's.
    if (complete(now) && now.length === seen.length) break;
    seen = now;
    await sleep(250);
  }
  if (!complete(seen)) throw new Error(`no dump ${name} of the counts (${readdirSync(dir).join(', ')})`);
  return threadCounts(
    Object.fromEntries(seen.map((file) => [file.slice(name.length + 1), callgrindTotal(readFileSync(join(dir, file), 'utf8'))])),
  );
}

/**
 * Runs `variant` under callgrind: `warmup` requests, then `windows` counted windows of `requests` each
 * and an idle one. @returns each window's instructions per request, the idle rate taken off: the main
 * thread's and every thread's.
 */
async function measure(
  variant: InstructionVariant,
  upstream: string,
  node: string,
  dir: string,
  warmup: number,
  requests: number,
  windows: number,
): Promise<{ main: number[]; all: number[] }> {
  // Each process of a variant writes files of its own: their names hold its pid.
  const slug = variant.id.replace(/[^a-z0-9.]+/gi, '-');
  const wrapper = join(dir, `${slug}.sh`);
  // vgdb, through which callgrind_control talks to the process, names its pipes after the prefix and
  // the user and HOST of the environment: both sides get the same (the proxy's environment has no user).
  const prefix = join(dir, 'vgdb');
  writeFileSync(
    wrapper,
    `#!/bin/sh\nexport ${VGDB_ENV} HOST=127.0.0.1\nexec valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes ${shellWord(`--vgdb-prefix=${prefix}`)} ${shellWord(`--callgrind-out-file=${join(dir, `${slug}.%p.out`)}`)} ${shellWord(node)} "$@"\n`,
  );
  chmodSync(wrapper, 0o755);
  // Under callgrind every turn of the event loop is some 40 times longer: the event-loop delay would shed load.
  const env = { ...variant.env, LOAD_SHED_EVENT_LOOP_DELAY_MS: '0' };
  const started =
    variant.target === 'floor-http' || variant.target === 'floor-fastify'
      ? // The proxy's Node.js options: a floor of the proxy's refusal runs as the proxy does.
        await startBenchServer(
          'refusal-floor',
          [variant.target === 'floor-http' ? 'http' : 'fastify'],
          undefined,
          [...startNodeOptions(), ...containerHeapOptions()],
          wrapper,
          START_TIMEOUT_MS,
        )
      : variant.target === 'reference'
        ? await startBenchServer(
            'reference',
            [upstream, PASSTHROUGH.upstreamPath, COOKIE_NAME],
            undefined,
            containerHeapOptions(),
            wrapper,
            START_TIMEOUT_MS,
          )
        : await startProxy(upstream, {
            workers: 1,
            cpus: undefined,
            logPath: '/dev/null',
            nodeOptions: undefined,
            node: wrapper,
            env,
            startTimeoutMs: START_TIMEOUT_MS,
            stepsOff: variant.stepsOff,
          });
  const pool = new Pool(`http://127.0.0.1:${started.port}`, { connections: 4 });
  const headers = clientHeaders(4096, variant.session);
  try {
    const extra = variant.prepare === undefined ? {} : await variant.prepare({ upstream, port: started.port });
    await send(pool, variant, headers, extra, warmup, 0);
    const pid = started.child.pid as number;
    await resetUpstream(upstream);
    control(prefix, ['-i', 'on'], pid);
    // Dumps write the counts since the one before: `<out>.1` … `<out>.<windows>` the requests' windows,
    // then an idle one.
    const spans: number[] = [];
    for (let w = 0; w < windows; w++) {
      const begun = performance.now();
      await send(pool, variant, headers, extra, requests, warmup + w * requests);
      spans.push(performance.now() - begun);
      control(prefix, ['--dump'], pid);
    }
    checkUpstreamCalls(
      variant,
      (await upstreamCalls(upstream)).byPath,
      requests * windows,
      warmup,
      spans.reduce((a, b) => a + b, 0),
    );
    const idleMs = Math.min(mean(spans), IDLE_WINDOW_MS);
    await sleep(idleMs);
    control(prefix, ['--dump'], pid);
    control(prefix, ['-i', 'off'], pid);
    const idle = await dumped(dir, `${slug}.${pid}.out.${windows + 1}`);
    // What the timers cost (metrics, load-shedding samples, caches' clocks) depends on time, and under
    // callgrind a second holds some 40 times fewer requests than at full speed: the idle window's rate
    // is taken off each requests' window.
    const out = { main: [] as number[], all: [] as number[] };
    for (let w = 0; w < windows; w++) {
      const busy = await dumped(dir, `${slug}.${pid}.out.${w + 1}`);
      const share = (spans[w] as number) / idleMs;
      out.main.push(Math.max(0, busy.main - idle.main * share) / requests);
      out.all.push(Math.max(0, busy.all - idle.all * share) / requests);
    }
    return out;
  } finally {
    await pool.close();
    await stop(started.child);
  }
}

/**
 * Whether `BENCH_INSTR_ONLY`'s words (comma-separated, here split) choose the variant `id`: no word
 * chooses every variant; a word chooses the variants whose name contains it (e.g.
 * `reference,off,ratio 0`), a word starting with `=` the variant of exactly that name (`=deposit`: the
 * proxy's deposit without the reference's).
 */
export function chosenBy(words: readonly string[], id: string): boolean {
  return words.length === 0 || words.some((word) => (word.startsWith('=') ? id === word.slice(1) : id.includes(word)));
}

/** Writes `report` as JSON to `path`, through a temporary file: a run cut short leaves the last whole report. */
function writeReport(path: string, report: InstructionReport): void {
  writeFileSync(`${path}.tmp`, `${JSON.stringify(report, null, 2)}\n`);
  renameSync(`${path}.tmp`, path);
}

async function main(): Promise<void> {
  // `--table <report>`: the table of a written report, again (the README's tables are made from it).
  if (process.argv[2] === '--table') {
    const report = JSON.parse(readFileSync(process.argv[3] ?? DEFAULT_RESULTS, 'utf8')) as InstructionReport;
    process.stdout.write(formatInstructions(report.results));
    return;
  }
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  const node = resolveNode(process.env.BENCH_NODE ?? '24');
  const warmup = Number(process.env.BENCH_INSTR_WARMUP ?? 4_000);
  const requests = Number(process.env.BENCH_INSTR_REQUESTS ?? 2_000);
  const windows = Number(process.env.BENCH_INSTR_WINDOWS ?? 5);
  const processes = Number(process.env.BENCH_INSTR_PROCESSES ?? 3);
  if (!Number.isInteger(processes) || processes < 1) throw new Error(`BENCH_INSTR_PROCESSES: a whole number from 1, not ${processes}`);
  const resultsPath = process.env.BENCH_INSTR_RESULTS ?? DEFAULT_RESULTS;
  const dir = mkdtempSync(join(tmpdir(), 'front-proxy-instr-'));
  const upstream = await startBenchServer('upstream', [], undefined);
  const collector = await startBenchServer('collector', [], undefined);
  const base = `http://127.0.0.1:${upstream.port}`;
  process.stdout.write(
    `callgrind, Node.js ${node.version}, ${warmup} requests of warm-up, then ${windows} windows of ${requests} counted per variant, 4 at a time, ${processes} process(es) per variant, interleaved\n`,
  );
  try {
    const only = (process.env.BENCH_INSTR_ONLY ?? '').split(',').filter((word) => word.length > 0);
    const chosen = variants(`http://127.0.0.1:${collector.port}/v1/traces`).filter((v) => chosenBy(only, v.id));
    const measured = new Map<InstructionVariant, { main: number[]; all: number[] }[]>(chosen.map((v) => [v, []]));
    const count = (n: number) => Math.round(n).toLocaleString('en-US');
    const report = (): InstructionReport => ({
      node: node.version,
      warmup,
      windows,
      requests,
      processes,
      date: new Date().toISOString(),
      results: chosen.filter((v) => (measured.get(v) ?? []).length > 0).map((v) => combineProcesses(v, measured.get(v) ?? [])),
    });
    // Interleaved: every variant's first process, then every variant's second…: a drift of the machine
    // over the run (another process's load on the caches, the memory bus) falls on every variant alike.
    for (let p = 1; p <= processes; p++) {
      for (const variant of chosen) {
        const one = await measure(variant, base, node.execPath, dir, warmup, requests, windows);
        measured.get(variant)?.push(one);
        process.stdout.write(
          `  ${variant.id} (${variant.method ?? 'GET'} ${variant.path}, ${variant.expect}), process ${p}/${processes}: ${count(mean(one.main))} instructions per request on the main thread (windows: ${one.main.map(count).join(', ')}), ${count(mean(one.all))} on every thread (windows: ${one.all.map(count).join(', ')})\n`,
        );
        writeReport(resultsPath, report());
      }
    }
    process.stdout.write(`\n${formatInstructions(report().results)}`);
  } finally {
    for (const child of children) await stop(child);
    if (process.env.BENCH_INSTR_KEEP !== '1') rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
