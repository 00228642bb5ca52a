/**
 * The runner's parts that every scenario family (`scenarios/*.ts`) shares: the report's types, the
 * processes the bench starts (its own servers, the proxy as `npm start` runs it, a redis-server), one
 * measured run of a row ({@link measure}), the proxy's metrics read by status, and the figures' format.
 *
 * @module
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { clientHeaders } from './clients.js';
import { compileScript } from './compile.js';
import { type LoadResult, type LoadTool, runLoad } from './load.js';
import { cpuMicros, pinnedCommand, rssBytes } from './proc.js';
import type { CollectorCounts } from './collector.js';
import type { PageBytes } from './page-bytes.js';
import type { RedisCommandReport } from './redis-commands.js';
import type { StreamsReport } from './streams.js';
import type { UpstreamCalls } from './upstream.js';

/** The repository's root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Peak resident memory a proxy process should stay under, in MiB (the manifest's memory request). */
export const RSS_TARGET_MB = 256;
/** Pause after each run for the calls still in flight, in milliseconds. */
export const SETTLE_MS = 300;

/**
 * A scenario's name in `BENCH_SCENARIOS` (e.g. `passthrough`, `tracing`): each belongs to one family
 * module of `scenarios/`, which gives its label.
 */
export type ScenarioId = string;

/**
 * A process a row loads: `proxy` (the proxy on `BENCH_NODE`), `proxy-host-node` (the same on the bench's
 * own Node.js), `reference`, `peer`, and the proxies a family starts with its own configuration
 * (`proxy-deposit`, `proxy-redis`, `proxy-tracing-0.1`…).
 */
export type TargetId = string;

/** The status every answer of a row should have: any 2xx (`success`), or one status. */
export type Expected = 'success' | 304 | 401 | 503;

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

/**
 * One row of the table: a scenario against one target (the {@link RowSpec} it ran: id, scenario,
 * target, method, path and headers), its runs and their medians.
 */
export interface RowReport extends Pick<RowSpec, 'id' | 'scenario' | 'target' | 'method' | 'path' | 'headers'> {
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

/** What the families found besides the rows (after the runs, or on their own), in the report. */
export interface Findings {
  /** What the trace collector received (the `tracing` scenario only), in all and by tracing proxy. */
  collector: CollectorCounts | null;
  /** The catalogue page's body bytes by `Accept-Encoding`, fetched once after the runs (`catalogue` scenario). */
  catalogueBytes: PageBytes | null;
  /** The `circuit-open` row's sample answer after the runs. */
  refusalSample: RefusalSample | null;
  /** Redis commands and round trips per deposit (the `redis-commands` scenario). */
  redisCommands: RedisCommandReport | null;
  /** The live streams' figures (the `streams` scenario). */
  streams: StreamsReport | null;
}

/** The whole report, as written to `bench/results.json`. */
export interface BenchReport extends Findings {
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
  checks: Check[];
  table: string;
}

/** A process the bench started, with the processes whose CPU time counts as its own. */
export interface Target {
  id: TargetId;
  child: ChildProcess;
  port: number;
  /** The proxy's `METRICS_PORT`. */
  metricsPort?: number | undefined;
  pids: number[];
}

/** A process beside the target whose CPU time a run reports (`RunResult.cpuByProcess`). */
export interface Observed {
  name: string;
  pid: number;
}

export interface RowSpec {
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
  /** The row its ratio is to (its id), run for run; default the reference passthrough. */
  base?: string;
}

/** Every child process the bench started and that has not exited: stopped at the end, or on SIGINT/SIGTERM. */
export const children = new Set<ChildProcess>();

/** The median of the values (the mean of the two middle ones for an even count); `NaN` for none. */
export function median(values: readonly number[]): number {
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

/** A TCP port free on 127.0.0.1 right now (another program may take it before it is used). */
export function freePort(): Promise<number> {
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

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Adds a child process to {@link children} until it exits, and keeps the last 4,000 characters of its standard error (for the error messages). */
export function track(child: ChildProcess, name: string): { stderr: () => string } {
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
 * @param startTimeoutMs - how long it may take to print its port (a process under valgrind is slow), in milliseconds.
 */
export async function startBenchServer(
  script: string,
  args: string[],
  cpus: string | undefined,
  nodeArgs: readonly string[] = [],
  node: string = process.execPath,
  startTimeoutMs = 30_000,
): Promise<{ child: ChildProcess; port: number }> {
  const [command, argv] = pinnedCommand(cpus, node, [...nodeArgs, compileScript(script), ...args]);
  const child = spawn(command, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_ENV: 'production' } });
  const { stderr } = track(child, script);
  const port = await new Promise<number>((resolvePort, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`${script} did not start: ${stderr()}`)), startTimeoutMs);
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

/** The memory limit of `deploy/kubernetes/deployment.yaml`'s container, in MiB (`BENCH_MEMORY_LIMIT_MB`'s default). */
export const CONTAINER_MEMORY_LIMIT_MB = 512;

/**
 * The heap limit the proxy's container gives it, as a Node.js option for the proxy processes:
 * `--max-old-space-size=<half the limit>` (`BENCH_MEMORY_LIMIT_MB`, default
 * {@link CONTAINER_MEMORY_LIMIT_MB}). Node.js sizes V8's heap from the memory limit of its cgroup: in a
 * 512 MiB memory cgroup, `v8.getHeapStatistics().heap_size_limit` is 259 MB on Node.js 20 and 24 (4,288
 * MB on this 24 GB machine outside one), the same as with this option. `BENCH_MEMORY_LIMIT_MB=0`: none
 * (the heap may grow as the machine's memory allows, as before round 4).
 */
export function containerHeapOptions(env: NodeJS.ProcessEnv = process.env): string[] {
  const raw = env.BENCH_MEMORY_LIMIT_MB;
  const limit = raw === undefined || raw === '' ? CONTAINER_MEMORY_LIMIT_MB : Number(raw);
  if (!Number.isInteger(limit) || limit < 0) throw new Error(`BENCH_MEMORY_LIMIT_MB: expected a whole number of MiB, got "${raw}"`);
  return limit === 0 ? [] : [`--max-old-space-size=${Math.floor(limit / 2)}`];
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
export const START_ATTEMPTS = 3;

/** What {@link startProxy} started. */
export interface StartedProxy {
  child: ChildProcess;
  port: number;
  metricsPort: number;
}

/** What {@link BenchContext.startProxyTarget} may change of a proxy's launch. */
export interface ProxyTargetOptions {
  /** `WORKERS`; default 1. */
  workers?: number;
  /** `taskset` CPU list, `undefined` for none; default: the pinned rows' CPU. */
  cpus?: string | undefined;
  /** Whether the container's heap limit applies ({@link containerHeapOptions}); default `true`. */
  heapLimit?: boolean;
}

/** How {@link startProxy} starts a proxy process. */
export interface ProxyLaunch {
  /** `WORKERS`. */
  workers: number;
  /** `taskset` CPU list; `undefined`: not pinned. */
  cpus: string | undefined;
  logPath: string;
  /** More Node.js options (`BENCH_PROXY_NODE_OPTIONS`), after `npm start`'s. */
  nodeOptions: string | undefined;
  /** The `node` binary. */
  node: string;
  /** Whether the container's heap limit applies ({@link containerHeapOptions}); default `true`. */
  heapLimit?: boolean;
  /** Longest wait for `GET /healthz` after the start, in milliseconds; default 30,000 (more under valgrind). */
  startTimeoutMs?: number;
  /** More environment variables (`REDIS_URL`, `OTEL_EXPORTER_OTLP_ENDPOINT`). */
  env?: Record<string, string>;
  /**
   * Pipeline steps to leave out (comma-separated names of `src/pipeline/steps.ts`, `''` for none):
   * the process is then `steps-off.ts` (the same app as `dist/server.js`, built with `omitSteps`; one
   * process, `workers` 1) with `BENCH_STEPS_OFF` set to them. Default: `dist/server.js`.
   */
  stepsOff?: string;
}

/**
 * Starts the proxy as a production deployment runs it: `npm start`'s command (`node <options>
 * dist/server.js`), `NODE_ENV=production`, metrics on (`METRICS_PORT`, a free loopback port), the
 * default rate limits, behind a load balancer on loopback (`TRUSTED_PROXIES=127.0.0.1`: the proxy
 * believes the right-most `X-Forwarded-For` address), logging at `info` (unless `launch.env` gives a
 * `LOG_LEVEL`), tracing off (no
 * `OTEL_EXPORTER_OTLP_ENDPOINT` unless `launch.env` gives one). Nothing else of the bench's environment
 * reaches it.
 */
export async function startProxy(upstream: string, launch: ProxyLaunch): Promise<StartedProxy> {
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

/**
 * One attempt of {@link startProxy}: two free ports, the process, then `GET /healthz` every 100 ms until
 * 200 (`launch.startTimeoutMs`, 30 s by default).
 * @throws when the process exits (its standard error in the message, `EADDRINUSE` included) or does not answer in time.
 */
export async function startProxyOnce(upstream: string, launch: ProxyLaunch): Promise<StartedProxy> {
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
    // A variant's own level (`LOG_LEVEL=warn`: the request lines off) wins over the bench's default.
    LOG_LEVEL: launch.env?.LOG_LEVEL ?? 'info',
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
  const heap = launch.heapLimit === false ? [] : containerHeapOptions();
  const nodeArgs = [...startNodeOptions(), ...heap, ...(launch.nodeOptions ? launch.nodeOptions.split(/\s+/).filter(Boolean) : [])];
  const entry = launch.stepsOff === undefined ? [join(ROOT, 'dist', 'server.js')] : [compileScript('steps-off'), ROOT];
  if (launch.stepsOff !== undefined) env.BENCH_STEPS_OFF = launch.stepsOff;
  const [command, argv] = pinnedCommand(launch.cpus, launch.node, [...nodeArgs, ...entry]);
  const child = spawn(command, argv, { cwd: ROOT, stdio: ['ignore', log, 'pipe'], env });
  closeSync(log);
  const { stderr } = track(child, 'proxy');
  const deadline = Date.now() + (launch.startTimeoutMs ?? 30_000);
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
export async function startRedisServer(cpus: string | undefined): Promise<{ url: string; child: ChildProcess } | undefined> {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  const port = await freePort();
  const [command, argv] = pinnedCommand(cpus, 'redis-server', [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
  ]);
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

/** Stops a child process: SIGTERM, then SIGKILL after 5 s; resolves when it has exited. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** One request with undici: its status, body text and a header reader (several values joined with `, `). */
export async function call(url: string, init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {}) {
  const res = await request(url, { method: init.method ?? 'GET', headers: init.headers, body: init.body });
  const header = (name: string): string | null => {
    const value = res.headers[name];
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
  };
  return { status: res.statusCode, text: await res.body.text(), header };
}

/** The `error` of a JSON envelope (`{ "ok": false, "error": … }`), if the text is one. */
export function envelopeError(text: string): string | undefined {
  try {
    const error = (JSON.parse(text) as { error?: unknown }).error;
    return typeof error === 'string' ? error : undefined;
  } catch {
    return undefined;
  }
}

/** The bench upstream's calls by path since its last reset (`GET /__bench/calls`). */
export async function upstreamCalls(upstream: string): Promise<UpstreamCalls> {
  return JSON.parse((await call(`${upstream}/__bench/calls`)).text) as UpstreamCalls;
}

/** Resets the bench upstream's counts (`POST /__bench/reset`). */
export async function resetUpstream(upstream: string): Promise<void> {
  await call(`${upstream}/__bench/reset`, { method: 'POST' });
}

/** All the calls of a by-path count. */
export function sumCalls(calls: Record<string, number>): number {
  return Object.values(calls).reduce((a, b) => a + b, 0);
}

/**
 * Sends one request of a row (as the first client: session 0, its address) and returns its status,
 * body, headers and the upstream calls it made.
 */
export async function probe(
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

/** Whether an answer is the proxy's 404 `not_found` envelope: the route is not served (the row is skipped). */
export function isMissingRoute(res: { status: number; text: string }): boolean {
  return res.status === 404 && res.text.includes('"not_found"');
}

/** What {@link measure} needs besides the row and its target. */
export interface MeasureContext {
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
export function targetProcessNames(target: Target): string[] {
  const base = target.id.startsWith('proxy') ? 'proxy' : target.id;
  if (target.pids.length === 1) return [base];
  return target.pids.map((_, i) => (i === 0 ? `${base} primary` : `${base} worker ${i}`));
}

/**
 * One measured run of a row against its target: the load for `ctx.seconds`, the target's CPU time and
 * peak RSS (sampled every 250 ms), the observed processes' CPU, the upstream's calls and the proxy's own
 * count of the route's answers by status (its metrics before and after).
 */
export async function measure(row: RowSpec, target: Target, ctx: MeasureContext): Promise<RunResult> {
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
    rss = Math.max(
      rss,
      each.reduce((a, b) => a + b, 0),
    );
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
 * One sample of the proxy's answer counter in a metrics text line: the `_count` of its request
 * duration histogram, named `http_request_duration_seconds` or, with the metric prefix,
 * `front_proxy_http_request_duration_seconds` (both are read, whichever the proxy exposes).
 * @returns its label text (between the braces, `''` without) and value, or `undefined` for any other line.
 */
export function requestCountSample(line: string): { labels: string; value: number } | undefined {
  const sample = /^(?:front_proxy_)?http_request_duration_seconds_count(?:\{([^}]*)\})?\s+(\S+)/.exec(line);
  return sample ? { labels: sample[1] ?? '', value: Number(sample[2]) } : undefined;
}

/**
 * The answers of one route pattern a proxy's metrics text counts, by status code: its
 * `front_proxy_http_request_duration_seconds_count` samples with `route="<route>"`, summed over the methods.
 */
export function statusesOfRoute(metricsText: string, route: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of metricsText.split('\n')) {
    const sample = requestCountSample(line);
    if (!sample) continue;
    const labels = new Map([...sample.labels.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    const status = labels.get('status_code');
    if (labels.get('route') !== route || status === undefined) continue;
    out[status] = (out[status] ?? 0) + sample.value;
  }
  return out;
}

/** {@link statusesOfRoute} of a proxy's `GET /metrics` now; `undefined` when the scrape fails. */
export async function routeStatuses(metricsPort: number, route: string): Promise<Record<string, number> | undefined> {
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
export async function scrapeMetrics(metricsPort: number): Promise<{ status: number; requestCount: number }> {
  try {
    const res = await call(`http://127.0.0.1:${metricsPort}/metrics`);
    let requestCount = 0;
    for (const line of res.text.split('\n')) {
      const sample = requestCountSample(line);
      if (sample) requestCount += sample.value;
    }
    return { status: res.status, requestCount };
  } catch {
    return { status: 0, requestCount: 0 };
  }
}

/** A figure with thousands separators and `digits` decimals; `-` for none or not finite. */
export function fmt(value: number | undefined, digits = 0): string {
  if (value === undefined || !Number.isFinite(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Highest per-process RSS of a list of rows over all their runs, in MiB. */
export function peakProcessRss(list: readonly RowReport[]): number {
  return Math.max(...list.flatMap((r) => r.runs.map((run) => run.processRssMb)));
}

/** A run's answers by status as text (`12 × 304, 1 × 200`), `none`, or `no metrics`. */
export function fmtStatuses(statuses: Record<string, number> | undefined): string {
  if (!statuses) return 'no metrics';
  const entries = Object.entries(statuses);
  return entries.length === 0 ? 'none' : entries.map(([status, n]) => `${n} × ${status}`).join(', ');
}

/** The commit the bench measures (`+changes` when `src/` has uncommitted changes). */
export function gitCommit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', 'src'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return dirty ? `${head}+changes` : head;
  } catch {
    return 'unknown';
  }
}

/** What the checks of a family judge besides the rows. */
export interface CheckInputs {
  seconds: number;
  connections: number;
  metrics: readonly MetricsScrape[];
  /** The scenarios asked for: a target of a scenario not asked for is not printed. */
  wanted: ReadonlySet<ScenarioId>;
  /** Why rows were left out (`meta.skipped`), for the targets they leave unmeasured. */
  skipped: readonly string[];
  findings: Findings;
}

/** A pair of rows printed under the table as paired ratios: what, this row, against that row. */
export interface Comparison {
  label: string;
  row: string;
  base: string;
}

/** The passthrough route the proxy serves (found at start) and the upstream path it calls. */
export interface PassthroughRoute {
  path: string;
  upstreamPath: string;
}

/**
 * What a family plans its rows with: the processes started so far, the rows, and the helpers of the
 * runner. Families add targets and rows in {@link ScenarioFamily.plan}, in the table's order.
 */
export interface BenchContext {
  readonly options: BenchOptions;
  /** Whether the proxies run pinned to CPU 0 (and the upstream, Redis, the collector, the load to CPU 1). */
  readonly pinned: boolean;
  /** The bench upstream's base URL. */
  readonly upstream: string;
  /** The upstream's process, for the CPU it takes. */
  readonly upstreamPid: number;
  /** The Node.js of the proxies, the reference and the peer. */
  readonly targetNode: NodeRuntime;
  /** The proxy on the bench's own Node.js beside the measured one, when it runs. */
  readonly host: NodeRuntime | undefined;
  /** The main proxy's port (every family's row against `proxy` loads it). */
  readonly proxyPort: number;
  readonly passthrough: PassthroughRoute;
  readonly wanted: ReadonlySet<ScenarioId>;
  readonly targets: Map<TargetId, Target>;
  /** The rows of the pinned phase, in the table's order. */
  readonly rows: RowSpec[];
  /** The rows of the unpinned phase (after the pinned one; targets started by {@link ScenarioFamily.beforeUnpinned}). */
  readonly unpinnedRows: RowSpec[];
  /** Why rows were left out (printed under the table, `meta.skipped`). */
  readonly skipped: string[];
  readonly findings: Findings;
  /** Prints a progress line (when `options.print`). */
  say(text: string): void;
  /**
   * Starts a proxy on `BENCH_NODE` with more environment variables and adds it as `id`: one worker,
   * pinned like the others and with the container's heap limit, unless `options` says otherwise.
   */
  startProxyTarget(id: TargetId, env?: Record<string, string>, options?: ProxyTargetOptions): Promise<Target>;
  /** Adds a process started otherwise (the reference, the peer) as `id`. */
  addTarget(id: TargetId, started: { child: ChildProcess; port: number; metricsPort?: number }, node: NodeRuntime): void;
  /** A GET of the passthrough route with a session, expecting a 2xx. */
  passthroughRow(id: string, scenario: ScenarioId, target: TargetId, pinned?: boolean): RowSpec;
  /** Probes a row once (`port`: default the main proxy): `false` (and a skip line) when its route is not served; throws on a wrong status. */
  wantRow(spec: RowSpec, port?: number): Promise<boolean>;
  /** The row, and the same row against the proxy on the bench's own Node.js when it runs. */
  withHost(spec: RowSpec): RowSpec[];
  /** A local redis-server (started once, on the upstream's CPU), or `undefined` when none is installed. */
  redis(): Promise<{ url: string; child: ChildProcess } | undefined>;
  /** Reports the CPU of `pid` as `name` in the runs of `target`'s rows. */
  observe(target: TargetId, name: string, pid: number): void;
}

/**
 * One family of scenarios, one module of `scenarios/`: its scenario names and labels, the targets it
 * starts, the rows it plans, what it fetches after the runs and the checks it prints. A new row is a
 * new family module (or a row more in one), listed in `scenarios/index.ts`.
 */
export interface ScenarioFamily {
  /** The scenarios it owns (`BENCH_SCENARIOS` names) and their labels in the table, in the table's order. */
  readonly scenarios: Readonly<Record<ScenarioId, string>>;
  /** Labels of the targets it starts (the table's "target" column); an id without one is shown as is. */
  readonly targetLabels?: Readonly<Record<TargetId, string>>;
  /** Scenarios whose rows also run against the proxy on the bench's own Node.js. */
  readonly hostNodeScenarios?: readonly ScenarioId[];
  /** Pairs of rows printed under the table as paired ratios. */
  readonly comparisons?: readonly Comparison[];
  /** Starts its targets and adds its rows (only when one of its scenarios is wanted). */
  plan(ctx: BenchContext): Promise<void>;
  /** After every family has planned: e.g. the reference and the peer, started when a row needs them. */
  afterPlan?(ctx: BenchContext): Promise<void>;
  /** After the pinned runs (samples, fetches). */
  afterRuns?(ctx: BenchContext): Promise<void>;
  /** Before the unpinned phase: starts the targets of its unpinned rows. */
  beforeUnpinned?(ctx: BenchContext): Promise<void>;
  /** Its targets (printed) and correctness checks (failing the command). */
  checks?(rows: readonly RowReport[], inputs: CheckInputs): Check[];
  /** Lines printed under the table's comparisons, from what it found (e.g. the catalogue page's bytes). */
  summary?(findings: Findings): string[];
}

/** A check for a target that could not be measured (its row did not run). */
export function unmeasured(name: string, detail: string, kind: Check['kind'] = 'target'): Check {
  return { name, ok: false, kind, measured: false, detail: `not measured: ${detail}` };
}

/** Why a scenario's rows were left out, from the skip lines (`<scenario>: <why>`). */
export function skipReason(skipped: readonly string[], scenario: ScenarioId): string | undefined {
  return skipped
    .find((s) => s.startsWith(`${scenario}:`))
    ?.slice(scenario.length + 1)
    .trim();
}

/** A row of a report by scenario and target. */
export function findRow(rows: readonly RowReport[], scenario: ScenarioId, target: TargetId): RowReport | undefined {
  return rows.find((r) => r.scenario === scenario && r.target === target);
}

/**
 * A target check of a row against the reference passthrough: its ratio ≥ `floor` (printed only), or
 * unmeasured when the row or the reference did not run; nothing when the scenario was not asked for.
 */
export function againstReference(
  rows: readonly RowReport[],
  inputs: CheckInputs,
  scenario: ScenarioId,
  name: string,
  floor: number,
): Check[] {
  if (!inputs.wanted.has(scenario)) return [];
  const row = findRow(rows, scenario, 'proxy');
  if (!row) return [unmeasured(name, skipReason(inputs.skipped, scenario) ?? 'the row did not run')];
  if (!findRow(rows, 'passthrough', 'reference')) return [unmeasured(name, 'the reference passthrough runs with the passthrough scenario')];
  return [{ name, ok: (row.ratio ?? 0) >= floor, kind: 'target', detail: `${fmt(row.ratio, 2)}×` }];
}
