/**
 * System calls per request of the proxy and of the reference (`node --import tsx bench/syscalls.ts`),
 * counted by `strace -c -f` attached to the running process: the 401 without a cookie and the
 * passthrough of each, after a warm-up. Each window also holds the timers' system calls (the proxy's
 * event-loop and metrics timers run whether requests come or not): an idle window of the same length is
 * counted too, and its rate is taken off. Both processes are started as the load bench starts them
 * (`BENCH_NODE`, default `24`; the proxy without load shedding by event-loop delay, which a loaded
 * machine would set off); nothing is pinned. `BENCH_SYSCALL_REQUESTS` requests per window
 * (default 5,000), 4 at a time, each from the next of 4,096 clients. Needs `strace`.
 *
 * @module
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { COOKIE_NAME, clientHeaders } from './clients.js';
import { children, containerHeapOptions, resolveNode, sleep, startBenchServer, startProxy, stop } from './harness.js';
import { PASSTHROUGH } from './instructions.js';

/** Seconds of strace attached before and after the requests (it must be attached before the first). */
const PAD_MS = 1_500;

/** System calls by name, from the table `strace -c` writes (its `total` line left out). */
export function straceCounts(text: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    // % time, seconds, usecs/call, calls, [errors,] syscall
    if (fields.length < 5 || !/^[\d.]+$/.test(fields[0] ?? '') || !/^\d+$/.test(fields[3] ?? '')) continue;
    const name = fields[fields.length - 1] as string;
    if (name === 'total') continue;
    counts[name] = (counts[name] ?? 0) + Number(fields[3]);
  }
  return counts;
}

async function send(port: number, session: boolean, count: number, expect: number): Promise<void> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 4 });
  const headers = clientHeaders(4096, session);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const n = next++;
      const res = await pool.request({ method: 'GET', path: PASSTHROUGH.path, headers: headers[n % headers.length] });
      await res.body.dump();
      if (res.statusCode !== expect) throw new Error(`expected ${expect}, got ${res.statusCode}`);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  await pool.close();
}

/** The system calls of `pid` while `work` runs (with {@link PAD_MS} before and after), and how long it all took. */
async function counted(dir: string, pid: number, work: () => Promise<void>): Promise<{ counts: Record<string, number>; ms: number }> {
  const out = join(dir, `strace-${pid}-${Date.now()}.txt`);
  const strace = spawn('strace', ['-c', '-f', '-p', String(pid), '-o', out], { stdio: 'ignore' });
  const begun = performance.now();
  await sleep(PAD_MS);
  await work();
  await sleep(PAD_MS);
  const ms = performance.now() - begun;
  strace.kill('SIGINT');
  await new Promise((resolve) => strace.once('exit', resolve));
  return { counts: straceCounts(readFileSync(out, 'utf8')), ms };
}

async function main(): Promise<void> {
  execFileSync('strace', ['-V'], { stdio: 'ignore' });
  const node = resolveNode(process.env.BENCH_NODE ?? '24');
  const requests = Number(process.env.BENCH_SYSCALL_REQUESTS ?? 5_000);
  const dir = mkdtempSync(join(tmpdir(), 'front-proxy-syscalls-'));
  const upstream = await startBenchServer('upstream', [], undefined);
  const base = `http://127.0.0.1:${upstream.port}`;
  const proxy = await startProxy(base, {
    workers: 1,
    cpus: undefined,
    logPath: '/dev/null',
    nodeOptions: undefined,
    node: node.execPath,
    env: { LOAD_SHED_EVENT_LOOP_DELAY_MS: '0' },
    startTimeoutMs: 120_000,
  });
  const reference = await startBenchServer(
    'reference',
    [base, PASSTHROUGH.upstreamPath, COOKIE_NAME],
    undefined,
    containerHeapOptions(),
    node.execPath,
  );
  process.stdout.write(
    `strace -c -f, Node.js ${node.version}, ${requests} requests per window, 4 at a time, less an idle window's rate\n\n`,
  );
  process.stdout.write(
    '| process, row | system calls per request | read | write, writev | epoll_pwait | futex | other | idle calls per second |\n|---|---|---|---|---|---|---|---|\n',
  );
  try {
    for (const [label, target] of [
      ['proxy', proxy],
      ['reference', reference],
    ] as const) {
      const pid = target.child.pid as number;
      await send(target.port, false, 2_000, 401);
      await send(target.port, true, 2_000, 200);
      const idle = await counted(dir, pid, async () => {
        await sleep(3_000);
      });
      const idleRate = (name?: string) =>
        (name === undefined ? Object.values(idle.counts).reduce((a, b) => a + b, 0) : (idle.counts[name] ?? 0)) / idle.ms;
      for (const [row, session, expect] of [
        ['401 without cookie', false, 401],
        ['passthrough', true, 200],
      ] as const) {
        const { counts, ms } = await counted(dir, pid, () => send(target.port, session, requests, expect));
        const per = (names: readonly string[] | undefined) => {
          const all = names ?? Object.keys(counts);
          const raw = all.reduce((a, n) => a + (counts[n] ?? 0), 0);
          const timers = names === undefined ? idleRate() * ms : names.reduce((a, n) => a + idleRate(n) * ms, 0);
          return Math.max(0, raw - timers) / requests;
        };
        const named = ['read', 'write', 'writev', 'epoll_pwait', 'futex'];
        const other = per(Object.keys(counts).filter((n) => !named.includes(n)));
        process.stdout.write(
          `| ${label}, ${row} | ${per(undefined).toFixed(2)} | ${per(['read']).toFixed(2)} | ${per(['write', 'writev']).toFixed(2)} | ${per(['epoll_pwait']).toFixed(2)} | ${per(['futex']).toFixed(2)} | ${other.toFixed(2)} | ${(idleRate() * 1000).toFixed(0)} |\n`,
        );
      }
    }
  } finally {
    for (const child of children) await stop(child);
    await stop(proxy.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
