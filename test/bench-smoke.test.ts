/**
 * The benchmark harness (`npm run bench`) in miniature: one 1-second run of the passthrough scenario
 * against the proxy (production configuration: metrics on, default rate limits), the reference and the
 * peer, driven by autocannon, unpinned, spread over many sessions and client addresses. It checks the
 * shape of the report (table and JSON), that every answer was a 2xx (no 429: the sessions rotate) and
 * that the proxy's metrics counted them; it asserts no timing (shared machines). Also the clients'
 * session tokens and addresses, and the wrk script's rotation.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { clientAddress, clientHeaders, COOKIE_NAME, sessionToken } from '../bench/clients.js';
import { wrkScript } from '../bench/load.js';
import { type BenchReport, runBench, startNodeOptions } from '../bench/run.js';

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
    });

    assert.deepEqual(
      report.rows.map((r) => r.id),
      // The tuned reference runs when `npm start` gives the proxy Node.js options (package.json).
      ['passthrough/proxy', 'passthrough/reference', ...(startNodeOptions().length > 0 ? ['passthrough/reference-tuned'] : []), 'passthrough/peer'],
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
    assert.ok(report.checks.filter((c) => c.kind === 'correctness').every((c) => c.ok), JSON.stringify(report.checks));
    // Metrics on: the proxy was scraped once, and counted at least the answers measured.
    assert.equal(report.metrics.length, 1);
    const scrape = report.metrics[0];
    assert.equal(scrape?.target, 'proxy');
    assert.equal(scrape?.status, 200);
    assert.ok((scrape?.requestCount ?? 0) >= (scrape?.measuredAnswers ?? Infinity), JSON.stringify(scrape));
    assert.ok(report.checks.some((c) => c.name.startsWith('proxy: GET /metrics') && c.ok));
    assert.equal(report.meta.sessions, 256);

    const header = report.table.split('\n')[0] ?? '';
    for (const column of ['scenario', 'target', 'req/s', 'ratio', 'p50 ms', 'p99 ms', 'CPU µs/req', 'RSS MB', 'non-2xx']) {
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
