// What the README says about the code, checked against it: the hardening rows, the latest benchmark
// round, the readiness rule, the variables required in production and the one reader of process.env.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { loadConfig } from '../src/config.js';

const read = (path: string): string => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const readme = read('README.md');
const NUMBERS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen', 'twenty'];

describe('README and docs against the code', () => {
  test('the hardening row count is the number of row files in test/hardening/', () => {
    const rows = readdirSync(new URL('../test/hardening/', import.meta.url)).filter((f) => f.endsWith('.test.ts')).length;
    const word = NUMBERS[rows];
    assert.ok(word, `${rows} rows`);
    assert.match(readme, new RegExp(`run ${word} rows of attacks`));
    assert.match(read('docs/hardening.md'), new RegExp(`A suite of\\s+${word} rows`));
    assert.match(read('SECURITY.md'), new RegExp(`runs ${word} rows of attacks`));
  });

  test('SECURITY.md names the Node.js versions of package.json and the image, as the README does, and an address to report to', () => {
    const security = read('SECURITY.md');
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    const lowest = /^>=(\d+\.\d+)$/.exec(engines)?.[1];
    assert.ok(lowest, `engines.node ${engines}`);
    const image = /^FROM node:(\d+)[-.@\s]/m.exec(read('Dockerfile'))?.[1];
    assert.ok(image, 'the Dockerfile names its Node.js line');
    for (const [name, text] of [['SECURITY.md', security], ['README.md', readme]] as const) {
      assert.match(text, new RegExp(`Node\\.js\\s+${lowest.replace('.', '\\.')}\\s+or\\s+later`), `${name} says Node.js ${lowest} or later`);
      assert.match(text, new RegExp(`Node\\.js\\s+${image}\\b`), `${name} names Node.js ${image}, the image's line`);
    }
    const other = [...security.matchAll(/Node\.js\s+(?:LTS\s+lines\s+\()?(\d+)/g)].map((m) => m[1]).filter((major) => major !== lowest.split('.')[0] && major !== image);
    assert.deepEqual(other, [], 'SECURITY.md names no other Node.js line');
    const report = security.slice(security.indexOf('## How to report'), security.indexOf('## Supported versions'));
    assert.match(report, /\*\*[a-z0-9.-]+@[a-z0-9.-]+\.[a-z]+\*\*/, 'an e-mail address to report to');
  });

  test("the README's performance table is the latest round of bench/README.md, row for row", () => {
    const bench = read('bench/README.md');
    const latest = /^## Latest results \(round (\d+), issue (\d+)\)$/m.exec(bench);
    assert.ok(latest, 'bench/README.md has a "Latest results" heading');
    const section = readme.slice(readme.indexOf('## Performance'), readme.indexOf('## Tests'));
    assert.match(section, new RegExp(`Latest results: round ${latest[1]} \\(issue ${latest[2]}\\)`));
    const rows = (text: string) => text.split('\n').filter((l) => /^\| [a-z0-9 ()/,.-]+\| (proxy|reference|peer)/i.test(l) && / v\d+\.\d+\.\d+ /.test(l));
    const benchRows = rows(bench.slice(latest.index, bench.indexOf('\n## ', latest.index + 3)));
    assert.ok(benchRows.length > 10, `${benchRows.length} rows in bench/README.md`);
    assert.deepEqual(rows(section), benchRows);
  });

  test('/readyz: 503 until the BFF first answered, then 200 until SIGTERM, as docs/behaviour.md "Health" says', () => {
    assert.match(readme, /`GET \/readyz` answers 503 until the BFF has\s+answered once \(any HTTP status\), then 200 until SIGTERM, whatever the BFF does later/);
    assert.doesNotMatch(readme, /readyz` answers 200 once the BFF can be\s+reached \(any HTTP answer\), 503 otherwise/);
  });

  test('STICKER_API_URL and BFF_BASE_URL: required in production, as the README says', () => {
    for (const missing of ['BFF_BASE_URL', 'STICKER_API_URL']) {
      const env: Record<string, string> = { NODE_ENV: 'production', BFF_BASE_URL: 'https://bff.example.com', STICKER_API_URL: 'https://stickers.example.com' };
      delete env[missing];
      assert.throws(() => loadConfig(env), new RegExp(`${missing}: expected`));
      const row = readme.split('\n').find((l) => l.startsWith(`| \`${missing}\` |`));
      assert.match(row ?? '', /required in production|where it is required/, missing);
    }
  });

  test('the README configuration table documents OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', () => {
    assert.match(readme, /^\| `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` \|.*used as given/m);
    assert.equal(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }).otlpTracesEndpoint, 'http://collector:4318/v1/traces');
  });
});
