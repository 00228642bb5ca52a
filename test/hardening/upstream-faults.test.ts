/**
 * Hardening row 16, upstream faults and overload (docs/behaviour.md "Resilience", its table of targets):
 * the proxy as `npm start` runs it (`dist/server.js` with its Node.js options, `NODE_ENV=production`)
 * in front of a fake BFF in this process that turns slow, hangs, closes its connections and answers
 * 503, while clients on loopback loop on it. One proxy process per fault, so that no breaker or cache
 * carries over. The request limits are off (every client here is one loopback address; the limits
 * have rows of their own); load shedding, the endpoint guards and the breakers run with their defaults.
 *
 * | fault | target (full run) |
 * |---|---|
 * | one endpoint answers after 8 s, 400 clients loop on it | another route's p99 < 100 ms, no errors |
 * | one endpoint hangs (`UPSTREAM_TIMEOUT_MS=3000`) | from 10 s after the hang: its calls answer 503 in < 50 ms p99, ≤ 5 calls reach it per 10 s, other routes unaffected |
 * | one endpoint hangs with the default limits (`UPSTREAM_TIMEOUT_MS=15000`, 200 clients on it), then recovers | after its circuit opened, ≤ 1 call reaches it per pause; once it recovers, its calls answer 200 again within the pause + 1 s |
 * | the whole BFF hangs | cached catalogue pages 200 (anonymous and with a session); `/readyz` 200; other routes (the raw passthrough among them) 503 in < 50 ms p99 after 10 s; RSS grows < 50 MB |
 * | 300 reads whose clients leave after 0.5 s while the endpoint hangs | ≤ 1% of their upstream calls held 1 s later; deposits sent next reach the BFF and are not cut when their clients leave |
 * | the BFF closes each kept-alive connection after answering | 0 client-visible errors in 5,000 GETs |
 * | the BFF answers 503 to every read | ≤ 1.1 upstream calls per client request |
 * | 1,000 clients that give up after 1 s and ask again at once, for 20 s | alive, `/healthz` p99 < 500 ms (on `PORT` and on `HEALTH_PORT`), peak RSS < 400 MB, full capacity within 3 s after |
 *
 * The bounded run (`npm test`) scales clients and durations down and allows the latencies of a
 * machine shared with another test file (`LATENCY_FACTOR`); the recovery row then runs with a 3 s time
 * limit and a 1 s pause. `npm run test:hardening` runs the table, with the proxy pinned to CPU 0 and
 * this process to CPU 1 (`PIN`), as the benchmark pins them. The 400 clients of the slow endpoint and
 * the 1,000 of the retry storm loop on a thread of their own, at a lower priority, so that the answers
 * timed are the proxy's; the storm's process runs with `HEALTH_PORT` and `MAX_CONNECTIONS=512` (the
 * settings docs/operations.md advises against storms), and `/healthz` is probed over a kept-alive
 * connection on `PORT` and, as a kubelet probes, on a connection of its own each time on `HEALTH_PORT`
 * (checked) and on `PORT` (reported). Its "full capacity" is the answers per second of 50 kept-alive
 * clients on a passthrough route, after a warm-up, before the storm and in 1 s windows from its end
 * (its clients then leave, their open requests given up) until the proxy has used the CPU time it used
 * in 3 s before; that last window must reach 90% of before (per CPU second of the proxy, when the
 * machine gave it less CPU than before). The RSS growth of
 * the whole-BFF hang is measured from the same load before the hang; the breakers' trial calls (and
 * profile reads sharing one) are counted apart from the refusals.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, get as httpGet, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import { after, before, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { Pool } from 'undici';
import { fakeJwt } from '../helpers/recording-upstream.js';
import { FULL, Figures } from './helpers/figures.js';
import { GOOD_PROFILE } from './helpers/upstream.js';

const figures = new Figures('upstream-faults', 16, 'Upstream faults and overload');
/** Latency targets are multiplied by this in the bounded run (two test files share two cores). */
const LATENCY_FACTOR = FULL ? 1 : 10;
const COOKIE = '__Host-access_token';
const SLOW = '/bff/games/user-last-casino-games-dl'; // GET /api/user/last-casino-games
const OTHER = '/bff/users/login-history'; // GET /api/user/login-history
const CATALOGUE = '/casino-games/list/'; // GET /api/games/list
const DEPOSIT = '/wallet/add-credit'; // POST /api/payments/deposit
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ------------------------------------------------------------------------------------------------
// The fake BFF
// ------------------------------------------------------------------------------------------------

type Mode = { kind: 'ok' } | { kind: 'delay'; ms: number } | { kind: 'hang' } | { kind: 'close' } | { kind: 'status'; status: number };

/** A BFF on a loopback port whose answer per path can be made slow, hung, closing or failing. */
class FakeBff {
  readonly server: Server;
  url = '';
  readonly #modes = new Map<string, Mode>();
  #fallback: Mode = { kind: 'ok' };
  /** Arrival times (`performance.now()`) per path. */
  readonly arrivals = new Map<string, number[]>();
  /** Requests received and not yet answered (or closed), per path. */
  readonly open = new Map<string, Set<ServerResponse>>();
  /** Answers written in full, per path. */
  readonly finished = new Map<string, number>();

  constructor() {
    this.server = createServer((req, res) => this.#handle(req, res));
    this.server.keepAliveTimeout = 60_000;
  }
  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  mode(path: string, mode: Mode): void {
    this.#modes.set(path, mode);
  }
  fallback(mode: Mode): void {
    this.#fallback = mode;
  }
  reset(): void {
    this.#modes.clear();
    this.#fallback = { kind: 'ok' };
    this.arrivals.clear();
    this.finished.clear();
    this.release();
  }
  /** Answers every held request (so that nothing stays open). */
  release(): void {
    for (const set of this.open.values()) for (const res of set) if (!res.writableEnded && !res.destroyed) res.destroy();
    this.open.clear();
  }
  calls(path: string, since = 0): number {
    return (this.arrivals.get(path) ?? []).filter((t) => t >= since).length;
  }
  /** Calls that arrived since `since`, by path. */
  callsByPath(since = 0): Record<string, number> {
    const out: Record<string, number> = {};
    for (const path of this.arrivals.keys()) {
      const n = this.calls(path, since);
      if (n > 0) out[path] = n;
    }
    return out;
  }
  held(path: string): number {
    return this.open.get(path)?.size ?? 0;
  }
  async close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
  #handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    req.resume();
    let list = this.arrivals.get(path);
    if (!list) this.arrivals.set(path, (list = []));
    list.push(performance.now());
    let open = this.open.get(path);
    if (!open) this.open.set(path, (open = new Set()));
    open.add(res);
    res.on('close', () => open.delete(res));
    res.on('finish', () => this.finished.set(path, (this.finished.get(path) ?? 0) + 1));
    const mode = this.#modes.get(path) ?? this.#fallback;
    const body = path.endsWith('/auth/user-profile')
      ? GOOD_PROFILE
      : path === CATALOGUE
        ? { data: [{ id: 1, slug: 'a' }], total: 1 }
        : { ok: true };
    const answer = (status = 200) => {
      if (res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(status === 200 ? body : { message: 'unavailable' }));
    };
    req.on('end', () => {
      switch (mode.kind) {
        case 'ok':
          return answer();
        case 'delay':
          return void setTimeout(answer, mode.ms);
        case 'hang':
          return;
        case 'status':
          return answer(mode.status);
        case 'close':
          // No `Connection: close`: the socket is closed right after the answer, as a BFF behind a
          // balancer that recycles connections does, and the proxy may have picked it for its next call.
          res.on('finish', () => req.socket.end());
          return answer();
      }
    });
  }
}

// ------------------------------------------------------------------------------------------------
// The proxy process, as `npm start` runs it
// ------------------------------------------------------------------------------------------------

interface Proc {
  child: ChildProcess;
  base: string;
  /** The health listener's base URL, when `HEALTH_PORT` is set. */
  healthBase: string | undefined;
  pool: Pool;
  /** The last 256 KiB of what it printed. */
  output(): string;
  /** Resident set size now, in MB (Linux `/proc`), or NaN. */
  rssMb(): number;
  stop(): Promise<void>;
}

/**
 * In the full run, where `taskset` works and there are two CPUs or more, the proxy runs alone on CPU 0
 * and this process (the fake BFF, the timed clients and the load thread, which lowers its own
 * priority) on CPU 1, as the benchmark pins its processes: the latencies are the proxy's, not those of
 * a proxy taking turns on its core with the load that tests it.
 */
const PIN = FULL && cpus().length >= 2 && spawnSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' }).status === 0;
function pin(pid: number | undefined, cpu: number): void {
  if (PIN && pid !== undefined) spawnSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
}

const START_OPTIONS = ((): string[] => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } };
  return pkg.scripts.start.split(/\s+/).filter((part) => part.startsWith('--'));
})();

async function startProcess(bff: FakeBff, env: Record<string, string> = {}, connections = 64): Promise<Proc> {
  const child = spawn(process.execPath, [...START_OPTIONS, 'dist/server.js'], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      BFF_BASE_URL: bff.url,
      STICKER_API_URL: `${bff.url}/sticker`,
      RATE_LIMIT_API_PER_MIN: '0',
      RATE_LIMIT_API_PER_ADDRESS_PER_MIN: '0',
      RATE_LIMIT_PREAUTH_PER_MIN: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  pin(child.pid, 0);
  let out = '';
  const keep = (chunk: Buffer) => {
    out += chunk.toString('utf8');
    if (out.length > 262_144) out = out.slice(-131_072);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no address: ${out.slice(-400)}`)), 30_000);
    const look = () => {
      const match = /front proxy listening on (http:\/\/[0-9.:]+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', look);
    child.stderr?.on('data', look);
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out.slice(-400)}`)));
  });
  const healthBase =
    env.HEALTH_PORT === undefined
      ? undefined
      : await new Promise<string>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no health address: ${out.slice(-400)}`)), 10_000);
          const look = () => {
            const match = /health on (http:\/\/[0-9.:]+)/.exec(out);
            if (match?.[1]) {
              clearTimeout(timer);
              resolve(match[1]);
            }
          };
          look();
          child.stdout?.on('data', look);
        });
  const pool = new Pool(base, { connections, pipelining: 1, keepAliveTimeout: 30_000 });
  return {
    child,
    base,
    healthBase,
    pool,
    output: () => out,
    rssMb: () => {
      try {
        const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
        const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
        return kb / 1024;
      } catch {
        return Number.NaN;
      }
    },
    async stop() {
      await pool.destroy().catch(() => undefined);
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

// ------------------------------------------------------------------------------------------------
// Clients
// ------------------------------------------------------------------------------------------------

interface Answer {
  status: number | 'aborted' | 'error';
  /** The route asked, where a loop mixes routes. */
  path?: string;
  ms: number;
  error?: string;
  at: number;
}

const tokens = Array.from({ length: 64 }, (_, i) => fakeJwt({ sub: '7', n: i }));
let tokenTurn = 0;
function cookie(): string {
  tokenTurn = (tokenTurn + 1) % tokens.length;
  return `${COOKIE}=${tokens[tokenTurn]}`;
}

/** One request through `pool`; `giveUpMs`: the client leaves then (the request is aborted). */
async function call(
  pool: Pool,
  path: string,
  options: { method?: 'GET' | 'POST'; json?: unknown; giveUpMs?: number; session?: boolean } = {},
): Promise<Answer> {
  const start = performance.now();
  const headers: Record<string, string> = {};
  if (options.session !== false) headers.cookie = cookie();
  let body: string | undefined;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] = 'application/json';
  }
  try {
    const res = await pool.request({
      method: options.method ?? 'GET',
      path,
      headers,
      body,
      signal: options.giveUpMs === undefined ? undefined : AbortSignal.timeout(options.giveUpMs),
    });
    if (res.statusCode !== 503) {
      await res.body.dump();
      return { status: res.statusCode, ms: performance.now() - start, at: start };
    }
    // A 503 says why (upstream_busy, upstream_circuit_open, overloaded…).
    const text = await res.body.text();
    const why = /"error":"([a-z_]+)"/.exec(text)?.[1];
    return { status: res.statusCode, ms: performance.now() - start, at: start, ...(why === undefined ? {} : { error: why }) };
  } catch (error) {
    const name = (error as { name?: string }).name;
    const aborted = name === 'AbortError' || name === 'TimeoutError' || (error as { code?: string }).code === 'UND_ERR_ABORTED';
    return { status: aborted ? 'aborted' : 'error', ms: performance.now() - start, at: start, error: (error as Error).message };
  }
}

/** One `GET url` on a connection of its own, closed after the answer (as a kubelet probe); at most 5 s. */
function probeOnce(url: string): Promise<Answer> {
  const start = performance.now();
  return new Promise((resolve) => {
    const req = httpGet(url, { agent: false, headers: { connection: 'close' }, timeout: 5_000 }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - start, at: start }));
    });
    req.once('timeout', () => req.destroy(new Error('no answer within 5 s')));
    req.once('error', (error) => resolve({ status: 'error', ms: performance.now() - start, at: start, error: error.message }));
  });
}

/**
 * `clients` loops sending `next()` until `until` (a `performance.now()` time, or an object whose `at`
 * is one and may be moved earlier while they run); every answer collected.
 */
async function loop(clients: number, until: number | { readonly at: number }, next: () => Promise<Answer>): Promise<Answer[]> {
  const answers: Answer[] = [];
  const end = typeof until === 'number' ? { at: until } : until;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end.at) answers.push(await next());
    }),
  );
  return answers;
}

/** Well-behaved clients that measure the capacity (the retry storm's fault): kept-alive loops on a passthrough route. */
const CAPACITY_CLIENTS = FULL ? 50 : 10;
/** The capacity loops' warm-up (not counted) and their measure before the storm, in milliseconds. */
const CAPACITY_WARM_UP_MS = FULL ? 6_000 : 3_000;
const CAPACITY_BEFORE_MS = 2_000;
/**
 * The time after the storm in which full capacity must be back (docs/behaviour.md "Resilience"), in
 * milliseconds of the CPU the proxy had before it: the windows after go on until the proxy has used
 * the CPU time it used in this long before the storm (3 s on a machine that gives it the CPU it had),
 * within {@link CAPACITY_AFTER_LIMIT_MS}. What a storm leaves is code to compile again: it deoptimises
 * the hot path (Node.js's streams and HTTP server, undici's parser, pino, Fastify's reply; about 70
 * deoptimisations during the storm), and V8 optimises it again as the code runs (about 300 functions
 * in the 3 s after, V8's worker threads at 20-30% of a CPU against 2-4% before): a recovery counted in
 * work done, which a machine that gives the proxy half a CPU stretches to twice the time.
 */
const CAPACITY_AFTER_MS = 3_000;
/** The longest the windows after the storm go on for the proxy to get its {@link CAPACITY_AFTER_MS} of CPU, in milliseconds. */
const CAPACITY_AFTER_LIMIT_MS = 15_000;
/**
 * The capacity the last window after the storm (the one in which the proxy's CPU time reached
 * {@link CAPACITY_AFTER_MS}) must reach, in % of the capacity before (the target: full capacity within
 * 3 s after). Not 100: two measures of the same idle process differ by some
 * percent (the windows are 2 s and 1 s long, the loops' last requests fall at a different point each
 * time); 90% tells a process that recovered from one still held by the storm (58-84% in the runs of
 * issue 43) without failing on that noise. The bounded run (`npm test`: the proxy not pinned, another
 * test file beside it on the two cores) asks 70% and checks that the capacity comes back, not how soon:
 * its windows go on past {@link CAPACITY_AFTER_MS} until one reaches it, within {@link CAPACITY_AFTER_LIMIT_MS}.
 */
const CAPACITY_RECOVERED_PERCENT = FULL ? 90 : 70;
/**
 * On a machine shared with other processes the answers per second measure the neighbours too: a window
 * whose answers fall short of {@link CAPACITY_RECOVERED_PERCENT} still passes when the proxy was busy
 * or waiting for a CPU (its CPU time plus its threads' run-queue wait) at least this much of it (in %),
 * and served at least {@link CAPACITY_RECOVERED_PERCENT} of its answers per CPU second before the storm:
 * it got less CPU, and nothing of the storm still costs it work or keeps it idle.
 */
const CAPACITY_BUSY_PERCENT = 90;

/** What {@link capacity} measured: per window, in the order of the windows. */
interface Capacity {
  /** Answers 200 that ended in the window. */
  ok: number[];
  /** CPU time the proxy used, in % of the window (all its threads: more than 100% is possible). */
  cpu: number[];
  /** CPU time the proxy's main thread (its event loop) used, in % of the window. */
  main: number[];
  /** Time the proxy's threads were runnable but waited for a CPU (another of its threads or another process had it), in % of the window. */
  waited: number[];
  /** CPU time this process used (the loops, the fake BFF, a load thread), in % of the window. */
  own: number[];
  /** Time this process's threads waited for a CPU, in % of the window (reported: the measuring side starved too). */
  ownWaited: number[];
  answers: Answer[];
}

/**
 * {@link CAPACITY_CLIENTS} kept-alive loops on `GET /api/user/login-history` (answered at once by the
 * fake BFF) for `durationMs`; the answers 200 counted per window of `windowMs` from the start, by the
 * time each answer ended, with the CPU the proxy (process `pid`) used and waited for in each window.
 * With `enough`, `durationMs` is a limit: the loops stop after the first window for which `enough` is
 * true, given the windows so far and the proxy's CPU time since the start (all its threads, in
 * milliseconds).
 */
async function capacity(
  pool: Pool,
  pid: number | undefined,
  durationMs: number,
  windowMs: number,
  enough?: (sofar: Capacity, cpuMsSinceStart: number) => boolean,
): Promise<Capacity> {
  const start = performance.now();
  const deadline = { at: start + durationMs };
  let windows = Math.ceil(durationMs / windowMs);
  const out: Capacity = {
    ok: Array.from({ length: windows }, () => 0),
    cpu: [],
    main: [],
    waited: [],
    own: [],
    ownWaited: [],
    answers: [],
  };
  const cpuAtStart = cpuMs(pid);
  let cpu = cpuAtStart;
  let main = cpuMs(pid, pid);
  let waited = runDelays(pid);
  let own = process.cpuUsage();
  let ownWaited = runDelays(process.pid);
  const sampler = (async () => {
    for (let i = 1; i <= windows; i++) {
      await sleep(start + i * windowMs - performance.now());
      const [cpuNow, mainNow, waitedNow, ownUsed] = [cpuMs(pid), cpuMs(pid, pid), runDelays(pid), process.cpuUsage(own)];
      out.main.push((100 * (mainNow - main)) / windowMs);
      main = mainNow;
      own = process.cpuUsage();
      out.cpu.push((100 * (cpuNow - cpu)) / windowMs);
      out.waited.push((100 * runDelayBetween(waited, waitedNow)) / windowMs);
      out.own.push((ownUsed.user + ownUsed.system) / 10 / windowMs);
      const ownWaitedNow = runDelays(process.pid);
      out.ownWaited.push((100 * runDelayBetween(ownWaited, ownWaitedNow)) / windowMs);
      [cpu, waited, ownWaited] = [cpuNow, waitedNow, ownWaitedNow];
      if (enough !== undefined && i < windows && enough(out, cpuNow - cpuAtStart)) {
        windows = i;
        deadline.at = performance.now();
        out.ok.length = windows;
      }
    }
  })();
  // Counted as they end, so that `enough` sees the windows so far.
  out.answers = await loop(CAPACITY_CLIENTS, deadline, async () => {
    const a = await call(pool, '/api/user/login-history');
    const slot = Math.floor((a.at + a.ms - start) / windowMs);
    if (a.status === 200 && slot < out.ok.length) out.ok[slot] = (out.ok[slot] as number) + 1;
    return a;
  });
  await sampler;
  return out;
}

/** CPU time (user + system) the process at `pid` used so far, in milliseconds (Linux `/proc`, 10 ms ticks), or NaN. */
function cpuMs(pid: number | undefined, tid?: number): number {
  try {
    const fields =
      readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8')
        .split(') ')[1]
        ?.split(' ') ?? [];
    // utime and stime, fields 14 and 15 of proc(5), in clock ticks (USER_HZ, 100 a second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** Time each thread of the process at `pid` waited for a CPU while runnable so far, in milliseconds by thread id (Linux `schedstat`); empty when unknown. */
function runDelays(pid: number | undefined): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        out.set(tid, Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[1]) / 1e6);
      } catch {
        // the thread ended meanwhile
      }
    }
  } catch {
    // not Linux, or the process is gone
  }
  return out;
}

/** The run-queue wait between two {@link runDelays} samples, in milliseconds (threads ended in between left out; NaN when unknown). */
function runDelayBetween(before: Map<string, number>, now: Map<string, number>): number {
  if (now.size === 0) return Number.NaN;
  let ms = 0;
  for (const [tid, waited] of now) ms += waited - (before.get(tid) ?? 0);
  return ms;
}

/**
 * `clients` loops on `GET path` of the proxy at `base` for `durationMs`, on a worker thread of their
 * own (`helpers/load-loop.mjs`), each request with the next session cookie; resolves to the count of
 * answers per status (`aborted` for a request given up after `giveUpMs`, when set).
 */
function loopOnThread(
  base: string,
  path: string,
  clients: number,
  durationMs: number,
  options: { giveUpMs?: number; leaveAtEnd?: boolean } = {},
): Promise<Record<string, number>> {
  const worker = new Worker(new URL('./helpers/load-loop.mjs', import.meta.url), {
    workerData: { base, path, clients, durationMs, cookies: tokens.map((token) => `${COOKIE}=${token}`), ...options },
  });
  return new Promise((resolve, reject) => {
    worker.once('message', (counts: Record<string, number>) => resolve(counts));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the load thread exited with ${code} before its counts`)));
  });
}

function p99(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] as number;
}

function count(answers: readonly Answer[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) out[String(a.status)] = (out[String(a.status)] ?? 0) + 1;
  return out;
}

/** The 503 answers by their `error` (why they were refused). */
function refusals(answers: readonly Answer[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) if (a.status === 503) out[a.error ?? '?'] = (out[a.error ?? '?'] ?? 0) + 1;
  return out;
}

const ms = (v: number) => `${Math.round(v)} ms`;
const results: string[] = [];
function result(fault: string, figure: string): void {
  results.push(`${fault}: ${figure}`);
  figures.note(`${fault}: ${figure}`);
}

let bff: FakeBff;
let proc: Proc | undefined;

before(async () => {
  if (!existsSync('dist/server.js')) throw new Error('dist/server.js is missing: npm run build first');
  pin(process.pid, 1);
  bff = new FakeBff();
  await bff.start();
});
after(async () => {
  await proc?.stop();
  await bff.close();
  for (const line of results) process.stdout.write(`# row 16 · ${line}\n`);
  figures.write();
});

async function withProcess(env: Record<string, string>, connections: number, body: (p: Proc) => Promise<void>): Promise<void> {
  bff.reset();
  proc = await startProcess(bff, env, connections);
  try {
    await body(proc);
  } finally {
    await proc.stop();
    proc = undefined;
    bff.release();
  }
}

// ------------------------------------------------------------------------------------------------
// The faults
// ------------------------------------------------------------------------------------------------

/**
 * The faults to run: all, or those whose label contains one of the comma-separated words of
 * `ROW16_FAULTS` (e.g. `ROW16_FAULTS=hung,storm`, for a look at one fault while changing it).
 */
const ONLY = (process.env.ROW16_FAULTS ?? '').split(',').filter((word) => word.length > 0);
function fault(label: string, fn: () => Promise<void>): Promise<void> {
  if (ONLY.length > 0 && !ONLY.some((word) => label.includes(word))) return Promise.resolve();
  return figures.run(label, fn);
}

test(
  'row 16: one slow, hung or failing BFF endpoint costs its own routes only; overload is shed cheaply',
  { timeout: 600_000 },
  async () => {
    // 1. One endpoint answers after 8 s, 400 clients loop on it.
    await fault('slow endpoint', async () => {
      const delay = FULL ? 8_000 : 2_000;
      const clients = FULL ? 400 : 40;
      const window = FULL ? 20_000 : 4_000;
      await withProcess({}, clients + 16, async (p) => {
        bff.mode(SLOW, { kind: 'delay', ms: delay });
        const until = performance.now() + window;
        // The slow route's clients loop on a thread of their own: the answers timed are the other route's.
        const slow = loopOnThread(p.base, '/api/user/last-casino-games', clients, window);
        await sleep(Math.min(1_000, window / 4));
        const other = await loop(4, until, () => call(p.pool, '/api/user/login-history'));
        const slowAnswers = await slow;
        const errors = other.filter((a) => a.status !== 200).length;
        const tail = p99(other.map((a) => a.ms));
        for (const a of other) figures.status(a.status);
        for (const [status, n] of Object.entries(slowAnswers)) figures.status(status, n);
        figures.inputs += other.length + Object.values(slowAnswers).reduce((a, b) => a + b, 0);
        figures.check(
          errors === 0,
          `slow endpoint: ${errors} errors on another route ${JSON.stringify(count(other.filter((a) => a.status !== 200)))}, 503: ${JSON.stringify(refusals(other))}`,
        );
        figures.check(tail < 100 * LATENCY_FACTOR, `slow endpoint: another route's p99 ${ms(tail)}`);
        result(
          `one endpoint at ${delay / 1000} s, ${clients} clients`,
          `another route p99 ${ms(tail)} over ${other.length} requests, ${errors} errors; the slow route ${JSON.stringify(slowAnswers)}`,
        );
      });
    });

    // 2. One endpoint hangs, UPSTREAM_TIMEOUT_MS=3000.
    await fault('hung endpoint', async () => {
      const clients = FULL ? 50 : 10;
      const total = FULL ? 20_000 : 8_000;
      const from = FULL ? 10_000 : 5_000;
      await withProcess({ UPSTREAM_TIMEOUT_MS: '3000' }, clients + 8, async (p) => {
        bff.mode(SLOW, { kind: 'hang' });
        const start = performance.now();
        const until = start + total;
        const hung = loop(clients, until, () => call(p.pool, '/api/user/last-casino-games'));
        const other = loop(2, until, () => call(p.pool, '/api/user/login-history'));
        const [hungAnswers, otherAnswers] = await Promise.all([hung, other]);
        const late = hungAnswers.filter((a) => a.at >= start + from);
        const lateOther = otherAnswers.filter((a) => a.at >= start + from);
        const tail = p99(late.filter((a) => a.status === 503).map((a) => a.ms));
        const reached = bff.calls(SLOW, start + from);
        const perTenSeconds = (reached * 10_000) / (total - from);
        const refused = late.filter((a) => a.status === 503).length;
        for (const a of [...hungAnswers, ...otherAnswers]) figures.status(a.status);
        figures.inputs += hungAnswers.length + otherAnswers.length;
        figures.faults += 1;
        // Not refused: the breaker's trial calls, which wait for the hung endpoint by design (≤ 5 per 10 s, checked below) and answer 504.
        const trials = late.filter((a) => a.status === 504).length;
        figures.check(
          late.length > 0 && refused + trials === late.length,
          `hung endpoint: ${refused} of ${late.length} late calls answered 503, ${trials} trial calls 504`,
        );
        figures.check(tail < 50 * LATENCY_FACTOR, `hung endpoint: late p99 ${ms(tail)}`);
        figures.check(perTenSeconds <= 5, `hung endpoint: ${reached} calls reached it in ${(total - from) / 1000} s`);
        const otherErrors = lateOther.filter((a) => a.status !== 200).length;
        figures.check(otherErrors === 0, `hung endpoint: ${otherErrors} errors on another route`);
        result(
          'one endpoint hangs (UPSTREAM_TIMEOUT_MS=3000)',
          `from ${from / 1000} s: ${refused}/${late.length} answered 503 (p99 ${ms(tail)}), the other ${late.length - refused} were trial calls; ${reached} calls reached it in ${(total - from) / 1000} s; another route ${lateOther.length - otherErrors}/${lateOther.length} 200 (p99 ${ms(p99(lateOther.map((a) => a.ms)))})`,
        );
      });
    });

    // 2b. One endpoint hangs with the default limits (UPSTREAM_TIMEOUT_MS 15000, pause 5000), 200 clients
    // on it, then recovers 500 ms after the second trial reached it (that trial still hangs).
    await fault('hung then recovers', async () => {
      const clients = FULL ? 200 : 40;
      const timeoutMs = FULL ? 15_000 : 3_000;
      const pauseMs = FULL ? 5_000 : 1_000;
      const env: Record<string, string> = FULL
        ? {}
        : { UPSTREAM_TIMEOUT_MS: String(timeoutMs), UPSTREAM_CIRCUIT_PAUSE_MS: String(pauseMs) };
      await withProcess(env, clients + 8, async (p) => {
        bff.mode(SLOW, { kind: 'hang' });
        const start = performance.now();
        // The circuit opens when the first calls time out; the calls that took the slots of the first
        // failures (while it was still closed) reach the BFF within a second of it.
        const openFrom = start + timeoutMs + 1_000;
        let recoveredAt = Number.POSITIVE_INFINITY;
        let stopAt = start + timeoutMs + 6 * pauseMs + 10_000;
        const watcher = (async () => {
          while (performance.now() < stopAt && recoveredAt === Number.POSITIVE_INFINITY) {
            const second = (bff.arrivals.get(SLOW) ?? []).filter((t) => t >= openFrom)[1];
            if (second !== undefined) {
              recoveredAt = second + 500;
              await sleep(recoveredAt - performance.now());
              bff.mode(SLOW, { kind: 'ok' });
              return;
            }
            await sleep(20);
          }
        })();
        const answers: (Answer & { end: number })[] = [];
        await Promise.all(
          Array.from({ length: clients }, async (_, i) => {
            await sleep((i * 5) % 1_000);
            while (performance.now() < stopAt) {
              const a = await call(p.pool, '/api/user/last-casino-games');
              const end = a.at + a.ms;
              answers.push({ ...a, end });
              if (a.status === 200 && end >= recoveredAt && stopAt > end + 2_000) stopAt = end + 2_000;
              await sleep(200);
            }
          }),
        );
        await watcher;
        const whileOpen = (bff.arrivals.get(SLOW) ?? []).filter((t) => t >= openFrom && t < recoveredAt);
        const gaps = whileOpen.slice(1).map((t, i) => Math.round(t - (whileOpen[i] as number)));
        const first200 = answers.find((a) => a.status === 200 && a.end >= recoveredAt);
        const within = first200 === undefined ? Number.NaN : first200.end - recoveredAt;
        const late = answers.filter((a) => first200 !== undefined && a.at >= first200.end + 1_000);
        const lateOk = late.filter((a) => a.status === 200).length;
        for (const a of answers) figures.status(a.status);
        figures.inputs += answers.length;
        figures.faults += 1;
        figures.check(Number.isFinite(recoveredAt), `hung then recovers: the BFF recovered (${whileOpen.length} calls after the opening)`);
        // Arrival times carry each call's way through the proxy and this process's event loop: 250 ms allowed
        // for the difference of two such ways (calls handed out of the queue would come milliseconds apart).
        figures.check(
          gaps.every((gap) => gap >= pauseMs - 250),
          `hung then recovers: calls reaching it once open, ms apart: ${gaps.join(', ')}`,
        );
        figures.check(within <= pauseMs + 1_000, `hung then recovers: the first 200 ${ms(within)} after the recovery`);
        // From then on the circuit stays closed: the endpoint's answers, or its bulkhead's busy refusals
        // when 200 clients ask more than its 32 slots and queue of 64 take in (a loaded machine).
        const lateOpen = late.filter((a) => a.status !== 200 && a.error !== 'upstream_busy').length;
        figures.check(
          late.length > 0 && lateOpen === 0 && lateOk >= late.length / 2,
          `hung then recovers: a second after the first 200, ${lateOk}/${late.length} 200 (${JSON.stringify(count(late))}; 503: ${JSON.stringify(refusals(late))})`,
        );
        result(
          `one endpoint hangs (UPSTREAM_TIMEOUT_MS=${timeoutMs}, pause ${pauseMs / 1000} s, ${clients} clients), then recovers`,
          `once open ${whileOpen.length} calls reached it, ${gaps.join(', ')} ms apart (the pause: ${pauseMs}); recovered 500 ms after the second, a trial still hanging; first 200 ${ms(within)} after the recovery; a second after it ${lateOk}/${late.length} 200; answers ${JSON.stringify(count(answers))}, the 503s ${JSON.stringify(refusals(answers))}`,
        );
      });
    });

    // 3. The whole BFF hangs.
    await fault('whole BFF hangs', async () => {
      const clients = FULL ? 40 : 8;
      const total = FULL ? 20_000 : 8_000;
      const from = FULL ? 10_000 : 5_000;
      await withProcess({ UPSTREAM_TIMEOUT_MS: '3000', CATALOGUE_CACHE_TTL_MS: '2000' }, clients + 16, async (p) => {
        const warm = [
          await call(p.pool, '/api/games/list?page=1&per_page=24', { session: false }),
          await call(p.pool, '/api/games/list?page=1&per_page=24'),
          await call(p.pool, '/readyz', { session: false }),
        ];
        figures.check(
          warm.every((a) => a.status === 200),
          `whole BFF hangs: warm-up ${JSON.stringify(warm.map((a) => a.status))}`,
        );
        // The same clients for 3 s while the BFF answers: the RSS before is that of the process under this
        // load (V8 sizes its heap to the allocation rate), so that the growth measured is the hang's.
        const routes = ['/api/user/login-history', '/api/user/last-casino-games', '/api/auth/profile', '/api/core-sportbook/events/1'];
        const UPSTREAM_OF_OTHERS = ['/bff/users/login-history', SLOW, '/auth/user-profile', '/core-sportbook/events/1'];
        let turn = 0;
        const other = async (): Promise<Answer> => {
          const path = routes[turn++ % routes.length] as string;
          return { ...(await call(p.pool, path)), path };
        };
        const lobby = async (): Promise<Answer> => {
          const anonymous = await call(p.pool, '/api/games/list?page=1&per_page=24', { session: false });
          const session = await call(p.pool, '/api/games/list?page=1&per_page=24');
          return anonymous.status !== 200 ? anonymous : session;
        };
        const steady = performance.now() + 3_000;
        const beforeHang = (await Promise.all([loop(clients, steady, other), loop(2, steady, lobby)])).flat();
        figures.check(
          beforeHang.every((a) => a.status === 200),
          `whole BFF hangs: before the hang ${JSON.stringify(count(beforeHang))}, 503: ${JSON.stringify(refusals(beforeHang))}`,
        );
        const rssBefore = p.rssMb();
        let rssPeak = rssBefore;
        bff.fallback({ kind: 'hang' });
        const start = performance.now();
        const until = start + total;
        const sampler = (async () => {
          while (performance.now() < until) {
            rssPeak = Math.max(rssPeak, p.rssMb());
            await sleep(200);
          }
        })();
        const others = loop(clients, until, other);
        const catalogue = loop(2, until, lobby);
        const ready = loop(1, until, async () => {
          const a = await call(p.pool, '/readyz', { session: false });
          await sleep(500);
          return a;
        });
        const [otherAnswers, catalogueAnswers, readyAnswers] = await Promise.all([others, catalogue, ready]);
        await sampler;
        const late = otherAnswers.filter((a) => a.at >= start + from);
        const lateRefused = late.filter((a) => a.status === 503).length;
        // The trial calls of the breakers (one per endpoint per pause, 5 s) wait for the hung BFF by design,
        // and so do the profile reads of the same session that share a trial's call (single flight): they
        // answer 504 with it. The p99 is that of the refusals; the calls that reached the BFF are counted
        // per endpoint: before an endpoint's breaker has seen its failures, as many calls as its share
        // (`UPSTREAM_ENDPOINT_MAX_IN_FLIGHT`, 32) may be waiting on it (profiles of the steady load expire
        // 10 s after their fetch, into this window), then one trial per pause.
        const tail = p99(late.filter((a) => a.status === 503).map((a) => a.ms));
        const trials = late.filter((a) => a.status === 504).length;
        const reachedBff = bff.callsByPath(start + from);
        const trialAllowance = 32 + Math.ceil((total - from) / 5_000) + 1;
        const busiest = Math.max(0, ...UPSTREAM_OF_OTHERS.map((path) => reachedBff[path] ?? 0));
        const notRefused: Record<string, number> = {};
        for (const a of late) if (a.status !== 503) notRefused[`${a.path} ${a.status}`] = (notRefused[`${a.path} ${a.status}`] ?? 0) + 1;
        const catalogueOk = catalogueAnswers.filter((a) => a.status === 200).length;
        const readyOk = readyAnswers.filter((a) => a.status === 200).length;
        for (const a of [...otherAnswers, ...catalogueAnswers, ...readyAnswers]) figures.status(a.status);
        figures.inputs += otherAnswers.length + catalogueAnswers.length + readyAnswers.length;
        figures.faults += 1;
        figures.check(catalogueOk === catalogueAnswers.length, `whole BFF hangs: catalogue ${catalogueOk}/${catalogueAnswers.length} 200`);
        figures.check(readyOk === readyAnswers.length, `whole BFF hangs: /readyz ${readyOk}/${readyAnswers.length} 200`);
        // A profile still fresh in the profile cache (10 s) is answered 200 from it, without the BFF.
        const fromCache = late.filter((a) => a.status === 200).length;
        figures.check(
          late.length > 0 && lateRefused + trials + fromCache === late.length,
          `whole BFF hangs: ${lateRefused}/${late.length} late calls 503, ${trials} 504 of trial calls, ${fromCache} 200 from a cache`,
        );
        figures.check(
          busiest <= trialAllowance,
          `whole BFF hangs: ${busiest} calls reached one endpoint in ${(total - from) / 1000} s (BFF calls ${JSON.stringify(reachedBff)})`,
        );
        figures.check(tail < 50 * LATENCY_FACTOR, `whole BFF hangs: late p99 ${ms(tail)}`);
        figures.check(rssPeak - rssBefore < (FULL ? 50 : 128), `whole BFF hangs: RSS ${Math.round(rssBefore)} → ${Math.round(rssPeak)} MB`);
        figures.memory = `RSS ${Math.round(rssBefore)} → ${Math.round(rssPeak)} MB (whole BFF hangs, from the same load before it)`;
        result(
          'the whole BFF hangs',
          `catalogue ${catalogueOk}/${catalogueAnswers.length} 200 (anonymous and with a session, TTL 2 s), /readyz ${readyOk}/${readyAnswers.length} 200, other routes from ${from / 1000} s ${lateRefused}/${late.length} 503 (p99 ${ms(tail)}); of the others ${fromCache} answered 200 from the profile cache and ${trials} 504 with a breaker's trial call (${JSON.stringify(notRefused)}); BFF calls from ${from / 1000} s ${JSON.stringify(reachedBff)}; RSS ${Math.round(rssBefore)} MB under the same load before the hang → peak ${Math.round(rssPeak)} MB`,
        );
      });
    });

    // 4. 300 reads whose clients leave after 0.5 s while the endpoint hangs; then deposits.
    await fault('clients gone', async () => {
      const reads = FULL ? 300 : 100;
      const deposits = 20;
      await withProcess({}, reads + deposits + 8, async (p) => {
        bff.mode(SLOW, { kind: 'hang' });
        const abandoned = await Promise.all(
          Array.from({ length: reads }, () => call(p.pool, '/api/user/last-casino-games', { giveUpMs: 500 })),
        );
        const reached = bff.calls(SLOW);
        await sleep(1_000);
        const held = bff.held(SLOW);
        bff.mode(DEPOSIT, { kind: 'delay', ms: 300 });
        const deposit = { userId: 7, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' };
        const sent = await Promise.all(
          Array.from({ length: deposits }, () => call(p.pool, '/api/payments/deposit', { method: 'POST', json: deposit, giveUpMs: 100 })),
        );
        await sleep(1_000);
        const depositCalls = bff.calls(DEPOSIT);
        const depositFinished = bff.finished.get(DEPOSIT) ?? 0;
        for (const a of [...abandoned, ...sent]) figures.status(a.status);
        figures.inputs += reads + deposits;
        figures.check(held <= Math.floor(reached * 0.01), `clients gone: ${held} of ${reached} upstream calls still held 1 s later`);
        figures.check(depositCalls === deposits, `clients gone: ${depositCalls}/${deposits} deposits reached the BFF`);
        figures.check(depositFinished === deposits, `clients gone: ${depositFinished}/${deposits} deposits answered in full upstream`);
        result(
          `${reads} reads abandoned after 0.5 s (endpoint hung)`,
          `${reached} reached the BFF, ${held} still held 1 s later; ${depositCalls}/${deposits} deposits reached it and ${depositFinished} ran to their end (clients left after 0.1 s)`,
        );
      });
    });

    // 5. The BFF closes each kept-alive connection after answering; 6. it answers 503 to every read.
    await fault('closing connections and 503s', async () => {
      const gets = FULL ? 5_000 : 500;
      await withProcess({}, 24, async (p) => {
        bff.fallback({ kind: 'close' });
        let turn = 0;
        const real: Answer[] = [];
        await Promise.all(
          Array.from({ length: 16 }, async () => {
            while (turn < gets) {
              turn++;
              real.push(await call(p.pool, '/api/user/login-history'));
            }
          }),
        );
        const errors = real.filter((a) => a.status !== 200);
        figures.inputs += real.length;
        for (const a of real) figures.status(a.status);
        figures.check(errors.length === 0, `closing connections: ${errors.length} errors, first ${JSON.stringify(errors[0])}`);
        result('the BFF closes each kept-alive connection', `${real.length - errors.length}/${real.length} GETs answered 200`);

        bff.reset();
        bff.fallback({ kind: 'status', status: 503 });
        const n = FULL ? 1_000 : 100;
        const before = bff.calls(OTHER);
        const failing = [];
        for (let i = 0; i < n; i++) failing.push(await call(p.pool, '/api/user/login-history'));
        const perRequest = (bff.calls(OTHER) - before) / n;
        figures.inputs += n;
        for (const a of failing) figures.status(a.status);
        figures.check(perRequest <= 1.1, `503 on every read: ${perRequest} upstream calls per request`);
        figures.check(
          failing.every((a) => a.status === 503),
          '503 on every read: every answer 503',
        );
        result('the BFF answers 503 to every read', `${perRequest.toFixed(3)} upstream calls per client request over ${n}`);
      });
    });

    // 7. 1,000 clients that give up after 1 s and ask again at once, for 20 s; the capacity before and after.
    await fault('retry storm', async () => {
      const clients = FULL ? 1_000 : 100;
      const total = FULL ? 20_000 : 4_000;
      // As docs/operations.md ("Health under a storm") advises for a process that clients can storm: the
      // probes on a port of their own, the public port's open connections bounded (the rest closed at accept).
      await withProcess({ HEALTH_PORT: '0', MAX_CONNECTIONS: '512' }, CAPACITY_CLIENTS + 8, async (p) => {
        bff.mode(SLOW, { kind: 'delay', ms: 2_000 });
        assert.ok(p.healthBase, 'the health listener started');
        // The capacity before: the well-behaved clients once the proxy is warm (its answers per second rose
        // from about 500 to about 3,000 in the first 5 s here, as V8 compiled its paths).
        const warm = await capacity(p.pool, p.child.pid, CAPACITY_WARM_UP_MS, 1_000);
        const beforeWindows = await capacity(p.pool, p.child.pid, CAPACITY_BEFORE_MS, CAPACITY_BEFORE_MS);
        const capacityBefore = (beforeWindows.ok[0] as number) / (CAPACITY_BEFORE_MS / 1_000);
        // Probes as a kubelet makes them: a new connection each time (`Connection: close`), on the health
        // listener (HEALTH_PORT) and on the public port; and on the public port over a kept-alive connection.
        const health = new Pool(p.base, { connections: 1 });
        await call(health, '/healthz', { session: false });
        const rssBefore = p.rssMb();
        let rssPeak = rssBefore;
        const until = performance.now() + total;
        // The storm's clients loop on a thread of their own, at a lower priority: the probes timed are the proxy's.
        const storm = loopOnThread(p.base, '/api/user/last-casino-games', clients, total, { giveUpMs: 1_000, leaveAtEnd: true });
        const probes = loop(1, until, async () => {
          rssPeak = Math.max(rssPeak, p.rssMb());
          const a = await call(health, '/healthz', { session: false });
          await sleep(50);
          return a;
        });
        const freshProbes = loop(1, until, async () => {
          const a = await probeOnce(`${p.healthBase}/healthz`);
          await sleep(200);
          return a;
        });
        const publicProbes = loop(1, until, async () => {
          const a = await probeOnce(`${p.base}/healthz`);
          await sleep(200);
          return a;
        });
        const [stormAnswers, probeAnswers, freshAnswers, publicAnswers] = await Promise.all([storm, probes, freshProbes, publicProbes]);
        // The storm has ended: its clients left when its time was up (their requests then still open given
        // up) and its thread closed their connections. The capacity after is measured from then.
        const stormGone = performance.now() - until;
        // Per CPU second of the proxy: what it does with the CPU this machine gives it, whatever else runs.
        const perCpuBefore = capacityBefore / (beforeWindows.cpu[0] as number);
        const recoveredIn = (w: Capacity, i: number) =>
          (100 * (w.ok[i] as number)) / capacityBefore >= CAPACITY_RECOVERED_PERCENT ||
          ((100 * (w.ok[i] as number)) / (w.cpu[i] as number) / perCpuBefore >= CAPACITY_RECOVERED_PERCENT &&
            (w.cpu[i] as number) + (w.waited[i] as number) >= CAPACITY_BUSY_PERCENT);
        // The CPU time the proxy used in CAPACITY_AFTER_MS before the storm: the time it has to recover.
        const cpuBudgetMs = ((beforeWindows.cpu[0] as number) / 100) * CAPACITY_AFTER_MS;
        const afterWindows = await capacity(
          p.pool,
          p.child.pid,
          CAPACITY_AFTER_LIMIT_MS,
          1_000,
          (sofar, cpuUsedMs) => cpuUsedMs >= cpuBudgetMs && (FULL || recoveredIn(sofar, sofar.cpu.length - 1)),
        );
        const afterPercent = afterWindows.ok.map((n) => (100 * n) / capacityBefore);
        const afterPerCpuPercent = afterWindows.ok.map((n, i) => (100 * n) / (afterWindows.cpu[i] as number) / perCpuBefore);
        const recovered = recoveredIn(afterWindows, afterWindows.ok.length - 1);
        const afterFailed = afterWindows.answers.filter((a) => a.status !== 200);
        const alive = p.child.exitCode === null && p.child.signalCode === null;
        const healthTail = p99(probeAnswers.map((a) => a.ms));
        const healthOk = probeAnswers.filter((a) => a.status === 200).length;
        const freshTail = p99(freshAnswers.map((a) => a.ms));
        const freshOk = freshAnswers.filter((a) => a.status === 200).length;
        // Reported, not checked: MAX_CONNECTIONS closes some of these connections at accept (`error`); the p99 is of the answered.
        const publicTail = p99(publicAnswers.filter((a) => a.status === 200).map((a) => a.ms));
        const publicOk = publicAnswers.filter((a) => a.status === 200).length;
        await health.destroy();
        for (const [status, n] of Object.entries(stormAnswers)) figures.status(status, n);
        for (const a of [...beforeWindows.answers, ...afterWindows.answers]) figures.status(a.status);
        figures.inputs +=
          Object.values(stormAnswers).reduce((a, b) => a + b, 0) +
          probeAnswers.length +
          freshAnswers.length +
          publicAnswers.length +
          beforeWindows.answers.length +
          afterWindows.answers.length;
        figures.check(alive, 'retry storm: the process died');
        figures.check(healthOk === probeAnswers.length, `retry storm: /healthz ${healthOk}/${probeAnswers.length} 200`);
        figures.check(healthTail < 500 * (FULL ? 1 : 4), `retry storm: /healthz p99 ${ms(healthTail)}`);
        figures.check(freshOk === freshAnswers.length, `retry storm: /healthz on HEALTH_PORT ${freshOk}/${freshAnswers.length} 200`);
        figures.check(freshTail < 500 * (FULL ? 1 : 4), `retry storm: /healthz on HEALTH_PORT, a connection each, p99 ${ms(freshTail)}`);
        figures.check(rssPeak < 400, `retry storm: peak RSS ${Math.round(rssPeak)} MB`);
        const pct = (values: readonly number[]) => values.map((v) => `${Math.round(v)}%`).join(', ');
        figures.check(
          recovered,
          `retry storm: capacity in the 1 s windows after (until the proxy used ${Math.round(cpuBudgetMs)} ms of CPU, its ${CAPACITY_AFTER_MS / 1000} s before) ${pct(afterPercent)} of before (${Math.round(capacityBefore)}/s), per CPU second of the proxy ${pct(afterPerCpuPercent)}, the proxy's CPU ${pct(afterWindows.cpu)} and waiting for one ${pct(afterWindows.waited)} of each`,
        );
        figures.check(
          afterFailed.length === 0,
          `retry storm: after, ${afterFailed.length} answers not 200 ${JSON.stringify(count(afterFailed))} ${JSON.stringify(refusals(afterFailed))}`,
        );
        result(
          `${clients} clients giving up after 1 s, ${total / 1000} s`,
          `alive ${alive}, /healthz kept-alive on PORT ${healthOk}/${probeAnswers.length} 200 p99 ${ms(healthTail)}, a connection each on HEALTH_PORT ${freshOk}/${freshAnswers.length} 200 p99 ${ms(freshTail)}, a connection each on PORT ${publicOk}/${publicAnswers.length} 200 (${JSON.stringify(count(publicAnswers.filter((a) => a.status !== 200)))} closed at accept or failed) p99 of the 200s ${ms(publicTail)}, RSS ${Math.round(rssBefore)} → peak ${Math.round(rssPeak)} MB; capacity before ${Math.round(capacityBefore)}/s (${CAPACITY_CLIENTS} clients, after ${CAPACITY_WARM_UP_MS / 1000} s of warm-up at ${warm.ok.join(', ')} a second; the proxy's CPU ${pct(beforeWindows.cpu)}, its main thread ${pct(beforeWindows.main)}, waiting for one ${pct(beforeWindows.waited)}, this process's CPU ${pct(beforeWindows.own)}, waiting for one ${pct(beforeWindows.ownWaited)}), in the 1 s windows after (until the proxy used ${Math.round(cpuBudgetMs)} ms of CPU, its ${CAPACITY_AFTER_MS / 1000} s before) ${pct(afterPercent)} of it, per CPU second of the proxy ${pct(afterPerCpuPercent)} (the proxy's CPU ${pct(afterWindows.cpu)}, its main thread ${pct(afterWindows.main)}, waiting for one ${pct(afterWindows.waited)}, this process's CPU ${pct(afterWindows.own)}, waiting for one ${pct(afterWindows.ownWaited)}), ${afterWindows.answers.length - afterFailed.length}/${afterWindows.answers.length} 200; the storm's thread done ${ms(stormGone)} after its end; the storm ${JSON.stringify(stormAnswers)}`,
        );
      });
    });

    assert.equal(figures.failureCount, 0, figures.summary());
  },
);
