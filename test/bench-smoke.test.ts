/**
 * The benchmark harness (`npm run bench`) in miniature: one 1-second run of the passthrough scenario
 * against the proxy, the reference and the peer, driven by autocannon, unpinned. It checks the shape of
 * the report (table and JSON) and that every answer was a 2xx; it asserts no timing (shared machines).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
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
    }
    assert.equal(report.rows.find((r) => r.target === 'reference')?.ratio, 1);
    assert.ok(report.checks.filter((c) => c.kind === 'correctness').every((c) => c.ok), JSON.stringify(report.checks));

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

test('the bench starts the proxy with the Node.js options of npm start', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
  const options = startNodeOptions();
  assert.equal(pkg.scripts.start, ['node', ...options, 'dist/server.js'].join(' '));
  for (const option of options) assert.match(option, /^--[a-z0-9-]+(=\S+)?$/);
});
