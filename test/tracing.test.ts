/**
 * docs/behaviour.md "Operations", tracing row, over real loopback sockets: with `OTEL_EXPORTER_OTLP_ENDPOINT`
 * set, a fake OTLP/HTTP collector receives a server span per request (`http.route`, the route pattern)
 * and a client span per upstream call (`front_proxy.endpoint`, its EP code); the upstream receives a
 * W3C `traceparent` of the same trace, whose parent is the client span; nothing exported holds the
 * session token, the cookie or an authorization header; error answers keep their `X-Error-Ref`.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { redactQuery } from '../src/pipeline/tracing-sdk.js';
import { startOtlpCollector } from './helpers/otlp-collector.js';
import { fakeJwt, send, startProxy, startRecordingUpstream, type RecordingUpstream, type TestProxy } from './helpers/recording-upstream.js';

// Read by the batch span processor when the proxy starts: spans leave within 100 ms.
process.env.OTEL_BSP_SCHEDULE_DELAY = '100';

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  links?: { traceId: string; spanId: string }[];
  name: string;
  kind: number;
  attributes?: { key: string; value: OtlpValue }[];
}
interface OtlpExport {
  resourceSpans?: { resource?: { attributes?: { key: string; value: OtlpValue }[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

/** OTLP span kinds (opentelemetry-proto `Span.SpanKind`). */
const SERVER = 2;
const CLIENT = 3;

/** The collector of these tests, with views of its exports: bodies as text, content types, paths, spans (OTLP JSON). */
async function startCollector() {
  const collector = await startOtlpCollector();
  const { exports } = collector;
  return {
    url: collector.url,
    get bodies(): string[] {
      return exports.map((e) => e.body.toString('utf8'));
    },
    get contentTypes(): string[] {
      return exports.map((e) => e.contentType);
    },
    get paths(): string[] {
      return exports.map((e) => e.path);
    },
    spans(): OtlpSpan[] {
      return exports.flatMap((e) =>
        ((JSON.parse(e.body.toString('utf8')) as OtlpExport).resourceSpans ?? []).flatMap((r) =>
          (r.scopeSpans ?? []).flatMap((s) => s.spans ?? []),
        ),
      );
    },
    close: () => collector.close(),
  };
}

function attribute(span: OtlpSpan, key: string): string | number | boolean | undefined {
  const v = span.attributes?.find((a) => a.key === key)?.value;
  if (v === undefined) return undefined;
  return v.stringValue ?? (v.intValue === undefined ? v.boolValue : Number(v.intValue));
}

async function waitFor<T>(find: () => T | undefined, ms = 5_000): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const found = find();
    if (found !== undefined || Date.now() > end) return found;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The proxy's server span of a trace and the client span whose id the upstream received as its parent.
 */
async function spansOf(traceId: string, parentId: string): Promise<{ serverSpan: OtlpSpan; clientSpan: OtlpSpan } | undefined> {
  return waitFor(() => {
    const all = collector.spans().filter((s) => s.traceId === traceId);
    const serverSpan = all.find((s) => s.kind === SERVER);
    const clientSpan = all.find((s) => s.kind === CLIENT && s.spanId === parentId);
    return serverSpan && clientSpan ? { serverSpan, clientSpan } : undefined;
  });
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

let collector: Awaited<ReturnType<typeof startCollector>>;
let upstream: RecordingUpstream;
let proxy: TestProxy;

before(async () => {
  collector = await startCollector();
  upstream = await startRecordingUpstream();
  proxy = await startProxy(upstream.url, { OTEL_EXPORTER_OTLP_ENDPOINT: `${collector.url}/` });
});
after(async () => {
  await proxy?.close();
  await upstream?.close();
  await collector?.close();
});

test('a request: a server span with http.route, a client span with the EP code, traceparent upstream', async () => {
  const token = fakeJwt();
  upstream.on('GET', '/auth/user-profile', { status: 200, json: { user: { id: 7 } } });
  const res = await send(proxy.url, 'GET', '/api/auth/profile', {
    token,
    headers: { authorization: `Bearer ${token}`, 'x-request-id': 'trace-profile' },
  });
  assert.equal(res.status, 200);

  const call = upstream.requests.find((r) => r.path === '/auth/user-profile');
  assert.ok(call, 'the upstream was called');
  const traceparent = TRACEPARENT.exec(String(call.headers.traceparent));
  assert.ok(traceparent, `a W3C traceparent upstream: ${String(call.headers.traceparent)}`);
  const [, traceId = '', parentId = ''] = traceparent;
  assert.match(String(call.headers.traceparent), /-01$/, 'sampled: the default sampler keeps every request');

  const spans = await spansOf(traceId, parentId);
  assert.ok(spans, `the collector received the spans of trace ${traceId}`);
  const { serverSpan, clientSpan } = spans;
  assert.equal(attribute(serverSpan, 'http.route'), '/api/auth/profile');
  assert.equal(attribute(serverSpan, 'http.response.status_code'), 200);
  assert.equal(serverSpan.name, 'GET /api/auth/profile');
  assert.equal(attribute(clientSpan, 'front_proxy.endpoint'), 'EP0003');
  assert.equal(clientSpan.spanId, parentId, "the upstream's parent is the client span");
  assert.equal(clientSpan.traceId, serverSpan.traceId);
  assert.equal(clientSpan.parentSpanId, serverSpan.spanId, 'the client span is a child of the server span (no handler span between)');
  assert.equal(
    collector.spans().filter((s) => s.traceId === traceId && s.kind !== CLIENT && s.kind !== SERVER).length,
    0,
    'no INTERNAL span',
  );
  assert.match(collector.contentTypes[0] ?? '', /json/, 'OTLP/HTTP JSON');

  const exported = collector.bodies.join('\n');
  assert.ok(!exported.includes(token), 'no span holds the token');
  assert.ok(!exported.includes(token.slice(0, 20)), 'nor a piece of it');
  assert.ok(!/access_token=/.test(exported), 'no cookie header');
});

test('a route pattern with a wildcard; the query of both spans keeps names only', async () => {
  const token = fakeJwt();
  upstream.on('GET', '/core-sportbook/events', { status: 200, json: { events: [] } });
  const res = await send(proxy.url, 'GET', `/api/core-sportbook/events?sport=1&token=${token}&${token}`, { token });
  assert.equal(res.status, 200);
  const call = upstream.requests.find((r) => r.path === '/core-sportbook/events');
  assert.ok(call, 'the upstream was called');
  assert.ok(call.query.includes(token), 'the raw query went upstream unchanged');
  const [, traceId = '', parentId = ''] = TRACEPARENT.exec(String(call.headers.traceparent)) ?? [];
  const spans = await spansOf(traceId, parentId);
  assert.ok(spans, `the collector received the spans of trace ${traceId}`);
  const { serverSpan, clientSpan } = spans;
  assert.equal(attribute(serverSpan, 'http.route'), '/api/core-sportbook/*');
  assert.equal(attribute(serverSpan, 'url.path'), '/api/core-sportbook/events');
  assert.equal(attribute(clientSpan, 'front_proxy.endpoint'), 'EP0195');
  assert.equal(attribute(clientSpan, 'url.query'), '?sport=REDACTED&token=REDACTED&REDACTED');
  assert.ok(!collector.bodies.join('\n').includes(token), 'no span holds the token');
});

test('with tracing on, error answers keep their X-Error-Ref and a 404 is traced without a route', async () => {
  const noToken = await send(proxy.url, 'GET', '/api/auth/profile');
  assert.equal(noToken.status, 401);
  assert.equal(noToken.headers.get('x-error-ref'), 'EP0702-EM0001');
  const missing = await send(proxy.url, 'GET', '/api/no/such/route', { headers: { 'x-request-id': 'trace-404' } });
  assert.equal(missing.status, 404);
  assert.equal(missing.headers.get('x-error-ref'), 'EP0799-EM0099');
  const span = await waitFor(() => collector.spans().find((s) => s.kind === SERVER && attribute(s, 'url.path') === '/api/no/such/route'));
  assert.ok(span, 'the 404 has a server span');
  assert.equal(attribute(span, 'http.route'), undefined);
  assert.equal(attribute(span, 'http.response.status_code'), 404);
});

test('a catalogue fill is a root span linked to the request that caused it; its client span has the HTTP attributes', async () => {
  upstream.on('GET', '/casino-games/list/', { status: 200, json: { data: [], total: 0 } });
  const res = await send(proxy.url, 'GET', '/api/games/list?page=1', { headers: { 'x-request-id': 'trace-fill' } });
  assert.equal(res.status, 200);
  const call = upstream.requests.findLast((r) => r.path === '/casino-games/list/');
  assert.ok(call, 'the catalogue was filled');
  const [, fillTrace = '', fillSpan = ''] = TRACEPARENT.exec(String(call.headers.traceparent)) ?? [];
  const found = await waitFor(() => {
    const fill = collector.spans().find((s) => s.kind === CLIENT && s.spanId === fillSpan);
    const link = fill?.links?.[0];
    const server = link && collector.spans().find((s) => s.kind === SERVER && s.spanId === link.spanId);
    return fill && server ? { fill, server } : undefined;
  });
  assert.ok(found, 'the fill span and the server span it links to were exported');
  const { fill, server } = found;
  assert.equal(fill.traceId, fillTrace);
  assert.equal(fill.parentSpanId || undefined, undefined, 'a root span');
  assert.notEqual(fill.traceId, server.traceId, 'a trace of its own');
  assert.equal(fill.links?.[0]?.traceId, server.traceId);
  assert.equal(attribute(server, 'http.route'), '/api/games/list');
  assert.equal(fill.name, 'GET');
  assert.equal(attribute(fill, 'http.request.method'), 'GET');
  assert.equal(attribute(fill, 'url.path'), '/casino-games/list/');
  assert.equal(attribute(fill, 'url.scheme'), 'http');
  assert.equal(attribute(fill, 'server.address'), '127.0.0.1');
  assert.equal(attribute(fill, 'server.port'), Number(new URL(upstream.url).port));
  assert.equal(attribute(fill, 'http.response.status_code'), 200);
  assert.match(String(attribute(fill, 'url.full')), /^http:\/\/127\.0\.0\.1:\d+\/casino-games\/list\/\?page=REDACTED/);
});

test('an upstream 502: the client span says ERROR with the status, the server span the status it answered', async () => {
  upstream.on('GET', '/auth/user-profile', { status: 502, json: { error: 'bad gateway' } });
  const res = await send(proxy.url, 'GET', '/api/auth/profile', { token: fakeJwt() });
  assert.equal(res.status, 502);
  const call = upstream.requests.findLast((r) => r.path === '/auth/user-profile');
  const [, traceId = '', parentId = ''] = TRACEPARENT.exec(String(call?.headers.traceparent)) ?? [];
  const spans = await spansOf(traceId, parentId);
  assert.ok(spans, `the collector received the spans of trace ${traceId}`);
  assert.equal(attribute(spans.clientSpan, 'http.response.status_code'), 502);
  assert.equal((spans.clientSpan as OtlpSpan & { status?: { code?: number } }).status?.code, 2, 'ERROR');
  assert.equal(attribute(spans.serverSpan, 'http.response.status_code'), 502);
});

test('logs joined to traces: every line of a request carries its trace_id and span_id, the span its request id; HTTP attributes and error.type', async () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  upstream.on('GET', '/auth/user-profile', { status: 503, json: { error: 'down' } });
  const res = await send(proxy.url, 'GET', '/api/auth/profile?lang=pt&token=secret-value', {
    token: fakeJwt(),
    headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, 'x-request-id': 'joined-1', 'user-agent': 'probe-agent/1.0' },
  });
  assert.equal(res.status, 503);
  const call = upstream.requests.findLast((r) => r.path === '/auth/user-profile');
  const [, , parentId = ''] = TRACEPARENT.exec(String(call?.headers.traceparent)) ?? [];
  const spans = await spansOf(traceId, parentId);
  assert.ok(spans, "the spans of the caller's trace");
  const { serverSpan, clientSpan } = spans;
  const completed = proxy.logs.entries.find((e) => e.reqId === 'joined-1' && e.msg === 'request completed');
  assert.equal(completed?.trace_id, traceId);
  assert.equal(completed?.span_id, serverSpan.spanId);
  assert.equal(completed?.level, 'warn', 'a 5xx answer is logged at warn');
  assert.match(String(completed?.time), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'ISO time');
  assert.equal(attribute(serverSpan, 'front_proxy.request_id'), 'joined-1');
  assert.equal(attribute(serverSpan, 'url.scheme'), 'http');
  assert.equal(attribute(serverSpan, 'server.address'), '127.0.0.1');
  assert.equal(attribute(serverSpan, 'server.port'), Number(new URL(proxy.url).port));
  assert.equal(attribute(serverSpan, 'client.address'), '127.0.0.1');
  assert.equal(attribute(serverSpan, 'user_agent.original'), 'probe-agent/1.0');
  assert.equal(attribute(serverSpan, 'url.query'), '?lang=REDACTED&token=REDACTED', 'query keys kept, values redacted');
  assert.equal(attribute(serverSpan, 'error.type'), '503');
  assert.equal(attribute(clientSpan, 'error.type'), '503');
  assert.ok(!collector.bodies.join('\n').includes('secret-value'));

  // A request that logs a line of its own (the BFF's logout fails: the cookie is cleared anyway).
  upstream.on('POST', '/auth/logout', (_req, res) => res.socket?.destroy());
  const logout = await send(proxy.url, 'POST', '/api/auth/logout', {
    token: fakeJwt(),
    headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, 'x-request-id': 'joined-2' },
  });
  assert.equal(logout.status, 200);
  const lines = proxy.logs.entries.filter((e) => e.reqId === 'joined-2');
  assert.deepEqual(
    lines.map((e) => e.msg),
    ['upstream logout failed; cookie cleared anyway', 'request completed'],
  );
  const logoutSpan = await waitFor(() =>
    collector.spans().find((s) => s.kind === SERVER && attribute(s, 'front_proxy.request_id') === 'joined-2'),
  );
  assert.ok(logoutSpan);
  for (const line of lines) {
    assert.equal(line.trace_id, traceId, `trace_id on ${String(line.msg)}`);
    assert.equal(line.span_id, logoutSpan.spanId, `span_id on ${String(line.msg)}`);
  }
});

test('health probes: no server span, no client span for the readiness probe, no info line', async () => {
  const before = collector.spans().length;
  for (let i = 0; i < 3; i++) {
    assert.equal((await send(proxy.url, 'GET', '/healthz', { headers: { 'x-request-id': `probe-${i}` } })).status, 200);
    assert.equal((await send(proxy.url, 'GET', '/readyz', { headers: { 'x-request-id': `ready-${i}` } })).status, 200);
  }
  // A request after them: once its span is exported, the probes' would have been too.
  await send(proxy.url, 'GET', '/api/no/such/route', { headers: { 'x-request-id': 'after-probes' } });
  assert.ok(await waitFor(() => collector.spans().find((s) => attribute(s, 'front_proxy.request_id') === 'after-probes')));
  const later = collector.spans().slice(before);
  assert.deepEqual(
    later.filter((s) => /healthz|readyz/.test(String(attribute(s, 'url.path')))),
    [],
    'no probe span',
  );
  assert.deepEqual(
    later.filter((s) => s.kind === CLIENT && attribute(s, 'url.path') === '/'),
    [],
    'no span for the BFF probe',
  );
  assert.deepEqual(
    proxy.logs.entries.filter((e) => /^(probe|ready)-/.test(String(e.reqId))),
    [],
    'probe lines are at debug, below LOG_LEVEL=info',
  );
});

test('redactQuery keeps plain names and replaces every value', () => {
  assert.equal(redactQuery(''), '');
  assert.equal(redactQuery('?a=1&b=&c'), '?a=REDACTED&b=REDACTED&c');
  assert.equal(redactQuery(`?${'x'.repeat(65)}`), '?REDACTED');
  assert.equal(redactQuery('?eyJ.abc.def=1'), '?eyJ.abc.def=REDACTED');
  assert.equal(redactQuery('?filter%5Bname%5D=x&a~b=1'), '?filter%5Bname%5D=REDACTED&a~b=REDACTED');
});

test('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT alone turns tracing on and is used as given (read by the configuration, not the SDK)', async () => {
  await proxy.close();
  const before = collector.paths.length;
  proxy = await startProxy(upstream.url, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/otlp/traces` });
  upstream.on('GET', '/auth/user-profile', { status: 200, json: { user: { id: 7 } } });
  const res = await send(proxy.url, 'GET', '/api/auth/profile', { token: fakeJwt() });
  assert.equal(res.status, 200);
  const call = upstream.requests.findLast((r) => r.path === '/auth/user-profile');
  const [, traceId = '', parentId = ''] = TRACEPARENT.exec(String(call?.headers.traceparent)) ?? [];
  assert.ok(await spansOf(traceId, parentId), `the collector received the spans of trace ${traceId}`);
  assert.ok(collector.paths.slice(before).length > 0);
  assert.deepEqual([...new Set(collector.paths.slice(before))], ['/otlp/traces']);
});
