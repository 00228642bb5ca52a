/**
 * `npm run bench`: the proxy (`npm start`'s command, `node <its options> dist/server.js`) in the
 * configuration of a production deployment (`NODE_ENV=production`, metrics on, the default rate limits,
 * behind a trusted load balancer, logging at `info`, tracing off) against a reference `node:http` +
 * undici `Pool` proxy (also started with the proxy's Node.js options, and with a minimal deposit of its
 * own) and a Fastify + `@fastify/reply-from` peer, all in front of one fast upstream, on loopback. The
 * proxies, the reference and the peer run on one Node.js (`BENCH_NODE`, default the npm registry's
 * `node@24`, the image's line), the upstream, the collector and autocannon on the bench's own; a second
 * proxy process on the bench's own Node.js (the machine's, 20) serves the passthrough, catalogue and
 * 401 rows once more beside them. The load comes from many clients: every request takes the next
 * session cookie and the next `X-Forwarded-For` address (`clients.ts`), so that no per-session or
 * per-address limit is reached. Each scenario runs for a fixed time, interleaved with the others,
 * `runs` times; the table shows medians. With `taskset` the proxies under test run on CPU 0 and the
 * upstream, the collector, Redis and the load generator on CPU 1.
 *
 * Environment: `BENCH_NODE` (`24` by default: `npx --yes -p node@24`; a version, `current` for the
 * Node.js running the bench, or the path of a `node` binary), `BENCH_SECONDS` (per run, default 10),
 * `BENCH_RUNS` (default 3), `BENCH_WARMUP` (seconds per row before the first run, default 2),
 * `BENCH_CONNECTIONS` (default 50), `BENCH_SESSIONS` (sessions and client addresses, default 4096),
 * `BENCH_TOOL` (`wrk` or `autocannon`; default `wrk` when installed), `BENCH_SCENARIOS`
 * (comma-separated {@link ScenarioId}s, default all), `BENCH_PIN=0` (no pinning), `BENCH_LOG` (the
 * proxy's log file, default `/dev/null`), `BENCH_RESULTS` (default `bench/results.json`),
 * `BENCH_PROXY_NODE_OPTIONS` (more Node.js options for the proxy processes only, given on their command
 * line, default none), `BENCH_RATE_LIMIT_API_PER_MIN` (the proxies' `RATE_LIMIT_API_PER_MIN` when set;
 * default: the proxy's default).
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
import { clientHeaders, COOKIE_NAME, DEFAULT_SESSIONS } from './clients.js';
import type { CollectorCounts } from './collector.js';
import { compileScript } from './compile.js';
import { hasWrk, type LoadResult, type LoadTool, pickTool, runLoad } from './load.js';
import { BROWSER_ACCEPT_ENCODING, formatPageBytes, type PageBytes, pageBytes, pageBytesProblems } from './page-bytes.js';
import { cpuMicros, hasTaskset, pin, pinnedCommand, processTree, rssBytes } from './proc.js';
import { BENCH_USER_ID, type UpstreamCalls } from './upstream.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** A DepositPayload (spec 2.7); `__N__` becomes a different amount in cents for every request. */
const DEPOSIT_BODY = `{"userId":${BENCH_USER_ID},"creditAmount":__N__,"paymentMethod":"pix","currency":"BRL","utmSource":"newsletter","utmCampaign":"spring"}`;

/** Authenticated GET routes that forward to the BFF, in order of preference. */
const PASSTHROUGH_CANDIDATES = ['/api/user/last-casino-games', '/api/payments/bank-list', '/api/user/login-history'];
const DEPOSIT_PATH = '/api/payments/deposit';
const CATALOGUE_PATH = '/api/games/list';
const PROFILE_PATH = '/api/auth/profile';
const PROFILE_UPSTREAM = '/auth/user-profile';
/** The upstream call of one deposit (spec 2.7). */
const DEPOSIT_UPSTREAM = '/wallet/add-credit';
/** Time to live of a profile-cache entry (spec 8), in seconds. */
const PROFILE_TTL_SECONDS = 10;
/**
 * Consecutive requests of the profile and deposit rows that carry one session (a page load's worth).
 * The profile cache holds at most 100 tokens (spec 8), and a deposit reads the session's user id
 * from it: in strict rotation over thousands of sessions every request would find its token evicted
 * and the rows would measure a profile fetch per request, not the cache. In bursts, one session's
 * requests share one fetch, and the rotation still spreads them over every session (the per-session
 * rate is the same as without bursts).
 */
const SESSION_BURST = 64;
/**
 * Authenticated GET routes of the `circuit-open` row, in order of preference: the first the proxy
 * serves whose upstream path no other row calls. The bench upstream answers that path 503, always.
 */
const REFUSAL_CANDIDATES = ['/api/user/login-history', '/api/payments/bank-list', '/api/user/last-casino-games'];
/** The proxy's `UPSTREAM_CIRCUIT_FAILURES` default: failures in a row that open an endpoint's circuit. */
const CIRCUIT_FAILURES = 5;
/** The proxy's `UPSTREAM_CIRCUIT_PAUSE_MS` default, in seconds: an open circuit's one trial call per pause. */
const CIRCUIT_PAUSE_SECONDS = 5;
/** Peak resident memory a proxy process should stay under, in MiB (the manifest's memory request). */
const RSS_TARGET_MB = 256;
/** Pause after each run for the calls still in flight, in milliseconds. */
const SETTLE_MS = 300;
/** Time to live of the catalogue cache with the default configuration (`CATALOGUE_CACHE_TTL_MS`), in seconds. */
const CATALOGUE_TTL_SECONDS = 60;

/**
 * The scenarios; `revalidate` is the catalogue read with the `If-None-Match` of the proxy's own `ETag`
 * (a `304` each); `circuit-open` is an authenticated GET whose upstream path always answers 503, so that
 * the proxy's circuit for it opens and it refuses at once; `redis` is the passthrough and the deposit
 * with `REDIS_URL` (a local redis-server), each against the same without; `tracing` is the passthrough
 * with `OTEL_EXPORTER_OTLP_ENDPOINT` (a local collector) against the same without; `workers` is the
 * passthrough with `WORKERS=1` and `WORKERS=2` (both with `REDIS_URL`, which more than one worker
 * needs), unpinned.
 */
export const SCENARIOS = [
  'passthrough',
  'deposit',
  'catalogue',
  'revalidate',
  'profile',
  'no-cookie',
  'circuit-open',
  'redis',
  'tracing',
  'workers',
] as const;
export type ScenarioId = (typeof SCENARIOS)[number];

/**
 * The processes a row can load. `proxy-host-node` is the proxy on the bench's own Node.js (the
 * machine's) beside `proxy` on `BENCH_NODE`'s.
 */
export type TargetId =
  | 'proxy'
  | 'proxy-host-node'
  | 'proxy-deposit'
  | 'proxy-redis'
  | 'proxy-deposit-redis'
  | 'proxy-tracing'
  | 'reference'
  | 'reference-tuned'
  | 'peer'
  | 'proxy-w1'
  | 'proxy-w2';

/** The status every answer of a row should have: any 2xx (`success`), or one status. */
export type Expected = 'success' | 304 | 401 | 503;

/** The row each `redis` and `tracing` row is compared with: the same load without `REDIS_URL` or tracing. */
const PAIRED_BASE: Readonly<Record<string, string>> = {
  'redis/passthrough': 'passthrough/proxy',
  'redis/deposit': 'deposit/proxy',
  'tracing/passthrough': 'passthrough/proxy',
};

/** Options of {@link runBench}. */
export interface BenchOptions {
  /** Seconds per measured run. */
  seconds: number;
  /** Measured runs per row (interleaved). */
  runs: number;
  /** Seconds of load per row before the first run (0 = none). */
  warmupSeconds: number;
  connections: number;
  /** Sessions, and client addresses, the load is spread over (`BENCH_SESSIONS`). */
  sessions: number;
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
  /**
   * The Node.js of the proxies, the reference and the peer (`BENCH_NODE`): `current` (the one running
   * the bench: nothing is downloaded), a version for `npx --yes -p node@<version>` (e.g. `24`), or the
   * path of a `node` binary. Unless it is the bench's own version, a second proxy process on the bench's
   * own Node.js serves the passthrough, catalogue and no-cookie rows too (target `proxy-host-node`).
   */
  node: string;
}

/** One measured run of one row. */
export interface RunResult extends LoadResult {
  /** Highest resident memory of the target's processes together during the run, in MiB. */
  rssMb: number;
  /** Highest resident memory of any one of the target's processes during the run, in MiB (a cluster's worker or primary). */
  processRssMb: number;
  /** CPU time of the target's processes per answer, in microseconds. */
  cpuUsPerRequest: number;
  /**
   * Where the CPU went: CPU time per answer, in microseconds, of each process that took part: the
   * target's (`proxy`, or `proxy primary` and `proxy worker N` for a cluster; `reference`, `peer`…),
   * `upstream`, `redis-server` and `collector` when the target uses them, and the load generator
   * (`wrk`, or `autocannon (bench process)`).
   */
  cpuByProcess: Record<string, number>;
  /** Calls the upstream received during the run, by path. */
  upstreamCalls: Record<string, number>;
  /**
   * The answers of the row's route the proxy counted during the run, by status code (the difference of
   * its `front_proxy_http_request_duration_seconds_count` samples before and after); `undefined` for targets
   * without metrics (the reference, the peer) or when a scrape failed.
   */
  statuses: Record<string, number> | undefined;
  /** Headers taken just before the run (the `revalidate` row's `If-None-Match`). */
  runHeaders?: Record<string, string>;
}

/** One row of the table: a scenario against one target, its runs and their medians. */
export interface RowReport {
  id: string;
  scenario: ScenarioId;
  target: TargetId;
  method: 'GET' | 'POST';
  path: string;
  /** Headers of every request besides the client's (session cookie, `X-Forwarded-For`) and the run's. */
  headers: Record<string, string>;
  /** Whether every answer should be a 2xx. */
  success: boolean;
  /** The status every answer should have (`success`: any 2xx). */
  expect: Expected;
  /** The version of Node.js the target ran on. */
  node: string;
  pinned: boolean;
  /** The clients the load came from: sessions (and addresses) taken in turn, `burst` requests each. */
  clients: { count: number; withSession: boolean; burst: number };
  runs: RunResult[];
  median: { rps: number; p50Ms: number; p99Ms: number; rssMb: number; cpuUsPerRequest: number };
  /** Sums over the runs. */
  total: { requests: number; non2xx: number; errors: number; upstreamCalls: number };
  /**
   * Requests/s relative to the reference passthrough (pinned rows, refusals included), to the same load
   * without `REDIS_URL` or tracing (`redis` and `tracing` rows) or to `proxy-w1` (workers rows): the
   * median over the rounds of this row's run divided by the base row's run of the same round.
   */
  ratio: number | undefined;
}

/** One scrape of a proxy's `GET /metrics` after the runs. */
export interface MetricsScrape {
  target: TargetId;
  /** HTTP status of the scrape (0: no answer). */
  status: number;
  /** Sum of the `front_proxy_http_request_duration_seconds_count` samples over every label set. */
  requestCount: number;
  /** Answers the load generator received from this process in the measured runs. */
  measuredAnswers: number;
}

/** A target of the brief or a correctness condition, with what was measured. */
export interface Check {
  name: string;
  ok: boolean;
  /**
   * Correctness checks fail the command; performance targets are printed only (noisy machines), and
   * `reported` figures have no threshold.
   */
  kind: 'correctness' | 'target' | 'reported';
  /** `false` when the figure could not be measured (e.g. the row was skipped); `ok` is then `false`. */
  measured?: boolean;
  detail: string;
}

/** The `circuit-open` row's sample after the runs: the second of two requests in a row. */
export interface RefusalSample {
  status: number;
  /** The envelope's `error` (`upstream_circuit_open` when the circuit refused it). */
  error: string | undefined;
  retryAfter: string | null;
}

/** The whole report, as written to `bench/results.json`. */
export interface BenchReport {
  meta: {
    date: string;
    /** The bench's own Node.js (the upstream, the collector, autocannon; the `proxy-host-node` rows). */
    node: string;
    /** The Node.js of the proxies, the reference and the peer: `BENCH_NODE` and the version it gave. */
    targetNode: { spec: string; version: string };
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
    /** Sessions, and client addresses, the load was spread over. */
    sessions: number;
    /** `RATE_LIMIT_API_PER_MIN` of the proxies: `default` (600) or the `BENCH_RATE_LIMIT_API_PER_MIN` override. */
    rateLimitApiPerMin: string;
    pinned: boolean;
    /** Resident memory of the proxy after start and route discovery, before any load, in MiB. */
    proxyIdleRssMb: number;
    skipped: string[];
  };
  rows: RowReport[];
  /** Each proxy's metrics, scraped once after the runs. */
  metrics: MetricsScrape[];
  /** What the trace collector received (the `tracing` scenario only). */
  collector: CollectorCounts | null;
  /** The catalogue page's body bytes by `Accept-Encoding`, fetched once after the runs (`catalogue` scenario). */
  catalogueBytes: PageBytes | null;
  /** The `circuit-open` row's sample answer after the runs. */
  refusalSample: RefusalSample | null;
  checks: Check[];
  table: string;
}

/** A process the bench started, with the processes whose CPU time counts as its own. */
interface Target {
  id: TargetId;
  child: ChildProcess;
  port: number;
  /** The proxy's `METRICS_PORT`. */
  metricsPort?: number | undefined;
  pids: number[];
}

/** A process beside the target whose CPU time a run reports (`RunResult.cpuByProcess`). */
interface Observed {
  name: string;
  pid: number;
}

interface RowSpec {
  id: string;
  scenario: ScenarioId;
  target: TargetId;
  method: 'GET' | 'POST';
  path: string;
  /** Headers of every request; the client's (session cookie, `X-Forwarded-For`) come on top. */
  headers: Record<string, string>;
  body?: string;
  /** Whether the requests carry a session cookie. */
  session: boolean;
  /** Consecutive requests of one client; default 1. */
  burst?: number;
  expect: Expected;
  pinned: boolean;
  /** Headers fetched just before each run (and warm-up), on top of `headers`. */
  prepare?: () => Promise<Record<string, string>>;
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
 * @param node - the `node` binary; default the bench's own.
 */
async function startBenchServer(
  script: string,
  args: string[],
  cpus: string | undefined,
  nodeArgs: readonly string[] = [],
  node: string = process.execPath,
): Promise<{ child: ChildProcess; port: number }> {
  const [command, argv] = pinnedCommand(cpus, node, [...nodeArgs, compileScript(script), ...args]);
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
 * package.json's `start` script, e.g. `--max-semi-space-size=8`): the bench runs the proxy as `npm start` does.
 */
export function startNodeOptions(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const match = /^node\s+(.*?)\s*dist\/server\.js\b/.exec(pkg.scripts?.start ?? '');
  return match?.[1] ? match[1].split(/\s+/) : [];
}

/** A Node.js the bench runs processes on. */
export interface NodeRuntime {
  /** How it was asked for (`BENCH_NODE`): `current`, a version, or a path. */
  spec: string;
  /** Its `process.version`. */
  version: string;
  /** The binary. */
  execPath: string;
}

/**
 * Resolves `BENCH_NODE` once: `current` is the bench's own Node.js; a version (`24`, `24.11`…) is the
 * npm registry's `node` package as CI installs it (`npx --yes -p node@<version>`, downloaded on first
 * use, then from npm's cache); anything with a `/` is the path of a `node` binary.
 * @throws when the binary cannot be found or run.
 */
export function resolveNode(spec: string): NodeRuntime {
  if (spec === 'current' || spec === '') return { spec: 'current', version: process.version, execPath: process.execPath };
  const printSelf = ['-p', 'process.execPath + " " + process.version'];
  let output: string;
  try {
    if (spec.includes('/')) {
      output = execFileSync(spec, printSelf, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } else if (/^\d+(\.\d+){0,2}$/.test(spec)) {
      output = execFileSync('npx', ['--yes', '-p', `node@${spec}`, '--', 'node', ...printSelf], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 300_000,
      });
    } else {
      throw new Error('expected current, a version such as 24, or the path of a node binary');
    }
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`BENCH_NODE=${spec}: ${stderr || (error instanceof Error ? error.message : String(error))}`);
  }
  const match = /(\S+) (v\d+\.\d+\.\d+\S*)\s*$/.exec(output.trim());
  if (!match) throw new Error(`BENCH_NODE=${spec}: no node version in "${output.trim().slice(-200)}"`);
  return { spec, version: match[2] as string, execPath: match[1] as string };
}

/** Starts of a proxy process tried before giving up, when its ports were taken meanwhile. */
const START_ATTEMPTS = 3;

/** What {@link startProxy} started. */
interface StartedProxy {
  child: ChildProcess;
  port: number;
  metricsPort: number;
}

/** How {@link startProxy} starts a proxy process. */
interface ProxyLaunch {
  /** `WORKERS`. */
  workers: number;
  /** `taskset` CPU list; `undefined`: not pinned. */
  cpus: string | undefined;
  logPath: string;
  /** More Node.js options (`BENCH_PROXY_NODE_OPTIONS`), after `npm start`'s. */
  nodeOptions: string | undefined;
  /** The `node` binary. */
  node: string;
  /** More environment variables (`REDIS_URL`, `OTEL_EXPORTER_OTLP_ENDPOINT`). */
  env?: Record<string, string>;
}

/**
 * Starts the proxy as a production deployment runs it: `npm start`'s command (`node <options>
 * dist/server.js`), `NODE_ENV=production`, metrics on (`METRICS_PORT`, a free loopback port), the
 * default rate limits, behind a load balancer on loopback (`TRUSTED_PROXIES=127.0.0.1`: the proxy
 * believes the right-most `X-Forwarded-For` address), logging at `info`, tracing off (no
 * `OTEL_EXPORTER_OTLP_ENDPOINT` unless `launch.env` gives one). Nothing else of the bench's environment
 * reaches it.
 */
async function startProxy(upstream: string, launch: ProxyLaunch): Promise<StartedProxy> {
  // A port found free can be taken before the proxy binds it (by an outgoing connection's local port,
  // or another program): then the proxy stops at start with EADDRINUSE, and gets two new ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startProxyOnce(upstream, launch);
    } catch (error) {
      if (attempt >= START_ATTEMPTS || !(error instanceof Error) || !error.message.includes('EADDRINUSE')) throw error;
    }
  }
}

async function startProxyOnce(upstream: string, launch: ProxyLaunch): Promise<StartedProxy> {
  const port = await freePort();
  let metricsPort = await freePort();
  while (metricsPort === port) metricsPort = await freePort();
  const env: Record<string, string> = {
    ...launch.env,
    // Default limits: the load is spread over BENCH_SESSIONS sessions and as many client addresses.
    ...(process.env.BENCH_RATE_LIMIT_API_PER_MIN ? { RATE_LIMIT_API_PER_MIN: process.env.BENCH_RATE_LIMIT_API_PER_MIN } : {}),
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    TRUSTED_PROXIES: '127.0.0.1',
    LOG_LEVEL: 'info',
    WORKERS: String(launch.workers),
    BFF_BASE_URL: upstream,
    STICKER_API_URL: `${upstream}/sticker`,
    REFERRAL_V1_API_URL: `${upstream}/referral-v1`,
    REFERRAL_V2_API_URL: `${upstream}/referral-v2`,
    FTD_CASHBACK_VERIFY_URL: `${upstream}/ftd/verify`,
    FTD_CASHBACK_SEND_URL: `${upstream}/ftd/send`,
    ATTRIBUTION_S2S_URL: `${upstream}/attribution`,
    CACHE_PURGE_URL: `${upstream}/purge`,
  };
  const log = openSync(launch.logPath, 'a');
  // Node options go on the command line: it takes every option NODE_OPTIONS takes, and more (`--cpu-prof`).
  const nodeArgs = [...startNodeOptions(), ...(launch.nodeOptions ? launch.nodeOptions.split(/\s+/).filter(Boolean) : [])];
  const [command, argv] = pinnedCommand(launch.cpus, launch.node, [...nodeArgs, join(ROOT, 'dist', 'server.js')]);
  const child = spawn(command, argv, { cwd: ROOT, stdio: ['ignore', log, 'pipe'], env });
  closeSync(log);
  const { stderr } = track(child, 'proxy');
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) {
      await sleep(50); // its last lines on standard error
      throw new Error(`the proxy exited with ${child.exitCode}: ${stderr()}`);
    }
    try {
      const res = await request(`http://127.0.0.1:${port}/healthz`);
      await res.body.text();
      if (res.statusCode === 200) return { child, port, metricsPort };
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
 * @returns its `redis://` URL and its process.
 */
async function startRedisServer(cpus: string | undefined): Promise<{ url: string; child: ChildProcess } | undefined> {
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
    if (up) return { url: `redis://127.0.0.1:${port}`, child };
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
  const header = (name: string): string | null => {
    const value = res.headers[name];
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
  };
  return { status: res.statusCode, text: await res.body.text(), header };
}

/** The `error` of a JSON envelope (`{ "ok": false, "error": … }`), if the text is one. */
function envelopeError(text: string): string | undefined {
  try {
    const error = (JSON.parse(text) as { error?: unknown }).error;
    return typeof error === 'string' ? error : undefined;
  } catch {
    return undefined;
  }
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

/**
 * Sends one request of a row (as the first client: session 0, its address) and returns its status,
 * body, headers and the upstream calls it made.
 */
async function probe(
  upstream: string,
  port: number,
  row: Pick<RowSpec, 'method' | 'path' | 'headers' | 'body' | 'session'>,
  extraHeaders: Record<string, string> = {},
) {
  await resetUpstream(upstream);
  const body = row.body?.replaceAll('__N__', String(1 + Math.floor(Math.random() * 1_000_000)));
  const headers = { ...row.headers, ...extraHeaders, ...clientHeaders(1, row.session)[0] };
  const res = await call(`http://127.0.0.1:${port}${row.path}`, { method: row.method, headers, body });
  return { ...res, calls: (await upstreamCalls(upstream)).byPath };
}

function isMissingRoute(res: { status: number; text: string }): boolean {
  return res.status === 404 && res.text.includes('"not_found"');
}

/** What {@link measure} needs besides the row and its target. */
interface MeasureContext {
  tool: LoadTool;
  upstream: string;
  seconds: number;
  connections: number;
  /** Pin the load generator on CPU 1. */
  pinned: boolean;
  /** The header sets of the clients, with and without a session cookie. */
  clients: { withSession: readonly Record<string, string>[]; anonymous: readonly Record<string, string>[] };
  /** Processes beside the target whose CPU time the run reports. */
  observed: readonly Observed[];
}

/** Names of a target's processes in `cpuByProcess`: `proxy`, or a cluster's `proxy primary` and `proxy worker N`. */
function targetProcessNames(target: Target): string[] {
  const base = target.id.startsWith('proxy') ? 'proxy' : target.id;
  if (target.pids.length === 1) return [base];
  return target.pids.map((_, i) => (i === 0 ? `${base} primary` : `${base} worker ${i}`));
}

async function measure(row: RowSpec, target: Target, ctx: MeasureContext): Promise<RunResult> {
  const runHeaders = row.prepare ? await row.prepare() : undefined;
  await resetUpstream(ctx.upstream);
  // The proxy's own count of the route's answers by status, before and after (its metrics port).
  const route = row.path.split('?')[0] as string;
  const statusesBefore = target.metricsPort === undefined ? undefined : await routeStatuses(target.metricsPort, route);
  const pids = target.pids;
  const sampleRss = () => pids.map((pid) => rssBytes([pid]));
  let rss = 0;
  let processRss = 0;
  const takeSample = () => {
    const each = sampleRss();
    rss = Math.max(rss, each.reduce((a, b) => a + b, 0));
    processRss = Math.max(processRss, ...each);
  };
  takeSample();
  const sampler = setInterval(takeSample, 250);
  const names = targetProcessNames(target);
  const cpuBefore = pids.map((pid) => cpuMicros([pid]));
  const observedBefore = ctx.observed.map((o) => cpuMicros([o.pid]));
  let load: LoadResult;
  try {
    load = await runLoad(ctx.tool, {
      url: `http://127.0.0.1:${target.port}${row.path}`,
      method: row.method,
      headers: { ...row.headers, ...runHeaders },
      body: row.body,
      rotation: { sets: row.session ? ctx.clients.withSession : ctx.clients.anonymous, burst: row.burst },
      connections: ctx.connections,
      seconds: ctx.seconds,
      cpus: ctx.pinned ? '1' : undefined,
    });
  } finally {
    clearInterval(sampler);
  }
  const cpuAfter = pids.map((pid) => cpuMicros([pid]));
  const observedAfter = ctx.observed.map((o) => cpuMicros([o.pid]));
  takeSample();
  const perAnswer = (us: number) => (load.requests > 0 ? us / load.requests : Number.NaN);
  const cpuByProcess: Record<string, number> = {};
  names.forEach((name, i) => {
    cpuByProcess[name] = perAnswer((cpuAfter[i] ?? 0) - (cpuBefore[i] ?? 0));
  });
  ctx.observed.forEach((o, i) => {
    cpuByProcess[o.name] = perAnswer((observedAfter[i] ?? 0) - (observedBefore[i] ?? 0));
  });
  cpuByProcess[ctx.tool === 'wrk' ? 'wrk' : 'autocannon (bench process)'] = perAnswer(load.loadCpuUs);
  const cpu = cpuAfter.reduce((a, b) => a + b, 0) - cpuBefore.reduce((a, b) => a + b, 0);
  // Calls still in flight when the load generator stopped finish before the counts are read, so that
  // they are neither lost here nor counted in the next row.
  await sleep(SETTLE_MS);
  const calls = (await upstreamCalls(ctx.upstream)).byPath;
  const statusesAfter = target.metricsPort === undefined ? undefined : await routeStatuses(target.metricsPort, route);
  let statuses: Record<string, number> | undefined;
  if (statusesBefore && statusesAfter) {
    statuses = {};
    for (const [status, count] of Object.entries(statusesAfter)) {
      const delta = count - (statusesBefore[status] ?? 0);
      if (delta > 0) statuses[status] = delta;
    }
  }
  return {
    ...load,
    rssMb: rss / (1024 * 1024),
    processRssMb: processRss / (1024 * 1024),
    cpuUsPerRequest: perAnswer(cpu),
    cpuByProcess,
    upstreamCalls: calls,
    statuses,
    ...(runHeaders ? { runHeaders } : {}),
  };
}

/**
 * The answers of one route pattern a proxy's metrics text counts, by status code: its
 * `front_proxy_http_request_duration_seconds_count` samples with `route="<route>"`, summed over the methods.
 */
export function statusesOfRoute(metricsText: string, route: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of metricsText.split('\n')) {
    const sample = /^front_proxy_http_request_duration_seconds_count\{([^}]*)\}\s+(\S+)/.exec(line);
    if (!sample) continue;
    const labels = new Map([...(sample[1] as string).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    const status = labels.get('status_code');
    if (labels.get('route') !== route || status === undefined) continue;
    out[status] = (out[status] ?? 0) + Number(sample[2]);
  }
  return out;
}

/** {@link statusesOfRoute} of a proxy's `GET /metrics` now; `undefined` when the scrape fails. */
async function routeStatuses(metricsPort: number, route: string): Promise<Record<string, number> | undefined> {
  try {
    const res = await call(`http://127.0.0.1:${metricsPort}/metrics`);
    return res.status === 200 ? statusesOfRoute(res.text, route) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Scrapes a proxy's `GET /metrics` once and sums its `front_proxy_http_request_duration_seconds_count` samples
 * over every label set.
 */
async function scrapeMetrics(metricsPort: number): Promise<{ status: number; requestCount: number }> {
  try {
    const res = await call(`http://127.0.0.1:${metricsPort}/metrics`);
    let requestCount = 0;
    for (const line of res.text.split('\n')) {
      const sample = /^front_proxy_http_request_duration_seconds_count(?:\{[^}]*\})?\s+(\S+)/.exec(line);
      if (sample) requestCount += Number(sample[1]);
    }
    return { status: res.status, requestCount };
  } catch {
    return { status: 0, requestCount: 0 };
  }
}

function fmt(value: number | undefined, digits = 0): string {
  if (value === undefined || !Number.isFinite(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

const SCENARIO_LABELS: Record<ScenarioId, string> = {
  passthrough: 'authenticated passthrough GET',
  deposit: 'deposit POST (validated, mapped)',
  catalogue: 'cached catalogue list',
  revalidate: 'catalogue revalidation (304)',
  profile: 'profile read (cached per token)',
  'no-cookie': '401 without cookie',
  'circuit-open': '503 refusal (circuit open)',
  redis: 'with REDIS_URL (vs without)',
  tracing: 'passthrough, tracing on (vs off)',
  workers: 'passthrough, unpinned',
};

const TARGET_LABELS: Record<TargetId, string> = {
  proxy: 'proxy',
  'proxy-host-node': "proxy on the bench's Node.js",
  'proxy-deposit': 'proxy (own process)',
  'proxy-redis': 'proxy, REDIS_URL',
  'proxy-deposit-redis': 'proxy (own process), REDIS_URL',
  'proxy-tracing': 'proxy, OTLP exporter',
  reference: 'reference node:http+Pool',
  'reference-tuned': 'reference, npm start options',
  peer: 'peer Fastify+reply-from',
  'proxy-w1': 'proxy WORKERS=1',
  'proxy-w2': 'proxy WORKERS=2',
};

/** The table as text: one line per row, medians, ratio to the row's base (see {@link RowReport.ratio}). */
export function formatTable(rows: readonly RowReport[]): string {
  const header = ['scenario', 'target', 'node', 'route', 'req/s', 'ratio', 'p50 ms', 'p99 ms', 'CPU µs/req', 'RSS MB', 'non-2xx', 'upstream calls/run'];
  const lines = rows.map((r) => [
    SCENARIO_LABELS[r.scenario],
    TARGET_LABELS[r.target],
    r.node,
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

/** What {@link buildChecks} judges besides the rows. */
interface CheckInputs {
  seconds: number;
  connections: number;
  metrics: readonly MetricsScrape[];
  collector: CollectorCounts | null;
  /** The scenarios asked for: a target of a scenario not asked for is not printed. */
  wanted: ReadonlySet<ScenarioId>;
  /** Why rows were left out (`meta.skipped`), for the targets they leave unmeasured. */
  skipped: readonly string[];
  catalogueBytes: PageBytes | null;
  refusalSample: RefusalSample | null;
}

/** Highest per-process RSS of a list of rows over all their runs, in MiB. */
function peakProcessRss(list: readonly RowReport[]): number {
  return Math.max(...list.flatMap((r) => r.runs.map((run) => run.processRssMb)));
}

function fmtStatuses(statuses: Record<string, number> | undefined): string {
  if (!statuses) return 'no metrics';
  const entries = Object.entries(statuses);
  return entries.length === 0 ? 'none' : entries.map(([status, n]) => `${n} × ${status}`).join(', ');
}

/**
 * The targets of the issue (performance round 3), as medians of the per-round ratios; printed, never
 * failing the command. A target whose row was asked for but could not run is `measured: false`.
 */
function targetChecks(rows: readonly RowReport[], inputs: CheckInputs): Check[] {
  const checks: Check[] = [];
  const find = (scenario: ScenarioId, target: TargetId) => rows.find((r) => r.scenario === scenario && r.target === target);
  const why = (scenario: ScenarioId) => inputs.skipped.find((s) => s.startsWith(`${scenario}:`))?.slice(scenario.length + 1).trim();
  const unmeasured = (name: string, detail: string, kind: Check['kind'] = 'target'): Check => ({ name, ok: false, kind, measured: false, detail: `not measured: ${detail}` });
  const reference = find('passthrough', 'reference');
  const againstReference = (scenario: ScenarioId, name: string, floor: number) => {
    if (!inputs.wanted.has(scenario)) return;
    const row = find(scenario, 'proxy');
    if (!row) checks.push(unmeasured(name, why(scenario) ?? 'the row did not run'));
    else if (!reference) checks.push(unmeasured(name, 'the reference passthrough runs with the passthrough scenario'));
    else checks.push({ name, ok: (row.ratio ?? 0) >= floor, kind: 'target', detail: `${fmt(row.ratio, 2)}×` });
  };
  againstReference('catalogue', 'cached catalogue vs the reference passthrough ≥ 1.5× rps', 1.5);
  againstReference('revalidate', 'catalogue revalidation (If-None-Match, 304) vs the reference passthrough ≥ 2× rps', 2);
  if (inputs.wanted.has('catalogue')) {
    const name = 'catalogue page bytes with br: reported, as a share of identity';
    const page = inputs.catalogueBytes;
    const identity = page?.answers.find((a) => a.acceptEncoding === 'identity');
    const br = page?.answers.find((a) => a.acceptEncoding === 'br');
    if (!page || !identity || !br) checks.push(unmeasured(name, why('catalogue') ?? 'the page was not fetched', 'reported'));
    else if (page.brShare === null) checks.push(unmeasured(name, `the proxy sent no Content-Encoding: br (identity ${fmt(identity.bytes)} bytes)`, 'reported'));
    else {
      checks.push({
        name,
        ok: true,
        kind: 'reported',
        detail: `${fmt(br.bytes)} of ${fmt(identity.bytes)} bytes: ${fmt(page.brShare * 100, 1)}% (gzip ${page.gzipShare === null ? '—' : `${fmt(page.gzipShare * 100, 1)}%`})`,
      });
    }
  }
  againstReference('no-cookie', '401 without cookie vs the reference passthrough ≥ 2.5× rps', 2.5);
  againstReference('circuit-open', '503 refusals (circuit open) vs the reference passthrough ≥ 2.5× rps', 2.5);
  if (inputs.wanted.has('passthrough')) {
    const proxy = find('passthrough', 'proxy');
    const peer = find('passthrough', 'peer');
    const rpsName = 'passthrough vs the Fastify + reply-from peer, same run ≥ 0.90× rps';
    const cpuName = 'passthrough vs the Fastify + reply-from peer, same run: CPU per request ≤ 1.15×';
    if (!proxy || !peer || proxy.runs.length === 0 || peer.runs.length === 0) {
      checks.push(unmeasured(rpsName, 'the passthrough rows did not run'), unmeasured(cpuName, 'the passthrough rows did not run'));
    } else {
      const rps = pairedRatio(proxy.runs, peer.runs, (r) => r.rps);
      const cpu = pairedRatio(proxy.runs, peer.runs, (r) => r.cpuUsPerRequest);
      checks.push(
        { name: rpsName, ok: rps >= 0.9, kind: 'target', detail: `${fmt(rps, 2)}×` },
        { name: cpuName, ok: cpu <= 1.15, kind: 'target', detail: `${fmt(cpu, 2)}×` },
      );
    }
  }
  // Peak RSS of every proxy process, per target (a cluster: its largest process), then over all of them.
  const proxyRows = rows.filter((r) => r.target.startsWith('proxy'));
  const proxyTargets = [...new Set(proxyRows.map((r) => r.target))];
  for (const target of proxyTargets) {
    const list = proxyRows.filter((r) => r.target === target);
    const rss = peakProcessRss(list);
    checks.push({
      name: `peak RSS of ${TARGET_LABELS[target]} (${list[0]?.node}) ≤ ${RSS_TARGET_MB} MB per process (${list.map((r) => r.id).join(', ')})`,
      ok: rss <= RSS_TARGET_MB,
      kind: 'target',
      detail: `${fmt(rss, 0)} MB at most`,
    });
  }
  if (proxyTargets.length > 1) {
    const rss = peakProcessRss(proxyRows);
    checks.push({
      name: `peak RSS of every proxy row ≤ ${RSS_TARGET_MB} MB per process`,
      ok: rss <= RSS_TARGET_MB,
      kind: 'target',
      detail: `${fmt(rss, 0)} MB at most`,
    });
  }
  // The proxy on the bench's own Node.js beside the measured one: reported, no threshold.
  const hostRows = rows.filter((r) => r.target === 'proxy-host-node');
  if (hostRows.length > 0) {
    checks.push({
      name: `the proxy on the bench's Node.js (${hostRows[0]?.node}) vs the reference passthrough (${reference?.node ?? '-'}): reported`,
      ok: true,
      kind: 'reported',
      detail: hostRows
        .map((r) => {
          const same = find(r.scenario, 'proxy');
          return `${r.scenario} ${fmt(r.ratio, 2)}× (${same?.node ?? 'measured Node.js'}: ${fmt(same?.ratio, 2)}×)`;
        })
        .join(', '),
    });
  }
  return checks;
}

/** The correctness checks: any that fails makes the command exit with 1. */
function correctnessChecks(rows: readonly RowReport[], inputs: CheckInputs): Check[] {
  const { seconds, connections } = inputs;
  const checks: Check[] = [];
  const find = (scenario: ScenarioId, target: TargetId) => rows.find((r) => r.scenario === scenario && r.target === target);
  for (const r of rows) {
    if (r.expect === 'success' || r.expect === 304) {
      checks.push({
        name: `${r.id}: no answer ≥ 400 or socket error`,
        ok: r.total.non2xx === 0 && r.total.errors === 0,
        kind: 'correctness',
        detail: `${r.total.non2xx} non-2xx, ${r.total.errors} errors in ${r.total.requests} answers`,
      });
    }
    if (r.expect !== 'success') {
      // Every answer of the route the proxy counted during the run had the expected status (the load
      // generators count only "≥ 400": a 304 would pass for a 200 there).
      const expected = String(r.expect);
      checks.push({
        name: `${r.id}: every answer ${expected} (the proxy's count of ${r.method} ${r.path} answers by status, per run)`,
        ok: r.runs.every((run) => run.statuses !== undefined && Object.keys(run.statuses).every((s) => s === expected) && (run.statuses[expected] ?? 0) >= run.requests),
        kind: 'correctness',
        detail: r.runs.map((run) => `${fmtStatuses(run.statuses)} for ${run.requests} answers`).join('; '),
      });
    }
  }
  // Money moves reach the upstream once per submission: one POST /wallet/add-credit per answered
  // deposit, plus at most one per connection for the deposits in flight when the load stopped.
  for (const row of rows.filter((r) => r.path === DEPOSIT_PATH && r.method === 'POST')) {
    const pairs = row.runs.map((run) => ({ calls: run.upstreamCalls[DEPOSIT_UPSTREAM] ?? 0, answers: run.requests }));
    checks.push({
      name: `${row.id}: one upstream POST ${DEPOSIT_UPSTREAM} per answered deposit (at most ${connections} more: in flight at the stop)`,
      ok: pairs.every(({ calls, answers }) => calls >= answers && calls - answers <= connections),
      kind: 'correctness',
      detail: pairs.map(({ calls, answers }) => `${calls} calls for ${answers} answers`).join('; '),
    });
  }
  // Catalogue reads and revalidations are answered from the cache: no call, except the background
  // refresh when the entry's time to live ends.
  for (const row of rows.filter((r) => r.path === CATALOGUE_PATH)) {
    const allowed = Math.floor(seconds / CATALOGUE_TTL_SECONDS) + 1;
    const counts = row.runs.map((run) => sumCalls(run.upstreamCalls));
    checks.push({
      name: `${row.id}: answered from the cache (at most ${allowed} background refresh per ${seconds} s run, ${CATALOGUE_TTL_SECONDS} s time to live)`,
      ok: counts.every((c) => c <= allowed),
      kind: 'correctness',
      detail: `${counts.join(', ')} upstream calls per run`,
    });
  }
  const page = inputs.catalogueBytes;
  if (page) {
    const problems = pageBytesProblems(page);
    checks.push({
      name: `catalogue page GET ${page.path} by Accept-Encoding: 200, the codings asked for, encoded bodies decode to the identity bytes, Vary: Accept-Encoding`,
      ok: problems.length === 0,
      kind: 'correctness',
      detail: problems.length > 0 ? problems.join('; ') : page.answers.map((a) => `${a.acceptEncoding} → ${a.contentEncoding ?? 'identity'} ${a.bytes} B`).join(', '),
    });
  }
  const profile = find('profile', 'proxy');
  if (profile) {
    // One fetch per token per 10 s: a run of S seconds sees at most floor(S / 10) + 1 fetches of each
    // token, and a run reads at most `count` tokens.
    const perToken = Math.floor(seconds / PROFILE_TTL_SECONDS) + 1;
    const allowed = profile.clients.count * perToken;
    const counts = profile.runs.map((run) => run.upstreamCalls[PROFILE_UPSTREAM] ?? 0);
    const others = profile.runs.reduce((n, run) => n + sumCalls(run.upstreamCalls) - (run.upstreamCalls[PROFILE_UPSTREAM] ?? 0), 0);
    checks.push({
      name:
        `profile: at most one upstream call per token per ${PROFILE_TTL_SECONDS} s (≤ ${perToken} per token per ${seconds} s run, ` +
        `${profile.clients.count} tokens: ≤ ${allowed} per run)`,
      ok: counts.every((c) => c <= allowed) && others === 0,
      kind: 'correctness',
      detail: profile.runs.map((run, i) => `${counts[i]} calls for ${run.requests} reads`).join('; '),
    });
  }
  for (const noCookie of rows.filter((r) => r.scenario === 'no-cookie')) {
    checks.push({
      name: `${noCookie.id}: every answer refused (≥ 400), nothing sent upstream`,
      ok: noCookie.total.non2xx === noCookie.total.requests && noCookie.total.upstreamCalls === 0 && noCookie.total.errors === 0,
      kind: 'correctness',
      detail: `${noCookie.total.non2xx} of ${noCookie.total.requests} refused, ${noCookie.total.upstreamCalls} upstream calls`,
    });
  }
  const refusal = find('circuit-open', 'proxy');
  if (refusal) {
    // An open circuit sends one trial call per pause; the failures that opened it came before the runs
    // (the bench opens it first), and a few more are allowed for a circuit that had closed meanwhile.
    const allowed = Math.floor(seconds / CIRCUIT_PAUSE_SECONDS) + CIRCUIT_FAILURES + 1;
    const counts = refusal.runs.map((run) => sumCalls(run.upstreamCalls));
    checks.push(
      {
        name: `${refusal.id}: every answer refused, the upstream called at most ${allowed} times per ${seconds} s run (a trial per ${CIRCUIT_PAUSE_SECONDS} s pause, + ${CIRCUIT_FAILURES + 1})`,
        ok: refusal.total.non2xx === refusal.total.requests && refusal.total.errors === 0 && counts.every((c) => c <= allowed),
        kind: 'correctness',
        detail: `${refusal.total.non2xx} of ${refusal.total.requests} refused; ${counts.join(', ')} upstream calls per run`,
      },
      {
        name: `${refusal.id}: a sample after the runs is 503 upstream_circuit_open with Retry-After`,
        ok: inputs.refusalSample?.status === 503 && inputs.refusalSample.error === 'upstream_circuit_open' && inputs.refusalSample.retryAfter !== null,
        kind: 'correctness',
        detail: inputs.refusalSample
          ? `${inputs.refusalSample.status} ${inputs.refusalSample.error ?? '(no error field)'}, Retry-After ${inputs.refusalSample.retryAfter ?? 'none'}`
          : 'no sample',
      },
    );
  }
  for (const scrape of inputs.metrics) {
    checks.push({
      name: `${scrape.target}: GET /metrics answers 200 and counts every answer (front_proxy_http_request_duration_seconds_count ≥ answers measured)`,
      ok: scrape.status === 200 && scrape.requestCount >= scrape.measuredAnswers,
      kind: 'correctness',
      detail: `status ${scrape.status}, ${scrape.requestCount} counted, ${scrape.measuredAnswers} measured`,
    });
  }
  if (rows.some((r) => r.scenario === 'tracing')) {
    const received = inputs.collector;
    checks.push({
      name: 'tracing: the collector received at least one export during the runs',
      ok: (received?.exports ?? 0) >= 1,
      kind: 'correctness',
      detail: received ? `${received.exports} exports, ${fmt(received.bytes / 1024, 0)} KiB` : 'no answer from the collector',
    });
  }
  return checks;
}

/** The targets (printed only) and the correctness checks (failing the command). */
function buildChecks(rows: readonly RowReport[], inputs: CheckInputs): Check[] {
  return [...targetChecks(rows, inputs), ...correctnessChecks(rows, inputs)];
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
 * Runs the benchmark: resolves the measured Node.js, starts the upstream and the proxies, finds the
 * routes, warms up, measures every row `runs` times interleaved, fetches the catalogue page by
 * coding, and stops everything it started.
 *
 * @returns the report (also written to `resultsPath` when given).
 * @throws when a process does not start or a success scenario does not answer 2xx before the runs.
 */
export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const say = (text: string) => {
    if (options.print) process.stdout.write(`${text}\n`);
  };
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-if-needed.mjs')], { cwd: ROOT, stdio: 'inherit' });
  const targetNode = resolveNode(options.node);
  // The machine's own Node.js beside the measured one, unless they are the same version.
  const hostNode: NodeRuntime | undefined =
    targetNode.version === process.version ? undefined : { spec: 'current', version: process.version, execPath: process.execPath };
  const pinned = options.pin && hasTaskset() && os.cpus().length >= 2;
  if (pinned) pin(process.pid, '1');
  const wanted = new Set(options.scenarios);
  const skipped: string[] = [];
  const targets = new Map<TargetId, Target>();
  /** The Node.js version each target runs on. */
  const nodeOf = new Map<TargetId, string>();
  const cpuFor = (p: boolean) => (p ? '0' : undefined);
  const clients = { withSession: clientHeaders(options.sessions, true), anonymous: clientHeaders(options.sessions, false) };
  const launch = (node: NodeRuntime, env: Record<string, string> = {}, cpus = cpuFor(pinned), workers = 1): ProxyLaunch => ({
    workers,
    cpus,
    logPath: options.logPath,
    nodeOptions: options.proxyNodeOptions,
    node: node.execPath,
    env,
  });

  try {
    const up = await startBenchServer('upstream', [], pinned ? '1' : undefined);
    const upstream = `http://127.0.0.1:${up.port}`;
    const addTarget = (id: TargetId, started: { child: ChildProcess; port: number; metricsPort?: number }, node: NodeRuntime) => {
      const pid = started.child.pid as number;
      targets.set(id, { id, child: started.child, port: started.port, metricsPort: started.metricsPort, pids: processTree(pid) });
      nodeOf.set(id, node.version);
    };

    const pinnedScenarios = SCENARIOS.filter((s) => s !== 'workers' && wanted.has(s));
    const rows: RowSpec[] = [];
    say(
      `Node.js ${targetNode.version} (BENCH_NODE=${targetNode.spec}) for the proxies, the reference and the peer; ` +
        `${process.version} (the bench's own) for the upstream, the collector${options.tool === 'autocannon' ? ', autocannon' : ''}` +
        (hostNode ? " and the rows of the proxy on the bench's Node.js" : ''),
    );
    say(
      `starting the proxy (node ${[...startNodeOptions(), 'dist/server.js'].join(' ')}, NODE_ENV=production, metrics on, ` +
        `${process.env.BENCH_RATE_LIMIT_API_PER_MIN ? `RATE_LIMIT_API_PER_MIN=${process.env.BENCH_RATE_LIMIT_API_PER_MIN}` : 'default rate limits'}, ` +
        `TRUSTED_PROXIES=127.0.0.1, tracing off)${pinned ? ' on CPU 0' : ''}; load from ${options.sessions} sessions and client addresses`,
    );
    addTarget('proxy', await startProxy(upstream, launch(targetNode)), targetNode);
    const proxyPort = (targets.get('proxy') as Target).port;

    // Route discovery: the first passthrough candidate the proxy serves, and the upstream path it calls.
    let passthrough: { path: string; upstreamPath: string } | undefined;
    for (const path of PASSTHROUGH_CANDIDATES) {
      const res = await probe(upstream, proxyPort, { method: 'GET', path, headers: {}, session: true });
      if (isMissingRoute(res)) continue;
      if (res.status < 200 || res.status >= 300) throw new Error(`GET ${path} answered ${res.status}: ${res.text.slice(0, 300)}`);
      const upstreamPath = Object.keys(res.calls).find((p) => p !== PROFILE_UPSTREAM);
      if (!upstreamPath) continue;
      passthrough = { path, upstreamPath };
      break;
    }
    if (!passthrough) throw new Error(`the proxy serves none of ${PASSTHROUGH_CANDIDATES.join(', ')}`);
    const passthroughPath = passthrough.path;
    say(`passthrough route: GET ${passthrough.path} → upstream ${passthrough.upstreamPath}`);
    const passthroughRow = (id: string, scenario: ScenarioId, target: TargetId, rowPinned = pinned): RowSpec => ({
      id,
      scenario,
      target,
      method: 'GET',
      path: passthroughPath,
      headers: {},
      session: true,
      expect: 'success',
      pinned: rowPinned,
    });

    const wantRow = async (spec: RowSpec, port = proxyPort): Promise<boolean> => {
      const res = await probe(upstream, port, spec);
      if (isMissingRoute(res)) {
        skipped.push(`${spec.scenario}: ${spec.method} ${spec.path} is not served yet`);
        return false;
      }
      const ok = spec.expect === 'success' ? res.status >= 200 && res.status < 300 : res.status === spec.expect;
      if (!ok) throw new Error(`${spec.method} ${spec.path} answered ${res.status}: ${res.text.slice(0, 300)}`);
      return true;
    };

    // The proxy on the bench's own Node.js (the machine's), beside the measured one, for the
    // passthrough, catalogue and no-cookie rows; their ratio is to the same round's reference.
    let host: NodeRuntime | undefined;
    if (HOST_NODE_SCENARIOS.some((s) => wanted.has(s))) {
      if (hostNode) {
        addTarget('proxy-host-node', await startProxy(upstream, launch(hostNode)), hostNode);
        host = hostNode;
      } else {
        skipped.push(`proxy-host-node: the measured Node.js is the bench's own (${process.version}): no rows beside it`);
      }
    }
    /** The row, and the same row against the proxy on the bench's own Node.js when it runs. */
    const withHost = (spec: RowSpec): RowSpec[] =>
      host ? [spec, { ...spec, id: `${spec.scenario}/proxy-host-node`, target: 'proxy-host-node' }] : [spec];

    if (wanted.has('passthrough')) {
      // `reference-tuned` is the reference with the Node.js options `npm start` gives the proxy (e.g.
      // `--max-semi-space-size=8`): how much of the proxy's ratio is runtime tuning rather than code.
      const tuned = startNodeOptions().length > 0 ? (['reference-tuned'] as const) : [];
      rows.push(...withHost(passthroughRow('passthrough/proxy', 'passthrough', 'proxy')));
      for (const target of ['reference', ...tuned, 'peer'] as const) rows.push(passthroughRow(`passthrough/${target}`, 'passthrough', target));
    }
    if (wanted.has('deposit')) {
      // Its own proxy process (same build and configuration): the double-submit guard remembers up to
      // 10,000 deposits, and that memory would otherwise count in every other row's RSS.
      addTarget('proxy-deposit', await startProxy(upstream, launch(targetNode)), targetNode);
      const spec: RowSpec = {
        id: 'deposit/proxy',
        scenario: 'deposit',
        target: 'proxy-deposit',
        method: 'POST',
        path: DEPOSIT_PATH,
        headers: { 'content-type': 'application/json' },
        body: DEPOSIT_BODY,
        session: true,
        burst: SESSION_BURST,
        expect: 'success',
        pinned,
      };
      if (await wantRow(spec, (targets.get('proxy-deposit') as Target).port)) {
        rows.push(spec);
        // The same deposits against the reference: the least plain Node.js does for one (parse, check,
        // map, POST upstream, parse, convert, serialise), i.e. the floor of the deposit row.
        rows.push({ ...spec, id: 'deposit/reference', target: 'reference' });
      }
    }
    // The catalogue rows send the Accept-Encoding of a browser (the reference passthrough sends none).
    const catalogueRow: RowSpec = {
      id: 'catalogue/proxy',
      scenario: 'catalogue',
      target: 'proxy',
      method: 'GET',
      path: CATALOGUE_PATH,
      headers: { 'accept-encoding': BROWSER_ACCEPT_ENCODING },
      session: false,
      expect: 'success',
      pinned,
    };
    if (wanted.has('catalogue') && (await wantRow(catalogueRow))) rows.push(...withHost(catalogueRow));
    if (wanted.has('revalidate')) {
      // The same request with If-None-Match: the ETag the proxy sends for it, fetched just before each
      // run (the bench upstream answers the same bytes on every fill, so it should not change).
      const spec: RowSpec = { ...catalogueRow, id: 'revalidate/proxy', scenario: 'revalidate', expect: 304 };
      const etagNow = async (): Promise<{ status: number; etag: string | null; text: string }> => {
        const res = await probe(upstream, proxyPort, catalogueRow);
        return { status: res.status, etag: res.status === 200 ? res.header('etag') : null, text: res.text };
      };
      const first = await etagNow();
      if (isMissingRoute(first)) skipped.push(`revalidate: GET ${CATALOGUE_PATH} is not served yet`);
      else if (first.status !== 200) throw new Error(`GET ${CATALOGUE_PATH} answered ${first.status}: ${first.text.slice(0, 300)}`);
      else if (!first.etag) skipped.push(`revalidate: no ETag: the proxy sent no ETag on GET ${CATALOGUE_PATH}, so there is no 304 to measure`);
      else {
        const check = await probe(upstream, proxyPort, spec, { 'if-none-match': first.etag });
        if (check.status !== 304) {
          skipped.push(`revalidate: GET ${CATALOGUE_PATH} with If-None-Match: ${first.etag} (the proxy's own ETag) answered ${check.status}, not 304`);
        } else {
          let last = first.etag;
          rows.push({
            ...spec,
            prepare: async () => {
              last = (await etagNow()).etag ?? last;
              return { 'if-none-match': last };
            },
          });
          say(`revalidation: GET ${CATALOGUE_PATH} with If-None-Match: ${first.etag} answers 304`);
        }
      }
    }
    if (wanted.has('profile')) {
      const spec: RowSpec = {
        id: 'profile/proxy',
        scenario: 'profile',
        target: 'proxy',
        method: 'GET',
        path: PROFILE_PATH,
        headers: {},
        session: true,
        burst: SESSION_BURST,
        expect: 'success',
        pinned,
      };
      if (await wantRow(spec)) rows.push(spec);
    }
    if (wanted.has('no-cookie')) {
      const spec: RowSpec = { ...passthroughRow('no-cookie/proxy', 'no-cookie', 'proxy'), session: false, expect: 401 };
      if (await wantRow(spec)) rows.push(...withHost(spec));
    }
    if (wanted.has('circuit-open')) {
      // An authenticated GET whose upstream path no other row calls; the upstream answers it 503 from
      // now on, and the proxy's circuit for it opens after CIRCUIT_FAILURES of them in a row.
      let refusal: { path: string; upstreamPath: string } | undefined;
      for (const path of REFUSAL_CANDIDATES) {
        if (path === passthroughPath) continue;
        const res = await probe(upstream, proxyPort, { method: 'GET', path, headers: {}, session: true });
        if (isMissingRoute(res) || res.status < 200 || res.status >= 300) continue;
        const upstreamPath = Object.keys(res.calls).find((p) => p !== PROFILE_UPSTREAM);
        if (!upstreamPath || upstreamPath === passthrough.upstreamPath) continue;
        refusal = { path, upstreamPath };
        break;
      }
      if (!refusal) {
        skipped.push(`circuit-open: the proxy serves none of ${REFUSAL_CANDIDATES.filter((p) => p !== passthroughPath).join(', ')}`);
      } else {
        await call(`${upstream}/__bench/unavailable`, { method: 'POST', body: refusal.upstreamPath });
        const spec: RowSpec = { ...passthroughRow('circuit-open/proxy', 'circuit-open', 'proxy'), path: refusal.path, expect: 503 };
        // Open the circuit before the runs, one request at a time: the runs then measure refusals only
        // (and one trial call per pause), not the 50 calls in flight while it opens.
        let answer: { status: number; error: string | undefined } = { status: 0, error: undefined };
        let sent = 0;
        while (sent < CIRCUIT_FAILURES + 3 && answer.error !== 'upstream_circuit_open') {
          const res = await probe(upstream, proxyPort, spec);
          answer = { status: res.status, error: envelopeError(res.text) };
          sent++;
        }
        if (answer.status === 503 && answer.error === 'upstream_circuit_open') {
          rows.push(spec);
          say(`503 refusal route: GET ${refusal.path} → upstream ${refusal.upstreamPath}, answered 503 by the upstream; circuit open after ${sent - 1} calls`);
        } else {
          skipped.push(
            `circuit-open: GET ${refusal.path} still answered ${answer.status} ${answer.error ?? ''} after ${sent} upstream 503s in a row, not 503 upstream_circuit_open`,
          );
        }
      }
    }
    // A local redis-server for the `redis` and `workers` rows (started with the upstream's CPU).
    let redis: { url: string; child: ChildProcess } | undefined;
    if (wanted.has('redis') || wanted.has('workers')) {
      redis = await startRedisServer(pinned ? '1' : undefined);
      if (!redis) skipped.push('redis, workers: redis-server is not installed (WORKERS=2 needs REDIS_URL)');
    }
    if (wanted.has('redis') && redis) {
      const withRedis = { REDIS_URL: redis.url };
      addTarget('proxy-redis', await startProxy(upstream, launch(targetNode, withRedis)), targetNode);
      addTarget('proxy-deposit-redis', await startProxy(upstream, launch(targetNode, withRedis)), targetNode);
      const base = rows.find((r) => r.id === 'passthrough/proxy');
      const deposit = rows.find((r) => r.id === 'deposit/proxy');
      if (base) rows.push({ ...base, id: 'redis/passthrough', scenario: 'redis', target: 'proxy-redis' });
      if (deposit) rows.push({ ...deposit, id: 'redis/deposit', scenario: 'redis', target: 'proxy-deposit-redis' });
      if (!base || !deposit) skipped.push('redis: runs with the passthrough and deposit scenarios');
    }
    // A local trace collector for the `tracing` row (with the upstream's CPU) and a proxy exporting to it.
    let collector: { child: ChildProcess; port: number } | undefined;
    if (wanted.has('tracing')) {
      collector = await startBenchServer('collector', [], pinned ? '1' : undefined);
      const withTracing = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}` };
      addTarget('proxy-tracing', await startProxy(upstream, launch(targetNode, withTracing)), targetNode);
      rows.push(passthroughRow('tracing/passthrough', 'tracing', 'proxy-tracing'));
      if (!wanted.has('passthrough')) skipped.push('tracing: its ratio needs the passthrough scenario');
    }
    const workerRows: RowSpec[] =
      wanted.has('workers') && redis ? (['proxy-w1', 'proxy-w2'] as const).map((target) => passthroughRow(`workers/${target}`, 'workers', target, false)) : [];
    if (pinnedScenarios.length === 0) {
      // The proxy was started only for route discovery.
      await stop((targets.get('proxy') as Target).child);
      targets.delete('proxy');
    }

    const needs = new Set(rows.map((r) => r.target));
    if (needs.has('reference') || needs.has('peer')) {
      const args = [upstream, passthrough.upstreamPath, COOKIE_NAME];
      addTarget('reference', await startBenchServer('reference', args, cpuFor(pinned), [], targetNode.execPath), targetNode);
      addTarget('peer', await startBenchServer('peer', args, cpuFor(pinned), [], targetNode.execPath), targetNode);
      const checked: TargetId[] = ['reference', 'peer'];
      if (needs.has('reference-tuned')) {
        addTarget('reference-tuned', await startBenchServer('reference', args, cpuFor(pinned), startNodeOptions(), targetNode.execPath), targetNode);
        checked.push('reference-tuned');
      }
      for (const id of checked) {
        const res = await probe(upstream, targets.get(id)?.port as number, passthroughRow('', 'passthrough', id));
        if (res.status !== 200) throw new Error(`${id} answered ${res.status}: ${res.text.slice(0, 200)}`);
      }
    }

    const proxyIdleRssMb = targets.has('proxy') ? rssBytes((targets.get('proxy') as Target).pids) / (1024 * 1024) : Number.NaN;
    const rowCount = rows.length + workerRows.length;
    say(
      `${rowCount} rows × (${options.warmupSeconds} s warm-up + ${options.runs} × ${options.seconds} s): ` +
        `about ${fmt((rowCount * (options.warmupSeconds + options.runs * (options.seconds + 0.5))) / 60, 1)} minutes of load`,
    );

    /** The processes beside a row's target whose CPU time its runs report. */
    const observedFor = (target: TargetId): Observed[] => {
      const out: Observed[] = [{ name: 'upstream', pid: up.child.pid as number }];
      if (redis && ['proxy-redis', 'proxy-deposit-redis', 'proxy-w1', 'proxy-w2'].includes(target)) out.push({ name: 'redis-server', pid: redis.child.pid as number });
      if (collector && target === 'proxy-tracing') out.push({ name: 'collector', pid: collector.child.pid as number });
      return out;
    };
    const measureRows = async (list: readonly RowSpec[], phasePinned: boolean): Promise<Map<string, RunResult[]>> => {
      const results = new Map<string, RunResult[]>(list.map((r) => [r.id, []]));
      const context = (row: RowSpec, seconds: number): MeasureContext => ({
        tool: options.tool,
        upstream,
        seconds,
        connections: options.connections,
        pinned: phasePinned,
        clients,
        observed: observedFor(row.target),
      });
      if (options.warmupSeconds > 0) {
        for (const row of list) {
          say(`warm-up ${row.id} (${options.warmupSeconds} s)`);
          await measure(row, targets.get(row.target) as Target, context(row, options.warmupSeconds));
        }
      }
      for (let run = 1; run <= options.runs; run++) {
        for (const row of list) {
          const result = await measure(row, targets.get(row.target) as Target, context(row, options.seconds));
          results.get(row.id)?.push(result);
          say(
            `run ${run}/${options.runs} ${row.id}: ${fmt(result.rps)} req/s, p99 ${fmt(result.p99Ms, 2)} ms, ${fmt(result.cpuUsPerRequest, 1)} µs/req, ${result.non2xx} non-2xx`,
          );
        }
      }
      return results;
    };

    const results = await measureRows(rows, pinned);

    // After the runs: the catalogue page by coding, and a sample refusal (the second of two requests
    // in a row: the first may be the circuit's trial call).
    let catalogueBytes: PageBytes | null = null;
    if (rows.some((r) => r.id === 'catalogue/proxy')) {
      try {
        catalogueBytes = await pageBytes(`http://127.0.0.1:${proxyPort}${CATALOGUE_PATH}`, clientHeaders(1, false)[0]);
      } catch (error) {
        skipped.push(`catalogue: the page could not be fetched by coding: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    let refusalSample: RefusalSample | null = null;
    const refusalRow = rows.find((r) => r.id === 'circuit-open/proxy');
    if (refusalRow) {
      await probe(upstream, proxyPort, refusalRow);
      const res = await probe(upstream, proxyPort, refusalRow);
      refusalSample = { status: res.status, error: envelopeError(res.text), retryAfter: res.header('retry-after') };
    }

    if (workerRows.length > 0 && redis) {
      // Unpinned phase: every process may use every CPU.
      if (pinned) {
        for (const pid of [process.pid, up.child.pid, redis.child.pid]) pin(pid as number, '0-1');
      }
      for (const [id, workers] of [['proxy-w1', 1], ['proxy-w2', 2]] as const) {
        const started = await startProxy(upstream, launch(targetNode, { REDIS_URL: redis.url }, undefined, workers));
        await sleep(workers > 1 ? 500 : 0); // the workers fork after the primary answers
        addTarget(id, started, targetNode);
      }
      for (const [id, list] of await measureRows(workerRows, false)) results.set(id, list);
    }

    const reference = results.get('passthrough/reference');
    const w1 = results.get('workers/proxy-w1');
    const reports: RowReport[] = [...rows, ...workerRows].map((spec) => {
      const runs = results.get(spec.id) ?? [];
      const m = (pick: (r: RunResult) => number) => median(runs.map(pick));
      const base = spec.scenario === 'workers' ? w1 : spec.id in PAIRED_BASE ? results.get(PAIRED_BASE[spec.id] ?? '') : reference;
      const rps = m((r) => r.rps);
      return {
        id: spec.id,
        scenario: spec.scenario,
        target: spec.target,
        method: spec.method,
        path: spec.path,
        headers: spec.headers,
        success: spec.expect === 'success',
        expect: spec.expect,
        node: nodeOf.get(spec.target) ?? targetNode.version,
        pinned: spec.pinned,
        clients: { count: options.sessions, withSession: spec.session, burst: spec.burst ?? 1 },
        runs,
        median: { rps, p50Ms: m((r) => r.p50Ms), p99Ms: m((r) => r.p99Ms), rssMb: m((r) => r.rssMb), cpuUsPerRequest: m((r) => r.cpuUsPerRequest) },
        total: {
          requests: runs.reduce((n, r) => n + r.requests, 0),
          non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
          errors: runs.reduce((n, r) => n + r.errors, 0),
          upstreamCalls: runs.reduce((n, r) => n + sumCalls(r.upstreamCalls), 0),
        },
        ratio: base === undefined || base.length === 0 ? undefined : pairedRatio(runs, base, (r) => r.rps),
      };
    });

    // After the runs: each proxy's metrics, once, and what the collector received.
    const metrics: MetricsScrape[] = [];
    for (const target of targets.values()) {
      if (target.metricsPort === undefined) continue;
      const measuredAnswers = reports.filter((r) => r.target === target.id).reduce((n, r) => n + r.total.requests, 0);
      metrics.push({ target: target.id, ...(await scrapeMetrics(target.metricsPort)), measuredAnswers });
    }
    const collectorCounts = collector
      ? await call(`http://127.0.0.1:${collector.port}/__bench/exports`).then(
          (res) => JSON.parse(res.text) as CollectorCounts,
          () => null,
        )
      : null;

    const checks = buildChecks(reports, {
      seconds: options.seconds,
      connections: options.connections,
      metrics,
      collector: collectorCounts,
      wanted,
      skipped,
      catalogueBytes,
      refusalSample,
    });
    const table = formatTable(reports);
    const report: BenchReport = {
      meta: {
        date: new Date().toISOString(),
        node: process.version,
        targetNode: { spec: targetNode.spec, version: targetNode.version },
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
        sessions: options.sessions,
        rateLimitApiPerMin: process.env.BENCH_RATE_LIMIT_API_PER_MIN || 'default',
        pinned,
        proxyIdleRssMb,
        skipped,
      },
      rows: reports,
      metrics,
      collector: collectorCounts,
      catalogueBytes,
      refusalSample,
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
      `${options.tool}, ${options.connections} connections, ${options.sessions} sessions and client addresses, ` +
        `${options.seconds} s × ${options.runs} runs (medians), ` +
        `${report.meta.cpus} CPUs (${report.meta.cpuModel}), ${pinned ? 'proxies on CPU 0, upstream and load on CPU 1' : 'unpinned'}` +
        (options.proxyNodeOptions ? `, extra proxy Node.js options ${options.proxyNodeOptions}` : ''),
    );
    say(
      `Node.js ${targetNode.version} (BENCH_NODE=${targetNode.spec}): the proxies, the reference and the peer; ` +
        `Node.js ${process.version} (the bench's own): the upstream${collector ? ', the collector' : ''}${options.tool === 'autocannon' ? ', autocannon' : ''}` +
        (host ? ` and "${TARGET_LABELS['proxy-host-node']}"` : ''),
    );
    say(table);
    say(
      'ratio: median over the rounds of requests/s relative to the run of the same round of the reference passthrough ' +
        '(redis and tracing rows: of the same row without REDIS_URL or tracing; workers rows: of WORKERS=1)',
    );
    for (const line of comparisonLines(report.rows)) say(line);
    if (catalogueBytes) {
      say('');
      say(`catalogue page GET ${catalogueBytes.path}, body bytes by Accept-Encoding (fetched once after the runs; — : not sent in that coding):`);
      say(formatPageBytes(catalogueBytes, (coding) => (coding === BROWSER_ACCEPT_ENCODING ? `${coding} (the catalogue rows')` : coding)));
    }
    say('');
    say(`proxy RSS before any load: ${fmt(proxyIdleRssMb, 0)} MB`);
    for (const s of skipped) say(`skipped: ${s}`);
    const mark = (c: Check) => (c.measured === false ? 'n/a ' : c.kind === 'reported' ? 'info' : c.kind === 'target' ? (c.ok ? 'met ' : 'MISS') : c.ok ? 'ok  ' : 'FAIL');
    say('targets (medians of the per-round ratios; printed, they never fail the command):');
    for (const c of checks.filter((k) => k.kind !== 'correctness')) say(`  ${mark(c)} ${c.name}: ${c.detail}`);
    say('checks (a FAIL makes the command exit with 1):');
    for (const c of checks.filter((k) => k.kind === 'correctness')) say(`  ${mark(c)} ${c.name}: ${c.detail}`);
    return report;
  } finally {
    await Promise.all([...children].map(stop));
  }
}

/** The scenarios whose rows also run against the proxy on the bench's own Node.js. */
const HOST_NODE_SCENARIOS: readonly ScenarioId[] = ['passthrough', 'catalogue', 'no-cookie'];

/** The pairs of rows printed under the table as paired ratios: what, this row, against that row. */
const COMPARISONS: readonly (readonly [label: string, row: string, base: string])[] = [
  ['passthrough against the reference', 'passthrough/proxy', 'passthrough/reference'],
  ["passthrough against the reference started with npm start's Node.js options too", 'passthrough/proxy', 'passthrough/reference-tuned'],
  ['passthrough against the Fastify + reply-from peer', 'passthrough/proxy', 'passthrough/peer'],
  ["passthrough, the measured Node.js against the bench's", 'passthrough/proxy', 'passthrough/proxy-host-node'],
  ["catalogue, the measured Node.js against the bench's", 'catalogue/proxy', 'catalogue/proxy-host-node'],
  ["401 without cookie, the measured Node.js against the bench's", 'no-cookie/proxy', 'no-cookie/proxy-host-node'],
  ["deposit against the reference's deposit", 'deposit/proxy', 'deposit/reference'],
  ['passthrough with tracing on against off', 'tracing/passthrough', 'passthrough/proxy'],
  ['passthrough with REDIS_URL against without', 'redis/passthrough', 'passthrough/proxy'],
  ['deposit with REDIS_URL against without', 'redis/deposit', 'deposit/proxy'],
  ['passthrough with WORKERS=2 against WORKERS=1 (unpinned)', 'workers/proxy-w2', 'workers/proxy-w1'],
];

/**
 * The lines printed under the table: the paired ratios of {@link COMPARISONS} (requests/s and CPU per
 * request) and, for the workers rows, where the CPU went (µs per request by process, medians of the runs).
 */
export function comparisonLines(rows: readonly RowReport[]): string[] {
  const lines: string[] = [];
  const rowOf = (id: string) => rows.find((r) => r.id === id);
  for (const [label, id, baseId] of COMPARISONS) {
    const row = rowOf(id);
    const base = rowOf(baseId);
    if (!row?.runs.length || !base?.runs.length) continue;
    const rps = pairedRatio(row.runs, base.runs, (r) => r.rps);
    const cpu = pairedRatio(row.runs, base.runs, (r) => r.cpuUsPerRequest);
    const nodes = row.node === base.node ? '' : ` (${row.node} against ${base.node})`;
    lines.push(`${label}${nodes}: ${fmt(rps, 2)}× requests/s, ${fmt(cpu, 2)}× CPU per request`);
  }
  const workers = rows.filter((r) => r.scenario === 'workers' && r.runs.length > 0);
  if (workers.length > 0) lines.push('where the CPU goes, workers rows (µs per request, median of the runs):');
  for (const row of workers) {
    const names = [...new Set(row.runs.flatMap((run) => Object.keys(run.cpuByProcess)))];
    const parts = names.map((name) => `${name} ${fmt(median(row.runs.map((run) => run.cpuByProcess[name] ?? Number.NaN)), 1)}`);
    lines.push(`  ${TARGET_LABELS[row.target]}: ${parts.join(', ')}`);
  }
  return lines;
}

function intFromEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`${name}: expected a number ≥ ${min}, got "${raw}"`);
  return value;
}

/** `BENCH_NODE` when unset: the image's Node.js line, from the npm registry as CI runs it (`.ci/run`). */
const DEFAULT_NODE = '24';
/**
 * Seconds of load per row before its first run when `BENCH_WARMUP` is unset (at most `BENCH_SECONDS`):
 * 2 since round 3 (3 before), which keeps the 19 rows of a full run near 11 minutes on two CPUs.
 */
const DEFAULT_WARMUP_SECONDS = 2;

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
    warmupSeconds: intFromEnv('BENCH_WARMUP', Math.min(DEFAULT_WARMUP_SECONDS, seconds), 0),
    connections: intFromEnv('BENCH_CONNECTIONS', 50, 1),
    sessions: intFromEnv('BENCH_SESSIONS', DEFAULT_SESSIONS, 1),
    tool: pickTool(process.env.BENCH_TOOL),
    scenarios: scenarios as ScenarioId[],
    pin: process.env.BENCH_PIN !== '0',
    logPath: process.env.BENCH_LOG ?? '/dev/null',
    proxyNodeOptions: process.env.BENCH_PROXY_NODE_OPTIONS || undefined,
    resultsPath: process.env.BENCH_RESULTS ?? join(ROOT, 'bench', 'results.json'),
    print: true,
    node: process.env.BENCH_NODE || DEFAULT_NODE,
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
