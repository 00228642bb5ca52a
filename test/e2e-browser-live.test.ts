/**
 * docs/deployment.md "Live streams" in Chromium: a page served by nginx with the shipped configuration
 * (deploy/nginx/front-proxy.conf), in front of the real proxy and its sandbox, opens the sandbox's live
 * odds with `EventSource` and with `WebSocket` through nginx: events arrive one by one as the sandbox
 * sends them (not held back by nginx), a message sent on the socket comes back; signed in, a logout
 * ends the page's signed-in stream with `session-ended`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser } from 'playwright-core';
import { createServer } from '../src/app.js';
import { BROWSER_TEST_PROXY_ENV, chromiumSkip, launchChromium } from './helpers/chromium.js';
import { HAVE_NGINX, startNginx, type TestNginx } from './helpers/fleet-processes.js';
import { LogCapture } from './helpers/recording-upstream.js';

const skip = chromiumSkip || (HAVE_NGINX ? false : 'nginx is not installed');

describe('live streams in Chromium through nginx', { skip }, () => {
  let app: FastifyInstance;
  let nginx: TestNginx;
  let browser: Browser;
  before(async () => {
    app = await createServer({ NODE_ENV: 'test', LOG_LEVEL: 'warn', RATE_LIMIT_API_PER_MIN: '0', ...BROWSER_TEST_PROXY_ENV }, { logStream: new LogCapture() });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    nginx = await startNginx([port]);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await nginx?.stop();
    await app?.close();
  });

  test('EventSource: events one by one, spread as the sandbox sends them; WebSocket: messages and an echo', async () => {
    const page = await browser.newPage();
    await page.goto(`${nginx.url}/`);
    const sse = await page.evaluate(
      () =>
        new Promise<{ seqs: number[]; gaps: number[] }>((resolve, reject) => {
          const source = new EventSource('/api/core-sportbook/live/odds?interval=100');
          const seqs: number[] = [];
          const times: number[] = [];
          source.addEventListener('odds', (event) => {
            seqs.push((JSON.parse((event as MessageEvent<string>).data) as { seq: number }).seq);
            times.push(performance.now());
            if (seqs.length === 6) {
              source.close();
              resolve({ seqs, gaps: times.slice(1).map((t, i) => t - (times[i] as number)) });
            }
          });
          setTimeout(() => reject(new Error(`only ${seqs.length} events`)), 8_000);
        }),
    );
    for (let i = 1; i < sse.seqs.length; i++) assert.equal(sse.seqs[i], (sse.seqs[i - 1] as number) + 1);
    // Held back by a buffer, the events would arrive together; passed as they come, about 100 ms apart.
    const spread = sse.gaps.slice(1).filter((gap) => gap > 40).length;
    assert.ok(spread >= 3, `gaps ${sse.gaps.map((g) => g.toFixed(0)).join(', ')} ms`);

    const ws = await page.evaluate(
      () =>
        new Promise<{ ticks: number; echo: boolean }>((resolve, reject) => {
          const socket = new WebSocket(`${location.origin.replace('http', 'ws')}/api/core-sportbook/live/odds?interval=50`);
          let ticks = 0;
          let echoed = false;
          socket.onopen = () => socket.send('from the page');
          socket.onmessage = (event) => {
            const data = JSON.parse(String(event.data)) as { seq?: number; echo?: string };
            if (data.seq !== undefined) ticks++;
            if (data.echo === 'from the page') echoed = true;
            if (echoed && ticks >= 3) {
              socket.close();
              resolve({ ticks, echo: true });
            }
          };
          socket.onerror = () => reject(new Error('the WebSocket failed'));
          setTimeout(() => reject(new Error(`only ${ticks} messages`)), 8_000);
        }),
    );
    assert.ok(ws.echo);
    assert.ok(ws.ticks >= 3);
    await page.close();
  });

  test('signed in: a logout ends the signed-in stream with session-ended', async () => {
    const page = await browser.newPage();
    await page.goto(`${nginx.url}/`);
    const outcome = await page.evaluate(async () => {
      const login = await fetch('/api/auth/login', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ login: 'demo@example.com', password: 'Demo#2026' }),
      });
      if (login.status !== 200) return `login ${login.status}`;
      return new Promise<string>((resolve) => {
        const source = new EventSource('/api/core-sportbook/live/bets?interval=100');
        let events = 0;
        source.addEventListener('odds', () => {
          events++;
          if (events === 2) void fetch('/api/auth/logout', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        });
        source.addEventListener('session-ended', (event) => {
          source.close();
          resolve(`${events} events, then ${(event as MessageEvent<string>).data}`);
        });
        setTimeout(() => resolve(`no session-ended after ${events} events`), 8_000);
      });
    });
    assert.equal(outcome, '2 events, then {"reason":"logout"}');
    await page.close();
  });
});
