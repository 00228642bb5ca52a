/**
 * Tracing that costs what it samples (CONTRACT.md "Operations", tracing row; the standard `OTEL_*`
 * variables), over real loopback sockets: with `OTEL_TRACES_SAMPLER=parentbased_traceidratio` and
 * `OTEL_TRACES_SAMPLER_ARG=0` no span reaches the collector, yet every upstream call carries a W3C
 * `traceparent` (sampled flag off) of its own trace; a request whose incoming `traceparent` is sampled
 * is traced (parent-based); `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf` exports protobuf. Full
 * sampling (the default) is `tracing.test.ts`.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, test } from 'node:test';
import { otlpProtocol, propagatorNames } from '../src/pipeline/tracing-sdk.js';
import { startOtlpCollector } from './helpers/otlp-collector.js';
import { fakeJwt, startProxy, startRecordingUpstream, type RecordingUpstream, type TestProxy } from './helpers/recording-upstream.js';

// Read when a proxy starts its tracer provider and batch processor: spans leave within 100 ms.
process.env.OTEL_BSP_SCHEDULE_DELAY = '100';

/** The fake OTLP/HTTP collector: every export posted to `/v1/traces`, with its content type. */
const startCollector = startOtlpCollector;

/**
 * A GET through `node:http`, which no instrumentation of the test's process traces (its `fetch` is
 * traced: undici), so that the only `traceparent` the proxy receives is the one given here.
 */
function get(base: string, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { headers, timeout: 5_000 }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('timeout', () => req.destroy(new Error('no answer within 5 s')));
    req.once('error', reject);
    req.end();
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(found: () => boolean, ms = 5_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!found() && Date.now() < end) await sleep(25);
  return found();
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

let collector: Awaited<ReturnType<typeof startCollector>>;
let upstream: RecordingUpstream;
const proxies: TestProxy[] = [];

before(async () => {
  collector = await startCollector();
  upstream = await startRecordingUpstream();
  upstream.on('GET', '/auth/user-profile', { status: 200, json: { user: { id: 7 } } });
});
after(async () => {
  for (const proxy of proxies) await proxy.close();
  await upstream?.close();
  await collector?.close();
});

/** Starts a proxy with tracing on and these `OTEL_*` variables in the process environment (the SDK reads them there). */
async function tracingProxy(vars: Record<string, string | undefined>): Promise<TestProxy> {
  for (const [name, value] of Object.entries(vars)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  // One tracing app at a time: the OpenTelemetry registration is process-wide.
  for (const previous of proxies.splice(0)) await previous.close();
  // The SDK reads the sampler from the process's environment; the proxy's configuration (the exporter's
  // encoding, whether the sampler is parent-based) from the variables it is given, as from server.ts.
  const given = Object.fromEntries(Object.entries(vars).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const proxy = await startProxy(upstream.url, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, ...given });
  proxies.push(proxy);
  return proxy;
}

test('ratio 0: nothing reaches the collector, yet every upstream call carries its own traceparent, not sampled', async () => {
  const proxy = await tracingProxy({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' });
  upstream.reset();
  upstream.on('GET', '/auth/user-profile', { status: 200, json: { user: { id: 7 } } });
  const before = collector.exports.length;
  const requests = 10;
  for (let i = 0; i < requests; i++) assert.equal(await get(proxy.url, '/api/auth/profile', { cookie: `access_token=${fakeJwt()}` }), 200);

  const calls = upstream.requests.filter((r) => r.path === '/auth/user-profile');
  assert.equal(calls.length, requests, 'one upstream call per request (a new token each)');
  const traceIds = new Set<string>();
  for (const call of calls) {
    const parsed = TRACEPARENT.exec(String(call.headers.traceparent));
    assert.ok(parsed, `a W3C traceparent upstream: ${String(call.headers.traceparent)}`);
    assert.equal(parsed[3], '00', 'the sampled flag is off');
    traceIds.add(parsed[1] as string);
  }
  assert.equal(traceIds.size, requests, 'each request its own trace');
  // Five batch delays: any span recorded would have been exported by now.
  await sleep(500);
  assert.equal(collector.exports.length, before, 'no export: no span was recorded');

  // A caller's unsampled trace continues upstream: same trace id, a span id of the proxy's, not sampled.
  const unsampledTrace = 'ef'.repeat(16);
  const callerSpan = '12'.repeat(8);
  assert.equal(await get(proxy.url, '/api/auth/profile', { cookie: `access_token=${fakeJwt()}`, traceparent: `00-${unsampledTrace}-${callerSpan}-00` }), 200);
  const continued = TRACEPARENT.exec(String(upstream.requests.at(-1)?.headers.traceparent));
  assert.equal(continued?.[1], unsampledTrace);
  assert.notEqual(continued?.[2], callerSpan, "the parent upstream is the proxy's span");
  assert.equal(continued?.[3], '00');
  await sleep(300);
  assert.equal(collector.exports.length, before, 'still no export');

  // The exporter works: a request whose caller sampled its trace is traced (the parent decides).
  const traceId = 'ab'.repeat(16);
  const status = await get(proxy.url, '/api/auth/profile', { cookie: `access_token=${fakeJwt()}`, traceparent: `00-${traceId}-${'cd'.repeat(8)}-01` });
  assert.equal(status, 200);
  const sampledCall = upstream.requests.at(-1);
  assert.match(String(sampledCall?.headers.traceparent), new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`), 'the sampled trace continues upstream');
  assert.ok(await waitFor(() => collector.exports.slice(before).some((e) => e.body.toString('utf8').includes(traceId))), 'its spans were exported');
});

test('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf: spans are exported as OTLP protobuf', async () => {
  const proxy = await tracingProxy({ OTEL_TRACES_SAMPLER: undefined, OTEL_TRACES_SAMPLER_ARG: undefined, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' });
  try {
    const before = collector.exports.length;
    upstream.reset();
    upstream.on('GET', '/auth/user-profile', { status: 200, json: { user: { id: 7 } } });
    assert.equal(await get(proxy.url, '/api/auth/profile', { cookie: `access_token=${fakeJwt()}` }), 200);
    const parsed = TRACEPARENT.exec(String(upstream.requests.at(-1)?.headers.traceparent));
    assert.ok(parsed, 'a traceparent upstream');
    assert.equal(parsed[3], '01', 'sampled (the default sampler)');
    const traceBytes = Buffer.from(parsed[1] as string, 'hex');
    assert.ok(await waitFor(() => collector.exports.slice(before).some((e) => e.body.includes(traceBytes))), 'the trace id, as bytes, reached the collector');
    const own = collector.exports.slice(before).find((e) => e.body.includes(traceBytes));
    assert.equal(own?.contentType, 'application/x-protobuf');
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL;
  }
});

test('propagatorNames: OTEL_PROPAGATORS as a list, W3C trace context and baggage by default, none, unknown names left out', () => {
  const cases: [value: string | undefined, names: string[], unsupported: string[]][] = [
    [undefined, ['tracecontext', 'baggage'], []],
    ['', ['tracecontext', 'baggage'], []],
    [' , ', ['tracecontext', 'baggage'], []],
    ['b3', ['b3'], []],
    ['b3multi, tracecontext', ['b3multi', 'tracecontext'], []],
    ['tracecontext,baggage,tracecontext', ['tracecontext', 'baggage'], []],
    ['none', [], []],
    ['jaeger,b3', ['b3'], ['jaeger']],
    ['xray', [], ['xray']],
  ];
  for (const [value, names, unsupported] of cases) assert.deepEqual(propagatorNames(value), { names, unsupported }, String(value));
});

test('otlpProtocol: the traces variable, then the general one; JSON by default and for what is not served', () => {
  const cases: [env: Record<string, string>, protocol: string, unsupported?: string][] = [
    [{}, 'http/json'],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }, 'http/protobuf'],
    [{ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }, 'http/json'],
    [{ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }, 'http/protobuf'],
    [{ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }, 'http/json', 'grpc'],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'HTTP/JSON' }, 'http/json', 'HTTP/JSON'],
  ];
  for (const [env, protocol, unsupported] of cases) {
    assert.deepEqual(otlpProtocol(env), unsupported === undefined ? { protocol } : { protocol, unsupported }, JSON.stringify(env));
  }
});
