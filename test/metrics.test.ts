/**
 * docs/behaviour.md "Operations": Prometheus metrics on `METRICS_PORT`, over real sockets. The proxy runs as
 * `npm start` runs it (`src/server.ts` in a process of its own) in front of a recording upstream, with
 * a real redis-server: after matching traffic `/metrics` shows every series of the contract with the
 * right labels (the route pattern, the EP and EM codes `classifyError` gives, cache results, money-move
 * decisions, `build_info`, `redis_up` 1 then 0 once Redis is killed); `/metrics` is not a route of the
 * public port; no label holds the token, the login or a raw path. With `WORKERS=2` the primary's
 * `/metrics` counts the requests of both workers. Without `METRICS_PORT` nothing is built. Every
 * process is stopped by its PID.
 *
 * The resilience series (the per-endpoint guard's observer and load shedding) are read through the
 * real metrics server of one `Metrics`, and their cluster aggregation through prom-client's
 * `AggregatorRegistry` over two registries, as the primary aggregates its workers.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { classifyError } from '../src/errors/index.js';
import { AggregatorRegistry } from 'prom-client';
import { DURATION_BUCKETS, METRIC_PREFIX, Metrics, NOT_FOUND_ROUTE } from '../src/pipeline/metrics-registry.js';
import { startMetricsServer } from '../src/pipeline/metrics-server.js';
import type { ResilienceObserver } from '../src/upstream/endpoint-guard.js';
import { NO_METRICS } from '../src/routes/context.js';
import { freePort, oneShot, type ProxyProcess, startProxyProcess, waitFor } from './helpers/proxy-process.js';
import { fakeJwt, type RecordingUpstream, send, startProxy, startRecordingUpstream } from './helpers/recording-upstream.js';
import { NEEDS_PROMTOOL } from './helpers/promtool.js';
import { HAVE_REDIS, startRedis, type TestRedis } from './helpers/redis-server.js';

/** One sample of the exposition text. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped). */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(match, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] as string] = (pair[2] as string).replace(/\\(.)/g, '$1');
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample named `name` whose labels include `labels`; undefined when none. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value;
}

/** The label sets of the samples named `name`. */
function labelsOf(samples: Sample[], name: string): Record<string, string>[] {
  return samples.filter((s) => s.name === name).map((s) => s.labels);
}

async function scrape(metricsUrl: string): Promise<{ status: number; type: string; samples: Sample[]; text: string }> {
  const res = await fetch(metricsUrl);
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? '', samples: res.status === 200 ? parseMetrics(text) : [], text };
}

/** The variables pointing every upstream service at the recording upstream. */
function upstreamEnv(url: string): Record<string, string> {
  return {
    BFF_BASE_URL: url,
    STICKER_API_URL: `${url}/sticker`,
    REFERRAL_V1_API_URL: `${url}/referral-v1`,
    REFERRAL_V2_API_URL: `${url}/referral-v2`,
    FTD_CASHBACK_VERIFY_URL: `${url}/ftd/verify`,
    FTD_CASHBACK_SEND_URL: `${url}/ftd/send`,
    ATTRIBUTION_S2S_URL: `${url}/attribution`,
    CACHE_PURGE_URL: `${url}/purge`,
  };
}

const USER_ID = 4242;
const LOGIN = 'metrics-login-5150@example.com';
const TRANSACTION = 'tx-98765-metrics';
const OUTAGE = { reason: 'maintenance window', message: 'Service temporarily unavailable' };

describe('one process with METRICS_PORT (npm start)', { skip: !HAVE_REDIS && 'redis-server is not installed' }, () => {
  let upstream: RecordingUpstream;
  let redis: TestRedis;
  let proxy: ProxyProcess;
  let base = '';
  let metricsUrl = '';
  const token = fakeJwt({ sub: String(USER_ID), n: 'metrics' });
  const otherToken = fakeJwt({ sub: String(USER_ID), n: 'other' });

  before(async () => {
    upstream = await startRecordingUpstream();
    redis = await startRedis();
    const metricsPort = await freePort();
    proxy = startProxyProcess({
      NODE_ENV: 'test',
      PORT: String(await freePort()),
      METRICS_PORT: String(metricsPort),
      REDIS_URL: redis.url,
      BUILD_ID: 'build-metrics-1',
      RATE_LIMIT_BEACON_PER_MIN: '1',
      ...upstreamEnv(upstream.url),
    });
    base = await proxy.address;
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  });
  after(async () => {
    await proxy?.kill();
    await redis?.stop();
    await upstream?.close();
  });

  test('after matching traffic, /metrics shows every series of the contract with its labels', async () => {
    upstream.on('GET', '/casino-games/list/', { json: { data: [{ slug: 'g1' }], total: 1 } });
    upstream.on('POST', '/auth/login', { json: { access_token: token, expires_in: 3600, token_type: 'bearer', user: { id: USER_ID } } });
    upstream.on('GET', '/auth/user-profile', { json: { user: { id: USER_ID, login: LOGIN }, userInfo: {} } });
    upstream.on('POST', '/wallet/add-credit', { json: { transactionId: TRANSACTION, status: 'pending' } });
    upstream.on('GET', `/wallet/charge/${TRANSACTION}`, { status: 503, json: OUTAGE });
    upstream.on('GET', '/bff/users/bank-list', (_req, res) => res.socket?.destroy());

    // Catalogue: a miss, then a hit (anonymous reads).
    assert.equal((await send(base, 'GET', '/api/games/category/slots')).status, 200);
    assert.equal((await send(base, 'GET', '/api/games/category/slots')).status, 200);
    // A login with a login name (it fills the profile cache): the profile reads with its token are hits.
    assert.equal((await send(base, 'POST', '/api/auth/login', { json: { login: LOGIN, password: 'pw-metrics' } })).status, 200);
    assert.equal((await send(base, 'GET', '/api/auth/profile', { token })).status, 200);
    assert.equal((await send(base, 'GET', '/api/auth/profile', { token })).status, 200);
    // A session the cache has not seen: a miss.
    assert.equal((await send(base, 'GET', '/api/auth/profile', { token: otherToken })).status, 200);
    // A deposit forwarded, then the same submission replayed.
    const deposit = { userId: USER_ID, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' };
    const headers = { 'idempotency-key': 'metrics-key-1' };
    assert.equal((await send(base, 'POST', '/api/payments/deposit', { json: deposit, token, headers })).status, 200);
    const replay = await send(base, 'POST', '/api/payments/deposit', { json: deposit, token, headers });
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    // An upstream 503 on a path with an id, a transport failure, a path no route has.
    assert.equal((await send(base, 'GET', `/api/payments/deposit-status?transactionId=${TRANSACTION}`, { token })).status, 503);
    assert.equal((await send(base, 'GET', '/api/payments/bank-list', { token })).status, 502);
    assert.equal((await send(base, 'GET', `/no/such/path/${USER_ID}`)).status, 404);

    // Two beacons against a limit of one a minute: one refused.
    const beacon = {
      ref: 'EP0003-EM0003',
      endpointCode: 'EP0003',
      errorCode: 'EM0003',
      status: 401,
      reason: 'token_expired',
      url: '/api/auth/profile',
      initiator: 'test',
      pathname: '/wallet',
      timestamp: 1,
      hadCookie: true,
      userAgentShort: 'test',
    };
    const beacons = [
      await send(base, 'POST', '/api/logs/auth-logout', { json: beacon }),
      await send(base, 'POST', '/api/logs/auth-logout', { json: beacon }),
    ];
    assert.deepEqual(
      beacons.map((r) => r.status),
      [204, 429],
    );
    const { status, type, samples, text } = await scrape(metricsUrl);
    assert.equal(status, 200);
    assert.match(type, /^text\/plain; version=0\.0\.4/);

    // http_request_duration_seconds: the route pattern, never the raw URL; unknown paths as not_found.
    const category = { method: 'GET', route: '/api/games/category/:slug', status_code: '200' };
    assert.equal(valueOf(samples, 'front_proxy_http_request_duration_seconds_count', category), 2);
    assert.equal(
      valueOf(samples, 'front_proxy_http_request_duration_seconds_count', { route: '/api/payments/deposit', status_code: '200' }),
      2,
    );
    assert.equal(
      valueOf(samples, 'front_proxy_http_request_duration_seconds_count', { route: '/api/payments/deposit-status', status_code: '503' }),
      1,
    );
    assert.equal(
      valueOf(samples, 'front_proxy_http_request_duration_seconds_count', { method: 'GET', route: NOT_FOUND_ROUTE, status_code: '404' }),
      1,
    );
    const buckets = labelsOf(samples, 'front_proxy_http_request_duration_seconds_bucket')
      .filter((l) => l.route === category.route)
      .map((l) => l.le);
    assert.deepEqual(buckets, [...DURATION_BUCKETS.map(String), '+Inf']);

    // upstream_request_duration_seconds and upstream_errors_total: EP and EM as classifyError gives them.
    assert.equal(
      valueOf(samples, 'front_proxy_upstream_request_duration_seconds_count', { endpoint: 'EP0143', method: 'GET', status_class: '2xx' }),
      1,
    );
    assert.equal(
      valueOf(samples, 'front_proxy_upstream_request_duration_seconds_count', { endpoint: 'EP0091', method: 'POST', status_class: '2xx' }),
      1,
    );
    const outage = classifyError({ status: 503, data: OUTAGE, url: `/wallet/charge/${TRANSACTION}`, method: 'GET' });
    assert.equal(
      valueOf(samples, 'front_proxy_upstream_request_duration_seconds_count', { endpoint: outage.endpointCode, status_class: '5xx' }),
      1,
    );
    assert.equal(valueOf(samples, 'front_proxy_upstream_errors_total', { endpoint: outage.endpointCode, error: outage.errorCode }), 1);
    assert.equal(outage.endpointCode, 'EP0092');
    const cut = classifyError({ status: 0, url: '/bff/users/bank-list', method: 'GET' });
    assert.equal(
      valueOf(samples, 'front_proxy_upstream_request_duration_seconds_count', { endpoint: cut.endpointCode, status_class: 'error' }),
      1,
    );
    assert.equal(valueOf(samples, 'front_proxy_upstream_errors_total', { endpoint: cut.endpointCode, error: cut.errorCode }), 1);
    assert.equal(labelsOf(samples, 'front_proxy_upstream_errors_total').length, 2, 'only the two failures are errors');

    // cache_requests_total: the catalogue's miss and hit, the profile's miss and hits.
    assert.equal(valueOf(samples, 'front_proxy_cache_requests_total', { cache: 'catalogue', result: 'miss' }), 1);
    assert.equal(valueOf(samples, 'front_proxy_cache_requests_total', { cache: 'catalogue', result: 'hit' }), 1);
    assert.ok((valueOf(samples, 'front_proxy_cache_requests_total', { cache: 'profile', result: 'hit' }) ?? 0) >= 2, text);
    assert.equal(valueOf(samples, 'front_proxy_cache_requests_total', { cache: 'profile', result: 'miss' }), 1);

    // idempotency_decisions_total, build_info, redis_up, the standard metrics.
    assert.equal(valueOf(samples, 'front_proxy_idempotency_decisions_total', { decision: 'forwarded' }), 1);
    assert.equal(valueOf(samples, 'front_proxy_idempotency_decisions_total', { decision: 'replayed' }), 1);
    assert.equal(valueOf(samples, 'front_proxy_build_info', { version: '0.1.0', build_id: 'build-metrics-1' }), 1);
    assert.equal(valueOf(samples, 'front_proxy_redis_up'), 1);
    assert.equal(valueOf(samples, 'front_proxy_rate_limited_total', { limit: 'beacon' }), 1);
    for (const name of [
      'front_proxy_process_cpu_seconds_total',
      'front_proxy_process_resident_memory_bytes',
      'front_proxy_nodejs_eventloop_lag_p99_seconds',
      'front_proxy_nodejs_heap_size_used_bytes',
    ]) {
      assert.ok(valueOf(samples, name) !== undefined, `${name} is exported`);
    }
    // Every name carries the application prefix, the standard metrics' too (docs/behaviour.md "Operations").
    const unprefixed = [...new Set(samples.map((s) => s.name))].filter((name) => !name.startsWith(METRIC_PREFIX));
    assert.deepEqual(unprefixed, [], 'every metric is prefixed');
    assert.equal(METRIC_PREFIX, 'front_proxy_');

    // No label holds the token, the login, or a raw path with an id.
    const values = samples.flatMap((s) => Object.values(s.labels));
    for (const secret of [token, token.split('.')[2] as string, otherToken, LOGIN, TRANSACTION, String(USER_ID), '/no/such', 'slots']) {
      assert.deepEqual(
        values.filter((v) => v.includes(secret)),
        [],
        `a label holds ${secret}`,
      );
    }
  });

  test('/metrics is not a route of the public port; the metrics port answers nothing else', async () => {
    const publicAnswer = await send(base, 'GET', '/metrics');
    assert.equal(publicAnswer.status, 404);
    assert.ok(!publicAnswer.text.includes('front_proxy_http_request_duration_seconds'));
    assert.equal((await fetch(metricsUrl.replace('/metrics', '/'))).status, 404);
    assert.equal((await fetch(metricsUrl.replace('/metrics', '/api/games/category/slots'))).status, 404);
    assert.equal((await fetch(metricsUrl, { method: 'POST' })).status, 405);
  });

  test('front_proxy_redis_up reads 0 once Redis is killed, and 1 again when it is back', async () => {
    await redis.kill();
    let last: number | undefined;
    const down = await waitUntil(async () => (last = valueOf((await scrape(metricsUrl)).samples, 'front_proxy_redis_up')) === 0, 10_000);
    assert.ok(down, `front_proxy_redis_up still ${last} after Redis was killed`);
    await redis.start();
    const up = await waitUntil(async () => (last = valueOf((await scrape(metricsUrl)).samples, 'front_proxy_redis_up')) === 1, 15_000);
    assert.ok(up, `front_proxy_redis_up still ${last} after Redis came back`);
  });
});

/** Resolves true once `check` resolves true, false after `timeoutMs` (checked every 100 ms). */
async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('WORKERS=2: the primary serves the metrics of both workers', { skip: !HAVE_REDIS && 'redis-server is not installed' }, () => {
  let upstream: RecordingUpstream;
  let redis: TestRedis;
  let proxy: ProxyProcess;
  let base = '';
  let metricsUrl = '';
  const N = 24;

  before(async () => {
    upstream = await startRecordingUpstream();
    redis = await startRedis();
    const metricsPort = await freePort();
    proxy = startProxyProcess({
      NODE_ENV: 'test',
      WORKERS: '2',
      PORT: String(await freePort()),
      METRICS_PORT: String(metricsPort),
      REDIS_URL: redis.url,
      ...upstreamEnv(upstream.url),
    });
    base = await proxy.address;
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const both = await waitFor(() => (proxy.output().match(/front proxy listening on/g) ?? []).length >= 2, 30_000);
    assert.ok(both, `two workers did not start: ${proxy.output().slice(-800)}`);
  });
  after(async () => {
    await proxy?.kill();
    await redis?.stop();
    await upstream?.close();
  });

  test(`${N} requests, each on a connection of its own, are all counted`, async () => {
    const ports = new Set<number>();
    upstream.on('GET', '/casino-games/list/', (_req, res) => {
      ports.add(res.socket?.remotePort ?? 0);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
    });
    const token = fakeJwt({ n: 'cluster' });
    for (let i = 0; i < N; i++) {
      const answer = await oneShot(base, `/api/games/category/slots?page=${i + 1}`, { cookie: `access_token=${token}` });
      assert.equal('status' in answer ? answer.status : answer.error, 200);
    }
    // Connections go round robin to the workers; each worker calls the upstream over its own pool.
    assert.ok(ports.size >= 2, `the upstream saw ${ports.size} connection(s): one worker served everything`);
    const { samples } = await scrape(metricsUrl);
    const counted = samples
      .filter((s) => s.name === 'front_proxy_http_request_duration_seconds_count' && s.labels.route === '/api/games/category/:slug')
      .reduce((sum, s) => sum + s.value, 0);
    assert.equal(counted, N);
    assert.equal(
      valueOf(samples, 'front_proxy_upstream_request_duration_seconds_count', { endpoint: 'EP0143', method: 'GET', status_class: '2xx' }),
      N,
    );
    assert.equal(valueOf(samples, 'front_proxy_redis_up'), 1);
    assert.equal(labelsOf(samples, 'front_proxy_build_info').length, 1);
  });

  test('the workers do not serve /metrics on the public port', async () => {
    for (let i = 0; i < 4; i++) {
      const answer = await oneShot(base, '/metrics');
      assert.equal('status' in answer ? answer.status : answer.error, 404);
    }
  });
});

describe('without METRICS_PORT', () => {
  let upstream: RecordingUpstream;
  before(async () => {
    upstream = await startRecordingUpstream();
  });
  after(() => upstream.close());

  test('no metrics are built: no registry, no step, the routes report to no-ops', async () => {
    const proxy = await startProxy(upstream.url, {});
    try {
      assert.equal(proxy.app.metrics, undefined);
      assert.equal(proxy.app.deps.metrics, NO_METRICS);
      assert.equal((await send(proxy.url, 'GET', '/api/games/category/slots')).status, 200);
      assert.equal((await send(proxy.url, 'GET', '/metrics')).status, 404);
    } finally {
      await proxy.close();
    }
    const withMetrics = await startProxy(upstream.url, { METRICS_PORT: String(await freePort()) });
    try {
      assert.ok(withMetrics.app.metrics, 'METRICS_PORT builds the metrics');
      assert.notEqual(withMetrics.app.deps.metrics, NO_METRICS);
    } finally {
      await withMetrics.close();
    }
  });
});

/** The names of the resilience series (docs/behaviour.md "Operations"). */
const RESILIENCE_SERIES = [
  'front_proxy_upstream_in_flight',
  'front_proxy_upstream_rejected_total',
  'front_proxy_circuit_state',
  'front_proxy_upstream_retries_total',
  'front_proxy_load_shed_total',
];

describe('resilience series: the per-endpoint guard and load shedding', () => {
  const build = { version: '0.1.0', buildId: 'build-resilience' };

  test('each series appears on the metrics server with its labels and values after the reports', async () => {
    const metrics = new Metrics(build, { defaultMetrics: false });
    const server = await startMetricsServer(0, '127.0.0.1', metrics);
    try {
      const before = await scrape(`${server.url}/metrics`);
      assert.equal(before.status, 200);
      for (const name of RESILIENCE_SERIES.slice(0, 4)) assert.deepEqual(labelsOf(before.samples, name), [], `${name} before any report`);
      assert.equal(valueOf(before.samples, 'front_proxy_load_shed_total'), 0);

      // Taken apart, as the upstream layer may keep them.
      const observer: ResilienceObserver = metrics.resilience;
      const { inFlight, rejected, circuitState, retried } = observer;
      inFlight('EP0092', 1);
      inFlight('EP0092', 1);
      inFlight('EP0092', 1);
      inFlight('EP0092', -1);
      inFlight('EP0143', 1);
      inFlight('EP0143', -1);
      rejected('EP0092', 'busy');
      rejected('EP0092', 'busy');
      rejected('EP0092', 'circuit_open');
      rejected('EP0143', 'circuit_open');
      circuitState('EP0092', 1);
      circuitState('EP0143', 1);
      circuitState('EP0143', 2);
      retried('EP0143');
      retried('EP0143');
      const shed = metrics.loadShed;
      shed();
      metrics.loadShed();
      metrics.loadShed();

      const { samples, text } = await scrape(`${server.url}/metrics`);
      assert.match(text, /# TYPE front_proxy_upstream_in_flight gauge/);
      assert.match(text, /# TYPE front_proxy_circuit_state gauge/);
      assert.match(text, /# TYPE front_proxy_upstream_rejected_total counter/);
      assert.match(text, /# TYPE front_proxy_upstream_retries_total counter/);
      assert.match(text, /# TYPE front_proxy_load_shed_total counter/);
      assert.equal(valueOf(samples, 'front_proxy_upstream_in_flight', { endpoint: 'EP0092' }), 2);
      assert.equal(valueOf(samples, 'front_proxy_upstream_in_flight', { endpoint: 'EP0143' }), 0);
      assert.equal(valueOf(samples, 'front_proxy_upstream_rejected_total', { endpoint: 'EP0092', reason: 'busy' }), 2);
      assert.equal(valueOf(samples, 'front_proxy_upstream_rejected_total', { endpoint: 'EP0092', reason: 'circuit_open' }), 1);
      assert.equal(valueOf(samples, 'front_proxy_upstream_rejected_total', { endpoint: 'EP0143', reason: 'circuit_open' }), 1);
      assert.equal(valueOf(samples, 'front_proxy_circuit_state', { endpoint: 'EP0092' }), 1);
      assert.equal(valueOf(samples, 'front_proxy_circuit_state', { endpoint: 'EP0143' }), 2);
      assert.equal(valueOf(samples, 'front_proxy_upstream_retries_total', { endpoint: 'EP0143' }), 2);
      assert.equal(valueOf(samples, 'front_proxy_load_shed_total'), 3);
      assert.deepEqual(labelsOf(samples, 'front_proxy_load_shed_total'), [{}]);
      // Exactly the label names of the contract.
      const names = (name: string) => [...new Set(labelsOf(samples, name).flatMap((l) => Object.keys(l)))].sort();
      assert.deepEqual(names('front_proxy_upstream_in_flight'), ['endpoint']);
      assert.deepEqual(names('front_proxy_circuit_state'), ['endpoint']);
      assert.deepEqual(names('front_proxy_upstream_rejected_total'), ['endpoint', 'reason']);
      assert.deepEqual(names('front_proxy_upstream_retries_total'), ['endpoint']);

      // A circuit that closes again reads 0; the gauge follows every report.
      circuitState('EP0092', 0);
      inFlight('EP0092', -1);
      const later = (await scrape(`${server.url}/metrics`)).samples;
      assert.equal(valueOf(later, 'front_proxy_circuit_state', { endpoint: 'EP0092' }), 0);
      assert.equal(valueOf(later, 'front_proxy_upstream_in_flight', { endpoint: 'EP0092' }), 1);
    } finally {
      await server.close();
    }
  });

  test('an EP code seen first through a rejection or a retry shows both gauges at 0 (closed, nothing running)', async () => {
    const metrics = new Metrics(build, { defaultMetrics: false });
    metrics.resilience.retried('EP0091');
    const samples = parseMetrics(await metrics.metrics());
    assert.equal(valueOf(samples, 'front_proxy_upstream_retries_total', { endpoint: 'EP0091' }), 1);
    assert.equal(valueOf(samples, 'front_proxy_circuit_state', { endpoint: 'EP0091' }), 0);
    assert.equal(valueOf(samples, 'front_proxy_upstream_in_flight', { endpoint: 'EP0091' }), 0);
    // The other reason starts at 0, so rate() sees its first refusal.
    assert.equal(valueOf(samples, 'front_proxy_upstream_rejected_total', { endpoint: 'EP0091', reason: 'busy' }), 0);
  });

  test('an endpoint that is not an EP code never becomes a label: it is counted as EP0000', async () => {
    const metrics = new Metrics(build, { defaultMetrics: false });
    const rawPath = '/wallet/charge/tx-4242-raw';
    const token = fakeJwt({ sub: '4242', n: 'resilience' });
    for (const endpoint of [rawPath, token, 'ep0092', 'EP9999']) {
      metrics.resilience.inFlight(endpoint, 1);
      metrics.resilience.rejected(endpoint, 'busy');
      metrics.resilience.circuitState(endpoint, 1);
      metrics.resilience.retried(endpoint);
    }
    const samples = parseMetrics(await metrics.metrics());
    for (const name of RESILIENCE_SERIES.slice(0, 4)) {
      assert.deepEqual([...new Set(labelsOf(samples, name).map((l) => l.endpoint))], ['EP0000'], name);
    }
    assert.equal(valueOf(samples, 'front_proxy_upstream_in_flight', { endpoint: 'EP0000' }), 4);
    assert.equal(valueOf(samples, 'front_proxy_upstream_rejected_total', { endpoint: 'EP0000', reason: 'busy' }), 4);
    const values = samples.flatMap((s) => Object.values(s.labels));
    for (const secret of [rawPath, 'tx-4242', token, '4242']) {
      assert.deepEqual(
        values.filter((v) => v.includes(secret)),
        [],
        `a label holds ${secret}`,
      );
    }
  });

  test('across cluster workers: in-flight and the counters are summed, circuit_state is the highest', async () => {
    const workers = [new Metrics(build, { defaultMetrics: false }), new Metrics(build, { defaultMetrics: false })];
    const [one, two] = workers as [Metrics, Metrics];
    one.resilience.inFlight('EP0092', 1);
    one.resilience.inFlight('EP0092', 1);
    two.resilience.inFlight('EP0092', 1);
    one.resilience.rejected('EP0092', 'busy');
    two.resilience.rejected('EP0092', 'busy');
    two.resilience.rejected('EP0092', 'circuit_open');
    one.resilience.retried('EP0143');
    two.resilience.retried('EP0143');
    two.resilience.retried('EP0143');
    one.resilience.circuitState('EP0092', 0);
    two.resilience.circuitState('EP0092', 1);
    one.resilience.circuitState('EP0143', 2);
    two.resilience.circuitState('EP0143', 1);
    one.resilience.circuitState('EP0091', 1);
    two.resilience.circuitState('EP0091', 1);
    one.loadShed();
    two.loadShed();
    two.loadShed();
    // What the cluster primary does with its workers' answers (clusterMetricsSource).
    const aggregate = AggregatorRegistry.aggregate(await Promise.all(workers.map((m) => m.registry.getMetricsAsJSON())));
    const samples = parseMetrics(await aggregate.metrics());
    assert.equal(valueOf(samples, 'front_proxy_upstream_in_flight', { endpoint: 'EP0092' }), 3);
    assert.equal(valueOf(samples, 'front_proxy_upstream_rejected_total', { endpoint: 'EP0092', reason: 'busy' }), 2);
    assert.equal(valueOf(samples, 'front_proxy_upstream_rejected_total', { endpoint: 'EP0092', reason: 'circuit_open' }), 1);
    assert.equal(valueOf(samples, 'front_proxy_upstream_retries_total', { endpoint: 'EP0143' }), 3);
    assert.equal(valueOf(samples, 'front_proxy_circuit_state', { endpoint: 'EP0092' }), 1, 'open in one worker reads open');
    assert.equal(valueOf(samples, 'front_proxy_circuit_state', { endpoint: 'EP0143' }), 2, 'half-open in one worker, open in the other');
    assert.equal(
      valueOf(samples, 'front_proxy_circuit_state', { endpoint: 'EP0091' }),
      1,
      'open in both workers: the highest, not the sum',
    );
    assert.equal(valueOf(samples, 'front_proxy_load_shed_total'), 3);
  });

  test('the routes report load shedding through ProxyMetrics: counted with METRICS_PORT, a no-op without', async () => {
    const upstream = await startRecordingUpstream();
    try {
      NO_METRICS.loadShed();
      const proxy = await startProxy(upstream.url, { METRICS_PORT: String(await freePort()) });
      try {
        assert.ok(proxy.app.metrics);
        proxy.app.deps.metrics.loadShed();
        proxy.app.deps.metrics.loadShed();
        assert.equal(valueOf(parseMetrics(await proxy.app.metrics.metrics()), 'front_proxy_load_shed_total'), 2);
      } finally {
        await proxy.close();
      }
    } finally {
      await upstream.close();
    }
  });
});

describe('what an SRE scrapes: probes out of the SLO series, the serving gauges, refusals before routing', () => {
  test('health probes on both ports are not timed; in-flight requests and open connections are gauges beside their limits; a refusal before routing is counted', async () => {
    const upstream = await startRecordingUpstream();
    const proxy = await startProxy(upstream.url, {
      METRICS_PORT: '0',
      HEALTH_PORT: '0',
      LOAD_SHED_MAX_IN_FLIGHT: '50',
      MAX_CONNECTIONS: '40',
    });
    const held: import('node:http').ServerResponse[] = [];
    try {
      assert.ok(proxy.app.metrics && proxy.app.healthListener);
      const health = await proxy.app.healthListener.listen(0, '127.0.0.1');
      const samples = async () => parseMetrics(await proxy.app.metrics!.metrics());
      await send(proxy.url, 'GET', '/api/games/list');
      for (let i = 0; i < 5; i++) {
        assert.equal((await send(proxy.url, 'GET', '/healthz')).status, 200);
        assert.equal((await send(health, 'GET', '/healthz')).status, 200);
        await send(health, 'GET', '/readyz');
      }
      const routes = new Set(labelsOf(await samples(), 'front_proxy_http_request_duration_seconds_count').map((l) => l.route));
      assert.ok(routes.has('/api/games/list'), [...routes].join(', '));
      assert.ok(!routes.has('/healthz') && !routes.has('/readyz'), `no probe in the SLO histogram: ${[...routes].join(', ')}`);

      upstream.on('GET', '/bff/users/login-history', (_req, res) => held.push(res));
      const running = [1, 2].map(() => send(proxy.url, 'GET', '/api/user/login-history', { token: fakeJwt() }));
      assert.ok(await waitFor(() => held.length === 2, 5_000), 'both requests reached the BFF');
      const now = await samples();
      assert.equal(valueOf(now, 'front_proxy_http_requests_in_flight'), 2);
      assert.equal(valueOf(now, 'front_proxy_http_requests_in_flight_limit'), 50);
      assert.ok((valueOf(now, 'front_proxy_http_open_connections') ?? 0) >= 2, 'the two held requests hold their connections');
      assert.equal(valueOf(now, 'front_proxy_http_open_connections_limit'), 40);
      for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
      await Promise.all(running);
      assert.equal(valueOf(await samples(), 'front_proxy_http_requests_in_flight'), 0);

      assert.equal(valueOf(await samples(), 'front_proxy_http_refused_total', { reason: 'protocol' }), 0);
      /** Writes `bytes` on a connection of its own and gives everything answered until it closes. */
      const exchange = (bytes: string) =>
        new Promise<string>((resolve) => {
          const socket = connect(Number(new URL(proxy.url).port), '127.0.0.1');
          let text = '';
          socket.on('data', (c: Buffer) => (text += c.toString()));
          socket.on('close', () => resolve(text));
          socket.write(bytes);
        });
      assert.match(await exchange('GET /api/games/list HTTP/1.1\r\nConnection: close\r\n\r\n'), /^HTTP\/1\.1 400/, 'no Host');
      assert.match(
        await exchange('GET /api/games/list HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'),
        /^HTTP\/1\.1 400/,
        'a malformed header',
      );
      const after = await samples();
      assert.ok((valueOf(after, 'front_proxy_http_refused_total', { reason: 'protocol' }) ?? 0) >= 1, 'no Host: counted');
      assert.equal(valueOf(after, 'front_proxy_http_refused_total', { reason: 'malformed' }), 1);
    } finally {
      for (const res of held.splice(0)) res.destroy();
      await proxy.close();
      await upstream.close();
    }
  });

  test('promtool check metrics passes on a live scrape of the metrics port', { skip: NEEDS_PROMTOOL }, async () => {
    const upstream = await startRecordingUpstream();
    const proxy = await startProxy(upstream.url, { METRICS_PORT: '0' });
    try {
      await send(proxy.url, 'GET', '/api/games/list');
      await send(proxy.url, 'GET', '/api/no/such/route');
      const server = await startMetricsServer(0, '127.0.0.1', proxy.app.metrics!);
      try {
        const { text } = await scrape(`${server.url}/metrics`);
        const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 20_000 });
        assert.equal(check.status, 0, `promtool check metrics: ${check.stdout}${check.stderr}`);
      } finally {
        await server.close();
      }
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });
});
