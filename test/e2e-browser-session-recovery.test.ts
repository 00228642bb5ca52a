/**
 * The session as a React page lives it, in Debian's Chromium (playwright-core; no browser is
 * downloaded) against the real proxy and its embedded sandbox, the page on a front-end origin that
 * forwards `/api/` (the SDK and the bindings bundled from their sources with esbuild):
 *
 * (a) a failed start: the session route aborted → `error` with its reference; the route restored
 *     and the window focused → `signedIn` and the profile (the clock paused, so the backoff's own
 *     retry cannot be what recovered it);
 * (b) expiry in an open tab: the clock moved past the token's `exp` (Playwright's clock API) →
 *     the forced-logout banner with its reference at once, one beacon, one logout call;
 * (c) two tabs expiring at once → one beacon, one logout call, two banners (`this-tab`, `other-tab`);
 * (d) a refresh with the profile on screen: the provider's refresh driver refreshes at 6 h, and the
 *     profile stays (no "loading", no second profile request).
 *
 * Skipped with a message when Chromium is not installed (CI installs it: `apt-get install chromium`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createServer } from '../src/app.js';
import {
  BROWSER_TEST_PROXY_ENV,
  bundlePageScript,
  chromiumSkip as skip,
  launchChromium,
  startFrontEnd,
  waitFor,
} from './helpers/chromium.js';
import { LogCapture } from './helpers/recording-upstream.js';

const PAGE = `<!doctype html><html lang="pt-BR"><head><meta charset="utf-8"><title>session</title><link rel="icon" href="data:,"></head>
<body><div id="root"></div><script type="module" src="/app.js"></script></body></html>`;

/** The page: a provider (refresh driver on unless `?refresh=0`), a banner, the state and the profile; every profile status rendered is recorded. */
const APP = `import { createElement as h, StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createProxyClient } from '@front-proxy/browser';
import { ProxySessionProvider, useProfile, useSession } from '@front-proxy/react';

const client = createProxyClient({ locale: 'pt-BR' });
const refresh = new URLSearchParams(location.search).get('refresh') !== '0';
window.seen = [];

function Banner() {
  const { forcedLogout } = useSession();
  return forcedLogout ? h('p', { className: 'forced', 'data-cause': forcedLogout.cause }, forcedLogout.message + ' #' + forcedLogout.ref) : null;
}

function Account() {
  const session = useSession();
  const { status, profile } = useProfile();
  if (session.status === 'unknown') return h('p', { id: 'state' }, 'unknown');
  if (session.status === 'error') return h('p', { id: 'state' }, 'error #' + session.error.ref);
  if (session.status === 'signedOut') return h('p', { id: 'state' }, 'signedOut');
  window.seen.push(status);
  return h('div', null, h('p', { id: 'state' }, 'signedIn'), h('p', { id: 'profile' }, status === 'ready' ? profile.user.email : status));
}

createRoot(document.getElementById('root')).render(
  h(StrictMode, null, h(ProxySessionProvider, { client, refresh }, h(Banner), h(Account))),
);
`;

const LOGIN = { login: 'demo@example.com', password: 'Demo#2026' };
const SEVEN_HOURS_MS = 7 * 3600 * 1000;

describe('the session in a React page: recovery, expiry, one forced logout per browser, refresh', { skip, timeout: 180_000 }, () => {
  const logs = new LogCapture();
  let proxy: FastifyInstance;
  let frontEnd: { origin: string; close: () => Promise<void> };
  let browser: Browser;
  before(async () => {
    // random: () => 0 → every beacon is logged (spec 6.2 samples at 50%).
    proxy = await createServer(
      { ...BROWSER_TEST_PROXY_ENV, NODE_ENV: 'development', LOG_LEVEL: 'info' },
      { logStream: logs, random: () => 0 },
    );
    const proxyBase = await proxy.listen({ port: 0, host: '127.0.0.1' });
    frontEnd = await startFrontEnd(proxyBase, {
      '/': { type: 'text/html; charset=utf-8', body: PAGE },
      '/app.js': { type: 'text/javascript; charset=utf-8', body: await bundlePageScript(APP) },
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await frontEnd?.close();
    await proxy?.close();
  });

  /** A context whose cookie jar holds a session (logged in through the front-end origin). */
  async function signedInContext(): Promise<BrowserContext> {
    const context = await browser.newContext();
    const login = await context.request.post(`${frontEnd.origin}/api/auth/login`, { data: LOGIN, headers: { origin: frontEnd.origin } });
    assert.equal(login.status(), 200, await login.text());
    return context;
  }

  /** A tab with its clock installed and paused at the real time (timers run only when the test moves it). */
  async function tab(context: BrowserContext, requests: string[], errors: string[], query = ''): Promise<Page> {
    const page = await context.newPage();
    page.on('request', (request) => requests.push(`${request.method()} ${new URL(request.url()).pathname}`));
    page.on('pageerror', (error) => errors.push(error.message));
    const start = Date.now();
    await page.clock.install({ time: start });
    await page.clock.pauseAt(start + 1000);
    await page.goto(`${frontEnd.origin}/${query}`);
    return page;
  }

  const count = (requests: string[], what: string) => requests.filter((r) => r === what).length;
  const forcedLines = () => logs.entries.filter((e) => e.msg === 'forced-logout').length;

  test('(a) the session route aborted at start → error with its reference; restored, then focus → signedIn', async () => {
    const context = await signedInContext();
    let aborted = 0;
    await context.route('**/api/auth/session', (route) => {
      aborted++;
      return route.abort('failed');
    });
    const requests: string[] = [];
    const errors: string[] = [];
    const page = await tab(context, requests, errors, '?refresh=0');
    await page.waitForSelector('#state:text("error #EP0799-EM0042")');
    assert.equal(aborted, 1, 'one check; the clock is paused, so no backoff retry yet');
    await context.unroute('**/api/auth/session');
    await page.evaluate(() => window.dispatchEvent(new Event('focus')));
    await page.waitForSelector('#state:text("signedIn")');
    await page.waitForSelector('#profile:text("demo@example.com")');
    assert.equal(count(requests, 'GET /api/auth/profile'), 1);
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('(b) expiry in an open tab: the clock past exp → the banner with its reference at once, one beacon, one logout call', async () => {
    const linesBefore = forcedLines();
    const context = await signedInContext();
    const requests: string[] = [];
    const errors: string[] = [];
    const page = await tab(context, requests, errors, '?refresh=0');
    await page.waitForSelector('#profile:text("demo@example.com")');
    await page.clock.fastForward(SEVEN_HOURS_MS + 1000);
    await page.waitForSelector('.forced');
    await page.waitForSelector('#state:text("signedOut")');
    assert.deepEqual(await page.$$eval('.forced', (nodes) => nodes.map((n) => [n.textContent, n.getAttribute('data-cause')])), [
      ['Sua sessão expirou. Faça login novamente. #EP0799-EM0003', 'this-tab'],
    ]);
    await waitFor('the forced-logout log line', () => (forcedLines() > linesBefore ? true : undefined));
    await page.waitForTimeout(300);
    assert.deepEqual(
      [count(requests, 'POST /api/logs/auth-logout'), count(requests, 'POST /api/auth/logout'), forcedLines() - linesBefore],
      [1, 1, 1],
    );
    assert.deepEqual(errors, []);
    await context.close();
  });

  test('(c) two tabs expiring at once → one beacon, one logout call, two banners (this-tab, other-tab)', async () => {
    const linesBefore = forcedLines();
    const context = await signedInContext();
    const requests: string[] = [];
    const errors: string[] = [];
    const tabs = [await tab(context, requests, errors, '?refresh=0'), await tab(context, requests, errors, '?refresh=0')];
    for (const page of tabs) await page.waitForSelector('#profile:text("demo@example.com")');
    // The logout call held for a second: the first tab's forced logout is still running when the
    // second tab's expiry fires, so the two overlap whatever order the clocks move in.
    await context.route('**/api/auth/logout', async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await route.continue();
    });
    await Promise.all(tabs.map((page) => page.clock.fastForward(SEVEN_HOURS_MS + 1000)));
    for (const page of tabs) await page.waitForSelector('.forced');
    const banners = await Promise.all(
      tabs.map((page) => page.$$eval('.forced', (nodes) => nodes.map((n) => `${n.textContent} ${n.getAttribute('data-cause')}`))),
    );
    assert.deepEqual(banners.flat().sort(), [
      'Sua sessão expirou. Faça login novamente. #EP0799-EM0003 other-tab',
      'Sua sessão expirou. Faça login novamente. #EP0799-EM0003 this-tab',
    ]);
    await waitFor('the forced-logout log line', () => (forcedLines() > linesBefore ? true : undefined));
    await tabs[0]?.waitForTimeout(300);
    assert.deepEqual(
      [count(requests, 'POST /api/logs/auth-logout'), count(requests, 'POST /api/auth/logout'), forcedLines() - linesBefore],
      [1, 1, 1],
    );
    assert.deepEqual(errors, []);
    await context.close();
  });

  test("(d) the provider's refresh driver at 6 h: one refresh, the profile stays on screen (no loading, no second profile request)", async () => {
    const context = await signedInContext();
    const requests: string[] = [];
    const errors: string[] = [];
    const page = await tab(context, requests, errors);
    await page.waitForSelector('#profile:text("demo@example.com")');
    const seenBefore = await page.evaluate(() => (window as unknown as { seen: string[] }).seen.length);
    // Past the 6 h of spec 3.1 (and the driver's one-minute check), short of the 7 h expiry.
    await page.clock.fastForward(6 * 3600 * 1000 + 61_000);
    await waitFor('the refresh', () => (count(requests, 'POST /api/auth/refresh') === 1 ? true : undefined));
    await waitFor('the new expiry asked', () => (count(requests, 'GET /api/auth/session') === 2 ? true : undefined));
    await page.waitForTimeout(300);
    const seenAfter = await page.evaluate((from) => (window as unknown as { seen: string[] }).seen.slice(from), seenBefore);
    assert.deepEqual(
      [...new Set(seenAfter)],
      seenAfter.length === 0 ? [] : ['ready'],
      `rendered after the refresh: ${seenAfter.join(', ')}`,
    );
    assert.equal(await page.textContent('#profile'), 'demo@example.com');
    assert.deepEqual(
      [count(requests, 'POST /api/auth/refresh'), count(requests, 'GET /api/auth/profile')],
      [1, 1],
      'one refresh, still one profile request',
    );
    assert.equal(await page.$('.forced'), null);
    assert.deepEqual(errors, []);
    await context.close();
  });
});
