/**
 * The load generators of the benchmark: `wrk` when it is installed (a C load generator, lighter
 * than the proxy it measures), else `autocannon` in this process. Both run a fixed number of
 * connections for a fixed time against one URL, take the per-request headers of a
 * {@link HeaderRotation} in turn (many sessions and client addresses), and report the same
 * {@link LoadResult}, the load generator's own CPU time included.
 *
 * @module
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { childrenCpuMicros, pinnedCommand } from './proc.js';

/** Which load generator drives the runs. */
export type LoadTool = 'wrk' | 'autocannon';

/**
 * Headers that change from one request to the next: request `k` carries `sets[floor(k / burst) mod n]`
 * on top of {@link LoadSpec.headers} (e.g. the session cookie and `X-Forwarded-For` of one client).
 */
export interface HeaderRotation {
  /** The header sets, taken in turn. */
  sets: readonly Readonly<Record<string, string>>[];
  /** Consecutive requests that carry one set before the next is taken; default 1. */
  burst?: number | undefined;
}

/** One load run. */
export interface LoadSpec {
  url: string;
  method: 'GET' | 'POST';
  headers: Readonly<Record<string, string>>;
  /**
   * The request body. Every `__N__` in it is replaced by a number that differs from one request to
   * the next (so that equal submissions are not recognised as repeats).
   */
  body?: string | undefined;
  /** Per-request headers taken in turn; none: every request carries `headers` only. */
  rotation?: HeaderRotation | undefined;
  connections: number;
  seconds: number;
  /** CPUs for the load generator (`taskset` list, e.g. `1`); only `wrk` runs as its own process. */
  cpus?: string | undefined;
}

/** What one load run measured. */
export interface LoadResult {
  /** Answers received. */
  requests: number;
  /** Measured duration, in seconds. */
  seconds: number;
  /** Answers per second. */
  rps: number;
  /** Median latency, in milliseconds. */
  p50Ms: number;
  /** 99th percentile latency, in milliseconds. */
  p99Ms: number;
  /**
   * Answers with a status of 400 or more, as wrk counts them (a `304` is not one: the `revalidate` row
   * checks its statuses with the proxy's own counts).
   */
  non2xx: number;
  /** Socket errors and timeouts. */
  errors: number;
  /**
   * CPU time of the load generator during the run (user + system), in microseconds: the `wrk` process
   * (read from the bench's reaped-children times), or the bench process itself for autocannon.
   */
  loadCpuUs: number;
}

let wrkPresent: boolean | undefined;

/** True when `wrk` is on the `PATH`. */
export function hasWrk(): boolean {
  if (wrkPresent === undefined) wrkPresent = spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
  return wrkPresent;
}

/** The tool to use: `BENCH_TOOL` when set, else `wrk` when installed, else `autocannon`. */
export function pickTool(wanted: string | undefined): LoadTool {
  if (wanted === 'autocannon') return 'autocannon';
  if (wanted === 'wrk') {
    if (!hasWrk()) throw new Error('BENCH_TOOL=wrk but wrk is not installed');
    return 'wrk';
  }
  return hasWrk() ? 'wrk' : 'autocannon';
}

/** Runs one load. */
export function runLoad(tool: LoadTool, spec: LoadSpec): Promise<LoadResult> {
  return tool === 'wrk' ? runWrk(spec) : runAutocannon(spec);
}

function luaString(text: string): string {
  return JSON.stringify(text); // a JSON string literal is a valid Lua string literal for this text
}

/**
 * The Lua script of one wrk run. Everything that varies is computed once, at load: one header table per
 * rotation set (the static headers copied into each), and the body template. `request()` only moves
 * the rotation on, substitutes the deposit body's `__N__` when there is one, and calls `wrk.format`.
 * `done()` prints one `BENCH_RESULT` line.
 *
 * @param start - first value of the `__N__` counter and offset of the rotation (a run does not start
 *   where the previous one did).
 */
export function wrkScript(spec: LoadSpec, start: number): string {
  const sets = spec.rotation?.sets ?? [];
  const body = spec.body;
  const varying = body?.includes('__N__') === true;
  const lines = [`wrk.method = ${luaString(spec.method)}`];
  const staticHeaders = Object.entries(spec.headers).map(([name, value]) => `[${luaString(name)}] = ${luaString(value)}`);
  if (sets.length === 0 && !varying) {
    // One request for the whole run: wrk builds it once.
    for (const [name, value] of Object.entries(spec.headers)) lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`);
    if (body !== undefined) lines.push(`wrk.body = ${luaString(body)}`);
  } else {
    const names = [...new Set(sets.flatMap((set) => Object.keys(set)))];
    lines.push(
      `local method = ${luaString(spec.method)}`,
      `local path = wrk.path`,
      `local static = { ${staticHeaders.join(', ')} }`,
      `local names = { ${names.map(luaString).join(', ')} }`,
      'local values = {',
      ...sets.map((set) => `  { ${names.map((name) => luaString(set[name] ?? '')).join(', ')} },`),
      '}',
      'local headers = {}',
      'for i, row in ipairs(values) do',
      '  local h = {}',
      '  for name, value in pairs(static) do h[name] = value end',
      '  for j, name in ipairs(names) do if row[j] ~= "" then h[name] = row[j] end end',
      '  headers[i] = h',
      'end',
      'values = nil',
      'if #headers == 0 then headers[1] = static end',
      'local n = #headers',
      `local burst = ${Math.max(1, Math.floor(spec.rotation?.burst ?? 1))}`,
      `local i = ${start % Math.max(1, sets.length)} + 1`,
      'local left = burst',
    );
    if (varying) {
      lines.push(`local template = ${luaString(body as string)}`, `local counter = ${start}`);
    } else if (body !== undefined) {
      lines.push(`local body = ${luaString(body)}`);
    } else {
      lines.push('local body = nil');
    }
    lines.push(
      'request = function()',
      '  if left == 0 then',
      '    left = burst',
      '    i = i + 1',
      '    if i > n then i = 1 end',
      '  end',
      '  left = left - 1',
      ...(varying
        ? ['  counter = counter + 1', '  return wrk.format(method, path, headers[i], (string.gsub(template, "__N__", tostring(counter))))']
        : ['  return wrk.format(method, path, headers[i], body)']),
      'end',
    );
  }
  lines.push(
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format("BENCH_RESULT %d %d %d %d %d %d\\n", summary.requests, summary.duration,',
    '    latency:percentile(50), latency:percentile(99), e.status, e.connect + e.read + e.write + e.timeout))',
    'end',
  );
  return `${lines.join('\n')}\n`;
}

async function runWrk(spec: LoadSpec): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  try {
    const script = join(dir, 'load.lua');
    writeFileSync(script, wrkScript(spec, 1 + Math.floor(Math.random() * 50_000_000)));
    const [command, args] = pinnedCommand(spec.cpus, 'wrk', [
      '-t1',
      `-c${spec.connections}`,
      `-d${spec.seconds}s`,
      '--timeout',
      '10s',
      '-s',
      script,
      spec.url,
    ]);
    // wrk's CPU time reaches the bench's children times when it has exited and been reaped; the bench
    // starts no other child that ends during a run.
    const childrenCpuBefore = childrenCpuMicros();
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      child.stderr.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}: ${text}`))));
    });
    const loadCpuUs = childrenCpuMicros() - childrenCpuBefore;
    const match = /BENCH_RESULT (\d+) (\d+) ([\d.]+) ([\d.]+) (\d+) (\d+)/.exec(output);
    if (!match) throw new Error(`wrk gave no result: ${output}`);
    const [, requests, durationUs, p50Us, p99Us, status, errors] = match.map(Number) as number[];
    const seconds = (durationUs ?? 0) / 1e6;
    return {
      requests: requests ?? 0,
      seconds,
      rps: (requests ?? 0) / seconds,
      p50Ms: (p50Us ?? 0) / 1000,
      p99Ms: (p99Us ?? 0) / 1000,
      non2xx: status ?? 0,
      errors: errors ?? 0,
      loadCpuUs,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const template = spec.body;
  let counter = Math.floor(Math.random() * 50_000_000);
  const varying = template?.includes('__N__') === true;
  const sets = spec.rotation?.sets ?? [];
  const burst = Math.max(1, Math.floor(spec.rotation?.burst ?? 1));
  // Request k of the run (over every connection) takes set floor(k / burst) mod n, as in wrk.
  let request = (counter % Math.max(1, sets.length)) * burst;
  const dynamic = varying || sets.length > 0;
  const cpuBefore = process.cpuUsage();
  const result = await autocannon({
    url: spec.url,
    method: spec.method,
    headers: { ...spec.headers },
    connections: spec.connections,
    duration: spec.seconds,
    timeout: 10,
    ...(template !== undefined && !varying ? { body: template } : {}),
    ...(dynamic
      ? {
          requests: [
            {
              setupRequest: (base: autocannon.Request) => {
                const set = sets.length > 0 ? sets[Math.floor(request++ / burst) % sets.length] : undefined;
                const out: autocannon.Request = set ? { ...base, headers: { ...base.headers, ...set } } : { ...base };
                if (varying) out.body = (template as string).replaceAll('__N__', String(++counter));
                return out;
              },
            },
          ],
        }
      : {}),
  });
  const cpu = process.cpuUsage(cpuBefore);
  const seconds = result.duration;
  const requests = result.requests.total;
  return {
    requests,
    seconds,
    rps: requests / seconds,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    // autocannon's own `non2xx` counts 1xx and 3xx too; wrk's counts 4xx and 5xx only.
    non2xx: result['4xx'] + result['5xx'],
    errors: result.errors + result.timeouts,
    loadCpuUs: cpu.user + cpu.system,
  };
}
