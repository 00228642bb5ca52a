/**
 * The load generators of the benchmark: `wrk` when it is installed (a C load generator, lighter
 * than the proxy it measures), else `autocannon` in this process. Both run a fixed number of
 * connections for a fixed time against one URL and report the same {@link LoadResult}.
 *
 * @module
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { pinnedCommand } from './proc.js';

/** Which load generator drives the runs. */
export type LoadTool = 'wrk' | 'autocannon';

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
  /** Answers with a status of 400 or more (neither scenario here answers 1xx or 3xx). */
  non2xx: number;
  /** Socket errors and timeouts. */
  errors: number;
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

function wrkScript(spec: LoadSpec, start: number): string {
  const lines = [`wrk.method = ${luaString(spec.method)}`];
  for (const [name, value] of Object.entries(spec.headers)) lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  const body = spec.body;
  if (body?.includes('__N__')) {
    lines.push(
      `local template = ${luaString(body)}`,
      `local counter = ${start}`,
      'request = function()',
      '  counter = counter + 1',
      '  local body = string.gsub(template, "__N__", tostring(counter))',
      '  return wrk.format(nil, nil, nil, body)',
      'end',
    );
  } else if (body !== undefined) {
    lines.push(`wrk.body = ${luaString(body)}`);
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
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const template = spec.body;
  let counter = Math.floor(Math.random() * 50_000_000);
  const varying = template?.includes('__N__') === true;
  const result = await autocannon({
    url: spec.url,
    method: spec.method,
    headers: { ...spec.headers },
    connections: spec.connections,
    duration: spec.seconds,
    timeout: 10,
    ...(template !== undefined && !varying ? { body: template } : {}),
    ...(varying
      ? {
          requests: [
            {
              setupRequest: (request: autocannon.Request) => {
                counter++;
                return { ...request, body: (template as string).replaceAll('__N__', String(counter)) };
              },
            },
          ],
        }
      : {}),
  });
  const seconds = result.duration;
  const requests = result.requests.total;
  return {
    requests,
    seconds,
    rps: requests / seconds,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}
