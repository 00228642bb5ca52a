// `npm run doctor -- --from-metrics <url>`: what the live contract checks saw, read from a metrics
// endpoint over a real socket, as doctor rows; the tally of the exposition table-driven.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { formatContractReport, fromMetricsOption, tallyContractMetrics } from '../src/doctor/from-metrics.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const EXPOSITION = [
  '# HELP front_proxy_upstream_contract_checks_total BFF 2xx answers checked',
  '# TYPE front_proxy_upstream_contract_checks_total counter',
  'front_proxy_upstream_contract_checks_total{endpoint="EP0003"} 40',
  'front_proxy_upstream_contract_checks_total{endpoint="EP0034"} 12',
  'front_proxy_upstream_contract_findings_total{endpoint="EP0003",kind="missing"} 0',
  'front_proxy_upstream_contract_findings_total{endpoint="EP0003",kind="type"} 30',
  'front_proxy_upstream_contract_findings_total{endpoint="EP0034",kind="extra"} 12',
  'front_proxy_upstream_contract_findings_total{endpoint="EP0034",kind="type"} 0',
  'front_proxy_upstream_errors_total{endpoint="EP0003",error="EM0042"} 3',
].join('\n');

describe('tallyContractMetrics', () => {
  const rows: [name: string, text: string, want: [string, number, Partial<Record<string, number>>][]][] = [
    [
      'one instance',
      EXPOSITION,
      [
        ['EP0003', 40, { type: 30 }],
        ['EP0034', 12, { extra: 12 }],
      ],
    ],
    [
      'federated: summed over instances, with timestamps',
      'front_proxy_upstream_contract_checks_total{endpoint="EP0090",instance="a:9464",job="front-proxy"} 5 1700000000000\nfront_proxy_upstream_contract_checks_total{job="front-proxy",instance="b:9464",endpoint="EP0090"} 7 1700000000000\nfront_proxy_upstream_contract_findings_total{endpoint="EP0090",instance="b:9464",kind="not_json"} 2',
      [['EP0090', 12, { not_json: 2 }]],
    ],
    [
      'other metrics and unknown kinds ignored',
      'front_proxy_upstream_contract_findings_total{endpoint="EP0001",kind="odd"} 4\nfront_proxy_load_shed_total 3',
      [],
    ],
    ['nothing checked', '# no samples\n', []],
  ];
  for (const [name, text, want] of rows) {
    test(name, () => {
      const got = tallyContractMetrics(text).map((t) => [
        t.endpoint,
        t.checks,
        Object.fromEntries(Object.entries(t.findings).filter(([, n]) => n > 0)),
      ]);
      assert.deepEqual(got, want);
    });
  }
});

describe('fromMetricsOption', () => {
  const rows: [string[], string | undefined][] = [
    [['--bff', 'http://x'], undefined],
    [['--from-metrics', 'http://m/metrics'], 'http://m/metrics'],
    [['--from-metrics=http://m/metrics'], 'http://m/metrics'],
    [['--from-metrics'], ''],
  ];
  for (const [argv, want] of rows) test(argv.join(' '), () => assert.equal(fromMetricsOption(argv), want));
});

test('the report reads like the doctor: EP, method, path, answers checked, verdict, a line per kind', () => {
  const text = formatContractReport('http://m/metrics', tallyContractMetrics(EXPOSITION));
  assert.match(text, /^EP0003 {2}GET {4}\/auth\/user-profile +40 {2}FAIL$/m);
  assert.match(text, /^ {8}✗ type: 30 of 40 answers checked: a field holds another JSON type/m);
  assert.match(text, /^EP0034 {2}GET {4}\/users\/wallet +12 {2}note$/m);
  assert.match(text, /^ {8}· extra: 12 of 12 answers checked/m);
});

describe('npm run doctor -- --from-metrics over a real socket', () => {
  let server: Server;
  let url = '';
  let body = EXPOSITION;
  before(async () => {
    server = createServer((req, res) => {
      if (req.url !== '/metrics') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const doctor = (...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', 'src/doctor/main.ts', ...args],
        { cwd: ROOT, timeout: 60_000 },
        (error, stdout, stderr) => {
          resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
        },
      );
    });

  test('a finding other than extra: exit 1 and its row', async () => {
    body = EXPOSITION;
    const run = await doctor('--from-metrics', `${url}/metrics`);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stdout, /EP0003 .* FAIL/);
  });

  test('only extra fields: exit 0; a URL without metrics or no URL: exit 2', async () => {
    body = EXPOSITION.replace('kind="type"} 30', 'kind="type"} 0');
    const clean = await doctor('--from-metrics', `${url}/metrics`);
    assert.equal(clean.code, 0, clean.stdout + clean.stderr);
    assert.match(clean.stdout, /EP0003 .* pass/);
    assert.equal((await doctor('--from-metrics', `${url}/nothing`)).code, 2);
    assert.equal((await doctor('--from-metrics')).code, 2);
    assert.equal((await doctor('--from-metrics', 'ftp://x/metrics')).code, 2);
  });
});
