/**
 * The browser SDK as a front-end team gets it (issue 34, docs/architecture.md "Habits" (habit 17)): `npm pack` in
 * packages/browser (its `prepack` builds it), the tarball installed into a fresh front-end project
 * with `npm install --offline <tarball>` (no runtime dependency, so nothing else is fetched), a page
 * bundled from that project with esbuild, served by a small front-end server that forwards `/api/`
 * to the proxy on the same origin (as a front end's dev server or ingress does, `Host` kept), and
 * driven in Debian's Chromium (playwright-core; no browser is ever downloaded): login, profile,
 * then the sandbox expires the session and the next call forces one logout (one beacon, the
 * callback with the reference, the message in Portuguese).
 *
 * Skipped with a message when Chromium is not installed (CI installs it: `apt-get install chromium`).
 * A screenshot is saved to test-output/package.png.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import replyFrom from '@fastify/reply-from';
import { build } from 'esbuild';
import Fastify from 'fastify';
import type { Browser } from 'playwright-core';
import { createServer } from '../src/app.js';
import { BROWSER_TEST_PROXY_ENV, chromiumSkip as skip, launchChromium, TEST_OUTPUT as OUTPUT, waitFor } from './helpers/chromium.js';
import { LogCapture } from './helpers/recording-upstream.js';

const PACKAGE_DIR = fileURLToPath(new URL('../packages/browser/', import.meta.url));
const PACKAGE = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { name: string; version: string };

/** The front end's page: four buttons and what the SDK tells it. */
const INDEX_HTML = `<!doctype html>
<html lang="pt-BR"><head><meta charset="utf-8"><title>front end</title><link rel="icon" href="data:,"></head>
<body>
<button id="login">Entrar</button> <button id="profile">Perfil</button>
<button id="expire">Expirar sessão (sandbox)</button> <button id="wallet">Carteira</button>
<p>status: <span id="status">out</span></p>
<p>usuário: <span id="user">–</span></p>
<p>logout forçado: <span id="forced">–</span></p>
<p>erro: <span id="error">–</span></p>
<script type="module" src="/app.js"></script>
</body></html>
`;

/** The front end's script, importing the installed package by its name. */
const MAIN_JS = `import { createProxyClient, ProxyError } from '${PACKAGE.name}';

const $ = (id) => document.getElementById(id);
const client = createProxyClient({
  locale: 'pt-BR',
  onForcedLogout: (ref) => {
    $('status').textContent = 'forced-out';
    $('forced').textContent = ref;
  },
});
const show = (error) => {
  $('error').textContent = error instanceof ProxyError ? error.message + ' #' + error.ref : String(error);
};
$('login').onclick = () =>
  client.auth.login({ body: { login: 'demo@example.com', password: 'Demo#2026' } }).then(() => {
    $('status').textContent = client.hasSession ? 'in' : 'no-session';
  }, show);
$('profile').onclick = () => client.auth.profile().then(({ user }) => { $('user').textContent = user.email; }, show);
$('expire').onclick = () =>
  client.request('POST', '/api/dev/proxy/__sandbox/sessions/expire').then(() => { $('status').textContent = 'expired'; }, show);
$('wallet').onclick = () => client.wallet.refresh().then(() => { $('status').textContent = 'wallet'; }, show);
document.body.dataset.ready = 'true';
`;

function run(command: string, args: string[], cwd: string): string {
  // stderr is kept (not printed): a failure's error carries it.
  return execFileSync(command, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' },
  });
}

/** Like {@link run}, with stderr as well (npm's warnings go there). */
function runAll(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' },
  });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr}`);
  return `${result.stdout}${result.stderr}`;
}

test(
  'the packed SDK installed in a fresh front-end project: login, profile, forced logout in Chromium',
  { skip, timeout: 120_000 },
  async () => {
    const work = mkdtempSync(join(tmpdir(), 'front-proxy-package-'));
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
      // 1. npm pack: the prepack build, then a tarball with the package's files only.
      const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], PACKAGE_DIR)) as {
        filename: string;
        files: { path: string }[];
      }[];
      const tarball = join(work, packed[0]?.filename ?? '');
      assert.ok(existsSync(tarball), tarball);
      const files = packed[0]?.files.map((f) => f.path) ?? [];
      for (const want of [
        'package.json',
        'CHANGELOG.md',
        'README.md',
        'LICENSE',
        'dist/browser/index.js',
        'dist/browser/index.d.ts',
        'dist/errors/index.js',
        'dist/contracts/shapes.d.ts',
      ]) {
        assert.ok(files.includes(want), `the tarball holds ${want}`);
      }
      assert.deepEqual(
        files.filter((f) => !/^(package\.json|CHANGELOG\.md|README\.md|LICENSE|dist\/.*\.(js|d\.ts))$/.test(f)),
        [],
        'nothing but the manifest, the notes and the built modules',
      );

      // 2. A fresh front-end project installs the tarball offline: one package, nothing else.
      const app = join(work, 'front-end');
      mkdirSync(join(app, 'src'), { recursive: true });
      writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'front-end', private: true, type: 'module' }, null, 2));
      const installLog = runAll('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], app);
      assert.doesNotMatch(installLog, /install-scripts|prepare|postinstall/, 'the packed manifest declares no install script');
      const installed = JSON.parse(readFileSync(join(app, 'node_modules', PACKAGE.name, 'package.json'), 'utf8')) as { version: string };
      assert.equal(installed.version, PACKAGE.version);
      assert.deepEqual(
        readdirSync(join(app, 'node_modules')).filter((n) => !n.startsWith('.')),
        [PACKAGE.name.split('/')[0]],
        'no other package installed',
      );
      const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
      assert.match(manifest.dependencies?.[PACKAGE.name] ?? '', /\.tgz$/);

      // 3. The page bundled from the project: every module comes from the installed package or the page.
      writeFileSync(join(app, 'src', 'main.js'), MAIN_JS);
      writeFileSync(join(app, 'index.html'), INDEX_HTML);
      const bundle = await build({
        absWorkingDir: app,
        entryPoints: ['src/main.js'],
        bundle: true,
        format: 'esm',
        platform: 'browser',
        target: ['es2022'],
        minify: true,
        write: false,
        metafile: true,
        logLevel: 'silent',
      });
      const inputs = Object.keys(bundle.metafile.inputs);
      const outside = inputs.filter((p) => p !== 'src/main.js' && !p.startsWith(`node_modules/${PACKAGE.name}/dist/`));
      assert.deepEqual(outside, [], `bundled from ${relative(process.cwd(), app)}: only the page and the installed package`);
      const appJs = bundle.outputFiles[0]?.text ?? '';

      // 4. The front end's origin: the page and its script, and /api/ forwarded to the proxy with Host kept.
      frontEnd.removeAllContentTypeParsers();
      frontEnd.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
      await frontEnd.register(replyFrom, { base: proxyBase });
      frontEnd.get('/', (_request, reply) => reply.type('text/html; charset=utf-8').send(INDEX_HTML));
      frontEnd.get('/app.js', (_request, reply) => reply.type('text/javascript; charset=utf-8').send(appJs));
      frontEnd.all('/api/*', (request, reply) =>
        reply.from(request.url, { rewriteRequestHeaders: (incoming, headers) => ({ ...headers, host: incoming.headers.host ?? '' }) }),
      );
      const origin = await frontEnd.listen({ port: 0, host: '127.0.0.1' });

      // 5. Chromium drives it.
      browser = await launchChromium();
      const context = await browser.newContext({ viewport: { width: 900, height: 500 } });
      const page = await context.newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (error) => pageErrors.push(error.message));
      const requests: string[] = [];
      page.on('request', (request) =>
        requests.push(`${request.method()} ${new URL(request.url()).host} ${new URL(request.url()).pathname}`),
      );
      const text = async (id: string) => ((await page.textContent(`#${id}`)) ?? '').trim();

      await page.goto(origin);
      await page.waitForSelector('body[data-ready="true"]');
      await page.click('#login');
      await page.waitForSelector('#status:text("in")');
      const httpOnly = (await context.cookies(origin)).filter((c) => c.httpOnly);
      assert.ok(httpOnly.length > 0, 'the session cookie is HttpOnly');
      const visible = await page.evaluate(() => document.cookie);
      for (const cookie of httpOnly) assert.ok(!visible.includes(`${cookie.name}=`), 'scripts do not see the session cookie');
      await page.click('#profile');
      await page.waitForSelector('#user:text("demo@example.com")');

      await page.click('#expire');
      await page.waitForSelector('#status:text("expired")');
      await page.click('#wallet');
      await page.waitForSelector('#status:text("forced-out")');
      assert.equal(await text('forced'), 'EP0710-EM0003');
      assert.equal(await text('error'), 'Sua sessão expirou. Faça login novamente. #EP0710-EM0003');
      // One beacon reaches the proxy, through the front end's origin.
      const beacons = () => logs.entries.filter((e) => e.msg === 'forced-logout');
      await waitFor('the forced-logout log line', () => (beacons().length > 0 ? true : undefined));
      assert.equal(beacons().length, 1);
      assert.equal((beacons()[0]?.beacon as Record<string, unknown> | undefined)?.ref, 'EP0710-EM0003');
      const host = new URL(origin).host;
      assert.ok(
        requests.every((r) => r.split(' ')[1] === host),
        `every request went to the front end's origin: ${requests.join(', ')}`,
      );
      assert.ok(requests.includes(`POST ${host} /api/auth/logout`), 'the forced logout called /api/auth/logout');
      assert.deepEqual(pageErrors, []);
      mkdirSync(OUTPUT, { recursive: true });
      await page.screenshot({ path: join(OUTPUT, 'package.png') });
    } finally {
      await browser?.close();
      await frontEnd.close();
      await proxy.close();
      rmSync(work, { recursive: true, force: true });
    }
  },
);
