/**
 * Health under a storm of connections (docs/behaviour.md "Health", "Resilience";
 * docs/configuration.md): `HEALTH_PORT` serves `/healthz` and `/readyz` on a listener of their own, with the same
 * answers as the public port (which keeps serving them), and nothing else; `MAX_CONNECTIONS` bounds the
 * public port's open connections, a connection over it closed at accept without a byte read, while
 * the health listener still answers.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type RecordingUpstream, send, startProxy, startRecordingUpstream, type TestProxy } from './helpers/recording-upstream.js';

let upstream: RecordingUpstream;
let proxy: TestProxy;
let health: string;

before(async () => {
  upstream = await startRecordingUpstream();
  proxy = await startProxy(upstream.url, { HEALTH_PORT: '0' });
  assert.ok(proxy.app.healthListener, 'HEALTH_PORT makes a health listener');
  health = await proxy.app.healthListener.listen(0, '127.0.0.1');
});
after(async () => {
  await proxy.close();
  await upstream.close();
});

/** Opens a raw connection to `url`'s port; resolves once connected. */
function open(url: string): Promise<Socket> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Sends one request on `socket` and resolves to what came back before it closed (or 2 s passed). */
function exchange(socket: Socket, path: string): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const done = () => resolve(text);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.includes('\r\n\r\n')) done();
    });
    socket.once('close', done);
    socket.once('error', done);
    setTimeout(done, 2_000).unref();
    socket.write(`GET ${path} HTTP/1.1\r\nHost: proxy\r\n\r\n`);
  });
}

describe('HEALTH_PORT', () => {
  test('/healthz and /readyz answer on the health listener as on the public port; nothing else is served there', async () => {
    const cases: [path: string, status: number, body: unknown][] = [
      ['/healthz', 200, { ok: true }],
      ['/readyz', 200, { ok: true, bff: 'up' }],
      ['/api/user/login-history', 404, { ok: false, error: 'not_found', detail: 'Only /healthz and /readyz are served on this port' }],
      ['/metrics', 404, { ok: false, error: 'not_found', detail: 'Only /healthz and /readyz are served on this port' }],
    ];
    for (const [path, status, body] of cases) {
      const answer = await send(health, 'GET', path);
      assert.equal(answer.status, status, path);
      assert.deepEqual(answer.json, body, path);
      if (status === 200) {
        const main = await send(proxy.url, 'GET', path);
        assert.equal(main.status, status, `${path} on the public port`);
        assert.deepEqual(main.json, body);
      }
    }
    assert.ok(!upstream.requests.some((r) => r.path.includes('login-history')), 'nothing of another path reached the BFF');
  });

  test('without HEALTH_PORT there is no health listener', async () => {
    const plain = await startProxy(upstream.url);
    try {
      assert.equal(plain.app.healthListener, undefined);
    } finally {
      await plain.close();
    }
  });
});

describe('MAX_CONNECTIONS', () => {
  test('a connection over the bound is closed at accept, without an answer; the health listener still answers; a freed place is taken again', async () => {
    // A proxy of its own, reached over raw sockets only (no client pool keeping connections open).
    const bounded = await startProxy(upstream.url, { HEALTH_PORT: '0', MAX_CONNECTIONS: '2' });
    const boundedHealth = await (bounded.app.healthListener as NonNullable<typeof bounded.app.healthListener>).listen(0, '127.0.0.1');
    const held = [await open(bounded.url), await open(bounded.url)];
    try {
      for (const socket of held)
        assert.match(await exchange(socket, '/healthz'), /^HTTP\/1\.1 200 /, 'the connections within the bound are served');
      const over = await open(bounded.url);
      assert.equal(await exchange(over, '/healthz'), '', 'closed before a byte was read or written');
      assert.equal((await send(boundedHealth, 'GET', '/healthz')).status, 200, 'the health listener is not bounded by MAX_CONNECTIONS');
      assert.match(await exchange(held[0] as Socket, '/readyz'), /^HTTP\/1\.1 200 /, 'a held connection is served as ever');
      for (const socket of held) socket.destroy();
      // Places free again once the server has seen the closes.
      const until = performance.now() + 2_000;
      let answer = '';
      while (!answer.startsWith('HTTP/1.1 200') && performance.now() < until) {
        const socket = await open(bounded.url);
        answer = await exchange(socket, '/healthz');
        socket.destroy();
      }
      assert.match(answer, /^HTTP\/1\.1 200 /);
    } finally {
      for (const socket of held) socket.destroy();
      await bounded.close();
    }
  });
});
