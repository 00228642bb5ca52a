/**
 * docs/behaviour.md "Live streams", "Drain", on the process as `npm start` runs it: on SIGTERM the
 * streams keep flowing through `SHUTDOWN_DELAY_MS`, then each ends cleanly between events with a
 * jittered `retry:` hint, and the process exits 0 long before `SHUTDOWN_TIMEOUT_MS` would cut them.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openSse, type SseReader, startStreamUpstream, type StreamUpstream } from './helpers/live-streams.js';
import { startProxyProcess, type ProxyProcess } from './helpers/proxy-process.js';
import { fakeJwt } from './helpers/recording-upstream.js';

let upstream: StreamUpstream;
let proxy: ProxyProcess;
const DELAY_MS = 600;
const TIMEOUT_MS = 8_000;

before(async () => {
  upstream = await startStreamUpstream();
  proxy = startProxyProcess({
    NODE_ENV: 'test',
    PORT: '0',
    BFF_BASE_URL: upstream.url,
    SHUTDOWN_DELAY_MS: String(DELAY_MS),
    SHUTDOWN_TIMEOUT_MS: String(TIMEOUT_MS),
    LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
  });
  await proxy.address;
});
after(async () => {
  await proxy.kill();
  await upstream.close();
});

test('SIGTERM: the streams flow through SHUTDOWN_DELAY_MS, then end between events with spread retry hints; exit 0', async () => {
  const base = await proxy.address;
  const readers: SseReader[] = [];
  for (let i = 0; i < 4; i++) {
    readers.push(await openSse(base, `/api/core-sportbook/live/s${i}`, i < 3 ? { cookie: `access_token=${fakeJwt()}` } : {}));
  }
  await upstream.call(4);
  let n = 0;
  const ticks = setInterval(() => {
    n++;
    for (const call of upstream.calls) if (!call.res.destroyed) call.res.write(`id: ${n}\ndata: tick ${n}\n\n`);
  }, 50);
  try {
    await Promise.all(readers.map((r) => r.events(2)));
    const sent = Date.now();
    proxy.child.kill('SIGTERM');
    // Within the delay the events go on.
    await new Promise((resolve) => setTimeout(resolve, DELAY_MS / 3));
    const counts = readers.map((r) => r.data().length);
    await Promise.all(readers.map((r, i) => r.events((counts[i] as number) + 2, DELAY_MS)));
    const ends = await Promise.all(readers.map((r) => r.ended));
    const endedAt = Date.now();
    assert.deepEqual(ends, ['clean', 'clean', 'clean', 'clean']);
    assert.ok(endedAt - sent >= DELAY_MS - 50, `ended ${endedAt - sent} ms after SIGTERM`);
    const hints = readers.map((r) => {
      assert.match(r.text(), /\n\nretry: \d+\n\n$/, 'the last bytes are a retry hint after a whole event');
      return Number(/retry: (\d+)\n\n$/.exec(r.text())?.[1]);
    });
    for (const hint of hints) assert.ok(hint >= 1000 && hint <= 5000, `retry ${hint}`);
    assert.ok(new Set(hints).size > 1, `spread: ${hints.join(', ')}`);
    const exit = await proxy.exited;
    assert.equal(exit.code, 0, proxy.output().slice(-1000));
    assert.ok(exit.at - sent < DELAY_MS + TIMEOUT_MS / 2, `exited ${exit.at - sent} ms after SIGTERM`);
  } finally {
    clearInterval(ticks);
  }
});
