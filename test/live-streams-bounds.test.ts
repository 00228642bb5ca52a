/**
 * docs/behaviour.md "Live streams", "Bounds", over real sockets: the bounds per session, per client
 * address (IPv6 by its /64) and per process, each refused with the envelope and `Retry-After` before
 * any upstream connection; open streams outside load shedding's count and outside the request
 * bulkheads; a consumer slower than its feed disconnected, its buffer bounded.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { StreamBounds } from '../src/streams/bounds.js';
import { openSse, type SseReader, startStreamUpstream, type StreamUpstream } from './helpers/live-streams.js';
import { fakeJwt, send, startProxy, type TestProxy } from './helpers/recording-upstream.js';

describe('StreamBounds', () => {
  test('session, address (/64) and process bounds; a release gives the place back once', () => {
    const bounds = new StreamBounds({ perSession: 1, perAddress: 2, max: 3 });
    const a = bounds.take('s1', '2001:db8:1:2::1');
    assert.ok(!('status' in a));
    assert.equal((bounds.take('s1', '10.0.0.1') as { bound: string }).bound, 'session');
    assert.ok(!('status' in bounds.take(undefined, '2001:db8:1:2:ffff::9')));
    assert.equal((bounds.take(undefined, '2001:db8:1:2::77') as { bound: string }).bound, 'address');
    assert.ok(!('status' in bounds.take(undefined, '2001:db8:1:3::1')));
    assert.equal((bounds.take(undefined, '10.0.0.2') as { status: number }).status, 503);
    a.release();
    a.release();
    assert.equal(bounds.open, 2);
    assert.ok(!('status' in bounds.take('s1', '10.0.0.3')));
  });
});

describe('bounds through the proxy', () => {
  let upstream: StreamUpstream;
  let proxy: TestProxy;
  const readers: SseReader[] = [];
  before(async () => {
    upstream = await startStreamUpstream();
    proxy = await startProxy(upstream.url, {
      STREAMS_PER_SESSION: '2',
      STREAMS_PER_ADDRESS: '3',
      STREAMS_MAX: '7',
      TRUSTED_PROXIES: '127.0.0.1',
      LOAD_SHED_MAX_IN_FLIGHT: '2',
      UPSTREAM_ENDPOINT_MAX_IN_FLIGHT: '1',
      UPSTREAM_ENDPOINT_QUEUE: '0',
    });
  });
  after(async () => {
    for (const reader of readers) reader.close();
    await proxy.close();
    await upstream.close();
  });
  const open = async (path: string, headers: Record<string, string>) => {
    const reader = await openSse(proxy.url, path, headers);
    readers.push(reader);
    return reader;
  };

  test('per session: the third stream of a session is refused 429 before anything goes upstream', async () => {
    const jwt = fakeJwt();
    const headers = { cookie: `access_token=${jwt}`, 'x-forwarded-for': '10.1.0.1' };
    const before = upstream.calls.length;
    assert.equal((await open('/api/core-sportbook/live/a', headers)).status, 200);
    assert.equal((await open('/api/core-sportbook/live/b', { ...headers, 'x-forwarded-for': '10.1.0.2' })).status, 200);
    const refused = await open('/api/core-sportbook/live/c', { ...headers, 'x-forwarded-for': '10.1.0.3' });
    await refused.ended;
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '5');
    assert.ok(refused.headers['x-error-ref']);
    assert.equal(JSON.parse(refused.text()).error, 'rate_limited');
    assert.equal(upstream.calls.length, before + 2);
  });

  test('load shedding does not count open streams; the request bulkhead is not held by them', async () => {
    // LOAD_SHED_MAX_IN_FLIGHT is 2 and the endpoint's limit 1 without a queue: with two streams open
    // (above), one more opens and an ordinary read of the same endpoint still answers.
    const third = await open('/api/core-sportbook/live/d', { cookie: `access_token=${fakeJwt()}`, 'x-forwarded-for': '10.2.0.1' });
    assert.equal(third.status, 200);
    upstream.byPath.set('/core-sportbook/events', { kind: 'status', status: 200, body: { data: [] } });
    const read = await send(proxy.url, 'GET', '/api/core-sportbook/events');
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.json, { data: [] });
  });

  test('per address: IPv6 counted by its /64 (another host of it is refused 429)', async () => {
    const net = '2001:db8:7:7';
    for (const host of ['1', '2', '3']) {
      const reader = await open(`/api/core-sportbook/live/odds?n=${host}`, { 'x-forwarded-for': `${net}::${host}` });
      assert.equal(reader.status, 200);
    }
    const refused = await open('/api/core-sportbook/live/odds?n=4', { 'x-forwarded-for': `${net}:ffff::4` });
    await refused.ended;
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '5');
  });

  test('per process: STREAMS_MAX reached, 503 overloaded with Retry-After', async () => {
    // Open now: 2 (session) + 1 (load shedding) + 3 (address) = 6 of 7.
    assert.equal((await open('/api/core-sportbook/live/odds?n=8', { 'x-forwarded-for': '10.9.0.8' })).status, 200);
    const refused = await open('/api/core-sportbook/live/odds?n=9', { 'x-forwarded-for': '10.9.0.9' });
    await refused.ended;
    assert.equal(refused.status, 503);
    assert.equal(JSON.parse(refused.text()).error, 'overloaded');
    assert.equal(refused.headers['retry-after'], '5');
  });
});

describe('a slow consumer', () => {
  let upstream: StreamUpstream;
  let proxy: TestProxy;
  before(async () => {
    upstream = await startStreamUpstream();
    proxy = await startProxy(upstream.url, { METRICS_PORT: '0' });
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
  });

  test('metrics: streams_open while open; streams_ended_total and stream_duration_seconds once ended; no request latency', async () => {
    const registry = proxy.app.metrics?.registry;
    assert.ok(registry);
    // The sample of `name` whose labels include `labels`, read from the exposition text (0 when absent).
    const value = async (name: string, labels: Record<string, string>) => {
      for (const line of (await registry.metrics()).split('\n')) {
        const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
        if (match?.[1] !== name) continue;
        const given = match[2] ?? '';
        if (Object.entries(labels).every(([k, v]) => given.includes(`${k}="${v}"`))) return Number(match[3]);
      }
      return 0;
    };
    const next = upstream.calls.length + 1;
    const reader = await openSse(proxy.url, '/api/core-sportbook/live/metered', { cookie: `access_token=${fakeJwt()}` });
    const call = await upstream.call(next);
    assert.equal(await value('front_proxy_streams_open', { kind: 'sse' }), 1);
    call.res.end();
    await reader.ended;
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(await value('front_proxy_streams_open', { kind: 'sse' }), 0);
    assert.equal(await value('front_proxy_streams_ended_total', { kind: 'sse', reason: 'upstream' }), 1);
    assert.equal(await value('front_proxy_stream_duration_seconds_count', { kind: 'sse' }), 1);
    assert.equal(await value('front_proxy_http_request_duration_seconds_count', { route: '/api/core-sportbook/*' }), 0);
  });

  test('a browser that stops reading is disconnected once its buffer is full; the proxy holds no more', async () => {
    const next = upstream.calls.length + 1;
    const socket = connect(Number(new URL(proxy.url).port), '127.0.0.1');
    socket.write(
      `GET /api/core-sportbook/live/burst HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nCookie: access_token=${fakeJwt()}\r\n\r\n`,
    );
    socket.pause();
    const call = await upstream.call(next);
    const rssBefore = process.memoryUsage().rss;
    const event = `data: ${'x'.repeat(1000)}\n\n`;
    let written = 0;
    let closed = false;
    void call.closed.then(() => {
      closed = true;
    });
    // Up to 64 MiB, as fast as the proxy takes it.
    while (!closed && written < 64 * 1024 * 1024) {
      const chunk = event.repeat(64);
      written += chunk.length;
      if (!call.res.write(chunk)) await new Promise((resolve) => call.res.once('drain', resolve).once('close', resolve));
    }
    assert.ok(closed, `the proxy closed the upstream stream (after ${written} bytes)`);
    assert.ok(written < 32 * 1024 * 1024, `closed after ${written} bytes`);
    const growth = process.memoryUsage().rss - rssBefore;
    assert.ok(growth < 48 * 1024 * 1024, `RSS grew ${growth} bytes`);
    const metric = await proxy.app.metrics?.registry.getSingleMetric('front_proxy_streams_ended_total')?.get();
    const slow = metric?.values.find((v) => v.labels.kind === 'sse' && v.labels.reason === 'slow_consumer');
    assert.equal(slow?.value, 1);
    socket.destroy();
  });
});
