/**
 * The browser SDK's live feeds (packages/browser/src/browser/live.ts): the URL rule and the backoff
 * (table-driven); `liveFeed` over a fake `EventSource` (events by type, a refusal retried after the
 * jittered backoff, `session-ended` ending the feed for good and running the forced-logout flow once,
 * the signal); `liveSocket` over real sockets through the proxy and the sandbox with `ws`'s client
 * (messages, and a logout's 4001 `session_ended` ending the feed with the forced-logout flow); the
 * client's own `client.sports.live` / `client.sports.liveSocket` (one forced logout for every feed
 * a session end closed, none for a session still valid).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import WebSocket from 'ws';
import {
  backoffDelay,
  createProxyClient,
  type EventSourceLike,
  type LiveEndReason,
  type LiveEvent,
  liveFeed,
  liveSocket,
  liveUrl,
  memoryStorage,
  type WebSocketConstructor,
} from '../packages/browser/src/browser/index.js';
import { createServer } from '../src/app.js';
import { fakeJwt, LogCapture, send } from './helpers/recording-upstream.js';

describe('liveUrl and backoffDelay', () => {
  const urls: [string, string][] = [
    ['live/odds', '/api/core-sportbook/live/odds'],
    ['/live/odds?sport=football', '/api/core-sportbook/live/odds?sport=football'],
  ];
  for (const [subPath, url] of urls) test(`${subPath} → ${url}`, () => assert.equal(liveUrl(subPath), url));
  for (const bad of ['', '../auth/logout', 'live/%2e%2e/x', 'a/%2Fb', 'live/./x']) {
    test(`refuses ${JSON.stringify(bad)}`, () => assert.throws(() => liveUrl(bad), TypeError));
  }
  test('full jitter, doubling from 1 s up to 30 s', () => {
    assert.deepEqual(
      [0, 1, 2, 5, 10].map((n) => backoffDelay(n, () => 0.999999)),
      [1000, 2000, 4000, 30000, 30000],
    );
    assert.equal(
      backoffDelay(3, () => 0),
      0,
    );
  });
});

/** A fake EventSource the test drives. */
class FakeSource implements EventSourceLike {
  static made: FakeSource[] = [];
  readyState = 0;
  onopen: ((event: unknown) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  readonly listeners = new Map<string, ((event: { data: string; lastEventId?: string }) => void)[]>();
  closed = false;
  constructor(readonly url: string) {
    FakeSource.made.push(this);
  }
  addEventListener(type: string, listener: (event: { data: string; lastEventId?: string }) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  close(): void {
    this.closed = true;
    this.readyState = 2;
  }
  emit(type: string, data: string, lastEventId = ''): void {
    for (const listener of this.listeners.get(type) ?? []) listener({ data, lastEventId });
  }
}

describe('liveFeed over an EventSource', () => {
  test('events by type; a refusal retried after the backoff; session-ended ends it and asks the session once', async () => {
    FakeSource.made = [];
    const events: LiveEvent[] = [];
    const ends: LiveEndReason[] = [];
    const requests: string[] = [];
    const client = { request: async (method: string, path: string) => void requests.push(`${method} ${path}`) } as never;
    liveFeed(client, 'live/bets', {
      EventSource: FakeSource,
      types: ['odds'],
      random: () => 0,
      onEvent: (e) => events.push(e),
      onEnd: (r) => ends.push(r),
    });
    const first = FakeSource.made[0] as FakeSource;
    assert.equal(first.url, '/api/core-sportbook/live/bets');
    first.onopen?.({});
    first.emit('odds', '{"a":1}', '7');
    first.emit('message', 'plain');
    assert.deepEqual(events, [
      { type: 'odds', data: '{"a":1}', id: '7' },
      { type: 'message', data: 'plain', id: '' },
    ]);
    // A reconnecting stream (CONNECTING) is the browser's business; a closed one is retried.
    first.readyState = 0;
    first.onerror?.({});
    assert.equal(FakeSource.made.length, 1);
    first.readyState = 2;
    first.onerror?.({});
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(FakeSource.made.length, 2);
    const second = FakeSource.made[1] as FakeSource;
    second.emit('session-ended', '{"reason":"logout"}');
    second.emit('odds', 'late');
    assert.deepEqual(ends, ['session_ended']);
    assert.ok(second.closed);
    assert.equal(events.length, 2);
    assert.deepEqual(requests, ['GET /api/auth/profile?check_spa_again=1']);
  });

  test('the signal ends it; without EventSource (server-side rendering) it ends as unsupported', () => {
    FakeSource.made = [];
    const ends: LiveEndReason[] = [];
    const controller = new AbortController();
    const client = { request: async () => undefined } as never;
    liveFeed(client, 'live/odds', {
      EventSource: FakeSource,
      signal: controller.signal,
      onEvent: () => undefined,
      onEnd: (r) => ends.push(r),
    });
    controller.abort();
    assert.ok((FakeSource.made[0] as FakeSource).closed);
    liveFeed(client, 'live/odds', { onEvent: () => undefined, onEnd: (r) => ends.push(r) });
    assert.deepEqual(ends, ['aborted', 'unsupported']);
  });
});

/** A fake WebSocket the test drives. */
class FakeSocket {
  static made: FakeSocket[] = [];
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: ((event: { code: number; reason: string }) => void) | null = null;
  readonly sent: string[] = [];
  constructor(readonly url: string) {
    FakeSocket.made.push(this);
  }
  close(): void {
    this.onclose?.({ code: 1000, reason: '' });
  }
  send(data: string): void {
    this.sent.push(data);
  }
}

describe('client.sports.live and client.sports.liveSocket', () => {
  /** A signed-in client whose session call answers `profile` (the forced-logout flow's question). */
  function signedInClient(profile: Response) {
    const storage = memoryStorage();
    storage.setItem('front-proxy:session', JSON.stringify({ status: 'signedIn', expiresAt: null }));
    const asked: string[] = [];
    const forced: string[] = [];
    const fetch = (async (input: string | URL | Request) => {
      const { pathname, search } = new URL(String(input));
      asked.push(`${pathname}${search}`);
      if (pathname === '/api/auth/profile') return profile.clone();
      if (pathname === '/api/auth/logout')
        return new Response('{"ok":true}', { status: 200, headers: { 'content-type': 'application/json' } });
      return new Response(null, { status: 204 });
    }) as typeof globalThis.fetch;
    const client = createProxyClient({
      baseUrl: 'https://casino.example',
      fetch,
      sendBeacon: () => true,
      storage,
      checkSession: false,
      locale: 'en',
      onForcedLogout: (ref) => forced.push(ref),
    });
    return { client, asked, forced };
  }
  const refused = () => new Response('{"reason":"token_expired"}', { status: 401, headers: { 'content-type': 'application/json' } });

  test('both feeds of one client end on session-ended: one forced logout for the two', async () => {
    FakeSource.made = [];
    FakeSocket.made = [];
    const { client, asked, forced } = signedInClient(refused());
    const events: string[] = [];
    const ends: LiveEndReason[] = [];
    const feed = client.sports.live('live/bets?x=1', {
      EventSource: FakeSource,
      baseUrl: 'https://casino.example',
      onEvent: (e) => events.push(`sse ${e.data}`),
      onEnd: (r) => ends.push(r),
    });
    const socket = client.sports.liveSocket('live/bets', {
      WebSocket: FakeSocket as unknown as WebSocketConstructor,
      baseUrl: 'https://casino.example',
      onEvent: (e) => events.push(`ws ${e.data}`),
      onEnd: (r) => ends.push(r),
    });
    const source = FakeSource.made[0] as FakeSource;
    const ws = FakeSocket.made[0] as FakeSocket;
    assert.equal(source.url, 'https://casino.example/api/core-sportbook/live/bets?x=1');
    assert.equal(ws.url, 'wss://casino.example/api/core-sportbook/live/bets');
    source.onopen?.({});
    ws.onopen?.({});
    source.emit('message', 'one', '1');
    ws.onmessage?.({ data: 'two' });
    assert.equal(socket.send('hi'), true);
    assert.deepEqual(ws.sent, ['hi']);
    source.emit('session-ended', '{"reason":"logout"}');
    ws.onclose?.({ code: 4001, reason: 'session_ended' });
    assert.deepEqual(ends, ['session_ended', 'session_ended']);
    assert.equal(socket.send('late'), false);
    feed.close();
    const deadline = Date.now() + 2_000;
    while (forced.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(events, ['sse one', 'ws two']);
    assert.equal(asked.filter((path) => path === '/api/auth/profile?check_spa_again=1').length, 2, 'each feed asks the session afresh');
    assert.equal(forced.length, 1, 'one forced logout for the browser');
    assert.equal(client.hasSession, false);
  });

  test('signed in, a refused reconnection asks the session: refused, the feed ends session_ended with one forced logout; valid, it reconnects', async () => {
    FakeSource.made = [];
    FakeSocket.made = [];
    const { client, asked, forced } = signedInClient(refused());
    const ends: LiveEndReason[] = [];
    client.sports.live('live/bets', { EventSource: FakeSource, random: () => 0, onEvent: () => undefined, onEnd: (r) => ends.push(r) });
    client.sports.liveSocket('live/bets', {
      WebSocket: FakeSocket as unknown as WebSocketConstructor,
      baseUrl: 'https://casino.example',
      random: () => 0,
      onEvent: () => undefined,
      onEnd: (r) => ends.push(r),
    });
    // The EventSource gives up (an HTTP error: its status is not readable); the socket's handshake fails (1006).
    const source = FakeSource.made[0] as FakeSource;
    source.readyState = 2;
    source.onerror?.({});
    (FakeSocket.made[0] as FakeSocket).onclose?.({ code: 1006, reason: '' });
    const deadline = Date.now() + 2_000;
    while (ends.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.deepEqual(ends, ['session_ended', 'session_ended']);
    assert.equal(forced.length, 1);
    assert.equal(
      asked.filter((path) => path === '/api/auth/profile?check_spa_again=1').length,
      2,
      'asked once per feed, not again at the end',
    );
    assert.equal(FakeSource.made.length, 1, 'no reconnection');

    FakeSource.made = [];
    const valid = signedInClient(new Response('{"user":{}}', { status: 200, headers: { 'content-type': 'application/json' } }));
    const feed = valid.client.sports.live('live/bets', { EventSource: FakeSource, random: () => 0, onEvent: () => undefined });
    const first = FakeSource.made[0] as FakeSource;
    first.readyState = 2;
    first.onerror?.({});
    while (FakeSource.made.length < 2 && Date.now() < deadline + 2_000) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(FakeSource.made.length, 2, 'a still-valid session reconnects after the backoff');
    assert.deepEqual(valid.forced, []);
    feed.close();
  });

  test('a session still valid when the feed ended stays', async () => {
    FakeSource.made = [];
    const { client, forced } = signedInClient(
      new Response('{"user":{}}', { status: 200, headers: { 'content-type': 'application/json' } }),
    );
    const ended = new Promise<LiveEndReason>((resolve) =>
      client.sports.live('live/bets', { EventSource: FakeSource, onEvent: () => undefined, onEnd: resolve }),
    );
    (FakeSource.made[0] as FakeSource).emit('session-ended', '{"reason":"refused"}');
    assert.equal(await ended, 'session_ended');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(forced, []);
    assert.equal(client.hasSession, true);
  });
});

describe('liveSocket through the proxy and the sandbox', () => {
  let app: FastifyInstance;
  let url: string;
  before(async () => {
    app = await createServer(
      { NODE_ENV: 'test', LOG_LEVEL: 'warn', LOAD_SHED_EVENT_LOOP_DELAY_MS: '0', RATE_LIMIT_API_PER_MIN: '0' },
      { logStream: new LogCapture() },
    );
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await app.close();
  });

  test('messages arrive; a logout ends the feed with session_ended and asks the session once', async () => {
    const jwt = fakeJwt();
    // `ws`'s client with the session cookie, as a browser's WebSocket would send it.
    const Socket = class extends WebSocket {
      constructor(address: string) {
        super(address, { headers: { cookie: `access_token=${jwt}` } });
      }
    } as unknown as WebSocketConstructor;
    const events: LiveEvent[] = [];
    const requests: string[] = [];
    const ended = new Promise<LiveEndReason>((resolve) => {
      liveSocket({ request: async (_m: string, path: string) => void requests.push(path) } as never, 'live/odds?interval=20', {
        baseUrl: url,
        WebSocket: Socket,
        onEvent: (event) => events.push(event),
        onEnd: resolve,
      });
    });
    const deadline = Date.now() + 5_000;
    while (events.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(events.length >= 2);
    assert.equal((await send(url, 'POST', '/api/auth/logout', { token: jwt, json: {} })).status, 200);
    assert.equal(await ended, 'session_ended');
    assert.deepEqual(requests, ['/api/auth/profile?check_spa_again=1']);
  });
});

describe('useLiveFeed', () => {
  test('server-side rendering: idle, nothing opened', async () => {
    const { createElement: h } = await import('react');
    const { renderToString } = await import('react-dom/server');
    const { createProxyClient, memoryStorage } = await import('../packages/browser/src/browser/index.js');
    const { ProxySessionProvider, useLiveFeed } = await import('../packages/react/src/index.js');
    const client = createProxyClient({ storage: memoryStorage(), fetch: (async () => new Response('{}')) as unknown as typeof fetch });
    function Odds() {
      const { status, lastEvent } = useLiveFeed('live/odds');
      return h('p', null, `${status}/${lastEvent === null ? 'none' : 'some'}`);
    }
    assert.match(renderToString(h(ProxySessionProvider, { client }, h(Odds))), /idle\/none/);
  });
});
