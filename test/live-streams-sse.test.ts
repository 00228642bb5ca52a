/**
 * docs/behaviour.md "Live streams", "Server-Sent Events": the event-stream parts (table-driven), then
 * the real proxy on loopback in front of an upstream whose streams the tests write by hand — events
 * delivered one by one as they come, with and without a session; the token echoed by the upstream
 * (split across chunks) never reaching the browser; `Last-Event-ID` forwarded; `UPSTREAM_TIMEOUT_MS`
 * for the headers only; the idle and lifetime limits ending the stream between events.
 */
import assert from 'node:assert/strict';
import { after, before, describe, mock, test } from 'node:test';
import type { Dispatcher } from 'undici';
import { Lifetimes } from '../src/streams/lifetimes.js';
import { EventScrubber, EventSplitter, eventId, OversizedEventError, retryHint, scrubEvent } from '../src/streams/sse.js';
import { rawHeadReleased } from '../src/streams/upstream.js';
import { openSse, startStreamUpstream, type StreamUpstream } from './helpers/live-streams.js';
import { fakeJwt, startProxy, type TestProxy } from './helpers/recording-upstream.js';

describe('EventSplitter', () => {
  const cases: [string, string[], string[]][] = [
    ['LF', ['data: 1\n\ndata: 2\n\n'], ['data: 1\n\n', 'data: 2\n\n']],
    ['CRLF', ['data: 1\r\n\r\n'], ['data: 1\r\n\r']],
    ['CR', ['data: 1\r\rdata: 2\r\r'], ['data: 1\r\r', 'data: 2\r\r']],
    ['an event split across chunks', ['da', 'ta: 1\n', '\n'], ['data: 1\n\n']],
    ['a CRLF split across chunks', ['data: 1\r', '\n\r', '\ndata: 2\n\n'], ['data: 1\r\n\r', 'data: 2\n\n']],
    ['several lines', ['id: 7\nevent: odds\ndata: a\ndata: b\n\n'], ['id: 7\nevent: odds\ndata: a\ndata: b\n\n']],
    ['stray blank lines between events dropped', ['\n\n\ndata: 1\n\n\n'], ['data: 1\n\n']],
    ['a comment is an event', [':\n\n'], [':\n\n']],
    ['no end yet', ['data: 1\n'], []],
  ];
  for (const [name, chunks, expected] of cases) {
    test(name, () => {
      const split = new EventSplitter();
      const out = chunks.flatMap((chunk) => split.push(Buffer.from(chunk)).map((b) => b.toString()));
      assert.deepEqual(out, expected);
    });
  }
  test('any cut of a stream into chunks gives the events of the whole (LF, CR, CRLF, blank lines; seeded)', () => {
    let seed = 51;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const ends = ['\n', '\r', '\r\n'];
    for (let round = 0; round < 200; round++) {
      let text = '';
      for (let e = 0; e < 1 + Math.floor(random() * 6); e++) {
        if (random() < 0.2) text += ends[Math.floor(random() * 3)] as string;
        for (let line = 0; line < 1 + Math.floor(random() * 3); line++) {
          text += `data: ${'x'.repeat(Math.floor(random() * 40))}${ends[Math.floor(random() * 3)] as string}`;
        }
        text += ends[Math.floor(random() * 3)] as string;
      }
      const whole = new EventSplitter().push(Buffer.from(text)).map(String);
      const split = new EventSplitter();
      const cut: string[] = [];
      for (let at = 0; at < text.length;) {
        const size = 1 + Math.floor(random() * 12);
        cut.push(...split.push(Buffer.from(text.slice(at, at + size))).map(String));
        at += size;
      }
      assert.deepEqual(cut, whole, JSON.stringify(text));
      // Every event ends with the blank line that ends it.
      for (const event of whole) assert.match(event, /(\r\n|\r|\n)(\r\n|\r|\n)$|(\r\n|\r|\n)\r$/);
    }
  });
  test('more than the limit without an end is refused', () => {
    const split = new EventSplitter(16);
    split.push(Buffer.from('data: 12345'));
    assert.throws(() => split.push(Buffer.from('67890123')), OversizedEventError);
  });
});

describe('event parts', () => {
  test('eventId: the last id field; none; a NUL ignored', () => {
    assert.equal(eventId(Buffer.from('id: 42\ndata: x\n\n')), '42');
    assert.equal(eventId(Buffer.from('id:1\nid:2\n\n')), '2');
    assert.equal(eventId(Buffer.from('data: x\n\n')), undefined);
    assert.equal(eventId(Buffer.from('id: a\0b\n\n')), undefined);
  });
  test('scrubEvent: every secret, and a value written with JSON \\u escapes', () => {
    const secret = 'eyJhbGciOiJIUzI1NiJ9.payload-part.signature';
    assert.equal(scrubEvent(Buffer.from(`data: ${secret}\n\n`), [secret]).toString(), 'data: [redacted]\n\n');
    const escaped = JSON.stringify({ t: secret }).replace('eyJ', '\\u0065yJ');
    assert.equal(scrubEvent(Buffer.from(`data: ${escaped}\n\n`), [secret]).toString(), 'data: {"t":"[redacted]"}\n\n');
    const plain = Buffer.from('data: nothing\n\n');
    assert.equal(scrubEvent(plain, [secret]), plain);
  });
  test('EventScrubber: what scrubEvent gives, for each kind of event; the same buffer when nothing is to scrub', () => {
    const secret = 'eyJhbGciOiJIUzI1NiJ9.payload-part.signature';
    const encoded = Buffer.from(secret).toString('base64');
    const escaped = JSON.stringify({ t: secret }).replace('eyJ', '\\u0065yJ');
    const events = [
      'data: nothing\n\n',
      `data: ${secret}\n\n`,
      `id: 1\ndata: {"a":"${secret}","b":"${secret}"}\n\n`,
      `data: ${encoded}\n\n`,
      `data: ${escaped}\n\n`,
      'data: {"text":"caf\\u00e9"}\n\n',
      `data: ${secret.slice(0, 20)}\n\n`,
    ];
    // A header's value is Latin-1 text: one with a byte over 0x7f is found and scrubbed as well.
    const latin1 = `${secret}-caf\u00e9`;
    events.push(`data: ${latin1}\n\n`);
    for (const secrets of [[secret], [secret, encoded], [], ['short'], [latin1]]) {
      const scrubber = new EventScrubber(secrets);
      for (const text of events) {
        const event = Buffer.from(text);
        const scrubbed = scrubber.scrub(event);
        assert.equal(scrubbed.toString(), scrubEvent(event, secrets).toString(), `${text} with ${secrets.length} secrets`);
        if (scrubbed.toString() === text) assert.equal(scrubbed, event, 'unchanged: the same buffer');
      }
    }
    assert.equal(new EventScrubber([secret, encoded]).scrub(Buffer.from(`data: ${encoded}\n\n`)).toString(), 'data: [redacted]\n\n');
    assert.equal(new EventScrubber([latin1]).scrub(Buffer.from(`data: ${latin1}\n\n`)).toString(), 'data: [redacted]\n\n');
  });
  test('retryHint: drawn between its bounds', () => {
    assert.equal(retryHint(1000, 5000, () => 0).toString(), 'retry: 1000\n\n');
    assert.equal(retryHint(1000, 5000, () => 0.5).toString(), 'retry: 3000\n\n');
  });
});

describe('Lifetimes', () => {
  test('one timer: each holder expires its lifetime after its start, in order; a stopped one never; one started by an expire gets its whole lifetime', () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
    try {
      const lifetimes = new Lifetimes(1_000, () => Date.now());
      const expired: string[] = [];
      const holder = (name: string, then?: () => void) => ({
        expire: () => {
          expired.push(`${name}@${Date.now()}`);
          then?.();
        },
      });
      const a = holder('a', () => lifetimes.start(holder('d')));
      const b = holder('b');
      const c = holder('c');
      lifetimes.start(a);
      mock.timers.tick(300);
      lifetimes.start(b);
      mock.timers.tick(300);
      lifetimes.start(c);
      mock.timers.tick(200);
      lifetimes.stop(b);
      lifetimes.stop(b);
      const steps: [number, string[]][] = [
        [199, []],
        [1, ['a@1000']],
        [599, ['a@1000']],
        [1, ['a@1000', 'c@1600']],
        [399, ['a@1000', 'c@1600']],
        [1, ['a@1000', 'c@1600', 'd@2000']],
      ];
      for (const [ms, want] of steps) {
        mock.timers.tick(ms);
        assert.deepEqual(expired, want, `at ${Date.now()} ms`);
      }
      assert.equal(lifetimes.size, 0);
      lifetimes.start(b);
      lifetimes.stop(b);
      mock.timers.tick(5_000);
      assert.deepEqual(expired, ['a@1000', 'c@1600', 'd@2000'], 'stopped before its end: never expires');
    } finally {
      mock.timers.reset();
    }
  });
});

describe('the stream pool', () => {
  test("rawHeadReleased: the answer's start reaches the handlers with its head, then the controller lets go of the raw head", () => {
    const seen: string[] = [];
    const raw = [Buffer.from('content-type'), Buffer.from('text/event-stream')];
    const controller = { rawHeaders: raw } as unknown as Dispatcher.DispatchController;
    const inner: Dispatcher.DispatchHandler = {
      onResponseStart: (c, status, headers) => seen.push(`start ${status} ${String(headers['content-type'])} raw:${c.rawHeaders === raw}`),
      onResponseData: (_c, chunk) => seen.push(`data ${chunk.toString()}`),
      onResponseEnd: () => seen.push('end'),
    };
    let outer: Dispatcher.DispatchHandler | undefined;
    const dispatch = rawHeadReleased()((_options, handler) => {
      outer = handler;
      return true;
    });
    dispatch({ method: 'GET', path: '/' }, inner);
    outer?.onResponseStart?.(controller, 200, { 'content-type': 'text/event-stream' }, 'OK');
    assert.equal(controller.rawHeaders, null);
    outer?.onResponseData?.(controller, Buffer.from(':\n\n'));
    outer?.onResponseEnd?.(controller, {});
    assert.deepEqual(seen, ['start 200 text/event-stream raw:true', 'data :\n\n', 'end']);
  });
});

describe('event streams through the proxy', () => {
  let upstream: StreamUpstream;
  let proxy: TestProxy;
  before(async () => {
    upstream = await startStreamUpstream();
    proxy = await startProxy(upstream.url, { UPSTREAM_TIMEOUT_MS: '1000', STREAM_IDLE_TIMEOUT_MS: '1000', STREAM_MAX_LIFETIME_MS: '3000' });
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
  });

  test('with a session: event by event, the token scrubbed across chunks, Last-Event-ID and the Bearer forwarded', async () => {
    const jwt = fakeJwt();
    const next = upstream.calls.length + 1;
    const reader = await openSse(proxy.url, '/api/core-sportbook/live/bets?x=1', {
      cookie: `theme=dark; access_token=${jwt}`,
      'last-event-id': '41',
    });
    const call = await upstream.call(next);
    assert.equal(reader.status, 200);
    assert.equal(reader.headers['cache-control'], 'no-store');
    assert.equal(reader.headers['x-accel-buffering'], 'no');
    assert.equal(reader.headers['content-security-policy'], "sandbox; default-src 'none'");
    assert.equal(reader.headers['x-content-type-options'], 'nosniff');
    assert.equal(call.path, '/core-sportbook/live/bets?x=1');
    assert.equal(call.headers.authorization, `Bearer ${jwt}`);
    assert.equal(call.headers.cookie, 'theme=dark');
    assert.equal(call.headers['last-event-id'], '41');
    assert.equal(call.headers.accept, 'text/event-stream');
    call.res.write('id: 42\ndata: first\n\n');
    assert.deepEqual(await reader.events(1), ['first']);
    // The token in two chunks, the second after the first was delivered on its own.
    const half = Math.floor(jwt.length / 2);
    call.res.write(`id: 43\ndata: {"echo":"${jwt.slice(0, half)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(reader.data(), ['first'], 'half an event is not sent');
    call.res.write(`${jwt.slice(half)}"}\n\n`);
    assert.deepEqual(await reader.events(2), ['first', '{"echo":"[redacted]"}']);
    assert.ok(!reader.text().includes(jwt.slice(0, 20)));
    reader.close();
    await call.closed;
  });

  test('with a session and no Accept: an upstream event stream still streams event by event, scrubbed, past UPSTREAM_TIMEOUT_MS', async () => {
    const jwt = fakeJwt();
    const first = upstream.calls.length + 1;
    const reader = await openSse(proxy.url, '/api/core-sportbook/live/scores', { accept: undefined, cookie: `access_token=${jwt}` });
    // The passthrough's own call saw an event stream; the live streams opened it again on their connection.
    const asked = await upstream.call(first);
    assert.notEqual(asked.headers.accept, 'text/event-stream');
    await asked.closed;
    const call = await upstream.call(first + 1);
    assert.equal(call.headers.accept, 'text/event-stream');
    assert.equal(reader.status, 200);
    assert.equal(reader.headers['cache-control'], 'no-store');
    assert.equal(call.headers.authorization, `Bearer ${jwt}`);
    call.res.write('id: 1\ndata: one\n\n');
    assert.deepEqual(await reader.events(1), ['one'], 'the first event arrives while the upstream goes on');
    const half = Math.floor(jwt.length / 2);
    call.res.write(`id: 2\ndata: {"echo":"${jwt.slice(0, half)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(reader.data(), ['one'], 'half an event is not sent');
    call.res.write(`${jwt.slice(half)}"}\n\n`);
    assert.deepEqual(await reader.events(2), ['one', '{"echo":"[redacted]"}']);
    // Past UPSTREAM_TIMEOUT_MS (1 s), which a buffered answer would have run into; comments keep it under STREAM_IDLE_TIMEOUT_MS.
    const keepAlive = setInterval(() => call.res.write(':\n\n'), 250);
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    clearInterval(keepAlive);
    call.res.write('id: 3\ndata: three\n\n');
    assert.deepEqual(await reader.events(3), ['one', '{"echo":"[redacted]"}', 'three']);
    assert.ok(!reader.text().includes(jwt.slice(0, 20)));
    assert.ok(!reader.text().includes(jwt.slice(-20)));
    reader.close();
    await call.closed;
  });

  test('UPSTREAM_TIMEOUT_MS bounds the headers only; the lifetime ends each stream between events with a retry hint, in the order they opened', async () => {
    const next = upstream.calls.length + 1;
    const reader = await openSse(proxy.url, '/api/core-sportbook/live/long', { cookie: `access_token=${fakeJwt()}` });
    const call = await upstream.call(next);
    let n = 0;
    const ticks = setInterval(() => call.res.write(`data: ${++n}\n\n`), 200);
    const ends: string[] = [];
    try {
      // A second stream, opened later, ends after the first: each lives its own lifetime.
      await reader.events(3, 4_000);
      const later = await openSse(proxy.url, '/api/core-sportbook/live/later', { cookie: `access_token=${fakeJwt()}` });
      const laterCall = await upstream.call(next + 1);
      const laterTicks = setInterval(() => laterCall.res.write(`data: ${++n}\n\n`), 200);
      try {
        // Past UPSTREAM_TIMEOUT_MS (1 s) the events still flow.
        await reader.events(8, 4_000);
        await Promise.all([reader.ended.then((how) => ends.push(`first ${how}`)), later.ended.then((how) => ends.push(`later ${how}`))]);
      } finally {
        clearInterval(laterTicks);
      }
      assert.match(later.text(), /\n\nretry: \d+\n\n$/);
      await laterCall.closed;
    } finally {
      clearInterval(ticks);
    }
    assert.deepEqual(ends, ['first clean', 'later clean']);
    assert.match(reader.text(), /\n\nretry: \d+\n\n$/);
    const retry = Number(/retry: (\d+)/.exec(reader.text())?.[1]);
    assert.ok(retry >= 1000 && retry <= 5000, `retry ${retry}`);
    await call.closed;
  });

  test('upstream silence over STREAM_IDLE_TIMEOUT_MS ends the stream cleanly; the half event in hand is dropped', async () => {
    const next = upstream.calls.length + 1;
    const reader = await openSse(proxy.url, '/api/core-sportbook/live/idle', { cookie: `access_token=${fakeJwt()}` });
    const call = await upstream.call(next);
    call.res.write('data: one\n\ndata: half');
    assert.equal(await reader.ended, 'clean');
    assert.deepEqual(reader.data(), ['one']);
    assert.ok(!reader.text().includes('half'));
    await call.closed;
  });

  test('no headers within UPSTREAM_TIMEOUT_MS: 504 upstream_timeout', async () => {
    upstream.answer = { kind: 'silent' };
    try {
      const reader = await openSse(proxy.url, '/api/core-sportbook/live/hung', { cookie: `access_token=${fakeJwt()}` });
      assert.equal(reader.status, 504);
      await reader.ended;
      assert.equal(JSON.parse(reader.text()).error, 'upstream_timeout');
    } finally {
      upstream.answer = { kind: 'stream' };
    }
  });

  test('an upstream failure answers the envelope; a 401 body passes through', async () => {
    upstream.answer = { kind: 'status', status: 401, body: { reason: 'token_expired' } };
    try {
      const reader = await openSse(proxy.url, '/api/core-sportbook/live/bets', { cookie: `access_token=${fakeJwt()}` });
      assert.equal(reader.status, 401);
      await reader.ended;
      assert.deepEqual(JSON.parse(reader.text()), { reason: 'token_expired' });
      assert.ok(reader.headers['x-error-ref']);
    } finally {
      upstream.answer = { kind: 'stream' };
    }
  });

  test('without a session: events flow, nothing of the browser goes upstream', async () => {
    const next = upstream.calls.length + 1;
    const reader = await openSse(proxy.url, '/api/core-sportbook/live/odds?sport=football', { cookie: 'theme=dark' });
    const call = await upstream.call(next);
    assert.equal(call.headers.cookie, undefined);
    assert.equal(call.headers.authorization, undefined);
    call.res.write('id: 1\ndata: a\n\n');
    call.res.write('id: 2\ndata: b\n\n');
    assert.deepEqual(await reader.events(2), ['a', 'b']);
    reader.close();
  });
});
