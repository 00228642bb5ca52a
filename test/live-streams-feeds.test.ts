/**
 * docs/behaviour.md "Live streams", "Shared anonymous feeds", and the sandbox's live feeds through the
 * real proxy (the embedded sandbox serves the BFF): 1,000 anonymous viewers of one sub-path and query
 * share one upstream stream; a `Last-Event-ID` within the replay buffer resumes after it; the upstream
 * stream closes after its last viewer; signed-in streams are never shared; the sandbox's faults
 * (stall, drop mid-event, garbage, burst) end the stream cleanly between events.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import WebSocket from 'ws';
import { createServer } from '../src/app.js';
import { openSse, type SseReader, startStreamUpstream, type StreamUpstream } from './helpers/live-streams.js';
import { fakeJwt, LogCapture, startProxy, type TestProxy } from './helpers/recording-upstream.js';

describe('shared anonymous feeds', () => {
  let upstream: StreamUpstream;
  let proxy: TestProxy;
  before(async () => {
    upstream = await startStreamUpstream();
    proxy = await startProxy(upstream.url, { STREAMS_PER_ADDRESS: '2000', STREAMS_MAX: '3000' });
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
  });

  test('1,000 anonymous viewers of one feed: one upstream stream, every viewer gets every event', async () => {
    const before = upstream.calls.length;
    // Raw requests on an agent without a socket limit: 1,000 connections at once.
    const viewers = await Promise.all(
      Array.from({ length: 1_000 }, () => openSse(proxy.url, '/api/core-sportbook/live/odds?sport=football')),
    );
    assert.equal(upstream.calls.length, before + 1, 'one upstream stream');
    const call = upstream.calls[before];
    assert.ok(call);
    for (let i = 1; i <= 3; i++) call.res.write(`id: ${i}\ndata: tick ${i}\n\n`);
    await Promise.all(viewers.map((v) => v.events(3, 10_000)));
    for (const viewer of viewers) assert.deepEqual(viewer.data(), ['tick 1', 'tick 2', 'tick 3']);
    assert.equal(proxy.app.deps.streams.feeds.size, 1);
    for (const viewer of viewers) viewer.close();
  });

  test('a Last-Event-ID inside the replay buffer resumes after it; without one, a viewer joins from the next event', async () => {
    const next = upstream.calls.length + 1;
    const first = await openSse(proxy.url, '/api/core-sportbook/live/scores');
    const call = await upstream.call(next);
    for (let i = 1; i <= 5; i++) call.res.write(`id: ${i}\ndata: s${i}\n\n`);
    await first.events(5);
    const resumed = await openSse(proxy.url, '/api/core-sportbook/live/scores', { 'last-event-id': '2' });
    const fresh = await openSse(proxy.url, '/api/core-sportbook/live/scores');
    call.res.write('id: 6\ndata: s6\n\n');
    assert.deepEqual(await resumed.events(4), ['s3', 's4', 's5', 's6']);
    assert.deepEqual(await fresh.events(1), ['s6']);
    assert.equal(upstream.calls.length, next, 'still one upstream stream');
    for (const r of [first, resumed, fresh]) r.close();
  });

  test('signed-in streams are never shared', async () => {
    const before = upstream.calls.length;
    const readers: SseReader[] = [];
    for (let i = 0; i < 3; i++)
      readers.push(await openSse(proxy.url, '/api/core-sportbook/live/mine', { cookie: `access_token=${fakeJwt()}` }));
    assert.equal(upstream.calls.length, before + 3);
    for (const r of readers) r.close();
  });
});

test('the upstream stream of a feed closes after its last viewer leaves', async () => {
  const upstream = await startStreamUpstream();
  const logs = new LogCapture();
  const app = await createServer(
    { NODE_ENV: 'test', BFF_BASE_URL: upstream.url, LOAD_SHED_EVENT_LOOP_DELAY_MS: '0', RATE_LIMIT_API_PER_MIN: '0' },
    { logStream: logs },
  );
  try {
    // The linger is 5 s by default; the count of feeds shows when it has gone.
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    const viewer = await openSse(url, '/api/core-sportbook/live/leaving');
    const call = await upstream.call(1);
    assert.equal(app.deps.streams.feeds.size, 1);
    viewer.close();
    await call.closed;
    assert.equal(app.deps.streams.feeds.size, 0);
  } finally {
    await app.close();
    await upstream.close();
  }
});

describe('the sandbox live feeds through the proxy', () => {
  let app: FastifyInstance;
  let url: string;
  before(async () => {
    app = await createServer(
      {
        NODE_ENV: 'test',
        LOG_LEVEL: 'warn',
        STREAM_IDLE_TIMEOUT_MS: '1000',
        LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
        RATE_LIMIT_API_PER_MIN: '0',
      },
      { logStream: new LogCapture() },
    );
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await app.close();
  });

  test('odds as SSE: ids in order, every event whole', async () => {
    const reader = await openSse(url, '/api/core-sportbook/live/odds?interval=20');
    const events = await reader.events(5);
    const seqs = events.slice(0, 5).map((d) => (JSON.parse(d) as { seq: number }).seq);
    assert.deepEqual(seqs, [seqs[0], (seqs[0] as number) + 1, (seqs[0] as number) + 2, (seqs[0] as number) + 3, (seqs[0] as number) + 4]);
    reader.close();
  });

  for (const [fault, expected] of [
    ['stall', 1],
    ['drop', 1],
    ['garbage', 1],
  ] as const) {
    test(`fault=${fault}: the stream ends cleanly after the whole events (${expected}), nothing half sent`, async () => {
      const reader = await openSse(url, `/api/core-sportbook/live/odds?fault=${fault}&interval=20`);
      assert.equal(await reader.ended, 'clean');
      assert.equal(reader.data().length, expected);
      for (const data of reader.data()) JSON.parse(data);
      assert.match(reader.text(), /\n\nretry: \d+\n\n$/);
      assert.ok(!reader.text().includes('xxxx'), 'no garbage passed on');
    });
  }

  test('fault=burst: 2,000 events at once reach a reading browser in order', async () => {
    const reader = await openSse(url, '/api/core-sportbook/live/odds?fault=burst&count=2000&interval=60000');
    const events = await reader.events(2_001, 10_000);
    const seqs = events.map((d) => (JSON.parse(d) as { seq: number }).seq);
    for (let i = 1; i < seqs.length; i++) assert.equal(seqs[i], (seqs[i - 1] as number) + 1);
    reader.close();
  });

  test('odds as a WebSocket: messages, and an echo of what the browser sends', async () => {
    const ws = new WebSocket(`${url.replace('http:', 'ws:')}/api/core-sportbook/live/odds?interval=20`);
    const messages: string[] = [];
    ws.on('message', (data) => messages.push(data.toString()));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send('hi');
    const deadline = Date.now() + 5_000;
    while (!messages.some((m) => m.includes('"echo":"hi"')) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(messages.some((m) => m.includes('"echo":"hi"')));
    assert.ok(messages.filter((m) => m.includes('"seq"')).length >= 1);
    ws.close();
  });

  test('an anonymous stream is answered without asking for one too (the upstream answers text/event-stream)', async () => {
    const text = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(`${url}/api/core-sportbook/live/odds?fault=stall`, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.once('end', () => resolve(body));
      });
      req.once('error', reject);
      req.end();
    });
    assert.match(text, /^:\n\nid: \d+\nevent: odds\n/);
    assert.match(text, /retry: \d+\n\n$/);
  });
});
