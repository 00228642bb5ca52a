/**
 * Instructions per request of the proxy's passthrough, counted by valgrind's callgrind (`npm run
 * bench:instructions`): the A/B of configurations that the load bench cannot settle on a shared
 * machine. callgrind counts the instructions the process executes, not seconds, so the same build and
 * inputs give nearly the same count whatever else the machine is doing; a request's CPU cost is about
 * proportional to it (memory stalls aside).
 *
 * Each variant (a set of environment variables, {@link variants}) gets a proxy of its own, as the load
 * bench starts it (`npm start`'s options, `NODE_ENV=production`, metrics on, the default limits; load
 * shedding by event-loop delay off, which callgrind's slowness would set off), run
 * under `valgrind --tool=callgrind --instr-atstart=no` in front of the bench's upstream. After
 * `BENCH_INSTR_WARMUP` requests (2,000: the JIT's tiers settle) the instrumentation is turned on
 * (`callgrind_control -i on`), `BENCH_INSTR_REQUESTS` requests (2,000) are sent, and the counts are
 * written; then, with no request, as long again (20 s at most), and written again. The variant's
 * figure is the requests' window less the idle window's rate over the same time, divided by the
 * requests: the timers' work (metrics, load-shedding samples) depends on time, and under callgrind a
 * second holds some 40 times fewer requests than at full speed. Requests are the
 * load bench's passthrough (`GET /api/user/last-casino-games`), each with the next of 4,096 sessions and
 * client addresses, 4 at a time. Variants run one after the other; nothing is pinned.
 *
 * Needs `valgrind` (Debian's package). `BENCH_NODE` as for the load bench (default `24`);
 * `BENCH_INSTR_ONLY` (comma-separated words) runs the variants whose names contain one. Each variant
 * takes one to three minutes (the process runs some 40 times slower under callgrind).
 *
 * @module
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { clientHeaders } from './clients.js';
import { children, resolveNode, sleep, startBenchServer, startProxy, stop } from './harness.js';

/** One configuration measured: its name and the proxy's extra environment. */
export interface InstructionVariant {
  id: string;
  env: Record<string, string>;
}

/**
 * The variants, in the table's order: tracing off, then the sampling ratios of the load bench's tracing
 * rows, exporting OTLP/HTTP JSON to `collector` (the bench's collector, `…/v1/traces`) a batch at a
 * time (512 spans; the 5 s timer set aside); then the upstream contract checks off and on every answer
 * (the rows before run the default sample, 0.01).
 */
export function variants(collector: string): InstructionVariant[] {
  // A batch leaves when it holds 512 spans, not every 5 s: under callgrind 5 s are some 40 times fewer
  // requests than at full speed, where the sampled rows fill their batches faster than the timer.
  const exporter = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: collector, OTEL_BSP_SCHEDULE_DELAY: '600000' };
  return [
    { id: 'tracing off', env: {} },
    ...[0, 0.01, 0.1].map((ratio) => ({
      id: `parentbased_traceidratio ${ratio}`,
      env: { ...exporter, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: String(ratio) },
    })),
    { id: 'every request (parentbased_always_on)', env: exporter },
    // The live upstream contract checks (UPSTREAM_CONTRACT_SAMPLE): every row above runs the default
    // sample (0.01); these two are checks off and every answer checked, with tracing off.
    { id: 'contract checks off (UPSTREAM_CONTRACT_SAMPLE=0)', env: { UPSTREAM_CONTRACT_SAMPLE: '0' } },
    { id: 'contract checks on every answer (UPSTREAM_CONTRACT_SAMPLE=1)', env: { UPSTREAM_CONTRACT_SAMPLE: '1' } },
  ];
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

async function send(pool: Pool, headers: readonly Record<string, string>[], count: number, offset: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const n = next++;
      const res = await pool.request({ method: 'GET', path: '/api/user/last-casino-games', headers: headers[(offset + n) % headers.length] });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`expected 200, got ${res.statusCode}`);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
}

/** The user vgdb names its pipes after, the same for the process and for `callgrind_control`. */
const VGDB_ENV = 'LOGNAME=bench USER=bench';

/**
 * Tells callgrind in `pid` to turn its instrumentation on or off, or to write its counts so far
 * (`--dump`: `<out>.1`). @throws when `callgrind_control` does not say `OK`.
 */
function control(prefix: string, args: readonly string[], pid: number): void {
  // HOST as the proxy's (`startProxy` binds 127.0.0.1): vgdb reads it too.
  const env = { ...process.env, HOST: '127.0.0.1', ...Object.fromEntries(VGDB_ENV.split(' ').map((pair) => pair.split('=') as [string, string])) };
  const out = execFileSync('callgrind_control', [`--vgdb-prefix=${prefix}`, ...args, String(pid)], { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (!out.includes('OK')) throw new Error(`callgrind_control ${args.join(' ')}: ${out.trim()}`);
}

/** `value` as one word of a shell command (single-quoted), whatever spaces or quotes it holds. */
function shellWord(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** Longest idle window measured after the requests' one (its rate is taken off), in milliseconds. */
const IDLE_WINDOW_MS = 20_000;

/** The instructions of a callgrind dump, once it is written (60 s at most). */
async function dumped(dir: string, name: string): Promise<number> {
  const path = join(dir, name);
  const written = () => existsSync(path) && /^totals:/m.test(readFileSync(path, 'utf8'));
  for (let waited = 0; !written() && waited < 60_000; waited += 250) await sleep(250);
  if (!written()) throw new Error(`no dump ${name} of the counts (${readdirSync(dir).join(', ')})`);
  return callgrindTotal(readFileSync(path, 'utf8'));
}

async function measure(variant: InstructionVariant, upstream: string, node: string, dir: string, warmup: number, requests: number): Promise<number> {
  const slug = variant.id.replace(/[^a-z0-9.]+/gi, '-');
  const wrapper = join(dir, `${slug}.sh`);
  // vgdb, through which callgrind_control talks to the process, names its pipes after the prefix and
  // the user and HOST of the environment: both sides get the same (the proxy's environment has no user).
  const prefix = join(dir, 'vgdb');
  writeFileSync(
    wrapper,
    `#!/bin/sh\nexport ${VGDB_ENV}\nexec valgrind --tool=callgrind --instr-atstart=no ${shellWord(`--vgdb-prefix=${prefix}`)} ${shellWord(`--callgrind-out-file=${join(dir, `${slug}.%p.out`)}`)} ${shellWord(node)} "$@"\n`,
  );
  chmodSync(wrapper, 0o755);
  // Under callgrind every turn of the event loop is some 40 times longer: the event-loop delay would shed load.
  const env = { ...variant.env, LOAD_SHED_EVENT_LOOP_DELAY_MS: '0' };
  const proxy = await startProxy(upstream, { workers: 1, cpus: undefined, logPath: '/dev/null', nodeOptions: undefined, node: wrapper, env, startTimeoutMs: 180_000 });
  const pool = new Pool(`http://127.0.0.1:${proxy.port}`, { connections: 4 });
  const headers = clientHeaders(4096, true);
  try {
    await send(pool, headers, warmup, 0);
    const pid = proxy.child.pid as number;
    control(prefix, ['-i', 'on'], pid);
    const started = performance.now();
    await send(pool, headers, requests, warmup);
    const windowMs = performance.now() - started;
    // Dumps write the counts since the one before: `<out>.1` the requests' window, `<out>.2` an idle one.
    control(prefix, ['--dump'], pid);
    const idleMs = Math.min(windowMs, IDLE_WINDOW_MS);
    await sleep(idleMs);
    control(prefix, ['--dump'], pid);
    control(prefix, ['-i', 'off'], pid);
    const busy = await dumped(dir, `${slug}.${pid}.out.1`);
    const idle = await dumped(dir, `${slug}.${pid}.out.2`);
    // What the timers cost (metrics, load-shedding samples, caches' clocks) depends on time, and under
    // callgrind a second holds some 40 times fewer requests than at full speed: the idle window's rate
    // is taken off the requests' window.
    return Math.max(0, busy - (idle * windowMs) / idleMs) / requests;
  } finally {
    await pool.close();
    await stop(proxy.child);
  }
}

async function main(): Promise<void> {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  const node = resolveNode(process.env.BENCH_NODE ?? '24');
  const warmup = Number(process.env.BENCH_INSTR_WARMUP ?? 2_000);
  const requests = Number(process.env.BENCH_INSTR_REQUESTS ?? 2_000);
  const dir = mkdtempSync(join(tmpdir(), 'front-proxy-instr-'));
  const upstream = await startBenchServer('upstream', [], undefined);
  const collector = await startBenchServer('collector', [], undefined);
  const base = `http://127.0.0.1:${upstream.port}`;
  process.stdout.write(`callgrind, Node.js ${node.version}, ${warmup} requests of warm-up, then ${requests} counted (GET /api/user/last-casino-games, 4 at a time)\n`);
  try {
    const rows: [string, number][] = [];
    // BENCH_INSTR_ONLY: comma-separated words, a variant runs when its name contains one (e.g. `off,ratio 0`).
    const only = (process.env.BENCH_INSTR_ONLY ?? '').split(',').filter((word) => word.length > 0);
    const chosen = variants(`http://127.0.0.1:${collector.port}/v1/traces`).filter((v) => only.length === 0 || only.some((word) => v.id.includes(word)));
    for (const variant of chosen) {
      const perRequest = await measure(variant, base, node.execPath, dir, warmup, requests);
      rows.push([variant.id, perRequest]);
      process.stdout.write(`  ${variant.id}: ${Math.round(perRequest).toLocaleString('en-US')} instructions per request\n`);
    }
    const off = rows[0]?.[1] ?? Number.NaN;
    process.stdout.write('\n| variant | instructions per request | vs tracing off |\n|---|---|---|\n');
    for (const [id, value] of rows) process.stdout.write(`| ${id} | ${Math.round(value).toLocaleString('en-US')} | ${(value / off).toFixed(3)}× |\n`);
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
