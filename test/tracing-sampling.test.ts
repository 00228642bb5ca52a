/**
 * Tracing that costs what it samples (docs/behaviour.md "Operations", tracing row; the standard `OTEL_*`
 * variables), over real loopback sockets: with `OTEL_TRACES_SAMPLER=parentbased_traceidratio` and
 * `OTEL_TRACES_SAMPLER_ARG=0` no span reaches the collector, yet every upstream call carries a W3C
 * `traceparent` (sampled flag off) of its own trace; a request whose incoming `traceparent` is sampled
 * is traced (parent-based); `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf` exports protobuf. Full
 * sampling (the default) is `tracing.test.ts`. Propagators: W3C trace context with `tracestate` and
 * `baggage` (the default), B3 single and multi-header (`OTEL_PROPAGATORS=b3`, `b3multi`).
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
  assert.equal(
    await get(proxy.url, '/api/auth/profile', {
      cookie: `access_token=${fakeJwt()}`,
      traceparent: `00-${unsampledTrace}-${callerSpan}-00`,
    }),
    200,
  );
  const continued = TRACEPARENT.exec(String(upstream.requests.at(-1)?.headers.traceparent));
  assert.equal(continued?.[1], unsampledTrace);
  assert.notEqual(continued?.[2], callerSpan, "the parent upstream is the proxy's span");
  assert.equal(continued?.[3], '00');
  const line = proxy.logs.entries.findLast((e) => e.msg === 'request completed');
  assert.equal(line?.trace_id, unsampledTrace, 'a request left out still logs its trace id');
  assert.equal(line?.span_id, undefined, 'and no span id: it has no span');
  await sleep(300);
  assert.equal(collector.exports.length, before, 'still no export');

  // The exporter works: a request whose caller sampled its trace is traced (the parent decides).
  const traceId = 'ab'.repeat(16);
  const status = await get(proxy.url, '/api/auth/profile', {
    cookie: `access_token=${fakeJwt()}`,
    traceparent: `00-${traceId}-${'cd'.repeat(8)}-01`,
  });
  assert.equal(status, 200);
  const sampledCall = upstream.requests.at(-1);
  assert.match(
    String(sampledCall?.headers.traceparent),
    new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`),
    'the sampled trace continues upstream',
  );
  assert.ok(
    await waitFor(() => collector.exports.slice(before).some((e) => e.body.toString('utf8').includes(traceId))),
    'its spans were exported',
  );
});

test('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf: spans are exported as OTLP protobuf', async () => {
  const proxy = await tracingProxy({
    OTEL_TRACES_SAMPLER: undefined,
    OTEL_TRACES_SAMPLER_ARG: undefined,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
  });
  try {
    const before = collector.exports.length;
    upstream.reset();
    upstream.on('GET', '/auth/user-profile', { status: 200, json: { user: { id: 7 } } });
    assert.equal(await get(proxy.url, '/api/auth/profile', { cookie: `access_token=${fakeJwt()}` }), 200);
    const parsed = TRACEPARENT.exec(String(upstream.requests.at(-1)?.headers.traceparent));
    assert.ok(parsed, 'a traceparent upstream');
    assert.equal(parsed[3], '01', 'sampled (the default sampler)');
    const traceBytes = Buffer.from(parsed[1] as string, 'hex');
    assert.ok(
      await waitFor(() => collector.exports.slice(before).some((e) => e.body.includes(traceBytes))),
      'the trace id, as bytes, reached the collector',
    );
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

test('W3C trace context and baggage: tracestate and baggage carried to the upstream, sampled or not', async () => {
  const headers = (traceId: string, flags: string) => ({
    cookie: `access_token=${fakeJwt()}`,
    traceparent: `00-${traceId}-${'34'.repeat(8)}-${flags}`,
    tracestate: 'vendor=abc',
    baggage: 'tenant=casino,region=eu',
  });
  for (const sampler of ['parentbased_traceidratio', 'parentbased_always_on']) {
    const proxy = await tracingProxy({ OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: '0' });
    for (const flags of ['00', '01']) {
      const traceId = (flags === '00' ? '5a' : '5b').repeat(16);
      upstream.reset();
      upstream.on('GET', '/auth/user-profile', { status: 200, json: { user: { id: 7 } } });
      assert.equal(await get(proxy.url, '/api/auth/profile', headers(traceId, flags)), 200);
      const call = upstream.requests.at(-1);
      const parsed = TRACEPARENT.exec(String(call?.headers.traceparent));
      assert.ok(parsed, `${sampler} ${flags}: a traceparent upstream`);
      assert.equal(parsed[1], traceId, `${sampler} ${flags}: the caller's trace continues`);
      assert.notEqual(parsed[2], '34'.repeat(8), "the parent upstream is the proxy's own span id");
      // Parent-based: the caller's decision is kept whatever the ratio.
      assert.equal(parsed[3], flags, `${sampler}: the caller's sampled flag`);
      assert.equal(call?.headers.tracestate, 'vendor=abc', `${sampler} ${flags}: tracestate`);
      assert.equal(call?.headers.baggage, 'tenant=casino,region=eu', `${sampler} ${flags}: baggage`);
    }
  }
});

test('OTEL_PROPAGATORS=b3 / b3multi: B3 headers read from the caller and written upstream, no traceparent', async () => {
  const traceId = '7c'.repeat(16);
  const callerSpan = '9d'.repeat(8);
  const before = collector.exports.length;

  let proxy = await tracingProxy({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0', OTEL_PROPAGATORS: 'b3' });
  upstream.reset();
  upstream.on('GET', '/auth/user-profile', { status: 200, json: { user: { id: 7 } } });
  // Unsampled caller, then a sampled one (the parent decides at ratio 0), then none (a new trace, left out).
  assert.equal(await get(proxy.url, '/api/auth/profile', { cookie: `access_token=${fakeJwt()}`, b3: `${traceId}-${callerSpan}-0` }), 200);
  assert.equal(await get(proxy.url, '/api/auth/profile', { cookie: `access_token=${fakeJwt()}`, b3: `${traceId}-${callerSpan}-1` }), 200);
  assert.equal(await get(proxy.url, '/api/auth/profile', { cookie: `access_token=${fakeJwt()}` }), 200);
  const [unsampled, sampled, fresh] = upstream.requests.filter((r) => r.path === '/auth/user-profile');
  const B3 = /^([0-9a-f]{32})-([0-9a-f]{16})-([01])$/;
  for (const [call, flag] of [
    [unsampled, '0'],
    [sampled, '1'],
  ] as const) {
    assert.equal(call?.headers.traceparent, undefined, 'no W3C header with b3 alone');
    const parsed = B3.exec(String(call?.headers.b3));
    assert.ok(parsed, `a single b3 header upstream: ${String(call?.headers.b3)}`);
    assert.equal(parsed[1], traceId);
    assert.notEqual(parsed[2], callerSpan);
    assert.equal(parsed[3], flag);
  }
  const own = B3.exec(String(fresh?.headers.b3));
  assert.ok(own, 'a request without a caller trace gets a b3 header of its own');
  assert.notEqual(own[1], traceId);
  assert.equal(own[3], '0', 'left out at ratio 0');
  assert.ok(
    await waitFor(() => collector.exports.slice(before).some((e) => e.body.toString('utf8').includes(traceId))),
    'the sampled B3 trace was exported',
  );

  proxy = await tracingProxy({
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0',
    OTEL_PROPAGATORS: 'b3multi',
  });
  upstream.reset();
  upstream.on('GET', '/auth/user-profile', { status: 200, json: { user: { id: 7 } } });
  assert.equal(
    await get(proxy.url, '/api/auth/profile', {
      cookie: `access_token=${fakeJwt()}`,
      'x-b3-traceid': traceId,
      'x-b3-spanid': callerSpan,
      'x-b3-sampled': '0',
    }),
    200,
  );
  const multi = upstream.requests.at(-1)?.headers;
  assert.equal(multi?.['x-b3-traceid'], traceId);
  assert.match(String(multi?.['x-b3-spanid']), /^[0-9a-f]{16}$/);
  assert.notEqual(multi?.['x-b3-spanid'], callerSpan);
  assert.equal(multi?.['x-b3-sampled'], '0');
  assert.equal(multi?.b3, undefined);
  assert.equal(multi?.traceparent, undefined);
  delete process.env.OTEL_PROPAGATORS;
});
