// What the docs say about the code, checked against it: the hardening rows against the row files,
// the benchmark's tables against the results the bench wrote, the Node.js versions against
// package.json and the image, and the configuration facts against the configuration loader.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { renderConfigTable } from '../scripts/config-reference.js';
import { loadConfig } from '../src/config.js';

const read = (path: string): string => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const readme = read('README.md');

/** The cells of a Markdown table row, trimmed. */
const cells = (line: string): string[] =>
  line
    .split('|')
    .slice(1, -1)
    .map((c) => c.trim());

/** The data rows of the bench's table (`bench/results.json` `table`, as `npm run bench` prints it). */
function benchRows(table: string): string[] {
  return table.split('\n').filter((l) => /^\| [a-z0-9 ()/,.-]+\| (proxy|reference|peer)/i.test(l) && / v\d+\.\d+\.\d+ /.test(l));
}

describe('docs against the code', () => {
  test('docs/hardening.md "The rows" lists every row file of test/hardening/, in order, and no other', () => {
    const files = readdirSync(new URL('../test/hardening/', import.meta.url)).filter((f) => f.endsWith('.test.ts'));
    const doc = read('docs/hardening.md');
    const start = doc.indexOf('\n## The rows\n');
    assert.ok(start !== -1, 'docs/hardening.md has "The rows"');
    const section = doc.slice(start, doc.indexOf('\n## ', start + 5));
    const listed = section
      .split('\n')
      .filter((l) => /^\| \d+ \|/.test(l))
      .map((l) => ({ n: Number(cells(l)[0]), file: /^`([\w.-]+)`$/.exec(cells(l)[1] ?? '')?.[1] }));
    assert.deepEqual(
      listed.map((r) => r.n),
      listed.map((_, i) => i + 1),
      'rows numbered 1, 2, 3…',
    );
    assert.deepEqual(listed.map((r) => r.file).sort(), [...files].sort());
  });

  test('SECURITY.md names the Node.js versions of package.json and the image, as the README does, and an address to report to', () => {
    const security = read('SECURITY.md');
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    const lowest = /^>=(\d+\.\d+)$/.exec(engines)?.[1];
    assert.ok(lowest, `engines.node ${engines}`);
    const image = /^FROM node:(\d+)[-.@\s]/m.exec(read('Dockerfile'))?.[1];
    assert.ok(image, 'the Dockerfile names its Node.js line');
    for (const [name, text] of [
      ['SECURITY.md', security],
      ['README.md', readme],
    ] as const) {
      assert.match(
        text,
        new RegExp(`Node\\.js\\s+${lowest.replace('.', '\\.')}\\s+or\\s+later`),
        `${name} says Node.js ${lowest} or later`,
      );
      assert.match(text, new RegExp(`Node\\.js\\s+${image}\\b`), `${name} names Node.js ${image}, the image's line`);
    }
    const other = [...security.matchAll(/Node\.js\s+(?:LTS\s+lines\s+\()?(\d+)/g)]
      .map((m) => m[1])
      .filter((major) => major !== lowest.split('.')[0] && major !== image);
    assert.deepEqual(other, [], 'SECURITY.md names no other Node.js line');
    const report = security.slice(security.indexOf('## How to report'), security.indexOf('## Supported versions'));
    assert.match(report, /\*\*[a-z0-9.-]+@[a-z0-9.-]+\.[a-z]+\*\*/, 'an e-mail address to report to');
  });

  test("bench/README.md's latest table is the table of bench/results.json, row for row", () => {
    const results = JSON.parse(read('bench/results.json')) as { table: string };
    const bench = read('bench/README.md');
    const latest = bench.indexOf('\n## Latest results');
    assert.ok(latest !== -1, 'bench/README.md has a "Latest results" section');
    const expected = benchRows(results.table);
    assert.ok(expected.length > 10, `${expected.length} rows in bench/results.json`);
    assert.deepEqual(benchRows(bench.slice(latest, bench.indexOf('\n## ', latest + 3))), expected);
  });

  test("the README's headline figures are rows of bench/results.json's table", () => {
    const results = JSON.parse(read('bench/results.json')) as { table: string };
    const start = readme.indexOf("<!-- headline figures: rows of bench/results.json's table -->");
    const end = readme.indexOf('<!-- end of the headline figures -->');
    assert.ok(start !== -1 && end > start, 'README.md has the headline markers');
    const headline = readme
      .slice(start, end)
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| scenario') && !l.startsWith('|---'));
    assert.ok(headline.length >= 3, `${headline.length} headline rows`);
    // The bench's columns: scenario, target, node, route, req/s, ratio, p50 ms, p99 ms, …
    const byKey = new Map(
      benchRows(results.table).map((l) => {
        const c = cells(l);
        return [`${c[0]} | ${c[1]}`, { rps: c[4], ratio: c[5], p99: c[7] }] as const;
      }),
    );
    for (const line of headline) {
      const [scenario, target, rps, ratio, p99] = cells(line);
      const row = byKey.get(`${scenario} | ${target}`);
      assert.ok(row, `bench/results.json has the row "${scenario}" / "${target}"`);
      assert.deepEqual({ rps, ratio, p99 }, row, `${scenario} / ${target}`);
    }
  });

  test('STICKER_API_URL and BFF_BASE_URL: required in production, as docs/configuration.md says', () => {
    const rows = renderConfigTable();
    for (const missing of ['BFF_BASE_URL', 'STICKER_API_URL']) {
      const env: Record<string, string> = {
        NODE_ENV: 'production',
        BFF_BASE_URL: 'https://bff.example.com',
        STICKER_API_URL: 'https://stickers.example.com',
      };
      delete env[missing];
      assert.throws(() => loadConfig(env), new RegExp(`${missing}: expected`));
      const row = rows.find((l) => l.includes(`</a>\`${missing}\` |`));
      assert.match(row ?? '', /required in production|where it is required/, missing);
    }
  });

  test('docs/configuration.md documents OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as the loader reads it', () => {
    assert.match(
      renderConfigTable().join('\n'),
      /^\| <a id="otel_exporter_otlp_traces_endpoint"><\/a>`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` \|.*used as given/m,
    );
    assert.equal(
      loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).otlpTracesEndpoint,
      'http://collector:4318/v1/traces',
    );
  });
});
