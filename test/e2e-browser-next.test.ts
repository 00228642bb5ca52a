/**
 * A Next.js App Router app as a front-end team builds it (docs/browser-sdk.md "Server-side rendering
 * and Next.js"): both packages packed with `npm pack`, installed offline (`npm ci --offline`, a
 * lockfile written from the tarballs) into a fresh project with next (and its installed
 * dependencies), react, react-dom and TypeScript, all packed from the repository's node_modules.
 * The app's files are the docs' snippets themselves (`app/providers.tsx`, `app/layout.tsx`,
 * `app/page.tsx`, `next.config.mjs`, read from the docs), built with `next build` (which
 * type-checks them against the packages' declarations) and served by `next start`. The proxy
 * and its embedded sandbox run on loopback with the loopback in `TRUSTED_PROXIES`, as the docs say,
 * so that the login and logout POSTs forwarded by Next's rewrite (its own `Host`, the page's in
 * `X-Forwarded-Host`) pass the CSRF check.
 *
 * Debian's Chromium (playwright-core) logs in through the form, sees the profile, and logs out; the
 * raw HTML of the server's first answer (before any script runs) is signed out for a guest and
 * signed in for the logged-in browser: the layout, a Server Component, read `GET /api/auth/session`
 * with the browser's cookie and passed it as `initialSession`. The page never shows `unknown` and
 * hydrates without an error.
 *
 * Skipped with a message when Chromium is not installed (CI installs it: `apt-get install chromium`).
 * A screenshot is saved to test-output/next.png.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import type { Browser } from 'playwright-core';
import { createServer } from '../src/app.js';
import { BROWSER_TEST_PROXY_ENV, chromiumSkip as skip, launchChromium, TEST_OUTPUT as OUTPUT, waitFor } from './helpers/chromium.js';
import { lockedProject, pack, packInstalledTree, REPO, runAll } from './helpers/packages.js';
import { freePort } from './helpers/proxy-process.js';

/** The docs' code blocks whose first line names a file of the app (`// app/page.tsx`, `// next.config.mjs: …`), by that name. */
function nextAppFiles(doc: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const match of doc.matchAll(/^```(?:tsx|ts|js)\n\/\/ ((?:app\/[\w.-]+|next\.config\.mjs))\b[^\n]*\n([\s\S]*?)^```$/gm)) {
    const [, name, body] = match;
    if (name === undefined || body === undefined) continue;
    assert.ok(!files.has(name), `the docs give ${name} once`);
    files.set(name, body);
  }
  return files;
}

const DOC = readFileSync(join(REPO, 'docs', 'browser-sdk.md'), 'utf8');
const LOGIN = { login: 'demo@example.com', password: 'Demo#2026' };
/** What the sandbox answers as the demo user's name. */
const DEMO_NAME = 'Ana Beatriz Souza';

test('the docs give the four files of the Next.js app, next.config.mjs as the shipped recipe ends', () => {
  const files = nextAppFiles(DOC);
  assert.deepEqual([...files.keys()].sort(), ['app/layout.tsx', 'app/page.tsx', 'app/providers.tsx', 'next.config.mjs']);
  const recipe = readFileSync(join(REPO, 'deploy', 'dev', 'next.config.mjs'), 'utf8');
  assert.ok(recipe.endsWith(files.get('next.config.mjs') ?? '\0'), "deploy/dev/next.config.mjs ends with the docs' block");
});

test(
  'a Next.js App Router app from the packed tarballs: first HTML signed in from the layout, login, profile, logout through the rewrite',
  { skip, timeout: 360_000 },
  async (t) => {
    // How long each step took, in the test's output (the install and the build are most of it).
    let stepStart = performance.now();
    const step = (name: string) => {
      t.diagnostic(`${name}: ${Math.round(performance.now() - stepStart)} ms`);
      stepStart = performance.now();
    };
    const work = mkdtempSync(join(tmpdir(), 'front-proxy-next-'));
    const proxy = await createServer({
      ...BROWSER_TEST_PROXY_ENV,
      NODE_ENV: 'development',
      LOG_LEVEL: 'silent',
      TRUSTED_PROXIES: '127.0.0.1,::1',
    });
    const proxyUrl = await proxy.listen({ port: 0, host: '127.0.0.1' });
    let next: ChildProcess | undefined;
    let browser: Browser | undefined;
    try {
      // 1. The packages packed; next, react and TypeScript packed from node_modules; all installed offline.
      const tarballs = [
        pack('browser', work).tarball,
        pack('react', work).tarball,
        // sharp (next's image optimisation, an optional dependency) is not used by the app.
        ...packInstalledTree('next', work, ['sharp']),
        ...['react', 'react-dom', 'typescript', '@types/react', '@types/node'].flatMap((name) => packInstalledTree(name, work)),
      ];
      step('packed');
      const app = join(work, 'front-end');
      const installLog = lockedProject(app, tarballs);
      assert.doesNotMatch(installLog, /install-scripts/, installLog);
      step('installed offline');

      // 2. The docs' files, built by next (compiled and type-checked) with the proxy's address.
      for (const [name, body] of nextAppFiles(DOC)) {
        mkdirSync(dirname(join(app, name)), { recursive: true });
        writeFileSync(join(app, name), body);
      }
      const env = { FRONT_PROXY_URL: proxyUrl, NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: 'production' };
      const nextBin = join(app, 'node_modules', 'next', 'dist', 'bin', 'next');
      const buildLog = runAll(process.execPath, [nextBin, 'build'], app, env, 240_000);
      assert.match(buildLog, /Compiled successfully/, buildLog);
      step('next build');

      // 3. next start on a free loopback port, stopped by its PID (its process group) at the end.
      const port = await freePort();
      let output = '';
      next = spawn(process.execPath, [nextBin, 'start', '--port', String(port), '--hostname', '127.0.0.1'], {
        cwd: app,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      next.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      next.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      await waitFor('next start to be ready', () => (/Ready in/.test(output) ? true : undefined), 60_000).catch((error: unknown) => {
        throw new Error(`${String(error)}; next start printed: ${output}`);
      });
      const origin = `http://127.0.0.1:${port}`;
      step('next start ready');

      // 4. Chromium.
      browser = await launchChromium();
      const context = await browser.newContext({ viewport: { width: 900, height: 400 } });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      page.on('console', (message) => {
        if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(message.text());
      });
      const apiAnswers: string[] = [];
      page.on('response', (response) => {
        const { pathname } = new URL(response.url());
        if (pathname.startsWith('/api/')) apiAnswers.push(`${response.request().method()} ${pathname} ${response.status()}`);
      });
      /** The `data-session` of every render the page shows, as a MutationObserver sees it from the first paint. */
      await page.addInitScript(() => {
        const w = window as unknown as { seen: string[] };
        w.seen = [];
        new MutationObserver(() => {
          const status = document.querySelector('main')?.getAttribute('data-session');
          if (status && w.seen.at(-1) !== status) w.seen.push(status);
        }).observe(document, { subtree: true, childList: true, attributes: true });
      });
      const rendered = () => page.evaluate(() => (window as unknown as { seen: string[] }).seen);

      // A guest: the first HTML is signed out (the login form), before any script ran.
      const guest = await page.goto(origin);
      assert.equal(guest?.status(), 200);
      const guestHtml = (await guest?.text()) ?? '';
      assert.match(guestHtml, /<main data-session="signedOut">/, 'the layout read the session: signed out');
      assert.match(guestHtml, /name="password"/, 'the login form is in the first HTML');

      // A wrong password: the form's message and its reference, still signed out.
      await page.fill('input[name="login"]', LOGIN.login);
      await page.fill('input[name="password"]', 'not-the-password');
      await page.click('button:text("Entrar")');
      // Inside the form: Next.js adds a route announcer of its own with role="alert", empty until a navigation.
      const problem = (await page.waitForSelector('form [role="alert"]')).textContent();
      assert.match((await problem) ?? '', /^\S.* #EP0700-EM0005$/, "the pre-authentication message and the login route's reference");
      assert.ok(apiAnswers.includes('POST /api/auth/login 401'), apiAnswers.join(', '));

      // Login through the rewrite: the POST passes the CSRF check (X-Forwarded-Host from a trusted peer).
      await page.fill('input[name="login"]', LOGIN.login);
      await page.fill('input[name="password"]', LOGIN.password);
      await page.click('button:text("Entrar")');
      await page.waitForSelector('main[data-session="signedIn"]');
      await page.waitForSelector(`main p:text("${DEMO_NAME}")`);
      assert.ok(apiAnswers.includes('POST /api/auth/login 200'), apiAnswers.join(', '));
      assert.ok(apiAnswers.includes('GET /api/auth/profile 200'), apiAnswers.join(', '));
      const cookie = (await context.cookies(origin)).find((c) => c.name === 'access_token');
      assert.ok(cookie?.httpOnly, 'the session cookie, HttpOnly, on the Next.js origin');
      assert.deepEqual(await rendered(), ['signedOut', 'signedIn'], 'never unknown');

      // The logged-in browser comes back: the first HTML is already signed in (initialSession), never unknown.
      const again = await page.goto(origin);
      const signedInHtml = (await again?.text()) ?? '';
      assert.match(signedInHtml, /<main data-session="signedIn">/, 'the layout read the session: signed in');
      assert.doesNotMatch(signedInHtml, /name="password"/, 'no login form in the first HTML');
      await page.waitForSelector(`main p:text("${DEMO_NAME}")`);
      assert.deepEqual(await rendered(), ['signedIn'], 'every render signed in');

      // Logout through the rewrite.
      await page.click('button:text("Sair")');
      await page.waitForSelector('main[data-session="signedOut"]');
      assert.ok(apiAnswers.includes('POST /api/auth/logout 200'), apiAnswers.join(', '));
      assert.equal(
        (await context.cookies(origin)).find((c) => c.name === 'access_token'),
        undefined,
        'the cookie is cleared',
      );
      const after = await page.goto(origin);
      assert.match((await after?.text()) ?? '', /<main data-session="signedOut">/, 'signed out on the server too');
      await page.waitForSelector('input[name="password"]');

      assert.deepEqual(errors, [], 'no hydration mismatch, no page error');
      mkdirSync(OUTPUT, { recursive: true });
      await page.screenshot({ path: join(OUTPUT, 'next.png') });
      step('Chromium: guest, login, profile, signed-in first HTML, logout');
    } finally {
      await browser?.close();
      if (next?.pid !== undefined && next.exitCode === null) {
        const exited = new Promise((resolve) => next?.once('exit', resolve));
        process.kill(-next.pid, 'SIGTERM');
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      }
      await proxy.close();
      rmSync(work, { recursive: true, force: true });
    }
  },
);
