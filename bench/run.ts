/**
 * `npm run bench`: the proxy (`npm start`'s command, `node <its options> dist/server.js`, production
 * mode, default configuration) against a reference `node:http` + undici `Pool` proxy (also started with
 * the proxy's Node.js options, and with a minimal deposit of its own) and a Fastify + `@fastify/reply-from` peer,
 * all in front of one fast upstream, on loopback. Each scenario runs for a fixed time, interleaved
 * with the others, `runs` times; the table shows medians. With `taskset` the proxies under test run
 * on CPU 0 and the upstream and the load generator on CPU 1.
 *
 * Environment: `BENCH_SECONDS` (per run, default 10), `BENCH_RUNS` (default 3), `BENCH_WARMUP`
 * (seconds per row before the first run, default 3), `BENCH_CONNECTIONS` (default 50), `BENCH_TOOL`
 * (`wrk` or `autocannon`; default `wrk` when installed), `BENCH_SCENARIOS` (comma-separated
 * {@link ScenarioId}s, default all), `BENCH_PIN=0` (no pinning), `BENCH_LOG` (the proxy's log file,
 * default `/dev/null`), `BENCH_RESULTS` (default `bench/results.json`), `BENCH_PROXY_NODE_OPTIONS`
 * (more Node.js options for the proxy processes only, given on their command line, default none).
 *
 * @module
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { request } from 'undici';
import { compileScript } from './compile.js';
import { hasWrk, type LoadResult, type LoadTool, pickTool, runLoad } from './load.js';
import { cpuMicros, hasTaskset, pin, pinnedCommand, processTree, rssBytes } from './proc.js';
import { BENCH_USER_ID, type UpstreamCalls } from './upstream.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The session cookie name of the proxy in production (CONTRACT.md "Session cookie"). */
export const COOKIE_NAME = '__Host-access_token';
/** A JWT-shaped session token (never verified by the proxy; the fast upstream only checks it is sent). */
export const TOKEN =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI0MjQyIiwiZXhwIjo0MTAyNDQ0ODAwfQ.YmVuY2gtc2lnbmF0dXJlLW5vdC12ZXJpZmllZA';
const COOKIE = `theme=dark; ${COOKIE_NAME}=${TOKEN}`;
/** A DepositPayload (spec 2.7); `__N__` becomes a different amount in cents for every request. */
const DEPOSIT_BODY = `{"userId":${BENCH_USER_ID},"creditAmount":__N__,"paymentMethod":"pix","currency":"BRL","utmSource":"newsletter","utmCampaign":"spring"}`;

/** Authenticated GET routes that forward to the BFF, in order of preference. */
const PASSTHROUGH_CANDIDATES = ['/api/user/last-casino-games', '/api/payments/bank-list', '/api/user/login-history'];
const DEPOSIT_PATH = '/api/payments/deposit';
const CATALOGUE_PATH = '/api/games/list';
const PROFILE_PATH = '/api/auth/profile';
const PROFILE_UPSTREAM = '/auth/user-profile';
/** Pause after each run for the calls still in flight, in milliseconds. */
const SETTLE_MS = 300;
/** Time to live of the catalogue cache with the default configuration (`CATALOGUE_CACHE_TTL_MS`), in seconds. */
const CATALOGUE_TTL_SECONDS = 60;

/**
 * The scenarios; `redis` is the passthrough and the deposit with `REDIS_URL` (a local redis-server),
 * each against the same without; `workers` is the passthrough with `WORKERS=1` and `WORKERS=2` (both
 * with `REDIS_URL`, which more than one worker needs), unpinned.
 */
export const SCENARIOS = ['passthrough', 'deposit', 'catalogue', 'profile', 'no-cookie', 'redis', 'workers'] as const;
export type ScenarioId = (typeof SCENARIOS)[number];

/** The processes a row can load. */
export type TargetId =
  | 'proxy'
  | 'proxy-deposit'
  | 'proxy-redis'
  | 'proxy-deposit-redis'
  | 'reference'
  | 'reference-tuned'
  | 'peer'
  | 'proxy-w1'
  | 'proxy-w2';

/** The row each `redis` row is compared with: the same scenario without `REDIS_URL`. */
const REDIS_BASE: Readonly<Record<string, string>> = { 'redis/passthrough': 'passthrough/proxy', 'redis/deposit': 'deposit/proxy' };

/** Options of {@link runBench}. */
export interface BenchOptions {
  /** Seconds per measured run. */
  seconds: number;
  /** Measured runs per row (interleaved). */
  runs: number;
  /** Seconds of load per row before the first run (0 = none). */
  warmupSeconds: number;
  connections: number;
  tool: LoadTool;
  scenarios: readonly ScenarioId[];
  /** Pin with `taskset` (when present and the machine has two CPUs or more). */
  pin: boolean;
  /** Where the proxy's log lines go. */
  logPath: string;
  /** More Node.js options for the proxy processes only, on their command line after `npm start`'s (e.g. `--cpu-prof`); default none. */
  proxyNodeOptions?: string | undefined;
  /** Where the JSON report is written; `undefined` = not written. */
  resultsPath: string | undefined;
  /** Print progress and the table on standard output. */
  print: boolean;
}

/** One measured run of one row. */
export interface RunResult extends LoadResult {
  /** Highest resident memory of the target's processes during the run, in MiB. */
  rssMb: number;
  /** CPU time of the target's processes per answer, in microseconds. */
  cpuUsPerRequest: number;
  /** Calls the upstream received during the run, by path. */
  upstreamCalls: Record<string, number>;
}

/** One row of the table: a scenario against one target, its runs and their medians. */
export interface RowReport {
  id: string;
  scenario: ScenarioId;
  target: TargetId;
  method: 'GET' | 'POST';
  path: string;
  /** Whether every answer should be a 2xx. */
  success: boolean;
  pinned: boolean;
  runs: RunResult[];
  median: { rps: number; p50Ms: number; p99Ms: number; rssMb: number; cpuUsPerRequest: number };
  /** Sums over the runs. */
  total: { requests: number; non2xx: number; errors: number; upstreamCalls: number };
  /**
   * Requests/s relative to the reference passthrough (pinned rows) or to `proxy-w1` (workers rows): the
   * median over the rounds of this row's run divided by the base row's run of the same round.
   */
  ratio: number | undefined;
}

/** A target of the brief or a correctness condition, with what was measured. */
export interface Check {
  name: string;
  ok: boolean;
  /** Correctness checks fail the command; performance targets are reported only (noisy machines). */
  kind: 'correctness' | 'target';
  detail: string;
}

/** The whole report, as written to `bench/results.json`. */
export interface BenchReport {
  meta: {
    date: string;
    node: string;
    cpus: number;
    cpuModel: string;
    memoryGb: number;
    commit: string;
    tool: LoadTool;
    /** The extra Node.js options of the proxy processes, when set (`BENCH_PROXY_NODE_OPTIONS`). */
    proxyNodeOptions: string | null;
    seconds: number;
    runs: number;
    warmupSeconds: number;
    connections: number;
    pinned: boolean;
    /** Resident memory of the proxy after start and route discovery, before any load, in MiB. */
    proxyIdleRssMb: number;
    skipped: string[];
  };
  rows: RowReport[];
  checks: Check[];
  table: string;
}

interface Target {
  id: TargetId;
  child: ChildProcess;
  port: number;
  pids: number[];
}

interface RowSpec {
  id: string;
  scenario: ScenarioId;
  target: TargetId;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  success: boolean;
  pinned: boolean;
}

const children = new Set<ChildProcess>();

function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * The median over the rounds of `row[i] / base[i]`: rows run interleaved, so runs of one round share
 * the machine's state of the moment, and pairing them cancels most of a shared machine's drift.
 */
export function pairedRatio(row: readonly RunResult[], base: readonly RunResult[], pick: (r: RunResult) => number): number {
  const ratios: number[] = [];
  for (let i = 0; i < Math.min(row.length, base.length); i++) {
    ratios.push(pick(row[i] as RunResult) / pick(base[i] as RunResult));
  }
  return median(ratios);
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function track(child: ChildProcess, name: string): { stderr: () => string } {
  children.add(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  child.once('exit', () => children.delete(child));
  child.once('error', (error) => {
    stderr += `\n${name}: ${error.message}`;
  });
  return { stderr: () => stderr };
}

/**
 * Starts one of the bench's own servers (`bench/<script>.ts`, compiled to plain JavaScript first),
 * which prints `{"port":N}` when listening.
 */
async function startBenchServer(
  script: string,
  args: string[],
  cpus: string | undefined,
  nodeArgs: readonly string[] = [],
): Promise<{ child: ChildProcess; port: number }> {
  const [command, argv] = pinnedCommand(cpus, process.execPath, [...nodeArgs, compileScript(script), ...args]);
  const child = spawn(command, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_ENV: 'production' } });
  const { stderr } = track(child, script);
  const port = await new Promise<number>((resolvePort, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`${script} did not start: ${stderr()}`)), 30_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const line = /\{"port":(\d+)\}/.exec(text);
      if (line) {
        clearTimeout(timer);
        resolvePort(Number(line[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code}: ${stderr()}`));
    });
  });
  return { child, port };
}

/**
 * The Node.js options `npm start` gives the proxy (the words between `node` and `dist/server.js` in
 * package.json's `start` script, e.g. `--single-threaded-gc`): the bench runs the proxy as `npm start` does.
 */
export function startNodeOptions(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const match = /^node\s+(.*?)\s*dist\/server\.js\b/.exec(pkg.scripts?.start ?? '');
  return match?.[1] ? match[1].split(/\s+/) : [];
}

/** Starts the proxy as production would: `npm start`'s command (`node <options> dist/server.js`), default configuration. */
async function startProxy(
  upstream: string,
  workers: number,
  cpus: string | undefined,
  logPath: string,
  nodeOptions: string | undefined,
  extraEnv: Record<string, string> = {},
): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const env: Record<string, string> = {
    ...extraEnv,
    // The load comes from one session and one address, far over the per-session API limit (600 a
    // minute): that limit is off here unless BENCH_RATE_LIMIT_API_PER_MIN sets it. The other limits
    // keep their defaults (no scenario sends pre-authentication requests or beacons).
    RATE_LIMIT_API_PER_MIN: process.env.BENCH_RATE_LIMIT_API_PER_MIN ?? '0',
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'info',
    WORKERS: String(workers),
    BFF_BASE_URL: upstream,
    STICKER_API_URL: `${upstream}/sticker`,
    REFERRAL_V1_API_URL: `${upstream}/referral-v1`,
    REFERRAL_V2_API_URL: `${upstream}/referral-v2`,
    FTD_CASHBACK_VERIFY_URL: `${upstream}/ftd/verify`,
    FTD_CASHBACK_SEND_URL: `${upstream}/ftd/send`,
    ATTRIBUTION_S2S_URL: `${upstream}/attribution`,
    CACHE_PURGE_URL: `${upstream}/purge`,
  };
  const log = openSync(logPath, 'a');
  // Node options go on the command line: it takes every option NODE_OPTIONS takes, and more (`--cpu-prof`).
  const nodeArgs = [...startNodeOptions(), ...(nodeOptions ? nodeOptions.split(/\s+/).filter(Boolean) : [])];
  const [command, argv] = pinnedCommand(cpus, process.execPath, [...nodeArgs, join(ROOT, 'dist', 'server.js')]);
  const child = spawn(command, argv, { cwd: ROOT, stdio: ['ignore', log, 'pipe'], env });
  closeSync(log);
  const { stderr } = track(child, 'proxy');
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the proxy exited with ${child.exitCode}: ${stderr()}`);
    try {
      const res = await request(`http://127.0.0.1:${port}/healthz`);
      await res.body.text();
      if (res.statusCode === 200) return { child, port };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`the proxy did not answer /healthz: ${stderr()}`);
    await sleep(100);
  }
}

/**
 * A redis-server on a free loopback port with persistence off, stopped with the bench's other
 * processes; `undefined` when `redis-server` is not installed.
 * @returns its `redis://` URL.
 */
async function startRedisServer(cpus: string | undefined): Promise<string | undefined> {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  const port = await freePort();
  const [command, argv] = pinnedCommand(cpus, 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
  const child = spawn(command, argv, { cwd: os.tmpdir(), stdio: ['ignore', 'ignore', 'pipe'] });
  const { stderr } = track(child, 'redis-server');
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}: ${stderr()}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = createConnection(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) return `redis://127.0.0.1:${port}`;
    if (Date.now() > deadline) throw new Error(`redis-server did not listen: ${stderr()}`);
    await sleep(50);
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

async function call(url: string, init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {}) {
  const res = await request(url, { method: init.method ?? 'GET', headers: init.headers, body: init.body });
  return { status: res.statusCode, text: await res.body.text() };
}

async function upstreamCalls(upstream: string): Promise<UpstreamCalls> {
  return JSON.parse((await call(`${upstream}/__bench/calls`)).text) as UpstreamCalls;
}

async function resetUpstream(upstream: string): Promise<void> {
  await call(`${upstream}/__bench/reset`, { method: 'POST' });
}

function sumCalls(calls: Record<string, number>): number {
  return Object.values(calls).reduce((a, b) => a + b, 0);
}

/** Sends one request of a row and returns its status, body and the upstream calls it made. */
async function probe(upstream: string, port: number, row: Pick<RowSpec, 'method' | 'path' | 'headers' | 'body'>) {
  await resetUpstream(upstream);
  const body = row.body?.replaceAll('__N__', String(1 + Math.floor(Math.random() * 1_000_000)));
  const res = await call(`http://127.0.0.1:${port}${row.path}`, { method: row.method, headers: row.headers, body });
  return { ...res, calls: (await upstreamCalls(upstream)).byPath };
}

function isMissingRoute(res: { status: number; text: string }): boolean {
  return res.status === 404 && res.text.includes('"not_found"');
}

async function measure(
  tool: LoadTool,
  upstream: string,
  row: RowSpec,
  target: Target,
  seconds: number,
  connections: number,
  pinned: boolean,
): Promise<RunResult> {
  await resetUpstream(upstream);
  const pids = target.pids;
  let rss = rssBytes(pids);
  const sampler = setInterval(() => {
    rss = Math.max(rss, rssBytes(pids));
  }, 250);
  const cpuBefore = cpuMicros(pids);
  let load: LoadResult;
  try {
    load = await runLoad(tool, {
      url: `http://127.0.0.1:${target.port}${row.path}`,
      method: row.method,
      headers: row.headers,
      body: row.body,
      connections,
      seconds,
      cpus: pinned ? '1' : undefined,
    });
  } finally {
    clearInterval(sampler);
  }
  const cpu = cpuMicros(pids) - cpuBefore;
  rss = Math.max(rss, rssBytes(pids));
  // Calls still in flight when the load generator stopped finish before the counts are read, so that
  // they are neither lost here nor counted in the next row.
  await sleep(SETTLE_MS);
  const calls = (await upstreamCalls(upstream)).byPath;
  return {
    ...load,
    rssMb: rss / (1024 * 1024),
    cpuUsPerRequest: load.requests > 0 ? cpu / load.requests : Number.NaN,
    upstreamCalls: calls,
  };
}

function fmt(value: number | undefined, digits = 0): string {
  if (value === undefined || !Number.isFinite(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

const SCENARIO_LABELS: Record<ScenarioId, string> = {
  passthrough: 'authenticated passthrough GET',
  deposit: 'deposit POST (validated, mapped)',
  catalogue: 'cached catalogue list',
  profile: 'profile read (cached per token)',
  'no-cookie': '401 without cookie',
  redis: 'with REDIS_URL (vs without)',
  workers: 'passthrough, unpinned',
};

const TARGET_LABELS: Record<TargetId, string> = {
  proxy: 'proxy',
  'proxy-deposit': 'proxy (own process)',
  'proxy-redis': 'proxy, REDIS_URL',
  'proxy-deposit-redis': 'proxy (own process), REDIS_URL',
  reference: 'reference node:http+Pool',
  'reference-tuned': 'reference, npm start options',
  peer: 'peer Fastify+reply-from',
  'proxy-w1': 'proxy WORKERS=1',
  'proxy-w2': 'proxy WORKERS=2',
};

/** The table as text: one line per row, medians, ratio to the reference passthrough. */
export function formatTable(rows: readonly RowReport[]): string {
  const header = ['scenario', 'target', 'route', 'req/s', 'ratio', 'p50 ms', 'p99 ms', 'CPU µs/req', 'RSS MB', 'non-2xx', 'upstream calls/run'];
  const lines = rows.map((r) => [
    SCENARIO_LABELS[r.scenario],
    TARGET_LABELS[r.target],
    `${r.method} ${r.path}`,
    fmt(r.median.rps),
    r.ratio === undefined ? '-' : `${fmt(r.ratio, 2)}×`,
    fmt(r.median.p50Ms, 2),
    fmt(r.median.p99Ms, 2),
    fmt(r.median.cpuUsPerRequest, 1),
    fmt(r.median.rssMb, 0),
    String(r.total.non2xx + r.total.errors),
    r.runs.map((run) => sumCalls(run.upstreamCalls)).join(','),
  ]);
  const all = [header, ...lines];
  const widths = header.map((_, i) => Math.max(...all.map((l) => (l[i] ?? '').length)));
  const row = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [row(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(row)].join('\n');
}

function buildChecks(rows: readonly RowReport[], seconds: number): Check[] {
  const checks: Check[] = [];
  const find = (scenario: ScenarioId, target: TargetId) => rows.find((r) => r.scenario === scenario && r.target === target);
  for (const r of rows) {
    if (r.success) {
      checks.push({
        name: `${r.id}: no non-2xx answers or socket errors`,
        ok: r.total.non2xx === 0 && r.total.errors === 0,
        kind: 'correctness',
        detail: `${r.total.non2xx} non-2xx, ${r.total.errors} errors in ${r.total.requests} answers`,
      });
    }
  }
  const reference = find('passthrough', 'reference');
  const proxy = find('passthrough', 'proxy');
  if (reference && proxy) {
    const cpu = pairedRatio(proxy.runs, reference.runs, (r) => r.cpuUsPerRequest);
    const p99 = pairedRatio(proxy.runs, reference.runs, (r) => r.p99Ms);
    checks.push(
      { name: 'passthrough ≥ 0.85× the reference', ok: (proxy.ratio ?? 0) >= 0.85, kind: 'target', detail: `${fmt(proxy.ratio, 2)}×` },
      { name: 'passthrough CPU per request ≤ 1.2× the reference', ok: cpu <= 1.2, kind: 'target', detail: `${fmt(cpu, 2)}×` },
      { name: 'passthrough p99 ≤ 1.2× the reference', ok: p99 <= 1.2, kind: 'target', detail: `${fmt(p99, 2)}×` },
    );
  }
  const deposit = find('deposit', 'proxy-deposit');
  if (deposit && reference) {
    checks.push({ name: 'deposit ≥ 0.80× the reference passthrough', ok: (deposit.ratio ?? 0) >= 0.8, kind: 'target', detail: `${fmt(deposit.ratio, 2)}×` });
  }
  for (const [target, name, floor] of [
    ['proxy-redis', 'passthrough with REDIS_URL ≥ 0.95× without', 0.95],
    ['proxy-deposit-redis', 'deposit with REDIS_URL ≥ 0.80× without', 0.8],
  ] as const) {
    const row = find('redis', target);
    if (row) checks.push({ name: name, ok: (row.ratio ?? 0) >= floor, kind: 'target', detail: `${fmt(row.ratio, 2)}×` });
  }
  const catalogue = find('catalogue', 'proxy');
  if (catalogue) {
    if (reference) {
      checks.push({ name: 'catalogue ≥ 1.5× the reference passthrough', ok: (catalogue.ratio ?? 0) >= 1.5, kind: 'target', detail: `${fmt(catalogue.ratio, 2)}×` });
    }
    // Answered from the cache: no call, except the background refresh when the entry's time to live ends.
    const allowed = Math.floor(seconds / CATALOGUE_TTL_SECONDS) + 1;
    const counts = catalogue.runs.map((run) => sumCalls(run.upstreamCalls));
    checks.push({
      name: `catalogue: answered from the cache (at most ${allowed} background refresh per ${seconds} s run, ${CATALOGUE_TTL_SECONDS} s time to live)`,
      ok: counts.every((c) => c <= allowed),
      kind: 'correctness',
      detail: `${counts.join(', ')} upstream calls per run`,
    });
  }
  const profile = find('profile', 'proxy');
  if (profile) {
    // One fetch per token per 10 s: a run of S seconds sees at most floor(S / 10) + 1 fetches.
    const allowed = Math.floor(seconds / 10) + 1;
    const counts = profile.runs.map((run) => run.upstreamCalls[PROFILE_UPSTREAM] ?? 0);
    const others = profile.runs.reduce((n, run) => n + sumCalls(run.upstreamCalls) - (run.upstreamCalls[PROFILE_UPSTREAM] ?? 0), 0);
    checks.push({
      name: `profile: at most one upstream call per token per 10 s (≤ ${allowed} per ${seconds} s run, 1 token, ${profile.runs[0]?.requests ?? 0} reads)`,
      ok: counts.every((c) => c <= allowed) && others === 0,
      kind: 'correctness',
      detail: `${counts.join(', ')} calls per run`,
    });
  }
  const noCookie = find('no-cookie', 'proxy');
  if (noCookie) {
    checks.push({
      name: 'no cookie: every answer 401, nothing sent upstream',
      ok: noCookie.total.non2xx === noCookie.total.requests && noCookie.total.upstreamCalls === 0 && noCookie.total.errors === 0,
      kind: 'correctness',
      detail: `${noCookie.total.non2xx} of ${noCookie.total.requests} refused, ${noCookie.total.upstreamCalls} upstream calls`,
    });
  }
  const maxRss = (list: readonly RowReport[]) => Math.max(...list.map((r) => Math.max(...r.runs.map((run) => run.rssMb))));
  if (proxy) {
    const rss = maxRss([proxy]);
    checks.push({ name: 'proxy RSS under passthrough load ≤ 150 MB', ok: rss <= 150, kind: 'target', detail: `${fmt(rss, 0)} MB at most` });
  }
  const loaded = rows.filter((r) => r.target === 'proxy' || r.target === 'proxy-deposit');
  if (loaded.length > 1) {
    // One proxy process serves every pinned row in turn: this is its highest RSS over all of them.
    const rss = maxRss(loaded);
    checks.push({ name: 'proxy RSS over every scenario ≤ 150 MB', ok: rss <= 150, kind: 'target', detail: `${fmt(rss, 0)} MB at most` });
  }
  return checks;
}

function gitCommit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', 'src'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return dirty ? `${head}+changes` : head;
  } catch {
    return 'unknown';
  }
}

/**
 * Runs the benchmark: starts the upstream and the proxies, finds the routes, warms up, measures
 * every row `runs` times interleaved, and stops everything it started.
 *
 * @returns the report (also written to `resultsPath` when given).
 * @throws when a process does not start or a success scenario does not answer 2xx before the runs.
 */
export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const say = (text: string) => {
    if (options.print) process.stdout.write(`${text}\n`);
  };
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-if-needed.mjs')], { cwd: ROOT, stdio: 'inherit' });
  const pinned = options.pin && hasTaskset() && os.cpus().length >= 2;
  if (pinned) pin(process.pid, '1');
  const wanted = new Set(options.scenarios);
  const skipped: string[] = [];
  const targets = new Map<TargetId, Target>();
  const cpuFor = (p: boolean) => (p ? '0' : undefined);

  try {
    const up = await startBenchServer('upstream', [], pinned ? '1' : undefined);
    const upstream = `http://127.0.0.1:${up.port}`;
    const addTarget = (id: TargetId, started: { child: ChildProcess; port: number }) => {
      const pid = started.child.pid as number;
      targets.set(id, { id, child: started.child, port: started.port, pids: processTree(pid) });
    };

    const pinnedScenarios = SCENARIOS.filter((s) => s !== 'workers' && wanted.has(s));
    const rows: RowSpec[] = [];
    const auth = { cookie: COOKIE };
    say(`starting the proxy (node ${[...startNodeOptions(), 'dist/server.js'].join(' ')}, NODE_ENV=production)${pinned ? ' on CPU 0' : ''}`);
    addTarget('proxy', await startProxy(upstream, 1, cpuFor(pinned), options.logPath, options.proxyNodeOptions));
    const proxyPort = (targets.get('proxy') as Target).port;

    // Route discovery: the first passthrough candidate the proxy serves, and the upstream path it calls.
    let passthrough: { path: string; upstreamPath: string } | undefined;
    for (const path of PASSTHROUGH_CANDIDATES) {
      const res = await probe(upstream, proxyPort, { method: 'GET', path, headers: auth });
      if (isMissingRoute(res)) continue;
      if (res.status < 200 || res.status >= 300) throw new Error(`GET ${path} answered ${res.status}: ${res.text.slice(0, 300)}`);
      const upstreamPath = Object.keys(res.calls).find((p) => p !== PROFILE_UPSTREAM);
      if (!upstreamPath) continue;
      passthrough = { path, upstreamPath };
      break;
    }
    if (!passthrough) throw new Error(`the proxy serves none of ${PASSTHROUGH_CANDIDATES.join(', ')}`);
    say(`passthrough route: GET ${passthrough.path} → upstream ${passthrough.upstreamPath}`);

    const wantRow = async (spec: RowSpec, expect: 'success' | 401, port = proxyPort): Promise<boolean> => {
      const res = await probe(upstream, port, spec);
      if (isMissingRoute(res)) {
        skipped.push(`${spec.scenario}: ${spec.method} ${spec.path} is not served yet`);
        return false;
      }
      const ok = expect === 'success' ? res.status >= 200 && res.status < 300 : res.status === expect;
      if (!ok) throw new Error(`${spec.method} ${spec.path} answered ${res.status}: ${res.text.slice(0, 300)}`);
      return true;
    };

    if (wanted.has('passthrough')) {
      // `reference-tuned` is the reference with the Node.js options `npm start` gives the proxy (e.g.
      // `--single-threaded-gc`): how much of the proxy's ratio is runtime tuning rather than code.
      const tuned = startNodeOptions().length > 0 ? (['reference-tuned'] as const) : [];
      for (const target of ['proxy', 'reference', ...tuned, 'peer'] as const) {
        rows.push({ id: `passthrough/${target}`, scenario: 'passthrough', target, method: 'GET', path: passthrough.path, headers: auth, success: true, pinned });
      }
    }
    if (wanted.has('deposit')) {
      // Its own proxy process (same build and configuration): the double-submit guard remembers up to
      // 10,000 deposits, and that memory would otherwise count in every other row's RSS.
      addTarget('proxy-deposit', await startProxy(upstream, 1, cpuFor(pinned), options.logPath, options.proxyNodeOptions));
      const spec: RowSpec = {
        id: 'deposit/proxy',
        scenario: 'deposit',
        target: 'proxy-deposit',
        method: 'POST',
        path: DEPOSIT_PATH,
        headers: { ...auth, 'content-type': 'application/json' },
        body: DEPOSIT_BODY,
        success: true,
        pinned,
      };
      if (await wantRow(spec, 'success', (targets.get('proxy-deposit') as Target).port)) {
        rows.push(spec);
        // The same deposits against the reference: the least plain Node.js does for one (parse, check,
        // map, POST upstream, parse, convert, serialise), i.e. the floor of the deposit row.
        rows.push({ ...spec, id: 'deposit/reference', target: 'reference' });
      }
    }
    if (wanted.has('catalogue')) {
      const spec: RowSpec = { id: 'catalogue/proxy', scenario: 'catalogue', target: 'proxy', method: 'GET', path: CATALOGUE_PATH, headers: {}, success: true, pinned };
      if (await wantRow(spec, 'success')) rows.push(spec);
    }
    if (wanted.has('profile')) {
      const spec: RowSpec = { id: 'profile/proxy', scenario: 'profile', target: 'proxy', method: 'GET', path: PROFILE_PATH, headers: auth, success: true, pinned };
      if (await wantRow(spec, 'success')) rows.push(spec);
    }
    if (wanted.has('no-cookie')) {
      const spec: RowSpec = { id: 'no-cookie/proxy', scenario: 'no-cookie', target: 'proxy', method: 'GET', path: passthrough.path, headers: {}, success: false, pinned };
      if (await wantRow(spec, 401)) rows.push(spec);
    }
    // A local redis-server for the `redis` and `workers` rows (started with the upstream's CPU).
    let redisUrl: string | undefined;
    if (wanted.has('redis') || wanted.has('workers')) {
      const redis = await startRedisServer(pinned ? '1' : undefined);
      if (redis) {
        redisUrl = redis;
      } else {
        skipped.push('redis, workers: redis-server is not installed (WORKERS=2 needs REDIS_URL)');
      }
    }
    if (wanted.has('redis') && redisUrl) {
      const withRedis = { REDIS_URL: redisUrl };
      addTarget('proxy-redis', await startProxy(upstream, 1, cpuFor(pinned), options.logPath, options.proxyNodeOptions, withRedis));
      addTarget('proxy-deposit-redis', await startProxy(upstream, 1, cpuFor(pinned), options.logPath, options.proxyNodeOptions, withRedis));
      const base = rows.find((r) => r.id === 'passthrough/proxy');
      const deposit = rows.find((r) => r.id === 'deposit/proxy');
      if (base) rows.push({ ...base, id: 'redis/passthrough', scenario: 'redis', target: 'proxy-redis' });
      if (deposit) rows.push({ ...deposit, id: 'redis/deposit', scenario: 'redis', target: 'proxy-deposit-redis' });
      if (!base || !deposit) skipped.push('redis: runs with the passthrough and deposit scenarios');
    }
    const workerRows: RowSpec[] = wanted.has('workers') && redisUrl
      ? (['proxy-w1', 'proxy-w2'] as const).map((target) => ({
          id: `workers/${target}`,
          scenario: 'workers' as const,
          target,
          method: 'GET' as const,
          path: passthrough.path,
          headers: auth,
          success: true,
          pinned: false,
        }))
      : [];
    if (pinnedScenarios.length === 0) {
      // The proxy was started only for route discovery.
      await stop((targets.get('proxy') as Target).child);
      targets.delete('proxy');
    }

    const needs = new Set(rows.map((r) => r.target));
    if (needs.has('reference') || needs.has('peer')) {
      const args = [upstream, passthrough.upstreamPath, COOKIE_NAME];
      addTarget('reference', await startBenchServer('reference', args, cpuFor(pinned)));
      addTarget('peer', await startBenchServer('peer', args, cpuFor(pinned)));
      const checked: TargetId[] = ['reference', 'peer'];
      if (needs.has('reference-tuned')) {
        addTarget('reference-tuned', await startBenchServer('reference', args, cpuFor(pinned), startNodeOptions()));
        checked.push('reference-tuned');
      }
      for (const id of checked) {
        const res = await call(`http://127.0.0.1:${targets.get(id)?.port}${passthrough.path}`, { headers: auth });
        if (res.status !== 200) throw new Error(`${id} answered ${res.status}: ${res.text.slice(0, 200)}`);
      }
    }

    const proxyIdleRssMb = rssBytes((targets.get('proxy') as Target).pids) / (1024 * 1024);

    const measureRows = async (list: readonly RowSpec[], phasePinned: boolean): Promise<Map<string, RunResult[]>> => {
      const results = new Map<string, RunResult[]>(list.map((r) => [r.id, []]));
      if (options.warmupSeconds > 0) {
        for (const row of list) {
          say(`warm-up ${row.id} (${options.warmupSeconds} s)`);
          await measure(options.tool, upstream, row, targets.get(row.target) as Target, options.warmupSeconds, options.connections, phasePinned);
        }
      }
      for (let run = 1; run <= options.runs; run++) {
        for (const row of list) {
          const result = await measure(options.tool, upstream, row, targets.get(row.target) as Target, options.seconds, options.connections, phasePinned);
          results.get(row.id)?.push(result);
          say(
            `run ${run}/${options.runs} ${row.id}: ${fmt(result.rps)} req/s, p99 ${fmt(result.p99Ms, 2)} ms, ${fmt(result.cpuUsPerRequest, 1)} µs/req, ${result.non2xx} non-2xx`,
          );
        }
      }
      return results;
    };

    const results = await measureRows(rows, pinned);

    if (workerRows.length > 0) {
      // Unpinned phase: every process may use every CPU.
      if (pinned) {
        pin(process.pid, '0-1');
        pin(up.child.pid as number, '0-1');
      }
      for (const [id, workers] of [['proxy-w1', 1], ['proxy-w2', 2]] as const) {
        const started = await startProxy(upstream, workers, undefined, options.logPath, options.proxyNodeOptions, { REDIS_URL: redisUrl as string });
        await sleep(workers > 1 ? 500 : 0); // the workers fork after the primary answers
        addTarget(id, started);
      }
      for (const [id, list] of await measureRows(workerRows, false)) results.set(id, list);
    }

    const reference = results.get('passthrough/reference');
    const w1 = results.get('workers/proxy-w1');
    const reports: RowReport[] = [...rows, ...workerRows].map((spec) => {
      const runs = results.get(spec.id) ?? [];
      const m = (pick: (r: RunResult) => number) => median(runs.map(pick));
      const base = spec.scenario === 'workers' ? w1 : spec.scenario === 'redis' ? results.get(REDIS_BASE[spec.id] ?? '') : reference;
      const rps = m((r) => r.rps);
      return {
        id: spec.id,
        scenario: spec.scenario,
        target: spec.target,
        method: spec.method,
        path: spec.path,
        success: spec.success,
        pinned: spec.pinned,
        runs,
        median: { rps, p50Ms: m((r) => r.p50Ms), p99Ms: m((r) => r.p99Ms), rssMb: m((r) => r.rssMb), cpuUsPerRequest: m((r) => r.cpuUsPerRequest) },
        total: {
          requests: runs.reduce((n, r) => n + r.requests, 0),
          non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
          errors: runs.reduce((n, r) => n + r.errors, 0),
          upstreamCalls: runs.reduce((n, r) => n + sumCalls(r.upstreamCalls), 0),
        },
        ratio: base === undefined || !spec.success ? undefined : pairedRatio(runs, base, (r) => r.rps),
      };
    });

    const checks = buildChecks(reports, options.seconds);
    const table = formatTable(reports);
    const report: BenchReport = {
      meta: {
        date: new Date().toISOString(),
        node: process.version,
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model ?? 'unknown',
        memoryGb: Math.round(os.totalmem() / 2 ** 30),
        commit: gitCommit(),
        tool: options.tool,
        proxyNodeOptions: options.proxyNodeOptions ?? null,
        seconds: options.seconds,
        runs: options.runs,
        warmupSeconds: options.warmupSeconds,
        connections: options.connections,
        pinned,
        proxyIdleRssMb,
        skipped,
      },
      rows: reports,
      checks,
      table,
    };
    if (options.resultsPath) {
      const tmp = `${options.resultsPath}.tmp`;
      writeFileSync(tmp, `${JSON.stringify(report, null, 2)}\n`);
      renameSync(tmp, options.resultsPath);
    }
    say('');
    say(
      `${options.tool}, ${options.connections} connections, ${options.seconds} s × ${options.runs} runs (medians), ` +
        `${report.meta.cpus} CPUs (${report.meta.cpuModel}), Node ${process.version}, ${pinned ? 'proxies on CPU 0, upstream and load on CPU 1' : 'unpinned'}` +
        (options.proxyNodeOptions ? `, extra proxy Node.js options ${options.proxyNodeOptions}` : ''),
    );
    say(table);
    say('ratio: median over the rounds of requests/s relative to the reference passthrough run of the same round (workers rows: to WORKERS=1)');
    const tunedRuns = report.rows.find((r) => r.id === 'passthrough/reference-tuned')?.runs;
    const proxyRuns = report.rows.find((r) => r.id === 'passthrough/proxy')?.runs;
    if (tunedRuns && proxyRuns) {
      const rps = pairedRatio(proxyRuns, tunedRuns, (r) => r.rps);
      const cpu = pairedRatio(proxyRuns, tunedRuns, (r) => r.cpuUsPerRequest);
      say(`passthrough against the reference with npm start's Node.js options too: ${fmt(rps, 2)}× requests/s, ${fmt(cpu, 2)}× CPU per request`);
    }
    const depositRuns = report.rows.find((r) => r.id === 'deposit/proxy')?.runs;
    const referenceDepositRuns = report.rows.find((r) => r.id === 'deposit/reference')?.runs;
    if (depositRuns && referenceDepositRuns) {
      const rps = pairedRatio(depositRuns, referenceDepositRuns, (r) => r.rps);
      const cpu = pairedRatio(depositRuns, referenceDepositRuns, (r) => r.cpuUsPerRequest);
      say(`deposit against the reference's deposit: ${fmt(rps, 2)}× requests/s, ${fmt(cpu, 2)}× CPU per request`);
    }
    say(`proxy RSS before any load: ${fmt(proxyIdleRssMb, 0)} MB`);
    for (const s of skipped) say(`skipped: ${s}`);
    for (const c of checks) say(`${c.ok ? 'ok  ' : 'FAIL'} ${c.kind === 'target' ? '(target) ' : ''}${c.name}: ${c.detail}`);
    return report;
  } finally {
    await Promise.all([...children].map(stop));
  }
}

function intFromEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`${name}: expected a number ≥ ${min}, got "${raw}"`);
  return value;
}

/** The options of the command line, from the environment. */
export function optionsFromEnv(): BenchOptions {
  const seconds = intFromEnv('BENCH_SECONDS', 10, 1);
  const scenarios = (process.env.BENCH_SCENARIOS ?? SCENARIOS.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  for (const s of scenarios) {
    if (!(SCENARIOS as readonly string[]).includes(s)) throw new Error(`BENCH_SCENARIOS: unknown scenario "${s}" (known: ${SCENARIOS.join(', ')})`);
  }
  return {
    seconds,
    runs: intFromEnv('BENCH_RUNS', 3, 1),
    warmupSeconds: intFromEnv('BENCH_WARMUP', Math.min(3, seconds), 0),
    connections: intFromEnv('BENCH_CONNECTIONS', 50, 1),
    tool: pickTool(process.env.BENCH_TOOL),
    scenarios: scenarios as ScenarioId[],
    pin: process.env.BENCH_PIN !== '0',
    logPath: process.env.BENCH_LOG ?? '/dev/null',
    proxyNodeOptions: process.env.BENCH_PROXY_NODE_OPTIONS || undefined,
    resultsPath: process.env.BENCH_RESULTS ?? join(ROOT, 'bench', 'results.json'),
    print: true,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const stopAll = () => {
    for (const child of children) child.kill('SIGTERM');
    process.exit(130);
  };
  process.once('SIGINT', stopAll);
  process.once('SIGTERM', stopAll);
  try {
    const options = optionsFromEnv();
    if (options.tool === 'autocannon' && !hasWrk()) process.stdout.write('wrk is not installed: autocannon drives the load\n');
    const report = await runBench(options);
    process.exitCode = report.checks.some((c) => c.kind === 'correctness' && !c.ok) ? 1 : 0;
  } catch (error) {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
