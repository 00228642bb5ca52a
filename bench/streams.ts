/**
 * `npm run bench:streams`: the live streams (docs/behaviour.md "Live streams") on one production proxy
 * process (`npm start`'s Node.js options, the container's heap limit, `NODE_ENV=production`) in front
 * of a local event-stream upstream, beside a direct connection to that upstream in the same run:
 *
 * | row | what is measured |
 * |---|---|
 * | idle | `BENCH_STREAMS` (5,000) signed-in event streams open and silent: the proxy's RSS, and KB per stream (of which JS heap and external memory) |
 * | latency | `BENCH_STREAMS_LIVE` (1,000) signed-in streams × 1 event/s, each stream's event at its own moment of the second (in 20 slices 50 ms apart): delivery latency p50/p99 through the proxy and direct, and the proxy's CPU per event |
 * | fan-out | 1,000 anonymous viewers of one feed × 1 event/s: upstream connections, and the proxy's CPU per delivered event |
 * | read | an ordinary passthrough read's p99 (10 at a time), with and without the idle streams open, and the proxy's CPU per read in each |
 * | websocket | 20,000 messages of 100 bytes pushed by the upstream on each of 10 sockets, through the proxy and direct: messages per second |
 *
 * The clients are raw sockets (one `GET` each, answers read as they come); events carry the time
 * they were written, so latency is read against the same clock. Loopback only; every process is
 * stopped by its PID.
 *
 * Environment: `BENCH_STREAMS` (default 5000), `BENCH_STREAMS_LIVE` (default 1000),
 * `BENCH_STREAMS_SECONDS` (seconds of events per latency row, default 10), `BENCH_STREAMS_CPU_PROF`
 * (a folder: the proxy runs with `--cpu-prof` there and is stopped with SIGTERM, so that its profile
 * of the whole run is written), `BENCH_STREAMS_HEAP_SNAPSHOT` (a folder: the proxy writes a heap
 * snapshot there before and after the idle streams opened, to compare in a heap profiler),
 * `BENCH_PROXY_NODE_OPTIONS` (more Node.js options for the proxy process, after `npm start`'s, as in
 * `npm run bench`: e.g. `--no-maglev` to see what a runtime setting does to the idle row's RSS).
 *
 * @module
 */
import { execFileSync, spawn } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import WebSocket, { WebSocketServer } from 'ws';
import { containerHeapOptions, freePort, ROOT, sleep, startNodeOptions } from './harness.js';
import { cpuMicros, rssBytes } from './proc.js';

const STREAMS_DEFAULT = Number(process.env.BENCH_STREAMS ?? 5_000);
const LIVE_DEFAULT = Number(process.env.BENCH_STREAMS_LIVE ?? 1_000);
const SECONDS_DEFAULT = Number(process.env.BENCH_STREAMS_SECONDS ?? 10);
const CPU_PROF_DIR = process.env.BENCH_STREAMS_CPU_PROF;
const HEAP_SNAPSHOT_DIR = process.env.BENCH_STREAMS_HEAP_SNAPSHOT;
/** Messages each upstream WebSocket pushes in the websocket row. */
const PUSHED = 20_000;
/** WebSockets of the websocket row. */
const SOCKETS = 10;

/** Opens `SOCKETS` WebSockets at `url` and resolves with the messages per second they received, all together, once each got {@link PUSHED}. */
async function pushRate(url: string): Promise<number> {
  const started = performance.now();
  await Promise.all(
    Array.from(
      { length: SOCKETS },
      () =>
        new Promise<void>((resolve, reject) => {
          const ws = new WebSocket(url, { perMessageDeflate: false });
          let got = 0;
          ws.on('message', () => {
            if (++got === PUSHED) {
              ws.close();
              resolve();
            }
          });
          ws.once('error', reject);
          ws.once('close', (code) => (got < PUSHED ? reject(new Error(`closed ${code} after ${got} messages`)) : undefined));
        }),
    ),
  );
  return (SOCKETS * PUSHED) / ((performance.now() - started) / 1000);
}

/** A fake JWT (the proxy does not verify it without keys; the upstream does not look). */
function jwt(n: number): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc({ sub: String(n), exp: Math.floor(Date.now() / 1000) + 3600 })}.c2lnbmF0dXJl${n}`;
}

/** The upstream: every `/core-sportbook/*` GET is a held event stream; `/core-sportbook/read` a small JSON. */
async function startUpstream() {
  const streams = new Set<ServerResponse>();
  const opened = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0] as string;
    opened.set(path, (opened.get(path) ?? 0) + 1);
    if (req.url?.startsWith('/core-sportbook/read')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[1,2,3]}');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(':\n\n');
    streams.add(res);
    res.once('close', () => streams.delete(res));
  });
  server.keepAliveTimeout = 60_000;
  // WebSockets: each pushes PUSHED messages as fast as its socket takes them.
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  server.on('upgrade', (req, socket, head) => {
    wss.handleUpgrade(req, socket, head, (ws) => {
      const message = 'x'.repeat(100);
      let sent = 0;
      const push = () => {
        while (sent < PUSHED && ws.readyState === WebSocket.OPEN && ws.bufferedAmount < 64 * 1024) {
          ws.send(message);
          sent++;
        }
        if (sent < PUSHED && ws.readyState === WebSocket.OPEN) setTimeout(push, 1);
      };
      push();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    streams,
    /** Streams opened upstream on `path`. */
    openedOn: (path: string) => opened.get(path) ?? 0,
    /**
     * Writes one event carrying the time it was written (ms, `performance.timeOrigin`-based) to every
     * stream, or with `slice` to the streams of that slice only (every `slices`-th, by opening order).
     */
    tick(seq: number, slice = 0, slices = 1) {
      const line = `id: ${seq}\ndata: {"seq":${seq},"at":${performance.timeOrigin + performance.now()}}\n\n`;
      let i = 0;
      for (const res of streams) if (i++ % slices === slice) res.write(line);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of streams) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One raw client stream: latencies of the events it read (ms). */
interface Client {
  readonly socket: Socket;
  readonly latencies: number[];
  events: number;
}

function openClient(port: number, path: string, headers: Record<string, string>, record: boolean): Promise<Client> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const client: Client = { socket, latencies: [], events: 0 };
    let head = true;
    let pending = '';
    socket.setEncoding('utf8');
    socket.once('error', reject);
    socket.on('data', (chunk: string) => {
      pending += chunk;
      if (head) {
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        if (!pending.startsWith('HTTP/1.1 200')) {
          reject(new Error(pending.slice(0, 200)));
          return;
        }
        head = false;
        pending = pending.slice(end + 4);
        resolve(client);
      }
      let at = pending.indexOf('"at":');
      while (at >= 0) {
        const close = pending.indexOf('}', at);
        if (close < 0) break;
        client.events++;
        if (record) client.latencies.push(performance.timeOrigin + performance.now() - Number(pending.slice(at + 5, close)));
        pending = pending.slice(close + 1);
        at = pending.indexOf('"at":');
      }
      if (at < 0 && pending.length > 4096) pending = pending.slice(-4096);
    });
    const lines = [
      `GET ${path} HTTP/1.1`,
      'Host: bench',
      'Accept: text/event-stream',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      '',
      '',
    ];
    socket.write(lines.join('\r\n'));
  });
}

/**
 * Opens `count` clients 50 at a time (a storm of thousands at once would be shed by the event-loop
 * threshold, as it should); a client refused (503 `overloaded`) is opened again 100 ms later.
 */
async function openMany(count: number, make: (i: number) => Promise<Client>): Promise<Client[]> {
  const out: Client[] = [];
  const once = async (i: number): Promise<Client> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await make(i);
      } catch (error) {
        if (attempt >= 20) throw error;
        await sleep(100);
      }
    }
  };
  for (let i = 0; i < count; i += 50)
    out.push(...(await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => once(i + j)))));
  return out;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** The sum of every sample of the proxy's metrics whose line starts with `prefix` (a name, with or without labels), from its metrics listener. */
async function metricSum(metricsPort: number, prefix: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(prefix)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

/** Seconds the proxy spent in garbage collection so far (`front_proxy_nodejs_gc_duration_seconds_sum`, every kind). */
function gcSeconds(metricsPort: number): Promise<number> {
  return metricSum(metricsPort, 'front_proxy_nodejs_gc_duration_seconds_sum');
}

/** The proxy's JS heap in use and its external memory (buffers' bytes, outside the heap), in bytes. */
async function heapBytes(metricsPort: number): Promise<{ heap: number; external: number }> {
  return {
    heap: await metricSum(metricsPort, 'front_proxy_nodejs_heap_size_used_bytes '),
    external: await metricSum(metricsPort, 'front_proxy_nodejs_external_memory_bytes '),
  };
}

/** Has the proxy (started with `--heapsnapshot-signal=SIGUSR2`) write a heap snapshot into `dir`, and waits until it is written (at most 2 minutes). */
async function heapSnapshot(pid: number, dir: string): Promise<void> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  let size = -1;
  for (let i = 0; i < 240; i++) {
    await sleep(500);
    const written = readdirSync(dir).find((name) => !before.has(name) && name.endsWith('.heapsnapshot'));
    if (written === undefined) continue;
    // Written once its size stops growing.
    const now = statSync(join(dir, written)).size;
    if (now === size && now > 0) return;
    size = now;
  }
  throw new Error(`no heap snapshot written into ${dir}`);
}

/** Slices of the second the latency row spreads each stream's event over (50 ms apart). */
const LATENCY_SLICES = 20;

/** Reads made by each {@link readP99} of the read row. */
const READS = 2_000;

async function readP99(port: number, count = READS): Promise<number> {
  const times: number[] = [];
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const started = performance.now();
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.setEncoding('utf8');
      let read = false;
      socket.on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('[1,2,3]')) {
          read = true;
          times.push(performance.now() - started);
          socket.destroy();
          resolve();
        }
      });
      socket.once('error', reject);
      // Another answer (a 503 of load shedding on a loaded machine): the connection closes without the body.
      socket.once('close', () => (read ? undefined : reject(new Error(`read: ${text.slice(0, 200) || 'no answer'}`))));
      socket.write('GET /api/core-sportbook/read HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n');
    });
  for (let i = 0; i < count; i += 10) await Promise.all(Array.from({ length: 10 }, one));
  return percentile(times, 99);
}

/** What {@link measureStreams} found (times in ms, CPU in µs, RSS in MiB). */
export interface StreamsReport {
  readonly node: string;
  readonly streams: number;
  readonly live: number;
  readonly seconds: number;
  readonly rssBeforeMb: number;
  readonly rssIdleMb: number;
  readonly kbPerStream: number;
  /** Of the RSS per stream: the JS heap in use and the external memory, per stream (KB; the heap before a collection, so its garbage too). */
  readonly heapKbPerStream: number;
  readonly externalKbPerStream: number;
  readonly readP99Ms: number;
  readonly readP99WithStreamsMs: number;
  /** The proxy's CPU per read (µs), without and with the idle streams open: the ratio the wall-clock p99 of a shared machine blurs. */
  readonly readCpuUs: number;
  readonly readCpuWithStreamsUs: number;
  /** The proxy's garbage collection per read (µs), without and with the idle streams open. */
  readonly readGcUs: number;
  readonly readGcWithStreamsUs: number;
  readonly latency: {
    readonly proxyP50: number;
    readonly proxyP99: number;
    readonly directP50: number;
    readonly directP99: number;
    readonly cpuPerEventUs: number;
    readonly events: number;
  };
  readonly fanOut: { readonly upstreamStreams: number; readonly delivered: number; readonly cpuPerEventUs: number; readonly p99: number };
  readonly websocket: { readonly proxyPerSecond: number; readonly directPerSecond: number };
}

/** The report as the table of bench/README.md "Live streams", one line each. */
export function formatStreams(r: StreamsReport): string[] {
  const mb = (n: number) => n.toFixed(0);
  const ms = (n: number) => n.toFixed(2);
  return [
    `Live streams (Node.js ${r.node}; ${r.streams} idle, ${r.live} live streams):`,
    '',
    '| row | load | measured | target |',
    '|---|---|---|---|',
    `| idle | ${r.streams} signed-in streams open | RSS ${mb(r.rssBeforeMb)} → ${mb(r.rssIdleMb)} MB, ${r.kbPerStream.toFixed(1)} KB per stream (JS heap ${r.heapKbPerStream.toFixed(1)} KB, external ${r.externalKbPerStream.toFixed(1)} KB) | < ${RSS_TARGET_STREAMS_MB} MB |`,
    `| read | an ordinary read's p99, 10 at a time | ${ms(r.readP99Ms)} ms without, ${ms(r.readP99WithStreamsMs)} ms with ${r.streams} streams open (${((r.readP99WithStreamsMs / r.readP99Ms - 1) * 100).toFixed(0)}%); the proxy's CPU per read ${r.readCpuUs.toFixed(0)} µs without, ${r.readCpuWithStreamsUs.toFixed(0)} µs with (${((r.readCpuWithStreamsUs / r.readCpuUs - 1) * 100).toFixed(0)}%), of which garbage collection ${r.readGcUs.toFixed(0)} and ${r.readGcWithStreamsUs.toFixed(0)} µs | within 10% |`,
    `| latency | ${r.live} streams × 1 event/s, ${r.seconds} s | through the proxy p50 ${ms(r.latency.proxyP50)} / p99 ${ms(r.latency.proxyP99)} ms; direct p50 ${ms(r.latency.directP50)} / p99 ${ms(r.latency.directP99)} ms; added p99 ${ms(r.latency.proxyP99 - r.latency.directP99)} ms; ${r.latency.events} events, ${r.latency.cpuPerEventUs.toFixed(1)} µs CPU per event | added p99 < ${ADDED_P99_TARGET_MS} ms |`,
    `| fan-out | ${r.live} anonymous viewers of one feed × 1 event/s | ${r.fanOut.upstreamStreams} upstream stream(s); ${r.fanOut.delivered} events delivered, ${r.fanOut.cpuPerEventUs.toFixed(1)} µs CPU per delivered event; p99 ${ms(r.fanOut.p99)} ms | 1 upstream stream |`,
    `| websocket | ${SOCKETS} sockets × ${PUSHED} messages of 100 bytes pushed by the upstream | through the proxy ${Math.round(r.websocket.proxyPerSecond)} messages/s, direct ${Math.round(r.websocket.directPerSecond)} messages/s (${(r.websocket.proxyPerSecond / r.websocket.directPerSecond).toFixed(2)}×) | reported |`,
  ];
}

/** The target RSS of the idle row, in MiB. */
export const RSS_TARGET_STREAMS_MB = 400;
/** The target added delivery latency p99 of the latency row, in milliseconds. */
export const ADDED_P99_TARGET_MS = 50;

/**
 * Runs every row against one proxy process started on `node` (default the bench's own Node.js).
 * @param options.streams - idle streams (`BENCH_STREAMS`); `live`: live streams and viewers; `seconds`: of events per row.
 */
export async function measureStreams(
  options: { node?: string; streams?: number; live?: number; seconds?: number } = {},
): Promise<StreamsReport> {
  const STREAMS = options.streams ?? STREAMS_DEFAULT;
  const LIVE = options.live ?? LIVE_DEFAULT;
  const SECONDS = options.seconds ?? SECONDS_DEFAULT;
  const upstream = await startUpstream();
  const port = await freePort();
  const metricsPort = await freePort();
  const profile = CPU_PROF_DIR === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`];
  const extra = (process.env.BENCH_PROXY_NODE_OPTIONS ?? '').split(/\s+/).filter((option) => option.length > 0);
  if (HEAP_SNAPSHOT_DIR !== undefined) profile.push('--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${HEAP_SNAPSHOT_DIR}`);
  const proxy = spawn(
    options.node ?? process.execPath,
    [...startNodeOptions(), ...containerHeapOptions(), ...extra, ...profile, join(ROOT, 'dist/server.js')],
    {
      env: {
        PATH: process.env.PATH ?? '',
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        BFF_BASE_URL: upstream.url,
        STICKER_API_URL: `${upstream.url}/sticker`,
        LOG_LEVEL: 'warn',
        SESSION_COOKIE_NAME: 'access_token',
        STREAMS_PER_ADDRESS: '100000',
        STREAMS_MAX: '100000',
        RATE_LIMIT_API_PER_MIN: '0',
        RATE_LIMIT_API_PER_ADDRESS_PER_MIN: '0',
        STREAM_IDLE_TIMEOUT_MS: '600000',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const pid = proxy.pid as number;
  try {
    for (let i = 0; i < 100; i++) {
      try {
        await readP99(port, 10);
        break;
      } catch {
        await sleep(100);
      }
    }
    // Warm: the read without streams must not pay for the proxy's first compilations.
    await readP99(port);
    const cpuRead0 = cpuMicros([pid]);
    const gcRead0 = await gcSeconds(metricsPort);
    const baseRead = await readP99(port);
    const readCpuUs = (cpuMicros([pid]) - cpuRead0) / READS;
    const readGcUs = (((await gcSeconds(metricsPort)) - gcRead0) * 1e6) / READS;
    if (HEAP_SNAPSHOT_DIR !== undefined) await heapSnapshot(pid, HEAP_SNAPSHOT_DIR);
    const rss0 = rssBytes([pid]);
    const heap0 = await heapBytes(metricsPort);

    // idle: signed-in streams open and silent.
    const idle = await openMany(STREAMS, (i) =>
      openClient(port, `/api/core-sportbook/live/s${i}`, { Cookie: `access_token=${jwt(i)}` }, false),
    );
    await sleep(2_000);
    const rss1 = rssBytes([pid]);
    const heap1 = await heapBytes(metricsPort);
    if (HEAP_SNAPSHOT_DIR !== undefined) await heapSnapshot(pid, HEAP_SNAPSHOT_DIR);
    const cpuRead1 = cpuMicros([pid]);
    const gcRead1 = await gcSeconds(metricsPort);
    const loadedRead = await readP99(port);
    const readCpuWithStreamsUs = (cpuMicros([pid]) - cpuRead1) / READS;
    const readGcWithStreamsUs = (((await gcSeconds(metricsPort)) - gcRead1) * 1e6) / READS;
    for (const c of idle) c.socket.destroy();
    await sleep(1_000);

    // latency: LIVE signed-in streams through the proxy, LIVE direct, 1 event/s.
    const via = await openMany(LIVE, (i) => openClient(port, `/api/core-sportbook/live/l${i}`, { Cookie: `access_token=${jwt(i)}` }, true));
    const upPort = Number(new URL(upstream.url).port);
    const direct = await openMany(LIVE, (i) => openClient(upPort, `/core-sportbook/live/d${i}`, {}, true));
    const cpu0 = cpuMicros([pid]);
    // 1 event/s per stream, the streams' events spread over the second as independent feeds' are
    // (the fan-out row below is the synchronised case: one event to every viewer at once).
    for (let s = 1; s <= SECONDS; s++) {
      for (let slice = 0; slice < LATENCY_SLICES; slice++) {
        upstream.tick(s, slice, LATENCY_SLICES);
        await sleep(1_000 / LATENCY_SLICES);
      }
    }
    const cpu1 = cpuMicros([pid]);
    const viaLat = via.flatMap((c) => c.latencies);
    const directLat = direct.flatMap((c) => c.latencies);
    const delivered = via.reduce((n, c) => n + c.events, 0);
    const latency = {
      proxyP50: percentile(viaLat, 50),
      proxyP99: percentile(viaLat, 99),
      directP50: percentile(directLat, 50),
      directP99: percentile(directLat, 99),
      cpuPerEventUs: (cpu1 - cpu0) / delivered,
      events: delivered,
    };
    for (const c of [...via, ...direct]) c.socket.destroy();
    await sleep(1_000);

    // fan-out: LIVE anonymous viewers of one feed.
    const viewers = await openMany(LIVE, () => openClient(port, '/api/core-sportbook/live/shared?sport=football', {}, true));
    const upstreamStreams = upstream.openedOn('/core-sportbook/live/shared');
    const cpu2 = cpuMicros([pid]);
    for (let s = 1; s <= SECONDS; s++) {
      upstream.tick(s);
      await sleep(1_000);
    }
    const cpu3 = cpuMicros([pid]);
    const fanned = viewers.reduce((n, c) => n + c.events, 0);
    const fanLat = viewers.flatMap((c) => c.latencies);
    const fanOut = { upstreamStreams, delivered: fanned, cpuPerEventUs: (cpu3 - cpu2) / fanned, p99: percentile(fanLat, 99) };
    for (const c of viewers) c.socket.destroy();

    // websocket: messages pushed by the upstream, through the proxy and direct.
    const wsDirect = await pushRate(`ws://127.0.0.1:${new URL(upstream.url).port}/core-sportbook/live/push`);
    const wsVia = await pushRate(`ws://127.0.0.1:${port}/api/core-sportbook/live/push`);
    return {
      node: execFileSync(options.node ?? process.execPath, ['--version'], { encoding: 'utf8' }).trim(),
      streams: STREAMS,
      live: LIVE,
      seconds: SECONDS,
      rssBeforeMb: rss0 / 2 ** 20,
      rssIdleMb: rss1 / 2 ** 20,
      kbPerStream: (rss1 - rss0) / 1024 / STREAMS,
      heapKbPerStream: (heap1.heap - heap0.heap) / 1024 / STREAMS,
      externalKbPerStream: (heap1.external - heap0.external) / 1024 / STREAMS,
      readP99Ms: baseRead,
      readP99WithStreamsMs: loadedRead,
      readCpuUs,
      readCpuWithStreamsUs,
      readGcUs,
      readGcWithStreamsUs,
      latency,
      fanOut,
      websocket: { proxyPerSecond: wsVia, directPerSecond: wsDirect },
    };
  } finally {
    if (CPU_PROF_DIR !== undefined && proxy.exitCode === null) {
      // A profile is written when the process exits by itself: the drain's end, at most 20 s later.
      const exited = new Promise<void>((resolve) => proxy.once('exit', () => resolve()));
      proxy.kill('SIGTERM');
      await Promise.race([exited, sleep(20_000)]);
    }
    proxy.kill('SIGKILL');
    await upstream.close();
  }
}

// `npm run bench:streams`: this module alone, on the bench's own Node.js.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  measureStreams().then(
    (report) => process.stdout.write(`${formatStreams(report).join('\n')}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
