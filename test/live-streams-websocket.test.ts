/**
 * docs/behaviour.md "Live streams", "WebSockets", over real sockets with `ws` on both ends: the
 * handshake refused cross-site with nothing opened upstream; the Bearer and the `Cookie` without the
 * session cookie on the upstream handshake; messages both ways, the token scrubbed from upstream's;
 * the message size and rate limits; an upstream refusal answered as HTTP; `session_ended` at a
 * logout; 1001 on drain; a browser or an upstream that stops answering pings cut (the ping interval
 * shortened through the server's options).
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import WebSocket, { WebSocketServer } from 'ws';
import { fakeJwt, send, startProxy, type TestProxy } from './helpers/recording-upstream.js';

interface Upstream {
  url: string;
  handshakes: IncomingHttpHeaders[];
  /** Answers the next handshakes with this status instead of upgrading. */
  refuseWith: number | undefined;
  /** How the proxy closed each upstream socket: code and reason. */
  closes: { code: number; reason: string }[];
  close(): Promise<void>;
}

/**
 * A WebSocket upstream: says `hello`, echoes each message, on `token?` sends back the Bearer it was
 * opened with, and on `burst` sends 32 MiB in 64 KiB messages (recording how the proxy closed it).
 */
async function startWsUpstream(): Promise<Upstream> {
  const wss = new WebSocketServer({ noServer: true });
  // Under `/live/silent` the upstream stops answering pings (a dead peer whose TCP connection stays up).
  const deaf = new WebSocketServer({ noServer: true, autoPong: false });
  const server: Server = createServer((_req, res) => res.writeHead(404).end());
  const up: Upstream = { url: '', handshakes: [], refuseWith: undefined, closes: [], close: async () => undefined };
  server.on('upgrade', (req, socket, head) => {
    up.handshakes.push(req.headers);
    if (up.refuseWith !== undefined) {
      const body = JSON.stringify({ reason: 'token_expired' });
      socket.end(
        `HTTP/1.1 ${up.refuseWith} No\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    const server = (req.url ?? '').includes('/live/silent') ? deaf : wss;
    server.handleUpgrade(req, socket, head, (ws) => {
      ws.send('hello');
      ws.once('close', (code, reason) => up.closes.push({ code, reason: reason.toString() }));
      ws.on('message', (data) => {
        const text = data.toString();
        if (text === 'burst') {
          const chunk = 'x'.repeat(64 * 1024);
          let sent = 0;
          const more = () => {
            while (ws.readyState === WebSocket.OPEN && sent < 512 && ws.bufferedAmount < 1024 * 1024) {
              ws.send(chunk);
              sent++;
            }
            if (ws.readyState === WebSocket.OPEN && sent < 512) setTimeout(more, 5);
          };
          more();
          return;
        }
        ws.send(text === 'token?' ? `you are ${String(req.headers.authorization)}` : `echo ${text}`);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  up.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  up.close = () =>
    new Promise<void>((resolve) => {
      for (const client of [...wss.clients, ...deaf.clients]) client.terminate();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return up;
}

/** Opens a WebSocket through the proxy; resolves once open, or with the HTTP status it was refused with. */
function openWs(
  proxy: TestProxy,
  path: string,
  headers: Record<string, string>,
  options: { autoPong?: boolean } = {},
): Promise<{ ws?: WebSocket; status?: number; body?: string }> {
  const url = `${proxy.url.replace('http:', 'ws:')}${path}`;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, ...options });
    // Messages are queued from the start: `ws` may emit the first in the same tick as 'open'.
    const queue: string[] = [];
    const waiting: ((text: string) => void)[] = [];
    ws.on('message', (data) => {
      const text = data.toString();
      const waiter = waiting.shift();
      if (waiter) waiter(text);
      else queue.push(text);
    });
    inboxes.set(ws, { queue, waiting });
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once('error', reject);
  });
}

const inboxes = new WeakMap<WebSocket, { queue: string[]; waiting: ((text: string) => void)[] }>();

function nextMessage(ws: WebSocket): Promise<string> {
  const inbox = inboxes.get(ws);
  if (!inbox) throw new Error('not opened by openWs');
  const text = inbox.queue.shift();
  if (text !== undefined) return Promise.resolve(text);
  return new Promise((resolve) => inbox.waiting.push(resolve));
}

function closed(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
}

describe('WebSockets through the proxy', () => {
  let upstream: Upstream;
  let proxy: TestProxy;
  before(async () => {
    upstream = await startWsUpstream();
    proxy = await startProxy(upstream.url, {});
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
  });

  test('a foreign Origin is refused 403 csrf_rejected, nothing opened upstream', async () => {
    const before = upstream.handshakes.length;
    const res = await openWs(proxy, '/api/core-sportbook/live/odds', { origin: 'https://evil.example' });
    assert.equal(res.status, 403);
    assert.equal(JSON.parse(res.body ?? '').error, 'csrf_rejected');
    const host = new URL(proxy.url).host;
    const sameSite = await openWs(proxy, '/api/core-sportbook/live/odds', { origin: `http://${host}`, 'sec-fetch-site': 'cross-site' });
    assert.equal(sameSite.status, 403);
    assert.equal(upstream.handshakes.length, before);
  });

  test('with a session: Bearer and Cookie without the session cookie upstream; messages both ways; the token scrubbed', async () => {
    const jwt = fakeJwt();
    const host = new URL(proxy.url).host;
    const before = upstream.handshakes.length;
    const { ws } = await openWs(proxy, '/api/core-sportbook/live/bets?x=1', {
      origin: `http://${host}`,
      cookie: `theme=dark; access_token=${jwt}`,
    });
    assert.ok(ws);
    const handshake = upstream.handshakes[before] as IncomingHttpHeaders;
    assert.equal(handshake.authorization, `Bearer ${jwt}`);
    assert.equal(handshake.cookie, 'theme=dark');
    assert.equal(await nextMessage(ws), 'hello');
    ws.send('ping-1');
    assert.equal(await nextMessage(ws), 'echo ping-1');
    ws.send('token?');
    assert.equal(await nextMessage(ws), 'you are Bearer [redacted]');
    const done = closed(ws);
    ws.close(1000);
    assert.equal((await done).code, 1000);
  });

  test('a message over 64 KiB closes the socket (1009); a burst over the rate limit closes it (1008)', async () => {
    const big = (await openWs(proxy, '/api/core-sportbook/live/odds', {})).ws as WebSocket;
    await nextMessage(big);
    const bigClosed = closed(big);
    big.send('x'.repeat(70 * 1024));
    assert.equal((await bigClosed).code, 1009);
    const chatty = (await openWs(proxy, '/api/core-sportbook/live/odds', {})).ws as WebSocket;
    await nextMessage(chatty);
    const chattyClosed = closed(chatty);
    for (let i = 0; i < 100; i++) chatty.send(`m${i}`);
    assert.deepEqual(await chattyClosed, { code: 1008, reason: 'rate_limited' });
  });

  test('a browser that stops reading is closed (1013 slow_consumer) once 256 KiB wait for it; the upstream too', async () => {
    const { ws } = await openWs(proxy, '/api/core-sportbook/live/odds', {});
    assert.ok(ws);
    await nextMessage(ws);
    const before = upstream.closes.length;
    ws.send('burst');
    (ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const deadline = Date.now() + 10_000;
    while (upstream.closes.length === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(upstream.closes[before], { code: 1013, reason: 'slow_consumer' });
    ws.terminate();
  });

  test('refused handshakes leave nothing counted in flight (load shedding)', async () => {
    const shedding = await startProxy(upstream.url, { LOAD_SHED_MAX_IN_FLIGHT: '2' });
    try {
      for (let i = 0; i < 5; i++)
        assert.equal((await openWs(shedding, '/api/core-sportbook/live/odds', { origin: 'https://evil.example' })).status, 403);
      assert.equal((await send(shedding.url, 'GET', '/api/version')).status, 200);
    } finally {
      await shedding.close();
    }
  });

  test('an upstream refusal is answered as HTTP: a 401 body byte for byte', async () => {
    upstream.refuseWith = 401;
    try {
      const res = await openWs(proxy, '/api/core-sportbook/live/bets', { cookie: `access_token=${fakeJwt()}` });
      assert.equal(res.status, 401);
      assert.deepEqual(JSON.parse(res.body ?? ''), { reason: 'token_expired' });
    } finally {
      upstream.refuseWith = undefined;
    }
  });

  test("a logout closes the session's sockets with 4001 session_ended", async () => {
    const jwt = fakeJwt();
    const { ws } = await openWs(proxy, '/api/core-sportbook/live/bets', { cookie: `access_token=${jwt}` });
    assert.ok(ws);
    await nextMessage(ws);
    const done = closed(ws);
    // The upstream is a WebSocket server only: the logout's own upstream call fails, the logout succeeds.
    assert.equal((await send(proxy.url, 'POST', '/api/auth/logout', { token: jwt, json: {} })).status, 200);
    assert.deepEqual(await done, { code: 4001, reason: 'session_ended' });
  });
});

test('the drain closes every socket with 1001', async () => {
  const upstream = await startWsUpstream();
  const proxy = await startProxy(upstream.url, {});
  try {
    const sockets = await Promise.all(
      [1, 2, 3].map(async () => (await openWs(proxy, '/api/core-sportbook/live/odds', {})).ws as WebSocket),
    );
    await Promise.all(sockets.map(nextMessage));
    const codes = Promise.all(sockets.map(closed));
    await proxy.close();
    assert.deepEqual(
      (await codes).map((c) => c.code),
      [1001, 1001, 1001],
    );
  } finally {
    await upstream.close();
  }
});

describe('ping/pong finds dead peers', () => {
  // Pings every 100 ms: a peer that stopped answering is cut within two intervals; 3 s is the test's bound.
  const PING_MS = 100;
  const BOUND_MS = 3_000;
  let upstream: Upstream;
  let proxy: TestProxy;
  before(async () => {
    upstream = await startWsUpstream();
    proxy = await startProxy(upstream.url, {}, { websocketPingIntervalMs: PING_MS });
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
  });

  /** Resolves with what `promise` gives, or `'still open'` after `ms`. */
  function within<T>(promise: Promise<T>, ms: number): Promise<T | 'still open'> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve('still open'), ms);
      void promise.then((value) => {
        clearTimeout(timer);
        resolve(value);
      });
    });
  }

  test('a browser that stops answering pings is cut, and its upstream socket closed with 1001; one that answers stays', async () => {
    const alive = (await openWs(proxy, '/api/core-sportbook/live/odds', {})).ws as WebSocket;
    const before = upstream.closes.length;
    const dead = (await openWs(proxy, '/api/core-sportbook/live/odds', {}, { autoPong: false })).ws as WebSocket;
    await Promise.all([nextMessage(alive), nextMessage(dead)]);
    const deadClosed = closed(dead);
    assert.notEqual(await within(deadClosed, BOUND_MS), 'still open', 'the silent browser is cut');
    const deadline = Date.now() + BOUND_MS;
    while (upstream.closes.length === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(upstream.closes[before], { code: 1001, reason: 'going_away' });
    // The answering browser, open as long, is still relayed.
    assert.equal(alive.readyState, WebSocket.OPEN);
    alive.send('still-there');
    assert.equal(await nextMessage(alive), 'echo still-there');
    const aliveClosed = closed(alive);
    alive.close(1000);
    await aliveClosed;
    while (upstream.closes.length < before + 2 && Date.now() < deadline + BOUND_MS) await new Promise((resolve) => setTimeout(resolve, 20));
  });

  test('an upstream that stops answering pings is cut; the browser gets close 1001 going_away', async () => {
    const before = upstream.closes.length;
    const ws = (await openWs(proxy, '/api/core-sportbook/live/silent', {})).ws as WebSocket;
    assert.equal(await nextMessage(ws), 'hello');
    const result = await within(closed(ws), BOUND_MS);
    assert.deepEqual(result, { code: 1001, reason: 'going_away' });
    const deadline = Date.now() + BOUND_MS;
    while (upstream.closes.length === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    // The upstream socket is closed too (its close frame may or may not get there before it is destroyed).
    assert.ok([1001, 1006].includes(upstream.closes[before]?.code ?? 0), JSON.stringify(upstream.closes[before]));
  });
});
