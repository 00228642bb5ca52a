/**
 * Upstream content cannot run on the site's origin (docs/behaviour.md "The raw passthrough"), in
 * Debian's Chromium (playwright-core; no browser is downloaded) against the real proxy: a signed-in
 * browser on a page of another origin is navigated to passthrough URLs whose upstream answers a page
 * with a script that posts to `/api/payments/withdraw` (as HTML, SVG and plain text). The script never
 * runs: no withdraw reaches the upstream, and no request other than the navigation reaches the proxy.
 *
 * Skipped with a message when Chromium is not installed (CI installs it: `apt-get install chromium`).
 */
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { BROWSER_TEST_PROXY_ENV, chromiumSkip as skip, launchChromium } from './helpers/chromium.js';
import { fakeJwt, type RecordingUpstream, startProxy, startRecordingUpstream, type TestProxy } from './helpers/recording-upstream.js';

const WITHDRAW = '/new-withdraws';
const SCRIPT = `<script>fetch('/api/payments/withdraw',{method:'POST',headers:{'content-type':'application/json'},body:JSON.stringify({amount:100,pix_key:'x'})});document.title='ran'</script>`;
const PAGES: Record<string, [string, string]> = {
  html: [
    'text/html; charset=utf-8',
    `<!doctype html><html><body><h1>odds</h1>${SCRIPT}<img src=x onerror="fetch('/api/payments/withdraw',{method:'POST'})"></body></html>`,
  ],
  svg: ['image/svg+xml', `<svg xmlns="http://www.w3.org/2000/svg"><script>fetch('/api/payments/withdraw',{method:'POST'})</script></svg>`],
  text: ['text/plain', `<!doctype html><html><body>${SCRIPT}</body></html>`],
};

describe('passthrough content in Chromium', { skip, timeout: 120_000 }, () => {
  let upstream: RecordingUpstream;
  let proxy: TestProxy;
  let other: Server;
  let otherUrl = '';
  let browser: Browser;
  /** The requests the proxy served, from its log lines (method and path without the query). */
  const proxyPaths = (): string[] =>
    proxy.logs.entries.filter((e) => e.msg === 'request completed').map((e) => `${String(e.method)} ${String(e.path ?? e.url)}`);

  before(async () => {
    upstream = await startRecordingUpstream();
    for (const [name, [type, body]] of Object.entries(PAGES)) {
      upstream.on('GET', `/core-sportbook/page/${name}`, (_rec, res) => {
        res.writeHead(200, { 'content-type': type });
        res.end(body);
      });
    }
    proxy = await startProxy(upstream.url, { ...BROWSER_TEST_PROXY_ENV });
    // Another site: its page navigates the browser to the passthrough URL given in its query.
    other = createHttpServer((req, res) => {
      const target = new URL(req.url ?? '/', 'http://x').searchParams.get('to') ?? '';
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><html><body><script>location.href = ${JSON.stringify(target)};</script></body></html>`);
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.2', resolve));
    otherUrl = `http://127.0.0.2:${(other.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    if (other !== undefined) await new Promise((resolve) => other.close(resolve));
    await proxy?.close();
    await upstream?.close();
  });

  for (const name of Object.keys(PAGES)) {
    test(`a ${name} answer: a cross-site navigation with a session runs no script`, async () => {
      upstream.requests.length = 0;
      proxy.logs.lines.length = 0;
      const context = await browser.newContext();
      const proxyOrigin = new URL(proxy.url);
      await context.addCookies([
        { name: 'access_token', value: fakeJwt(), domain: proxyOrigin.hostname, path: '/', httpOnly: true, sameSite: 'Lax' },
      ]);
      const page = await context.newPage();
      const target = `${proxy.url}/api/core-sportbook/page/${name}`;
      await page.goto(`${otherUrl}/?to=${encodeURIComponent(target)}`);
      await page.waitForURL(target, { timeout: 10_000 });
      await page.waitForLoadState('load');
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      assert.notEqual(await page.title(), 'ran');
      assert.equal(upstream.requests.filter((r) => r.path === WITHDRAW).length, 0, 'no withdraw reached the upstream');
      assert.deepEqual(
        proxyPaths().filter((p) => !p.startsWith('GET /favicon')),
        [`GET /api/core-sportbook/page/${name}`],
        'the navigation is the only request the proxy saw',
      );
      const sent = upstream.requests.find((r) => r.path === `/core-sportbook/page/${name}`);
      if (name === 'html' || name === 'svg') {
        assert.match(await page.content(), /upstream_bad_response/);
      } else {
        assert.ok(sent?.headers.authorization?.startsWith('Bearer '), 'the signed-in navigation reached the passthrough');
      }
      await context.close();
    });
  }
});
