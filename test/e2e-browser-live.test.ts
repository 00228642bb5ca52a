/**
 * docs/deployment.md "Live streams" in Chromium: a page served by nginx with the shipped configuration
 * (deploy/nginx/front-proxy.conf), in front of the real proxy and its sandbox, opens the sandbox's live
 * odds with `EventSource` and with `WebSocket` through nginx: events arrive one by one as the sandbox
 * sends them (not held back by nginx), a message sent on the socket comes back; signed in, a logout
 * ends the page's signed-in stream with `session-ended`; the SDK's `client.sports.live` and
 * `client.sports.liveSocket` on the same page, their session ended by the sandbox: both feeds end
 * `session_ended` and the forced logout runs once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser } from 'playwright-core';
import { createServer } from '../src/app.js';
import { BROWSER_TEST_PROXY_ENV, bundlePageScript, chromiumSkip, launchChromium } from './helpers/chromium.js';
import { HAVE_NGINX, startNginx, type TestNginx } from './helpers/fleet-processes.js';
import { LogCapture } from './helpers/recording-upstream.js';

const skip = chromiumSkip || (HAVE_NGINX ? false : 'nginx is not installed');

/**
 * The SDK on the page: a client whose forced logouts are counted, and the scenario of the SDK test
 * (written here: the page runs it as it is, nothing of the test's own compilation in it).
 */
const SDK_PAGE = `
import { createProxyClient } from '@front-proxy/browser';
const forced = [];
const client = createProxyClient({ onForcedLogout: (ref) => forced.push(String(ref)) });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function sessionEndedBySandbox() {
  await client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } });
  const seen = { sse: [], ws: [] };
  const ends = [
    new Promise((resolve) => client.sports.live('live/odds?interval=100', { types: ['odds'], onEvent: (e) => seen.sse.push(e.id), onEnd: resolve })),
    new Promise((resolve) => client.sports.liveSocket('live/odds?interval=50', { onEvent: (e) => seen.ws.push(e.data), onEnd: resolve })),
  ];
  const deadline = performance.now() + 8000;
  while ((seen.sse.length < 2 || seen.ws.length < 2) && performance.now() < deadline) await sleep(50);
  if (seen.sse.length < 2 || seen.ws.length < 2) return { error: 'events: sse ' + seen.sse.length + ', ws ' + seen.ws.length };
  // The sandbox ends the session; the next call the BFF refuses (made outside the SDK) tells every instance.
  await client.request('POST', '/api/dev/proxy/__sandbox/sessions/expire');
  const refused = await fetch('/api/wallet/refresh', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  const ended = await Promise.race([Promise.all(ends), sleep(8000).then(() => ['timeout'])]);
  while (forced.length === 0 && performance.now() < deadline + 8000) await sleep(50);
  // Room for a second forced logout, which must not come.
  await sleep(300);
  return { refused: refused.status, ended, forced: forced.length, ids: seen.sse.slice(0, 2) };
}

window.sdk = { sessionEndedBySandbox };
`;

describe('live streams in Chromium through nginx', { skip }, () => {
  let app: FastifyInstance;
  let nginx: TestNginx;
  let browser: Browser;
  let sdkScript: string;
  before(async () => {
    sdkScript = await bundlePageScript(SDK_PAGE);
    app = await createServer(
      { NODE_ENV: 'test', LOG_LEVEL: 'warn', RATE_LIMIT_API_PER_MIN: '0', ...BROWSER_TEST_PROXY_ENV },
      { logStream: new LogCapture() },
    );
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

  test('the SDK: client.sports.live and liveSocket signed in; the sandbox ends the session: both end session_ended, one forced logout', async () => {
    const page = await browser.newPage();
    await page.goto(`${nginx.url}/`);
    await page.addScriptTag({ content: sdkScript, type: 'module' });
    await page.waitForFunction(() => 'sdk' in window);
    const outcome = await page.evaluate(() =>
      (
        window as unknown as {
          sdk: {
            sessionEndedBySandbox(): Promise<{ refused?: number; ended?: string[]; forced?: number; ids?: string[]; error?: string }>;
          };
        }
      ).sdk.sessionEndedBySandbox(),
    );
    assert.deepEqual(
      { refused: outcome.refused, ended: outcome.ended, forced: outcome.forced },
      { refused: 401, ended: ['session_ended', 'session_ended'], forced: 1 },
      JSON.stringify(outcome),
    );
    // Events in order with their ids (what Last-Event-ID resumes from).
    const [first, second] = (outcome.ids ?? []).map(Number);
    assert.equal(second, (first as number) + 1);
    await page.close();
  });
});
