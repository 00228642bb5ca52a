/**
 * The API reference page (`GET /docs`, outside production) in a real browser: Debian's Chromium
 * (`/usr/bin/chromium`, driven by playwright-core; no browser is ever downloaded). The page comes
 * from the npm package and the proxy alone: the test fails on any request to a host other than the
 * loopback one and on any request the page's Content-Security-Policy refuses. It opens the deposit
 * operation and finds its `Idempotency-Key` header and its error answers, then saves a screenshot to
 * test-output/docs.png.
 *
 * Skipped with a message when Chromium is not installed (CI installs it: `apt-get install chromium`).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { BrowserContext } from 'playwright-core';
import { createServer } from '../src/app.js';
import { BROWSER_TEST_PROXY_ENV, CHROMIUM, CHROMIUM_ARGS, chromiumSkip as skip, TEST_OUTPUT as OUTPUT } from './helpers/chromium.js';
import { LogCapture } from './helpers/recording-upstream.js';

/** Whether a URL is served by this machine (or by the browser itself: `data:`, `blob:`, `about:`). */
function local(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  if (protocol === 'data:' || protocol === 'blob:' || protocol === 'about:') return true;
  return hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
}

test(
  '/docs in Chromium: served from the package, nothing from another host, the deposit operation documented',
  { skip, timeout: 60_000 },
  async () => {
    const { chromium } = await import('playwright-core');
    const app = await createServer(
      { ...BROWSER_TEST_PROXY_ENV, NODE_ENV: 'development', LOG_LEVEL: 'warn' },
      { logStream: new LogCapture() },
    );
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const profileDir = mkdtempSync(join(tmpdir(), 'front-proxy-chromium-'));
    let context: BrowserContext | undefined;
    try {
      context = await chromium.launchPersistentContext(profileDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_ARGS,
        viewport: { width: 1280, height: 1400 },
      });
      const page = context.pages()[0] ?? (await context.newPage());
      const requested: string[] = [];
      const refused: string[] = [];
      page.on('request', (request) => requested.push(request.url()));
      page.on('requestfailed', (request) => refused.push(`${request.url()}: ${request.failure()?.errorText ?? ''}`));
      page.on('console', (message) => {
        if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
      });
      page.on('pageerror', (error) => refused.push(`page error: ${error.message}`));

      const res = await page.goto(`${base}/docs`);
      assert.equal(res?.status(), 200);
      const deposit = page.locator('#operations-Payments-postPaymentsDeposit');
      await deposit.waitFor({ timeout: 20_000 });
      assert.match((await deposit.locator('.opblock-summary-path').textContent()) ?? '', /\/api\/payments\/deposit/);
      await deposit.locator('.opblock-summary-control').click();
      const body = deposit.locator('.opblock-body');
      await body.waitFor();
      await page.waitForFunction(() =>
        document.querySelector('#operations-Payments-postPaymentsDeposit .opblock-body')?.textContent?.includes('Idempotency-Key'),
      );
      const text = (await body.textContent()) ?? '';
      for (const expected of ['Idempotency-Key', 'request_in_progress', 'idempotency_key_reused', 'X-Error-Ref', 'section 4.5']) {
        assert.ok(text.includes(expected), `the deposit operation shows ${expected}`);
      }
      await deposit.scrollIntoViewIfNeeded();
      mkdirSync(OUTPUT, { recursive: true });
      await page.screenshot({ path: join(OUTPUT, 'docs.png') });

      assert.ok(
        requested.some((u) => u.includes('/docs/json')),
        'the page loaded the document from the proxy',
      );
      assert.deepEqual(
        requested.filter((u) => !local(u)),
        [],
        'no request left the machine',
      );
      assert.deepEqual(refused, [], 'no request was refused or failed');
    } finally {
      await context?.close();
      rmSync(profileDir, { recursive: true, force: true });
      await app.close();
    }
  },
);
