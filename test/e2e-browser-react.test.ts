/**
 * The React bindings as a front-end team gets them (issue 41): `npm pack` of @front-proxy/browser and
 * @front-proxy/react, both installed offline into a fresh project with react and react-dom (from the
 * npm cache), a React app (no JSX, so no plugin) built with Vite from that project, served on one
 * origin with `/api/` forwarded to the proxy and its embedded sandbox, and driven in Debian's
 * Chromium (playwright-core): it renders signed out, logs in, shows the profile (two components read
 * it: one request), and when the sandbox expires the session the next call shows the forced-logout
 * message once (one beacon). The app imports `@front-proxy/browser/core` and the pt-BR table only:
 * the built bundle holds Portuguese and no Spanish.
 *
 * Skipped with a message when Chromium is not installed (CI installs it: `apt-get install chromium`).
 * A screenshot is saved to test-output/react.png.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import replyFrom from '@fastify/reply-from';
import Fastify from 'fastify';
import type { Browser } from 'playwright-core';
import { createServer } from '../src/app.js';
import { BROWSER_TEST_PROXY_ENV, chromiumSkip as skip, launchChromium, TEST_OUTPUT as OUTPUT, waitFor } from './helpers/chromium.js';
import { freshProject, pack, packInstalled } from './helpers/packages.js';
import { LogCapture } from './helpers/recording-upstream.js';

const INDEX_HTML = `<!doctype html>
<html lang="pt-BR"><head><meta charset="utf-8"><title>React front end</title><link rel="icon" href="data:,"></head>
<body><div id="root"></div><script type="module" src="/src/main.js"></script></body></html>
`;

const MAIN_JS = `import { createElement as h, StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createProxyClient } from '@front-proxy/browser/core';
import { ptBR } from '@front-proxy/browser/messages/pt-BR';
import { ProxySessionProvider, useProfile, useProxyClient, useSession } from '@front-proxy/react';

const client = createProxyClient({ messages: ptBR });

function Banner() {
  const { forcedLogout } = useSession();
  return forcedLogout ? h('p', { className: 'forced' }, forcedLogout.message + ' #' + forcedLogout.ref) : null;
}

function Account() {
  const { status, signIn } = useSession();
  const { profile } = useProfile();
  const proxy = useProxyClient();
  if (status === 'unknown') return h('p', { id: 'state' }, 'loading');
  if (status === 'signedOut') {
    return h('div', null,
      h('p', { id: 'state' }, 'signed out'),
      h('button', { id: 'login', onClick: () => signIn({ login: 'demo@example.com', password: 'Demo#2026' }) }, 'Entrar'));
  }
  return h('div', null,
    h('p', { id: 'state' }, 'signed in'),
    h('p', { id: 'email' }, profile ? profile.user.email : ''),
    h('button', { id: 'expire', onClick: () => proxy.request('POST', '/api/dev/proxy/__sandbox/sessions/expire').then(() => { document.body.dataset.expired = 'true'; }) }, 'Expirar'),
    h('button', { id: 'wallet', onClick: () => proxy.wallet.refresh().catch(() => undefined) }, 'Carteira'));
}

function Greeting() {
  const { profile } = useProfile();
  return h('p', { id: 'greeting' }, profile ? 'Olá, ' + profile.user.name : '');
}

createRoot(document.getElementById('root')).render(
  h(StrictMode, null, h(ProxySessionProvider, { client }, h(Banner), h(Account), h(Greeting))),
);
`;

test(
  'a Vite React app from the packed tarballs: signed out, login, profile, the forced-logout message once',
  { skip, timeout: 420_000 },
  async () => {
    const work = mkdtempSync(join(tmpdir(), 'front-proxy-react-'));
    const logs = new LogCapture();
    // random: () => 0 → every beacon is logged (spec 6.2 samples at 50%).
    const proxy = await createServer(
      { ...BROWSER_TEST_PROXY_ENV, NODE_ENV: 'development', LOG_LEVEL: 'info' },
      { logStream: logs, random: () => 0 },
    );
    const proxyBase = await proxy.listen({ port: 0, host: '127.0.0.1' });
    const frontEnd = Fastify();
    let browser: Browser | undefined;
    try {
      // 1. Both packages packed, installed offline into a fresh project with react and react-dom.
      const tarballs = [pack('browser', work), pack('react', work)].map((p) => p.tarball);
      const app = join(work, 'front-end');
      const installLog = freshProject(app, [...tarballs, ...['react', 'react-dom', 'scheduler'].map((name) => packInstalled(name, work))]);
      assert.doesNotMatch(installLog, /install-scripts/, installLog);
      assert.deepEqual(
        readdirSync(join(app, 'node_modules'))
          .filter((n) => !n.startsWith('.'))
          .sort(),
        ['@front-proxy', 'react', 'react-dom', 'scheduler'],
        'the two packages, react, react-dom and its scheduler: nothing else',
      );

      // 2. Built with Vite (no configuration file, no plugin).
      mkdirSync(join(app, 'src'), { recursive: true });
      writeFileSync(join(app, 'index.html'), INDEX_HTML);
      writeFileSync(join(app, 'src', 'main.js'), MAIN_JS);
      const vite = await import('vite');
      await vite.build({ root: app, configFile: false, logLevel: 'silent', build: { outDir: join(app, 'dist'), emptyOutDir: true } });
      const dist = join(app, 'dist');
      const assets = readdirSync(join(dist, 'assets'));
      const js = assets
        .filter((f) => f.endsWith('.js'))
        .map((f) => readFileSync(join(dist, 'assets', f), 'utf8'))
        .join('\n');
      assert.match(js, /Sua sessão expirou/, 'the pt-BR table is bundled');
      assert.doesNotMatch(js, /Tu sesión ha expirado/, 'the Spanish table is not');

      // 3. One origin: the built app, and /api/ forwarded to the proxy with Host kept.
      frontEnd.removeAllContentTypeParsers();
      frontEnd.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
      await frontEnd.register(replyFrom, { base: proxyBase });
      frontEnd.get('/', (_request, reply) => reply.type('text/html; charset=utf-8').send(readFileSync(join(dist, 'index.html'))));
      frontEnd.get('/assets/:file', (request, reply) => {
        const file = (request.params as { file: string }).file;
        if (!assets.includes(file)) return reply.code(404).send();
        return reply
          .type(file.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css')
          .send(readFileSync(join(dist, 'assets', file)));
      });
      frontEnd.all('/api/*', (request, reply) =>
        reply.from(request.url, { rewriteRequestHeaders: (incoming, headers) => ({ ...headers, host: incoming.headers.host ?? '' }) }),
      );
      const origin = await frontEnd.listen({ port: 0, host: '127.0.0.1' });

      // 4. Chromium.
      browser = await launchChromium();
      const page = await browser.newPage({ viewport: { width: 900, height: 400 } });
      const pageErrors: string[] = [];
      page.on('pageerror', (error) => pageErrors.push(error.message));
      // React reports its own errors on the console; the browser's line for the expected 401 is not one.
      page.on('console', (message) => {
        if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) pageErrors.push(message.text());
      });
      const requests: string[] = [];
      page.on('request', (request) => requests.push(`${request.method()} ${new URL(request.url()).pathname}`));
      const count = (what: string) => requests.filter((r) => r === what).length;

      await page.goto(origin);
      await page.waitForSelector('#state:text("signed out")');
      assert.equal(count('GET /api/auth/session'), 1, 'the session route asked once');
      assert.equal(count('GET /api/auth/profile'), 0, 'no profile for a guest');

      await page.click('#login');
      await page.waitForSelector('#state:text("signed in")');
      await page.waitForSelector('#email:text("demo@example.com")');
      await page.waitForSelector('#greeting:text("Olá, ")');
      assert.equal(count('GET /api/auth/profile'), 1, 'two components, strict mode: one profile request');

      await page.click('#expire');
      await page.waitForSelector('body[data-expired="true"]', { state: 'attached' });
      await page.click('#wallet');
      await page.waitForSelector('.forced');
      await page.waitForSelector('#state:text("signed out")');
      const banners = await page.$$eval('.forced', (nodes) => nodes.map((n) => n.textContent));
      assert.deepEqual(banners, ['Sua sessão expirou. Faça login novamente. #EP0710-EM0003'], 'the message, once');
      assert.equal(await page.textContent('#greeting'), '', 'the profile is forgotten with the session');
      await waitFor('the forced-logout log line', () => (logs.entries.some((e) => e.msg === 'forced-logout') ? true : undefined));
      await page.waitForTimeout(300);
      assert.deepEqual(
        [count('POST /api/logs/auth-logout'), count('POST /api/auth/logout'), logs.entries.filter((e) => e.msg === 'forced-logout').length],
        [1, 1, 1],
        'one beacon, one logout call, one log line',
      );
      assert.deepEqual(pageErrors, []);
      mkdirSync(OUTPUT, { recursive: true });
      await page.screenshot({ path: join(OUTPUT, 'react.png') });
    } finally {
      await browser?.close();
      await frontEnd.close();
      await proxy.close();
      rmSync(work, { recursive: true, force: true });
    }
  },
);
