/**
 * Debian's Chromium for the browser tests, driven by playwright-core: no browser is ever downloaded.
 * A test passes `skip: chromiumSkip` so that it is skipped with a message where Chromium is missing
 * (CI installs it: `apt-get install chromium`).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';

/** Where Debian's package installs Chromium. */
export const CHROMIUM = '/usr/bin/chromium';

/** Headless, no sandbox (containers), and none of the browser's own background traffic. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * Settings every browser test's proxy takes. The proxy shares its process with the test (and the machine
 * with Chromium and the other test files), whose event loop a loaded machine delays: load shedding by
 * event-loop delay would then refuse the page's calls with 503 `overloaded`, which is not what these
 * tests look at. Shedding is tested where a test sets its thresholds (test/resilience.test.ts).
 */
export const BROWSER_TEST_PROXY_ENV = { LOAD_SHED_EVENT_LOOP_DELAY_MS: '0' } as const;

/** The git-ignored folder for screenshots. */
export const TEST_OUTPUT = fileURLToPath(new URL('../../test-output/', import.meta.url));

/** `false` when Chromium is installed, else the reason the browser tests are skipped. */
export const chromiumSkip: false | string = existsSync(CHROMIUM)
  ? false
  : `Chromium is not installed at ${CHROMIUM}: install it with "apt-get install -y chromium" (CI does); this test never downloads a browser`;

/** Polls `probe` every 50 ms until it gives a value other than `undefined`. */
export async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A file the front-end origin serves: its content type and body. */
export interface FrontEndFile {
  readonly type: string;
  readonly body: string | Buffer;
}

/**
 * A front-end origin on a loopback port, as a front-end server would be: it serves `files` (by path;
 * a function renders one per request from the browser's `Cookie` header) and forwards `/api/*` to the proxy at `proxyBase` with the browser's `Host` kept (so the proxy's
 * CSRF rule sees its own origin), bodies passed through unread.
 */
export async function startFrontEnd(
  proxyBase: string,
  files: Readonly<Record<string, FrontEndFile | ((cookie: string | undefined) => Promise<FrontEndFile>)>>,
): Promise<{ origin: string; close: () => Promise<void> }> {
  const { default: Fastify } = await import('fastify');
  const { default: replyFrom } = await import('@fastify/reply-from');
  const frontEnd = Fastify();
  frontEnd.removeAllContentTypeParsers();
  frontEnd.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  await frontEnd.register(replyFrom, { base: proxyBase });
  for (const [path, file] of Object.entries(files)) {
    frontEnd.get(path, async (request, reply) => {
      // A page rendered per request (a server's first render) gets the browser's cookies.
      const { type, body } = typeof file === 'function' ? await file(request.headers.cookie) : file;
      return reply.type(type).send(body);
    });
  }
  frontEnd.all('/api/*', (request, reply) =>
    reply.from(request.url, { rewriteRequestHeaders: (incoming, headers) => ({ ...headers, host: incoming.headers.host ?? '' }) }),
  );
  const origin = await frontEnd.listen({ port: 0, host: '127.0.0.1' });
  return { origin, close: () => frontEnd.close() };
}

/**
 * Bundles a page script for Chromium with esbuild (ESM, es2022, React in production mode), the SDK
 * and the React bindings taken from their sources.
 */
export async function bundlePageScript(source: string): Promise<string> {
  const { build } = await import('esbuild');
  const src = (path: string) => fileURLToPath(new URL(`../../packages/${path}`, import.meta.url));
  const bundle = await build({
    stdin: { contents: source, resolveDir: fileURLToPath(new URL('../../', import.meta.url)), loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    write: false,
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
    alias: {
      '@front-proxy/browser/core': src('browser/src/browser/core.ts'),
      '@front-proxy/browser': src('browser/src/browser/index.ts'),
      '@front-proxy/react': src('react/src/index.ts'),
    },
  });
  return bundle.outputFiles[0]?.text ?? '';
}

/**
 * Debian's Chromium, headless, through playwright-core (imported here, so that a file whose tests are
 * skipped never loads it).
 */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}
