/**
 * The benchmark harness (`npm run bench`) in miniature: one 1-second run of the passthrough scenario
 * against the proxy (production configuration: metrics on, default rate limits), the reference and the
 * peer, driven by autocannon, unpinned, spread over many sessions and client addresses, all on the
 * Node.js running the test (`node: 'current'`: nothing is downloaded). It checks the shape of the report
 * (table and JSON), that every answer was a 2xx (no 429: the sessions rotate) and that the proxy's
 * metrics counted them; it asserts no timing (shared machines). Also the clients' session tokens and
 * addresses, the wrk script's rotation, `BENCH_NODE=current`, the proxy's answers by status read from
 * its metrics text, the bench upstream's catalogue page, and the bytes per page by coding against a
 * small local server that compresses (or does not).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { Pool, request } from 'undici';
import { clientAddress, clientHeaders, COOKIE_NAME, sessionToken } from '../bench/clients.js';
import { wrkScript } from '../bench/load.js';
import { BROWSER_ACCEPT_ENCODING, formatPageBytes, pageBytes, pageBytesProblems } from '../bench/page-bytes.js';
import {
  call,
  containerHeapOptions,
  requestCountSample,
  resetUpstream,
  startBenchServer,
  startProxy,
  stop,
  upstreamCalls,
} from '../bench/harness.js';
import { PIPELINE_STEP_NAMES, pipelineSteps } from '../src/pipeline/steps.js';
import {
  bodyOf,
  callgrindTotal,
  checkUpstreamCalls,
  chosenBy,
  clientOf,
  combineProcesses,
  formatInstructions,
  mean,
  REFUSAL_FLOORS,
  REFUSAL_PARTS,
  send,
  threadCounts,
  variants,
} from '../bench/instructions.js';
import { stepsOf } from '../bench/profile-steps.js';
import { straceCounts } from '../bench/syscalls.js';
import { formatRedisCommands, infoField, parseCommandStats } from '../bench/redis-commands.js';
import { type BenchReport, resolveNode, runBench, SCENARIOS, startNodeOptions, statusesOfRoute } from '../bench/run.js';
import { FAMILIES } from '../bench/scenarios/index.js';
import { benchProtocol, tracingRows } from '../bench/scenarios/tracing.js';
import { CATALOGUE_GAMES, CATALOGUE_PAGE } from '../bench/upstream.js';
import { HAVE_REDIS } from './helpers/redis-server.js';

/**
 * Sends 8 of `variant`'s requests to the process on `port` (16 clients, 4 at a time) after the bench
 * upstream at `base` forgot its calls, and checks the upstream calls as bench:instructions does.
 */
async function sendAndCheck(port: number, variant: ReturnType<typeof variants>[number], base: string): Promise<void> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 4 });
  try {
    await resetUpstream(base);
    await send(pool, variant, clientHeaders(16, variant.session), {}, 8, 0);
    checkUpstreamCalls(variant, (await upstreamCalls(base)).byPath, 8);
  } finally {
    await pool.close();
  }
}

/**
 * A proxy process as the bench starts its variants, on this Node.js without pinning or the heap
 * limit, the event-loop delay refusal off: `env` the variant's, `stepsOff` the ledger's, `logPath`
 * where its lines go (default: none kept).
 */
function startTestProxy(
  base: string,
  env: Record<string, string>,
  options: { stepsOff?: string | undefined; logPath?: string } = {},
): ReturnType<typeof startProxy> {
  return startProxy(base, {
    workers: 1,
    cpus: undefined,
    logPath: options.logPath ?? '/dev/null',
    nodeOptions: undefined,
    node: process.execPath,
    heapLimit: false,
    env: { ...env, LOAD_SHED_EVENT_LOOP_DELAY_MS: '0' },
    stepsOff: options.stepsOff,
  });
}

test('bench harness: a 1 s passthrough run reports every target with 2xx answers only', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
  try {
    const resultsPath = join(dir, 'results.json');
    const report = await runBench({
      seconds: 1,
      runs: 1,
      warmupSeconds: 0,
      connections: 4,
      sessions: 256,
      tool: 'autocannon',
      scenarios: ['passthrough'],
      pin: false,
      logPath: '/dev/null',
      resultsPath,
      print: false,
      // The Node.js running the test: nothing is downloaded, and no second proxy runs beside it.
      node: 'current',
    });

    assert.deepEqual(
      report.rows.map((r) => r.id),
      // The tuned reference runs when `npm start` gives the proxy Node.js options (package.json); the proxy
      // without the container's heap limit when there is one (BENCH_MEMORY_LIMIT_MB, 512 by default).
      [
        'passthrough/proxy',
        'passthrough/reference',
        ...(startNodeOptions().length > 0 ? ['passthrough/reference-tuned'] : []),
        'passthrough/peer',
        // The peer a team would assemble from the usual plugins (logging, cookie, rate limit, metrics).
        'passthrough/peer-assembled',
        // The same configuration in a process that serves the passthrough only: the base of the
        // tracing and REDIS_URL rows.
        'passthrough/proxy-passthrough-only',
        ...(containerHeapOptions().length > 0 ? ['passthrough/proxy-no-heap-limit'] : []),
      ],
    );
    for (const row of report.rows) {
      assert.equal(row.runs.length, 1, row.id);
      assert.ok(row.total.requests > 0, `${row.id}: answers were received`);
      assert.equal(row.total.non2xx, 0, `${row.id}: non-2xx answers`);
      assert.equal(row.total.errors, 0, `${row.id}: socket errors`);
      for (const value of Object.values(row.median)) assert.ok(Number.isFinite(value) && value >= 0, `${row.id}: ${value}`);
      assert.ok(row.total.upstreamCalls > 0, `${row.id}: the upstream was called`);
      assert.match(row.path, /^\/api\//);
      assert.deepEqual(row.clients, { count: 256, withSession: true, burst: 1 });
      for (const run of row.runs) {
        assert.ok(Number.isFinite(run.processRssMb) && run.processRssMb > 0, `${row.id}: per-process RSS`);
        assert.ok(Number.isFinite(run.cpuByProcess.upstream), `${row.id}: upstream CPU`);
        assert.ok(Number.isFinite(run.cpuByProcess['autocannon (bench process)']), `${row.id}: load generator CPU`);
      }
    }
    assert.equal(report.rows.find((r) => r.target === 'reference')?.ratio, 1);
    // The proxy's own count of the route's answers during the run, by status: 200 only.
    for (const run of report.rows.find((r) => r.id === 'passthrough/proxy')?.runs ?? []) {
      assert.deepEqual(Object.keys(run.statuses ?? {}), ['200']);
      assert.ok((run.statuses?.['200'] ?? 0) >= run.requests);
    }
    assert.equal(report.rows.find((r) => r.id === 'passthrough/peer')?.runs[0]?.statuses, undefined);
    assert.ok(
      report.checks.filter((c) => c.kind === 'correctness').every((c) => c.ok),
      JSON.stringify(report.checks),
    );
    // Metrics on: each proxy was scraped once, and counted at least the answers measured.
    const proxies = report.rows.filter((r) => r.target.startsWith('proxy')).map((r) => r.target);
    assert.deepEqual(report.metrics.map((m) => m.target).sort(), [...proxies].sort());
    for (const scrape of report.metrics) {
      assert.equal(scrape.status, 200, scrape.target);
      assert.ok(scrape.requestCount >= scrape.measuredAnswers, JSON.stringify(scrape));
    }
    assert.ok(report.checks.some((c) => c.name.startsWith('proxy: GET /metrics') && c.ok));
    assert.equal(report.meta.sessions, 256);
    assert.deepEqual(report.meta.targetNode, { spec: 'current', version: process.version });
    for (const row of report.rows) assert.equal(row.node, process.version, row.id);
    assert.equal(report.catalogueBytes, null);
    // Targets print only for the scenarios run: here the passthrough against the peer, and the RSS.
    assert.ok(report.checks.some((c) => c.kind === 'target' && c.name.startsWith('passthrough vs the Fastify + reply-from peer')));
    assert.ok(!report.checks.some((c) => c.name.includes('catalogue')));

    const header = report.table.split('\n')[0] ?? '';
    for (const column of ['scenario', 'target', 'node', 'req/s', 'ratio', 'p50 ms', 'p99 ms', 'CPU µs/req', 'RSS MB', 'non-2xx']) {
      assert.ok(header.includes(column), `table column ${column}`);
    }
    assert.equal(report.table.split('\n').length, 2 + report.rows.length);

    const written = JSON.parse(readFileSync(resultsPath, 'utf8')) as BenchReport;
    assert.equal(written.rows.length, report.rows.length);
    assert.equal(written.meta.tool, 'autocannon');
    assert.equal(written.meta.seconds, 1);
    assert.equal(written.table, report.table);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bench clients: JWT-shaped session tokens and distinct addresses', () => {
  const [header, payload, signature] = sessionToken(7).split('.');
  assert.deepEqual(JSON.parse(Buffer.from(header ?? '', 'base64url').toString()), { alg: 'HS256', typ: 'JWT' });
  assert.equal(Buffer.from(payload ?? '', 'base64url').toString(), '{"sub":"7","exp":4102444800}');
  assert.ok(signature && /^[A-Za-z0-9_-]+$/.test(signature));
  const addresses = new Set(Array.from({ length: 4096 }, (_, n) => clientAddress(n)));
  assert.equal(addresses.size, 4096);
  for (const address of addresses) assert.match(address, /^10\.\d{1,3}\.\d{1,3}\.\d{1,3}$/);
  const [first] = clientHeaders(2, true);
  assert.equal(first?.cookie, `theme=dark; ${COOKIE_NAME}=${sessionToken(0)}`);
  assert.deepEqual(clientHeaders(1, false), [{ 'x-forwarded-for': clientAddress(0) }]);
});

test('the wrk script takes the next client per request and keeps the deposit body varying', () => {
  const script = wrkScript(
    {
      url: 'http://127.0.0.1:1/api/payments/deposit',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"creditAmount":__N__}',
      rotation: { sets: clientHeaders(3, true) },
      connections: 1,
      seconds: 1,
    },
    10,
  );
  for (let n = 0; n < 3; n++) assert.ok(script.includes(sessionToken(n)) && script.includes(`"${clientAddress(n)}"`), `client ${n}`);
  assert.match(script, /request = function\(\)/);
  assert.match(script, /wrk\.format\(method, path, headers\[i\], \(string\.gsub\(template, "__N__", tostring\(counter\)\)\)\)/);
  assert.match(script, /BENCH_RESULT/);
});

test('the bench starts the proxy with the Node.js options of npm start', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
  const options = startNodeOptions();
  assert.equal(pkg.scripts.start, ['node', ...options, 'dist/server.js'].join(' '));
  for (const option of options) assert.match(option, /^--[a-z0-9-]+(=\S+)?$/);
});

test('BENCH_NODE=current is the Node.js running the bench', () => {
  assert.deepEqual(resolveNode('current'), { spec: 'current', version: process.version, execPath: process.execPath });
  assert.equal(resolveNode(process.execPath).version, process.version);
  assert.throws(() => resolveNode('latest-please'), /BENCH_NODE=latest-please/);
});

test("the proxy's answers of one route by status, from its metrics text", () => {
  const text = [
    '# TYPE front_proxy_http_request_duration_seconds histogram',
    'front_proxy_http_request_duration_seconds_bucket{le="0.005",method="GET",route="/api/games/list",status_code="304"} 7',
    'front_proxy_http_request_duration_seconds_count{method="GET",route="/api/games/list",status_code="304"} 12',
    'front_proxy_http_request_duration_seconds_count{method="GET",route="/api/games/list",status_code="200"} 3',
    'front_proxy_http_request_duration_seconds_count{method="HEAD",route="/api/games/list",status_code="200"} 1',
    'front_proxy_http_request_duration_seconds_count{method="GET",route="/api/games/search",status_code="200"} 40',
  ].join('\n');
  assert.deepEqual(statusesOfRoute(text, '/api/games/list'), { '304': 12, '200': 4 });
  assert.deepEqual(statusesOfRoute(text, '/api/user/login-history'), {});
});

test('the answer counter is read with or without the front_proxy_ metric prefix', () => {
  const cases: [line: string, expected: { labels: string; value: number } | undefined][] = [
    ['http_request_duration_seconds_count{route="/a",status_code="200"} 5', { labels: 'route="/a",status_code="200"', value: 5 }],
    [
      'front_proxy_http_request_duration_seconds_count{route="/a",status_code="304"} 7',
      { labels: 'route="/a",status_code="304"', value: 7 },
    ],
    ['front_proxy_http_request_duration_seconds_count 9', { labels: '', value: 9 }],
    ['front_proxy_http_request_duration_seconds_sum{route="/a"} 0.5', undefined],
    ['other_http_request_duration_seconds_count{route="/a"} 1', undefined],
    ['# TYPE front_proxy_http_request_duration_seconds histogram', undefined],
  ];
  for (const [line, expected] of cases) assert.deepEqual(requestCountSample(line), expected, line);
  const prefixed = 'front_proxy_http_request_duration_seconds_count{method="GET",route="/api/games/list",status_code="304"} 12';
  assert.deepEqual(statusesOfRoute(prefixed, '/api/games/list'), { '304': 12 });
});

test("scenario families: every scenario named once, in the families' order; the round-3 scenarios kept", () => {
  const names = FAMILIES.flatMap((f) => Object.keys(f.scenarios));
  assert.deepEqual([...SCENARIOS], names);
  assert.equal(new Set(names).size, names.length);
  for (const kept of [
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
  ]) {
    assert.ok(names.includes(kept), kept);
  }
});

test('tracing rows: each sampling ratio in the chosen encoding, full sampling in the other; the encoding option checked', () => {
  const json = tracingRows('http/json');
  assert.deepEqual(
    json.map((r) => [r.id, r.ratio, r.protocol]),
    [
      ['tracing/ratio-0', 0, 'http/json'],
      ['tracing/ratio-0.01', 0.01, 'http/json'],
      ['tracing/ratio-0.1', 0.1, 'http/json'],
      ['tracing/passthrough', undefined, 'http/json'],
      ['tracing/protobuf', undefined, 'http/protobuf'],
    ],
  );
  assert.equal(new Set(json.map((r) => r.target)).size, json.length, 'a proxy per row');
  assert.deepEqual(tracingRows('http/protobuf').at(-1), {
    id: 'tracing/json',
    target: 'proxy-tracing-json',
    ratio: undefined,
    protocol: 'http/json',
  });
  assert.equal(benchProtocol({}), 'http/json');
  assert.equal(benchProtocol({ BENCH_OTLP_PROTOCOL: 'http/protobuf' }), 'http/protobuf');
  assert.throws(() => benchProtocol({ BENCH_OTLP_PROTOCOL: 'grpc' }), /BENCH_OTLP_PROTOCOL/);
});

test('Redis INFO: calls by command (subcommands named with |) and one stats field', () => {
  const commandstats = [
    '# Commandstats',
    'cmdstat_set:calls=400,usec=900,usec_per_call=2.25,rejected_calls=0,failed_calls=0',
    'cmdstat_config|resetstat:calls=1,usec=10,usec_per_call=10.00,rejected_calls=0,failed_calls=0',
    'cmdstat_get:calls=3,usec=3,usec_per_call=1.00,rejected_calls=0,failed_calls=0',
  ].join('\r\n');
  assert.deepEqual(parseCommandStats(commandstats), { set: 400, 'config|resetstat': 1, get: 3 });
  assert.deepEqual(parseCommandStats(''), {});
  const stats = '# Stats\r\ntotal_commands_processed:410\r\ntotal_reads_processed:402\r\n';
  assert.equal(infoField(stats, 'total_reads_processed'), 402);
  assert.ok(Number.isNaN(infoField(stats, 'total_writes_processed')));
});

test(
  "bench redis-commands: a deposit's Redis commands and round trips, counted on a redis-server",
  { skip: !HAVE_REDIS && 'redis-server is not installed', timeout: 90_000 },
  async () => {
    const report = await runBench({
      seconds: 1,
      runs: 1,
      warmupSeconds: 0,
      connections: 1,
      sessions: 16,
      tool: 'autocannon',
      scenarios: ['redis-commands'],
      pin: false,
      logPath: '/dev/null',
      resultsPath: undefined,
      print: false,
      node: 'current',
    });
    assert.deepEqual(report.rows, [], 'no load row');
    const counted = report.redisCommands;
    assert.ok(counted, 'the counts are in the report');
    assert.equal(counted.succeeded, counted.deposits, 'every deposit answered 2xx');
    assert.equal(counted.passthroughCommandsPerRequest, 0, 'the passthrough makes no Redis command');
    // The exactly-once guard writes at least its pending marker and its kept answer.
    assert.ok(counted.totalPerDeposit >= 2, JSON.stringify(counted.commandsPerDeposit));
    assert.ok(
      counted.roundTripsPerDeposit >= 1 && counted.roundTripsPerDeposit <= counted.totalPerDeposit + 0.05,
      String(counted.roundTripsPerDeposit),
    );
    assert.ok(counted.sequence.length >= 2, JSON.stringify(counted.sequence));
    // The deposits left their records (kept 5 s after each answer: the last ones at least), each with its answer.
    assert.ok(counted.records && counted.records.count >= 1, JSON.stringify(counted.records));
    assert.ok(
      counted.records.medianBytes > 50 && counted.records.medianMemoryBytes >= counted.records.medianBytes,
      JSON.stringify(counted.records),
    );
    assert.ok(
      counted.replay &&
        [counted.replay.sequentialUs, counted.replay.pipelinedUs, counted.replay.scriptUs].every((us) => Number.isFinite(us) && us > 0),
    );
    assert.ok(
      report.checks.filter((c) => c.kind === 'correctness').every((c) => c.ok),
      JSON.stringify(report.checks),
    );
    assert.match(formatRedisCommands(counted).join('\n'), /commands, \d+\.\d+ round trips/);
  },
);

test('the bench catalogue page: deterministic, a few tens of KB of games', () => {
  const page = JSON.parse(CATALOGUE_PAGE.toString('utf8')) as {
    data: { slug: string; name: string; provider: { name: string }; images: object }[];
  };
  assert.equal(page.data.length, CATALOGUE_GAMES);
  assert.equal(new Set(page.data.map((g) => g.slug)).size, CATALOGUE_GAMES);
  assert.ok(CATALOGUE_PAGE.length > 20_000 && CATALOGUE_PAGE.length < 64_000, String(CATALOGUE_PAGE.length));
  for (const game of page.data) assert.ok(game.name && game.provider.name && Object.keys(game.images).length > 0);
});

test('bytes per page: each coding measured and decoded against identity; none sent stays empty', async () => {
  const body = Buffer.from(JSON.stringify({ data: Array.from({ length: 200 }, (_, i) => ({ slug: `game-${i}`, name: `Game ${i}` })) }));
  let compress = true;
  let vary = true;
  let corrupt = false;
  const server = createServer((req, res) => {
    const accepted = String(req.headers['accept-encoding'] ?? '');
    const coding = !compress ? undefined : /\bbr\b/.test(accepted) ? 'br' : /\bgzip\b/.test(accepted) ? 'gzip' : undefined;
    const page = corrupt && coding ? body.subarray(1) : body;
    const out = coding === 'br' ? zlib.brotliCompressSync(page) : coding === 'gzip' ? zlib.gzipSync(page) : page;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      etag: `"${createHash('sha256').update(out).digest('base64url')}"`,
    };
    if (compress && vary) headers.vary = 'Accept-Encoding';
    if (coding) headers['content-encoding'] = coding;
    res.writeHead(200, headers).end(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/games/list`;
    const encoded = await pageBytes(url);
    assert.deepEqual(pageBytesProblems(encoded), []);
    const byCoding = Object.fromEntries(encoded.answers.map((a) => [a.acceptEncoding, a]));
    assert.equal(byCoding.identity?.bytes, body.length);
    assert.equal(byCoding.br?.contentEncoding, 'br');
    assert.equal(byCoding.br?.decodesToIdentity, true);
    assert.equal(byCoding[BROWSER_ACCEPT_ENCODING]?.contentEncoding, 'br');
    assert.ok(encoded.brShare !== null && encoded.brShare > 0 && encoded.brShare < 0.5);
    assert.ok(encoded.gzipShare !== null && encoded.gzipShare < 0.5);
    assert.match(formatPageBytes(encoded), /\| br +\| br +\| \d/);

    // Encoded without Vary, or a body that is not the page: problems, not figures.
    vary = false;
    corrupt = true;
    const wrong = pageBytesProblems(await pageBytes(url)).join('; ');
    assert.match(wrong, /no Vary: Accept-Encoding/);
    assert.match(wrong, /the br body does not decode to the identity body/);
    vary = true;
    corrupt = false;

    compress = false;
    const plain = await pageBytes(url);
    assert.deepEqual(pageBytesProblems(plain), []);
    assert.equal(plain.brShare, null);
    assert.equal(plain.gzipShare, null);
    // Asked for br, sent identity: "—", not the identity bytes under br's name.
    assert.match(formatPageBytes(plain), /\| br +\| none \(identity sent\) +\| — /);
  } finally {
    server.close();
  }
});

test('the container heap limit of the proxy processes: half the memory limit, 512 MiB by default, 0 for none', () => {
  const cases: [value: string | undefined, options: string[] | 'throws'][] = [
    [undefined, ['--max-old-space-size=256']],
    ['', ['--max-old-space-size=256']],
    ['1024', ['--max-old-space-size=512']],
    ['0', []],
    ['-1', 'throws'],
    ['lots', 'throws'],
  ];
  for (const [value, options] of cases) {
    const env = value === undefined ? {} : { BENCH_MEMORY_LIMIT_MB: value };
    if (options === 'throws') assert.throws(() => containerHeapOptions(env), /BENCH_MEMORY_LIMIT_MB/, String(value));
    else assert.deepEqual(containerHeapOptions(env), options, String(value));
  }
});

test('a CPU profile split by step: a built-in counts for its caller, idle is left out', () => {
  const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({
    id,
    callFrame: { functionName, url },
    children,
  });
  const profile = {
    nodes: [
      frame(1, '(root)', '', [2, 5, 6, 7]),
      frame(2, 'handler', 'file:///app/dist/routes/payments.js', [3]),
      frame(3, 'parse', '', [4]),
      frame(4, 'get', 'file:///app/node_modules/lru-cache/dist/esm/index.js'),
      frame(5, '(garbage collector)', ''),
      frame(6, '(idle)', ''),
      frame(7, 'write', 'node:net'),
    ],
    samples: [2, 3, 3, 4, 5, 6, 6, 7],
    timeDeltas: [10, 10, 10, 5, 7, 100, 100, 3],
  };
  assert.deepEqual(Object.fromEntries(stepsOf(profile)), {
    'route handler and payload mapping': 30,
    '(garbage collector)': 7,
    'caches (lru-cache)': 5,
    'Node.js http, net, streams, timers': 3,
  });
});

test("callgrind's totals line is the instructions counted while the instrumentation was on", () => {
  assert.equal(callgrindTotal('events: Ir\nsummary: 0\n\n\ntotals: 1234567\n'), 1_234_567);
  assert.throws(() => callgrindTotal('events: Ir\nsummary: 0\n'), /no totals line/);
});

test("a dump's counts by thread: thread 1 is the main thread, every thread is their sum", () => {
  assert.deepEqual(threadCounts({ '01': 900, '03': 40, '04': 60, '08': 0 }), { main: 900, all: 1_000 });
  assert.deepEqual(threadCounts({ '01': 5 }), { main: 5, all: 5 });
  assert.throws(() => threadCounts({ '02': 5 }), /no main thread in the dump \(threads 02\)/);
  assert.throws(() => threadCounts({}), /threads none/);
});

test('bench:instructions: the rows and tracing variants, their ratios to the reference passthrough and to tracing off, the upstream checks', () => {
  const all = variants('http://127.0.0.1:1/v1/traces');
  assert.deepEqual(
    all.map((v) => [v.id, v.target, v.expect, v.upstream.perRequest]),
    [
      ['reference passthrough', 'reference', 200, 1],
      ['passthrough (tracing off)', 'proxy', 200, 1],
      ['401 without cookie', 'proxy', 401, 0],
      ['401 without cookie, request log lines off (LOG_LEVEL=warn)', 'proxy', 401, 0],
      ['401 without cookie, every optional step off but the auth gate', 'proxy', 401, 0],
      ['floor: node:http answering the 401', 'floor-http', 401, 0],
      ['floor: Fastify answering the 401', 'floor-fastify', 401, 0],
      ['503 circuit open', 'proxy', 503, 0],
      ['304 revalidation', 'proxy', 304, 0],
      ['reference deposit', 'reference', 200, 1],
      ['deposit', 'proxy', 200, 1],
      ['parentbased_traceidratio 0', 'proxy', 200, 1],
      ['parentbased_traceidratio 0.01', 'proxy', 200, 1],
      ['parentbased_traceidratio 0.1', 'proxy', 200, 1],
      ['every request (parentbased_always_on)', 'proxy', 200, 1],
      ['contract checks on every answer (UPSTREAM_CONTRACT_SAMPLE=1)', 'proxy', 200, 1],
      // The ledger: its entry with every step on, every step of src/pipeline/steps.ts alone, the log lines
      // and the contract sampling, then the floor.
      ["step off: none (the ledger's entry, every step on)", 'proxy', 200, 1],
      ...[
        'request-context',
        'logging',
        'the request log lines (LOG_LEVEL=warn)',
        'metrics',
        'drain',
        'load-shedding',
        'csrf',
        'session-cookie',
        'auth-gate',
        'body',
        'rate-limits',
        'errors',
        'always-succeeds',
        'error-ref',
        'upstream-guard',
        'answer-json-check',
        'secret-scan',
        'contract sampling (UPSTREAM_CONTRACT_SAMPLE=0)',
      ].map((step) => [`step off: ${step}`, 'proxy', 200, 1]),
      ['floor: every optional step off', 'proxy', 200, 1],
    ],
  );
  const byId = (id: string) => all.find((v) => v.id === id);
  assert.equal(byId('step off: the request log lines (LOG_LEVEL=warn)')?.env.LOG_LEVEL, 'warn');
  assert.equal(byId('step off: the request log lines (LOG_LEVEL=warn)')?.stepsOff, undefined);
  assert.equal(byId('step off: contract sampling (UPSTREAM_CONTRACT_SAMPLE=0)')?.env.UPSTREAM_CONTRACT_SAMPLE, '0');
  assert.equal(byId('step off: csrf')?.stepsOff, 'csrf');
  assert.deepEqual(byId('step off: csrf')?.env, {});
  assert.equal(byId('floor: every optional step off')?.stepsOff, PIPELINE_STEP_NAMES.join(','));
  assert.equal(byId("step off: none (the ledger's entry, every step on)")?.stepsOff, '');
  assert.equal(byId('floor: every optional step off')?.env.UPSTREAM_CONTRACT_SAMPLE, '0');
  assert.ok(
    all.filter((v) => v.group !== 'steps' && v.id !== REFUSAL_PARTS.gateOnly).every((v) => v.stepsOff === undefined),
    "only the ledger and the 401's parts run the steps-off entry",
  );
  assert.equal(byId(REFUSAL_PARTS.logLines)?.env.LOG_LEVEL, 'warn');
  assert.equal(byId(REFUSAL_PARTS.gateOnly)?.stepsOff, PIPELINE_STEP_NAMES.filter((name) => name !== 'auth-gate').join(','));
  for (const id of ['401 without cookie', ...Object.values(REFUSAL_PARTS), ...Object.values(REFUSAL_FLOORS)]) {
    const v = all.find((variant) => variant.id === id);
    assert.equal(v?.session, false, id);
    assert.equal(v?.path, '/api/user/last-casino-games', id);
  }
  assert.ok(
    all.filter((v) => v.group === 'rows').every((v) => v.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT === undefined),
    'the rows run with tracing off',
  );
  assert.equal(all.find((v) => v.id === 'parentbased_traceidratio 0.1')?.env.OTEL_TRACES_SAMPLER_ARG, '0.1');

  const table = formatInstructions([
    { id: 'reference passthrough', group: 'rows', perRequest: 500_000, allThreads: 600_000 },
    {
      id: 'passthrough (tracing off)',
      group: 'rows',
      perRequest: 800_000,
      windows: [700_000, 900_000, 800_000],
      allThreads: 1_200_000,
      allWindows: [900_000, 1_800_000, 900_000],
    },
    { id: '401 without cookie', group: 'rows', perRequest: 250_000, windows: [250_000] },
    { id: 'parentbased_traceidratio 0', group: 'tracing', perRequest: 840_000 },
    { id: 'contract checks on every answer (UPSTREAM_CONTRACT_SAMPLE=1)', group: 'contract', perRequest: 880_000 },
    // A step measured in one process: its cost's ± is half the passthrough's windows' range plus half its own.
    { id: 'step off: csrf', group: 'steps', perRequest: 760_000, windows: [740_000, 780_000] },
  ]).split('\n');
  assert.equal(table[0]?.split('|').length, 12, 'ten columns');
  assert.equal(table[2], '| reference passthrough | 500,000 | — | — | 1.000× | — | — | 600,000 | — | 1.000× |');
  assert.equal(
    table[3],
    '| passthrough (tracing off) | 800,000 | — | 700,000-900,000 | 1.600× | — | — | 1,200,000 | 900,000-1,800,000 | 2.000× |',
  );
  assert.equal(table[4], '| 401 without cookie | 250,000 | — | — | 0.500× | — | — | — | — | — |');
  assert.equal(table[5], '| parentbased_traceidratio 0 | 840,000 | — | — | 1.680× | 1.050× | — | — | — | — |');
  assert.equal(
    table[6],
    '| contract checks on every answer (UPSTREAM_CONTRACT_SAMPLE=1) | 880,000 | — | — | 1.760× | 1.100× | — | — | — | — |',
  );
  assert.equal(table[7], '| step off: csrf | 760,000 | — | 740,000-780,000 | 1.520× | 0.950× | 40,000 ± 120,000 | — | — | — |');
  // Without the reference (BENCH_INSTR_ONLY), no ratio to it; without the passthrough, no step's cost.
  assert.equal(
    formatInstructions([{ id: 'parentbased_traceidratio 0', group: 'tracing', perRequest: 1 }]).split('\n')[2],
    '| parentbased_traceidratio 0 | 1 | — | — | — | — | — | — | — | — |',
  );
  assert.equal(
    formatInstructions([{ id: 'step off: csrf', group: 'steps', perRequest: 1 }]).split('\n')[2],
    '| step off: csrf | 1 | — | — | — | — | — | — | — | — |',
  );
  assert.equal(mean([1, 2, 6]), 3);

  // Several processes: the mean of their means, their spread, the first one's windows; a step's ± from the processes' spreads.
  const cases: { variant: string; measured: { main: number[]; all: number[] }[]; perRequest: number; processes: number[] }[] = [
    { variant: 'passthrough (tracing off)', measured: [{ main: [800_000], all: [900_000] }], perRequest: 800_000, processes: [800_000] },
    {
      variant: 'passthrough (tracing off)',
      measured: [
        { main: [780_000, 820_000], all: [1_000_000, 1_000_000] },
        { main: [900_000, 900_000], all: [1_200_000, 1_000_000] },
        { main: [700_000, 700_000], all: [800_000, 800_000] },
      ],
      perRequest: 800_000,
      processes: [800_000, 900_000, 700_000],
    },
    {
      variant: 'step off: csrf',
      measured: [
        { main: [700_000], all: [800_000] },
        { main: [760_000], all: [900_000] },
      ],
      perRequest: 730_000,
      processes: [700_000, 760_000],
    },
  ];
  for (const c of cases) {
    const combined = combineProcesses({ id: c.variant, group: c.variant.startsWith('step') ? 'steps' : 'rows' }, c.measured);
    assert.equal(combined.perRequest, c.perRequest, c.variant);
    assert.deepEqual(combined.processes, c.processes, c.variant);
    assert.deepEqual(combined.windows, c.measured[0]?.main, c.variant);
    assert.equal(combined.allThreads, mean(c.measured.map((m) => mean(m.all))), c.variant);
  }
  assert.throws(() => combineProcesses({ id: 'x', group: 'rows' }, []), /x: no process measured/);
  const combined = formatInstructions(
    cases.slice(1).map((c) => combineProcesses({ id: c.variant, group: c.variant.startsWith('step') ? 'steps' : 'rows' }, c.measured)),
  ).split('\n');
  // ± half the passthrough's processes' range (100,000) plus half the step's (30,000).
  assert.equal(combined[2]?.split(' | ')[2], '700,000-900,000');
  assert.equal(combined[3]?.split(' | ')[6], '70,000 ± 130,000');

  const passthrough = { id: 'p', upstream: { perRequest: 1, upstreamPath: '/bff/x' } } as const;
  const refusal = { id: 'r', upstream: { perRequest: 0 } } as const;
  assert.doesNotThrow(() => checkUpstreamCalls(passthrough, { '/bff/x': 10 }, 10));
  assert.throws(() => checkUpstreamCalls(passthrough, { '/bff/x': 9 }, 10), /expected 10 calls of \/bff\/x/);
  assert.throws(() => checkUpstreamCalls(passthrough, {}, 10), /expected 10 calls/);
  assert.doesNotThrow(() => checkUpstreamCalls(refusal, {}, 10));
  assert.throws(() => checkUpstreamCalls(refusal, { '/bff/users/login-history': 1 }, 10), /expected no upstream call/);

  // The deposit: its body and client per request, its profile fetches per session of the counted requests.
  const deposit = byId('deposit');
  assert.ok(deposit);
  assert.equal(deposit.method, 'POST');
  assert.equal(deposit.burst, 64);
  assert.deepEqual(byId('reference deposit')?.upstream, { perRequest: 1, upstreamPath: '/wallet/add-credit' });
  assert.equal(deposit.upstream.perRequest === 1 && deposit.upstream.perSessionTtlMs, 10_000);
  assert.equal(JSON.parse(bodyOf(deposit, 0) ?? '').creditAmount, 1);
  assert.equal(JSON.parse(bodyOf(deposit, 4_999) ?? '').creditAmount, 5_000);
  assert.equal(bodyOf(byId('401 without cookie') ?? deposit, 3) === undefined, true);
  const clients: [number, number, number][] = [
    [0, 0, 4096],
    [63, 0, 4096],
    [64, 1, 4096],
    [64 * 4096, 0, 4096],
  ];
  for (const [n, client, of] of clients) assert.equal(clientOf(deposit, n, of), client, `request ${n}`);
  assert.equal(clientOf(byId('passthrough (tracing off)') ?? deposit, 5, 4096), 5);
  const profile = (calls: number) => ({ '/wallet/add-credit': 128, '/auth/user-profile': calls });
  // 128 requests from request 0: sessions 0 and 1, both begun there; from request 10: sessions 0-2, two begun there.
  assert.doesNotThrow(() => checkUpstreamCalls(deposit, profile(2), 128, 0));
  assert.throws(() => checkUpstreamCalls(deposit, profile(1), 128, 0), /expected 2 calls of \/auth\/user-profile/);
  assert.throws(() => checkUpstreamCalls(deposit, profile(3), 128, 0), /expected 2 calls/);
  assert.doesNotThrow(() => checkUpstreamCalls(deposit, profile(2), 128, 10));
  assert.doesNotThrow(() => checkUpstreamCalls(deposit, profile(3), 128, 10));
  assert.throws(() => checkUpstreamCalls(deposit, profile(4), 128, 10), /expected 2 to 3 calls/);
  // A burst that outlasts the profile's 10 s is fetched again: two more per 10 s of the requests' time.
  assert.doesNotThrow(() => checkUpstreamCalls(deposit, profile(5), 128, 10, 10_000));
  assert.throws(() => checkUpstreamCalls(deposit, profile(6), 128, 10, 19_999), /expected 2 to 5 calls/);
  assert.throws(() => checkUpstreamCalls(deposit, profile(1), 128, 10, 60_000), /expected 2 to 15 calls/);
  assert.throws(() => checkUpstreamCalls(deposit, { '/wallet/add-credit': 127, '/auth/user-profile': 2 }, 128, 0), /expected 128 calls/);

  const choices: [string[], string, boolean][] = [
    [[], 'deposit', true],
    [['deposit'], 'reference deposit', true],
    [['=deposit'], 'reference deposit', false],
    [['=deposit'], 'deposit', true],
    [['reference', '=deposit'], 'reference passthrough', true],
    [['=depo'], 'deposit', false],
  ];
  for (const [words, id, chosen] of choices) assert.equal(chosenBy(words, id), chosen, `${words.join(',')}: ${id}`);

  const withDeposits = formatInstructions([
    { id: 'reference deposit', group: 'rows', perRequest: 400_000, allThreads: 500_000 },
    { id: 'deposit', group: 'rows', perRequest: 1_000_000, allThreads: 1_500_000 },
  ]).split('\n');
  assert.equal(withDeposits.at(-2), "deposit against the reference's deposit: 2.500× on the main thread, 3.000× on every thread");
  assert.ok(!table.some((line) => line.startsWith('deposit against')), 'no deposit line without both deposits');
});

test(
  "bench:instructions' deposits over sockets: the proxy's and the reference's answer 200, one upstream deposit per request, one profile fetch per session",
  { timeout: 60_000 },
  async () => {
    const upstream = await startBenchServer('upstream', [], undefined);
    const base = `http://127.0.0.1:${upstream.port}`;
    const all = variants('http://127.0.0.1:1/v1/traces');
    try {
      for (const variant of all.filter((v) => v.path === '/api/payments/deposit')) {
        const started =
          variant.target === 'reference'
            ? await startBenchServer('reference', [base, '/bff/games/user-last-casino-games-dl', COOKIE_NAME], undefined)
            : await startTestProxy(base, variant.env);
        const pool = new Pool(`http://127.0.0.1:${started.port}`, { connections: 4 });
        try {
          const headers = clientHeaders(4096, variant.session);
          // A warm-up that ends within a session, then the counted requests: sessions 0-2, two begun among them.
          await send(pool, variant, headers, {}, 10, 0);
          await resetUpstream(base);
          await send(pool, variant, headers, {}, 128, 10);
          const byPath = (await upstreamCalls(base)).byPath;
          checkUpstreamCalls(variant, byPath, 128, 10);
          assert.equal(byPath['/auth/user-profile'], variant.target === 'reference' ? undefined : 2, variant.id);
        } finally {
          await pool.close();
          await stop(started.child);
        }
      }
    } finally {
      await stop(upstream.child);
    }
  },
);

test("strace -c's table: calls by system call, errors column or not, the total line left out", () => {
  const text = [
    '% time     seconds  usecs/call     calls    errors syscall',
    '------ ----------- ----------- --------- --------- ----------------',
    ' 40.00    0.004000           1      5100           write',
    ' 30.00    0.003000           0      5090        12 read',
    '  0.50    0.000050           5        10           epoll_pwait',
    '------ ----------- ----------- --------- --------- ----------------',
    '100.00    0.010000           0     10200        12 total',
  ].join('\n');
  assert.deepEqual(straceCounts(text), { write: 5100, read: 5090, epoll_pwait: 10 });
  assert.deepEqual(straceCounts(''), {});
});

test('pipeline steps by name: a comma-separated list, blanks ignored; an unknown name refused with the known ones', () => {
  const cases: { list: string; steps?: string[]; error?: RegExp }[] = [
    { list: '', steps: [] },
    { list: 'csrf', steps: ['csrf'] },
    { list: ' csrf , rate-limits,', steps: ['csrf', 'rate-limits'] },
    { list: PIPELINE_STEP_NAMES.join(','), steps: [...PIPELINE_STEP_NAMES] },
    { list: 'csrf,no-such-step', error: /unknown pipeline step no-such-step \(known: request-context, logging,/ },
    { list: 'CSRF', error: /unknown pipeline step CSRF/ },
    { list: 'toString', error: /unknown pipeline step toString/ },
  ];
  for (const c of cases) {
    if (c.error) assert.throws(() => pipelineSteps(c.list), c.error, c.list);
    else assert.deepEqual([...pipelineSteps(c.list)], c.steps, c.list);
  }
});

test(
  "the ledger's variants over sockets: each step off answers the passthrough 200 with one upstream call per request; an unknown step stops the entry",
  { timeout: 120_000 },
  async () => {
    // The variants that run the steps-off entry (the two that set a variable only run dist/server.js, as every other variant does).
    const ledger = variants('http://127.0.0.1:1/v1/traces').filter((v) => v.group === 'steps' && v.stepsOff !== undefined);
    assert.equal(ledger.length, PIPELINE_STEP_NAMES.length + 2, 'the entry with every step on, every step alone, and the floor');
    // What shows that a step is off, on the same answers (one of a few steps each).
    const offShows: Record<string, (answer: Awaited<ReturnType<typeof call>>, metricsPort: number) => Promise<void>> = {
      'request-context': async (answer) => assert.equal(answer.header('x-request-id'), null),
      metrics: async (_answer, metricsPort) => assert.rejects(call(`http://127.0.0.1:${metricsPort}/metrics`), /ECONNREFUSED/),
    };
    const launch = (stepsOff: string | undefined, env: Record<string, string>, base: string) => startTestProxy(base, env, { stepsOff });
    /** One variant's process against `base` (an upstream of its own lane: its call counts are the variant's). */
    const check = async (variant: (typeof ledger)[number], base: string) => {
      const proxy = await launch(variant.stepsOff, variant.env, base);
      const pool = new Pool(`http://127.0.0.1:${proxy.port}`, { connections: 4 });
      try {
        await resetUpstream(base);
        await send(pool, variant, clientHeaders(16, variant.session), {}, 8, 0);
        checkUpstreamCalls(variant, (await upstreamCalls(base)).byPath, 8);
        const answer = await call(`http://127.0.0.1:${proxy.port}${variant.path}`, { headers: clientHeaders(1, true)[0] });
        assert.equal(answer.status, 200, variant.id);
        const steps = new Set((variant.stepsOff ?? '').split(','));
        for (const [step, shows] of Object.entries(offShows)) {
          if (steps.has(step)) await shows(answer, proxy.metricsPort);
          // On, the same look finds the step's work.
          else if (step === 'request-context') assert.match(answer.header('x-request-id') ?? '', /./, variant.id);
          else if (step === 'metrics') assert.equal((await call(`http://127.0.0.1:${proxy.metricsPort}/metrics`)).status, 200, variant.id);
        }
        // Without the error reference, a refusal carries none; with it, it does (the auth gate's 401 without a cookie).
        if (!steps.has('auth-gate')) {
          const refused = await call(`http://127.0.0.1:${proxy.port}${variant.path}`, { headers: clientHeaders(1, false)[0] });
          assert.equal(refused.status, 401, variant.id);
          assert.equal(refused.header('x-error-ref') === null, steps.has('error-ref'), variant.id);
        }
      } finally {
        await pool.close();
        await stop(proxy.child);
      }
    };
    // Three lanes, each with its own bench upstream, take the variants in turn: the processes' starts overlap.
    // Every upstream that started is stopped, also when another failed to: a child left running would hold the file open.
    const started = await Promise.allSettled([1, 2, 3].map(() => startBenchServer('upstream', [], undefined)));
    const upstreams = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failed = started.find((result) => result.status === 'rejected');
    if (failed !== undefined) {
      for (const upstream of upstreams) await stop(upstream.child);
      throw failed.reason;
    }
    const queue = [...ledger];
    const began = performance.now();
    try {
      await Promise.all(
        upstreams.map(async (upstream) => {
          for (let variant = queue.shift(); variant !== undefined; variant = queue.shift())
            await check(variant, `http://127.0.0.1:${upstream.port}`);
        }),
      );
      await assert.rejects(
        launch('csrf,no-such-step', {}, `http://127.0.0.1:${upstreams[0]?.port}`),
        /BENCH_STEPS_OFF: unknown pipeline step no-such-step/,
      );
    } finally {
      for (const upstream of upstreams) await stop(upstream.child);
    }
    process.stdout.write(`# ${ledger.length + 1} proxy processes in ${Math.round(performance.now() - began)} ms\n`);
  },
);

test(
  "the 401's floors over sockets: the proxy's 401 of a request without the session cookie, byte for byte and header for header; the 401's parts answer 401 with nothing upstream",
  { timeout: 60_000 },
  async () => {
    const upstream = await startBenchServer('upstream', [], undefined);
    const base = `http://127.0.0.1:${upstream.port}`;
    const proxy = await startTestProxy(base, {});
    const floors = await Promise.all((['http', 'fastify'] as const).map((kind) => startBenchServer('refusal-floor', [kind], undefined)));
    /** An answer's headers but the two that change per answer (`Date`, `X-Request-Id`), and its body. */
    const answer = async (port: number) => {
      const res = await request(`http://127.0.0.1:${port}/api/user/last-casino-games`, { headers: clientHeaders(1, false)[0] });
      const id = String(res.headers['x-request-id']);
      const headers = Object.fromEntries(
        Object.entries(res.headers)
          .filter(([name]) => name !== 'date' && name !== 'x-request-id')
          .sort(([a], [b]) => a.localeCompare(b)),
      );
      return { status: res.statusCode, body: await res.body.text(), headers, id };
    };
    try {
      const proxied = await answer(proxy.port);
      assert.equal(proxied.status, 401);
      assert.equal(proxied.body, '{"reason":"no_token"}');
      assert.equal(proxied.headers['x-error-ref'], 'EP0712-EM0001');
      const floorVariants = variants('http://127.0.0.1:1/v1/traces').filter(
        (v) => v.target === 'floor-http' || v.target === 'floor-fastify',
      );
      assert.deepEqual(
        floorVariants.map((v) => v.id),
        Object.values(REFUSAL_FLOORS),
      );
      for (const [n, floor] of floors.entries()) {
        const variant = floorVariants[n];
        assert.ok(variant);
        const own = await answer(floor.port);
        assert.deepEqual({ ...own, id: undefined }, { ...proxied, id: undefined }, variant.id);
        // A request id per answer, of the proxy's form (a UUID when the client sends none).
        assert.match(own.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, variant.id);
        assert.notEqual((await answer(floor.port)).id, own.id, variant.id);
        // The variant's own checks, as bench:instructions makes them: every answer 401, nothing upstream.
        await sendAndCheck(floor.port, variant, base);
      }
      // The 401's parts, as bench:instructions starts them: every answer 401, nothing upstream.
      const parts = variants('http://127.0.0.1:1/v1/traces').filter((v) => (Object.values(REFUSAL_PARTS) as string[]).includes(v.id));
      assert.equal(parts.length, 2);
      for (const variant of parts) {
        const part = await startTestProxy(base, variant.env, { stepsOff: variant.stepsOff });
        try {
          await sendAndCheck(part.port, variant, base);
        } finally {
          await stop(part.child);
        }
      }
    } finally {
      for (const floor of floors) await stop(floor.child);
      await stop(proxy.child);
      await stop(upstream.child);
    }
  },
);

test(
  "the 401's log-lines variant runs the proxy at its own LOG_LEVEL: no completion line at warn, one at the bench's default",
  { timeout: 60_000 },
  async () => {
    const upstream = await startBenchServer('upstream', [], undefined);
    const base = `http://127.0.0.1:${upstream.port}`;
    const dir = mkdtempSync(join(tmpdir(), 'bench-log-level-'));
    const warn = variants('http://127.0.0.1:9/v1/traces').find((v) => v.id === REFUSAL_PARTS.logLines);
    assert.equal(warn?.env.LOG_LEVEL, 'warn');
    /** The completion lines of one 401 answered by a proxy started with `env`. */
    const completionLines = async (name: string, env: Record<string, string>) => {
      const logPath = join(dir, `${name}.log`);
      const proxy = await startTestProxy(base, env, { logPath });
      try {
        assert.equal((await call(`http://127.0.0.1:${proxy.port}/api/user/last-casino-games`)).status, 401, name);
      } finally {
        // The lines are written out when the process closes.
        await stop(proxy.child);
      }
      return readFileSync(logPath, 'utf8')
        .split('\n')
        .filter((line) => line.includes('"msg":"request completed"') && line.includes('"statusCode":401'));
    };
    try {
      assert.equal((await completionLines('warn', warn?.env ?? {})).length, 0, 'LOG_LEVEL=warn: no completion line');
      assert.equal((await completionLines('default', {})).length, 1, "the bench's default, info: the 401's completion line");
    } finally {
      await stop(upstream.child);
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
