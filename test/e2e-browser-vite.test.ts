/**
 * One origin on a laptop (docs/deployment.md "On a laptop"): Vite's dev server runs with the shipped
 * recipe (`deploy/dev/vite.config.ts`, `server.proxy` for `/api` with `changeOrigin: true` and
 * `xfwd: true`) in front of the proxy and its embedded sandbox, the proxy started with the loopback in
 * `TRUSTED_PROXIES`, and Chromium (Debian's, driven by playwright-core) logs in through it: the login
 * POST passes the proxy's CSRF check (Host is the proxy's own, X-Forwarded-Host the dev server's, as
 * the page's Origin), the session cookie is set HttpOnly on the dev server's host, and the profile read
 * with it answers the demo user. (Without `TRUSTED_PROXIES` the same login answers 403 csrf_rejected:
 * test/csrf-forwarded.test.ts.)
 *
 * Skipped with a message when Chromium is not installed (CI installs it: `apt-get install chromium`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { BrowserContext } from 'playwright-core';
import { createServer } from '../src/app.js';
import { BROWSER_TEST_PROXY_ENV, CHROMIUM, CHROMIUM_ARGS, chromiumSkip as skip } from './helpers/chromium.js';
import { freePort } from './helpers/proxy-process.js';

const RECIPE = fileURLToPath(new URL('../deploy/dev/vite.config.ts', import.meta.url));

/** The front end's page: a login form that talks to `/api` on its own origin, as any front end would. */
const PAGE = `<!doctype html>
<title>front end</title>
<button id="login">Log in</button>
<p id="status">signed out</p>
<p id="name"></p>
<script type="module">
  document.getElementById('login').addEventListener('click', async () => {
    const login = await fetch('/api/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ login: 'demo@example.com', password: 'Demo#2026' }),
    });
    if (!login.ok) {
      document.getElementById('status').textContent = 'login ' + login.status + ' ' + (await login.text());
      return;
    }
    const profile = await fetch('/api/auth/profile');
    const body = await profile.json();
    document.getElementById('name').textContent = body.user ? body.user.name : '';
    document.getElementById('status').textContent = 'signed in: profile ' + profile.status + ', cookies seen by scripts: [' + document.cookie + ']';
  });
</script>
`;

test(
  'Vite dev server with the server.proxy recipe: Chromium logs in through it and reads the profile',
  { skip, timeout: 90_000 },
  async () => {
    const { chromium } = await import('playwright-core');
    const vite = await import('vite');
    const app = await createServer({
      ...BROWSER_TEST_PROXY_ENV,
      NODE_ENV: 'development',
      LOG_LEVEL: 'silent',
      TRUSTED_PROXIES: '127.0.0.1,::1',
    });
    const proxyUrl = await app.listen({ port: 0, host: '127.0.0.1' });
    const root = mkdtempSync(join(tmpdir(), 'front-proxy-vite-'));
    const profileDir = mkdtempSync(join(tmpdir(), 'front-proxy-chromium-'));
    writeFileSync(join(root, 'index.html'), PAGE);
    const previous = process.env.FRONT_PROXY_URL;
    process.env.FRONT_PROXY_URL = proxyUrl;
    let server: Awaited<ReturnType<typeof vite.createServer>> | undefined;
    let context: BrowserContext | undefined;
    try {
      const port = await freePort();
      server = await vite.createServer({
        configFile: RECIPE,
        root,
        logLevel: 'silent',
        clearScreen: false,
        server: { host: '127.0.0.1', port, strictPort: true, hmr: false },
      });
      await server.listen();
      const devUrl = `http://127.0.0.1:${port}`;

      context = await chromium.launchPersistentContext(profileDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
      const page = context.pages()[0] ?? (await context.newPage());
      await page.goto(`${devUrl}/`);
      await page.click('#login');
      await page.waitForFunction(() => document.getElementById('status')?.textContent !== 'signed out', undefined, { timeout: 20_000 });
      const status = (await page.textContent('#status')) ?? '';
      assert.equal(status, 'signed in: profile 200, cookies seen by scripts: []');
      assert.equal(await page.textContent('#name'), 'Ana Beatriz Souza');

      // The session cookie belongs to the dev server's host and is invisible to scripts.
      const cookies = await context.cookies(devUrl);
      const session = cookies.find((c) => c.name === 'access_token');
      assert.ok(session, `cookies: ${cookies.map((c) => c.name).join(', ')}`);
      assert.equal(session.httpOnly, true);
      assert.equal(session.domain, '127.0.0.1');
      assert.equal(session.path, '/');
    } finally {
      await context?.close();
      await server?.close();
      await app.close();
      if (previous === undefined) delete process.env.FRONT_PROXY_URL;
      else process.env.FRONT_PROXY_URL = previous;
      rmSync(root, { recursive: true, force: true });
      rmSync(profileDir, { recursive: true, force: true });
    }
  },
);
