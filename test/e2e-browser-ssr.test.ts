/**
 * The first render from the server, in Debian's Chromium (playwright-core; no browser is downloaded):
 * a front-end server reads the session with `readSession` (the browser's cookies, the real proxy
 * and its sandbox on loopback), renders the React app with `react-dom/server` and
 * `<ProxySessionProvider initialSession>`, and the page hydrates it with `hydrateRoot` (the same app
 * module, bundled with esbuild from the sources for Node and for the browser). A logged-in browser's
 * first HTML is already signed in, the page never renders `unknown` and hydrates without a mismatch,
 * then loads the profile; a guest's first HTML is signed out. (A Next.js App Router app reads the
 * session the same way in its layout: test/e2e-browser-next.test.ts.)
 *
 * Skipped with a message when Chromium is not installed (CI installs it: `apt-get install chromium`).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import type { FastifyInstance } from 'fastify';
import type { Browser } from 'playwright-core';
import { createElement } from 'react';
import { renderToString } from 'react-dom/server';
import { createProxyClient, memoryStorage, readSession, type SessionSnapshot } from '../packages/browser/src/browser/index.js';
import { createServer } from '../src/app.js';
import {
  BROWSER_TEST_PROXY_ENV,
  bundlePageScript,
  chromiumSkip as skip,
  launchChromium,
  startFrontEnd,
  TEST_OUTPUT,
} from './helpers/chromium.js';

/** The app, rendered on the server and hydrated in the page: the session state and the profile. */
const APP = `import { createElement as h } from 'react';
import { ProxySessionProvider, useProfile, useSession } from '@front-proxy/react';

function Account() {
  const session = useSession();
  const { status, profile } = useProfile();
  if (typeof window !== 'undefined') window.seen.push(session.status);
  return h('div', null,
    h('p', { id: 'state' }, session.status),
    h('p', { id: 'profile' }, status === 'ready' ? profile.user.email : status));
}

export function App({ client, initialSession }) {
  return h(ProxySessionProvider, { client, initialSession, refresh: false }, h(Account));
}
`;

const HYDRATE = `import { createElement as h } from 'react';
import { hydrateRoot } from 'react-dom/client';
import { createProxyClient } from '@front-proxy/browser';
import { App } from './app.js';
window.seen = [];
const initialSession = JSON.parse(document.getElementById('session').textContent);
hydrateRoot(document.getElementById('root'), h(App, { client: createProxyClient(), initialSession }));
`;

const LOGIN = { login: 'demo@example.com', password: 'Demo#2026' };

describe('the first render from the server: readSession, initialSession, hydration', { skip, timeout: 180_000 }, () => {
  let proxy: FastifyInstance;
  let frontEnd: { origin: string; close: () => Promise<void> };
  let origin: string;
  let browser: Browser;
  let work: string;
  before(async () => {
    proxy = await createServer({ ...BROWSER_TEST_PROXY_ENV, NODE_ENV: 'development', LOG_LEVEL: 'silent' });
    const proxyBase = await proxy.listen({ port: 0, host: '127.0.0.1' });
    // The app module for Node (react external, the SDK and bindings from their sources), in the git-ignored test output.
    mkdirSync(TEST_OUTPUT, { recursive: true });
    work = mkdtempSync(join(TEST_OUTPUT, 'ssr-'));
    writeFileSync(join(work, 'app.js'), APP);
    const serverApp = join(work, 'app.server.mjs');
    await build({
      entryPoints: [join(work, 'app.js')],
      outfile: serverApp,
      bundle: true,
      format: 'esm',
      platform: 'node',
      external: ['react', 'react-dom'],
      logLevel: 'silent',
      alias: {
        '@front-proxy/browser': join(process.cwd(), 'packages/browser/src/browser/index.ts'),
        '@front-proxy/browser/core': join(process.cwd(), 'packages/browser/src/browser/core.ts'),
        '@front-proxy/react': join(process.cwd(), 'packages/react/src/index.ts'),
      },
      nodePaths: [join(process.cwd(), 'node_modules')],
    });
    const { App } = (await import(pathToFileURL(serverApp).href)) as {
      App: (props: { client: unknown; initialSession: SessionSnapshot }) => unknown;
    };
    const appJs = await bundlePageScript(HYDRATE.replace("'./app.js'", JSON.stringify(join(work, 'app.js'))));

    frontEnd = await startFrontEnd(proxyBase, {
      '/': async (cookie) => {
        const session = await readSession({ baseUrl: proxyBase, cookie });
        // A client per render on the server (memory storage, asks nothing).
        const html = renderToString(
          createElement(App as never, { client: createProxyClient({ storage: memoryStorage() }), initialSession: session }),
        );
        const state = JSON.stringify({ status: session.status, expiresAt: session.expiresAt }).replace(/</g, '\\u003c');
        return {
          type: 'text/html; charset=utf-8',
          body: `<!doctype html><html><head><meta charset="utf-8"><title>ssr</title><link rel="icon" href="data:,"></head><body><div id="root">${html}</div><script id="session" type="application/json">${state}</script><script type="module" src="/app.js"></script></body></html>`,
        };
      },
      '/app.js': { type: 'text/javascript; charset=utf-8', body: appJs },
    });
    origin = frontEnd.origin;
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await frontEnd?.close();
    await proxy?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('a logged-in browser: the first HTML is signed in, no unknown rendered, hydrated without a mismatch, then the profile', async () => {
    const context = await browser.newContext();
    const login = await context.request.post(`${origin}/api/auth/login`, { data: LOGIN, headers: { origin } });
    assert.equal(login.status(), 200);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    const answer = await page.goto(`${origin}/`);
    const firstHtml = (await answer?.text()) ?? '';
    assert.match(firstHtml, /<p id="state">signedIn<\/p>/, 'the server rendered the session it read');
    await page.waitForSelector('#profile:text("demo@example.com")');
    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
    assert.ok(seen.length > 0 && seen.every((s) => s === 'signedIn'), `rendered in the page: ${seen.join(', ')}`);
    assert.deepEqual(errors, [], 'no hydration mismatch, no error');
    await context.close();
  });

  test('a guest: the first HTML is signed out, and stays so', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    const answer = await page.goto(`${origin}/`);
    assert.match((await answer?.text()) ?? '', /<p id="state">signedOut<\/p>/);
    await page.waitForFunction(() => (window as unknown as { seen?: string[] }).seen?.length);
    await page.waitForTimeout(300);
    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
    assert.ok(
      seen.every((s) => s === 'signedOut'),
      `rendered in the page: ${seen.join(', ')}`,
    );
    assert.deepEqual(errors, []);
    await context.close();
  });
});
