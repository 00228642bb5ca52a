/**
 * Live upstream contract checks over real sockets (docs/behaviour.md "Operations", "Upstream contract
 * checks"): the sandbox BFF drifts one endpoint (`user.id` of the profile, EP0003, holding a canary
 * text instead of a number); one proxy process checks every answer (`UPSTREAM_CONTRACT_SAMPLE=1`),
 * another none (`0`). The metric counts exactly the drifted answers; the log line names the EP code
 * and the path, once, and no value of the answer; the browser gets the same bytes from both; and the
 * alert of deploy/prometheus-rules.yaml, evaluated by `promtool test rules` on the series scraped from
 * the checking proxy's metrics port, fires for EP0003 and for no other endpoint.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type SandboxHandle, startSandbox } from '../src/sandbox/index.js';
import { freePort, type ProxyProcess, startProxyProcess } from './helpers/proxy-process.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CANARY = `canary-${randomUUID()}`;
const DRIFTED_PATH = '/auth/user-profile';

interface Answer {
  readonly status: number;
  readonly contentType: string | null;
  readonly body: Buffer;
}

async function ask(base: string, method: string, path: string, cookie = '', json?: unknown): Promise<Answer & { cookie: string }> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (cookie !== '') headers.cookie = cookie;
  if (json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
  const body = Buffer.from(await res.arrayBuffer());
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    body,
    cookie: (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '',
  };
}

/** The samples of one metric in an exposition text, by their label text (`endpoint="EP0003",kind="type"`). */
function samples(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const match = new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`).exec(line);
    if (match) out.set(match[1] ?? '', Number(match[2]));
  }
  return out;
}

function run(file: string, args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, out: `${stdout}${stderr}` });
    });
  });
}

describe('upstream contract checks: proxy and sandbox over real sockets, a drifted endpoint', () => {
  let sandbox: SandboxHandle;
  let checking: ProxyProcess;
  let unchecked: ProxyProcess;
  let checkingUrl = '';
  let uncheckedUrl = '';
  let metricsUrl = '';
  let drifted = 0;
  let compared = 0;

  before(async () => {
    sandbox = await startSandbox();
    const upstreams = {
      BFF_BASE_URL: sandbox.bffUrl,
      STICKER_API_URL: sandbox.stickerApiUrl,
      REFERRAL_V1_API_URL: sandbox.referralV1ApiUrl,
      REFERRAL_V2_API_URL: sandbox.referralV2ApiUrl,
      FTD_CASHBACK_VERIFY_URL: sandbox.ftdCashbackVerifyUrl,
      FTD_CASHBACK_SEND_URL: sandbox.ftdCashbackSendUrl,
      ATTRIBUTION_S2S_URL: sandbox.attributionS2sUrl,
      CACHE_PURGE_URL: sandbox.cachePurgeUrl,
      NODE_ENV: 'test',
      PORT: '0',
      RATE_LIMIT_API_PER_MIN: '0',
      RATE_LIMIT_API_PER_ADDRESS_PER_MIN: '0',
      RATE_LIMIT_PREAUTH_PER_MIN: '0',
    };
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    checking = startProxyProcess({ ...upstreams, UPSTREAM_CONTRACT_SAMPLE: '1', METRICS_PORT: String(metricsPort) });
    unchecked = startProxyProcess({ ...upstreams, UPSTREAM_CONTRACT_SAMPLE: '0' });
    [checkingUrl, uncheckedUrl] = await Promise.all([checking.address, unchecked.address]);
  });

  after(async () => {
    await checking?.kill();
    await unchecked?.kill();
    await sandbox?.close();
  });

  test('the browser gets the same bytes with checks on and off, drifted answers included', async () => {
    const credentials = { login: 'demo@example.com', password: 'Demo#2026' };
    const loginOn = await ask(checkingUrl, 'POST', '/api/auth/login', '', credentials);
    const loginOff = await ask(uncheckedUrl, 'POST', '/api/auth/login', '', credentials);
    assert.equal(loginOn.status, 200, loginOn.body.toString());
    assert.equal(loginOff.status, 200, loginOff.body.toString());
    sandbox.store.faults.bff.add([{ method: 'GET', path: DRIFTED_PATH, answer: 'drifted', field: 'user.id', value: CANARY }]);
    const hits = () => sandbox.store.faults.bff.list()[0]?.hits ?? 0;
    const calls: [method: string, path: string, json?: unknown][] = [
      ['GET', '/api/auth/profile?check_spa_again=1'],
      ['POST', '/api/wallet/refresh', {}],
      ['GET', '/api/payments/providers?currency=BRL'],
      ['POST', '/api/auth/recheck-spa', {}],
    ];
    for (let round = 0; round < 3; round++) {
      for (const [method, path, json] of calls) {
        const before = hits();
        const on = await ask(checkingUrl, method, path, loginOn.cookie, json);
        drifted += hits() - before;
        const off = await ask(uncheckedUrl, method, path, loginOff.cookie, json);
        assert.equal(on.status, off.status, `${method} ${path}`);
        assert.equal(on.contentType, off.contentType, `${method} ${path}`);
        assert.ok(on.body.equals(off.body), `${method} ${path}: the same bytes\n${on.body.toString()}\n${off.body.toString()}`);
        compared++;
      }
    }
    assert.ok(drifted >= 3, `the profile was drifted in each round (${drifted})`);
    const profile = await ask(checkingUrl, 'GET', '/api/auth/profile?check_spa_again=1', loginOn.cookie);
    drifted++;
    assert.ok(profile.body.includes(CANARY), 'the drifted field reaches the browser as the BFF sent it');
  });

  test('the metric counts exactly the drifted answers, for EP0003 alone', async () => {
    let text = '';
    const counted = async () => {
      text = await (await fetch(metricsUrl)).text();
      return samples(text, 'front_proxy_upstream_contract_findings_total').get('endpoint="EP0003",kind="type"') ?? 0;
    };
    let seen = 0;
    const deadline = Date.now() + 10_000;
    while ((seen = await counted()) < drifted && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(seen, drifted);
    const findings = samples(text, 'front_proxy_upstream_contract_findings_total');
    const checks = samples(text, 'front_proxy_upstream_contract_checks_total');
    for (const [labels, value] of findings) {
      if (labels === 'endpoint="EP0003",kind="type"' || labels.endsWith('kind="extra"')) continue;
      assert.equal(value, 0, `no other finding: ${labels} ${value}`);
    }
    assert.ok((checks.get('endpoint="EP0003"') ?? 0) >= drifted, 'every drifted answer was checked');
    assert.ok((checks.get('endpoint="EP0034"') ?? 0) >= 3, 'the wallet answers were checked too, and conform');
    assert.ok((checks.get('endpoint="EP0090"') ?? 0) >= 3, 'the provider answers were checked too, and conform');
  });

  test('one log line names the EP code and the path, and no value of the answer', () => {
    const lines = checking
      .output()
      .split('\n')
      .filter((l) => l.includes('"upstream-contract"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const drift = lines.filter((l) => l.endpoint === 'EP0003' && l.path === 'user.id' && l.kind === 'type');
    assert.equal(drift.length, 1, 'at most one line a minute per endpoint, path and kind');
    assert.equal(drift[0]?.level, 'warn', 'warn');
    assert.match(String(drift[0]?.msg), /EP0003 user\.id: expected number, got string/);
    assert.ok(!checking.output().includes(CANARY), 'the canary put in the drifted field is nowhere in the log');
    assert.ok(!unchecked.output().includes('upstream-contract'), 'UPSTREAM_CONTRACT_SAMPLE=0 checks nothing');
    assert.ok(compared >= 12);
  });

  test('promtool: the alert fires on the scraped series for EP0003 only, after 10 minutes', async () => {
    const which = await run('sh', ['-c', 'command -v promtool']);
    assert.equal(which.code, 0, 'promtool is not installed: apt-get install prometheus (.ci/run installs it)');
    const text = await (await fetch(metricsUrl)).text();
    const labels = (l: string) => `{job="front-proxy",namespace="shop-production",instance="10.1.2.3:9464",${l}}`;
    // The scraped counts, as if each minute brought the same traffic again, for 40 minutes.
    const series = [
      ...[...samples(text, 'front_proxy_upstream_contract_checks_total')].map(([l, v]) => ({
        series: `front_proxy_upstream_contract_checks_total${labels(l)}`,
        values: `0+${v}x40`,
      })),
      ...[...samples(text, 'front_proxy_upstream_contract_findings_total')].map(([l, v]) => ({
        series: `front_proxy_upstream_contract_findings_total${labels(l)}`,
        values: `0+${v}x40`,
      })),
    ];
    assert.ok(series.length > 5, text);
    const dir = mkdtempSync(join(tmpdir(), 'contract-promtool-'));
    try {
      const file = join(dir, 'test.yaml');
      const alert = 'FrontProxyUpstreamContractDrift';
      const expected = (at: string, firing: boolean) => ({
        eval_time: at,
        alertname: alert,
        exp_alerts: firing
          ? [{ exp_labels: { severity: 'warning', namespace: 'shop-production', endpoint: 'EP0003' }, exp_annotations: annotations() }]
          : [],
      });
      writeFileSync(
        file,
        JSON.stringify({
          rule_files: [join(ROOT, 'deploy/prometheus-rules.yaml')],
          evaluation_interval: '1m',
          tests: [{ interval: '1m', input_series: series, alert_rule_test: [expected('5m', false), expected('30m', true)] }],
        }),
      );
      const result = await run('promtool', ['test', 'rules', file]);
      assert.equal(result.code, 0, result.out);
      assert.match(result.out, /SUCCESS/);
      // The same series with EP0003's findings gone: nothing fires (the test can fail).
      writeFileSync(
        file,
        JSON.stringify({
          rule_files: [join(ROOT, 'deploy/prometheus-rules.yaml')],
          evaluation_interval: '1m',
          tests: [
            {
              interval: '1m',
              input_series: series.filter((s) => !s.series.includes('findings_total') || !s.series.includes('EP0003')),
              alert_rule_test: [expected('30m', true)],
            },
          ],
        }),
      );
      const quiet = await run('promtool', ['test', 'rules', file]);
      assert.notEqual(quiet.code, 0, 'without the findings the expected alert is missing');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The alert's annotations for EP0003, as deploy/prometheus-rules.yaml writes them. */
function annotations(): Record<string, string> {
  return {
    summary: 'BFF endpoint EP0003 answers outside the shapes the proxy expects in shop-production',
    description:
      'For 10 minutes more than 5% of the sampled answers of EP0003 had a missing field, a field of another type, an unknown enum value or a body that is not JSON: the BFF changed what it sends. The warn log lines with event "upstream-contract" and endpoint EP0003 name the JSON paths; `npm run doctor -- --from-metrics` lists the kinds.',
    runbook_url: 'https://git.example.com/front-proxy/blob/main/docs/operations.md#alert-frontproxyupstreamcontractdrift',
  };
}
