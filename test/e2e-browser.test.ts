/**
 * The browser SDK in a real browser: Debian's Chromium (`/usr/bin/chromium`, driven by
 * playwright-core; no browser is ever downloaded) against the proxy with the embedded sandbox.
 * The playground page logs in with the demo user (the session cookie stays HttpOnly while
 * authenticated calls succeed), lists games, makes a PIX deposit that polls until paid, then
 * the sandbox expires the session: the next authenticated calls fail with 401 token_expired, exactly
 * one forced-logout beacon reaches the proxy (its log line carries the failed call's ref and every
 * field of spec 6.1), and the page shows the logged-out state with the reference.
 *
 * Skipped with a message when Chromium is not installed (CI installs it: `apt-get install chromium`).
 * A screenshot is saved to test-output/playground.png.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { createServer } from '../src/app.js';
import {
  BROWSER_TEST_PROXY_ENV,
  CHROMIUM,
  CHROMIUM_ARGS,
  chromiumSkip as skip,
  TEST_OUTPUT as OUTPUT,
  waitFor,
} from './helpers/chromium.js';
import { LogCapture } from './helpers/recording-upstream.js';

const BEACON_FIELDS = [
  'ref',
  'endpointCode',
  'errorCode',
  'status',
  'reason',
  'url',
  'initiator',
  'pathname',
  'timestamp',
  'hadCookie',
  'userAgentShort',
].sort();

async function text(page: Page, selector: string): Promise<string> {
  return ((await page.textContent(selector)) ?? '').trim();
}

test(
  "playground in Chromium: HttpOnly session, PIX deposit paid, one forced-logout beacon with the failed call's ref",
  { skip, timeout: 60_000 },
  async () => {
    const { chromium } = await import('playwright-core');
    const logs = new LogCapture();
    // random: () => 0 → every beacon is logged (spec 6.2 samples at 50%).
    const app = await createServer(
      { ...BROWSER_TEST_PROXY_ENV, NODE_ENV: 'development', LOG_LEVEL: 'info' },
      { logStream: logs, random: () => 0 },
    );
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const profileDir = mkdtempSync(join(tmpdir(), 'front-proxy-chromium-'));
    let context: BrowserContext | undefined;
    const started = Date.now();
    try {
      context = await chromium.launchPersistentContext(profileDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_ARGS,
        viewport: { width: 1280, height: 900 },
      });
      const page = context.pages()[0] ?? (await context.newPage());
      const pageErrors: string[] = [];
      page.on('pageerror', (error) => pageErrors.push(error.message));
      const beaconRequests: { type: string; contentType: string | undefined }[] = [];
      page.on('request', (request) => {
        if (new URL(request.url()).pathname === '/api/logs/auth-logout') {
          beaconRequests.push({ type: request.resourceType(), contentType: request.headers()['content-type'] });
        }
      });

      // The page and the SDK bundle load.
      await page.goto(`${base}/playground`);
      await page.waitForSelector('body[data-ready="true"]');
      assert.equal(await page.inputValue('#login'), 'demo@example.com');
      assert.equal(await page.inputValue('#password'), 'Demo#2026');
      assert.equal(await text(page, '#status'), 'Signed out');

      // Demo login: the session cookie is HttpOnly, invisible to scripts, and authenticated calls succeed.
      await page.click('#login-button');
      await page.waitForSelector('#status[data-state="in"]');
      await page.waitForFunction(() => document.getElementById('profile-id')?.textContent !== '–');
      assert.equal(await text(page, '#profile-name'), 'Ana Beatriz Souza');
      assert.equal(await text(page, '#profile-email'), 'demo@example.com');
      assert.match(await text(page, '#wallet-balance'), /R\$\s*1\.500,00/);
      const cookies = await context.cookies(base);
      const session = cookies.find((c) => c.name === 'access_token');
      assert.ok(session, 'the session cookie is set');
      assert.equal(session.httpOnly, true);
      assert.equal(session.sameSite, 'Lax');
      const scriptCookies = await page.evaluate(() => document.cookie);
      assert.ok(!scriptCookies.includes('access_token'), `document.cookie shows no session cookie: ${scriptCookies}`);
      assert.ok(!scriptCookies.includes(session.value));
      const storage = await page.evaluate(() => JSON.stringify({ ...localStorage }));
      assert.ok(!storage.includes(session.value), 'the token is not in localStorage');
      assert.match(storage, /front-proxy:refresh-state/);
      const profileFromScript = await page.evaluate(async () => (await fetch('/api/auth/profile', { credentials: 'include' })).status);
      assert.equal(profileFromScript, 200, 'an authenticated call from the page succeeds with the HttpOnly cookie');
      assert.equal(await text(page, '#refresh-lock'), 'web-locks', 'Chromium has the Web Locks API');

      // Games.
      await page.click('#games');
      await page.waitForSelector('#games-list li');
      assert.ok((await page.locator('#games-list li').count()) > 0);

      // PIX deposit, polled until paid; the wallet shows the credit.
      await page.click('#deposit');
      await page.waitForSelector('body[data-deposit-status="paid"]', { timeout: 20_000 });
      assert.match(await text(page, '#deposit-id'), /\S/);
      assert.match(await text(page, '#deposit-code'), /BR\.GOV\.BCB\.PIX/);
      await page.waitForFunction(() => /1\.550,00/.test(document.getElementById('wallet-balance')?.textContent ?? ''));

      // Expire the session in the sandbox, then the next authenticated calls (profile and wallet at once) fail.
      const beaconLines = () => logs.entries.filter((e) => e.msg === 'forced-logout');
      assert.equal(beaconLines().length, 0);
      await page.click('#expire');
      await page.waitForFunction(() => document.getElementById('log')?.textContent?.includes('the sandbox expired 1 session'));
      assert.equal(await text(page, '#status'), 'Signed in as Ana Beatriz Souza', 'nothing happens until a call fails');
      await page.click('#load-account');
      await page.waitForSelector('#forced', { state: 'visible' });
      await page.waitForSelector('body[data-session="out"]');
      const shownRef = (await text(page, '#forced-ref')).replace(/^#/, '');
      assert.ok(['EP0702-EM0003', 'EP0710-EM0003'].includes(shownRef), `the page shows the ref of the failed call: ${shownRef}`);
      assert.equal(await text(page, '#status'), 'Signed out');
      assert.match(await text(page, '#forced-message'), /expired/);
      assert.equal(await text(page, '#profile-name'), '–');

      // Exactly one beacon, logged by the proxy with the failed call's ref and every field of spec 6.1.
      const [line] = await waitFor('the forced-logout log line', () => (beaconLines().length > 0 ? beaconLines() : undefined));
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(beaconLines().length, 1, 'one beacon for two failed calls');
      assert.equal(line?.level, 'warn', 'warning level');
      assert.equal(line?.event, 'forced-logout');
      const beacon = line?.beacon as Record<string, unknown>;
      assert.deepEqual(Object.keys(beacon).sort(), BEACON_FIELDS);
      assert.equal(beacon.ref, shownRef);
      assert.equal(beacon.endpointCode, shownRef.slice(0, 6));
      assert.equal(beacon.errorCode, 'EM0003');
      assert.equal(beacon.status, 401);
      assert.equal(beacon.reason, 'token_expired');
      assert.equal(beacon.url, shownRef === 'EP0702-EM0003' ? '/api/auth/profile' : '/api/wallet/refresh');
      assert.equal(beacon.initiator, 'playground');
      assert.equal(beacon.pathname, '/playground');
      assert.ok(typeof beacon.timestamp === 'number' && beacon.timestamp >= started && beacon.timestamp <= Date.now());
      assert.equal(beacon.hadCookie, true);
      assert.match(String(beacon.userAgentShort), /^(Headless)?Chrome\/\d+ Linux$/);
      assert.equal(beaconRequests.length, 1, 'one beacon request left the page');
      assert.equal(beaconRequests[0]?.type, 'ping', 'sent with navigator.sendBeacon');
      assert.match(beaconRequests[0]?.contentType ?? '', /^application\/json/);
      const completed = logs.entries.filter((e) => e.msg === 'request completed');
      const beaconAnswers = completed.filter((e) => e.url === '/api/logs/auth-logout');
      assert.deepEqual(
        beaconAnswers.map((e) => e.statusCode),
        [204],
      );
      assert.ok(
        completed.some((e) => e.url === '/api/auth/logout' && e.statusCode === 200),
        'the page called /api/auth/logout',
      );
      assert.equal(
        (await context.cookies(base)).find((c) => c.name === 'access_token'),
        undefined,
        'the cookie is cleared',
      );
      assert.deepEqual(pageErrors, []);

      mkdirSync(OUTPUT, { recursive: true });
      await page.screenshot({ path: join(OUTPUT, 'playground.png'), fullPage: true });
    } finally {
      await context?.close();
      await app.close();
      rmSync(profileDir, { recursive: true, force: true });
    }
  },
);
