/**
 * The development playground (spec 1.6: development builds only): a plain page that uses the
 * browser SDK against this proxy — demo login, profile and wallet, a PIX deposit polled until
 * paid, the game list, the refresh driver, the forced-logout path (the sandbox expires the
 * session through the dev-only forwarder `/api/dev/proxy/__sandbox/sessions/expire`) and a control
 * that makes one sandbox BFF endpoint slow, hang or fail until cleared (the same forwarder, to
 * `/__sandbox/faults`).
 *
 * | route | answers |
 * |---|---|
 * | `GET /playground` | the page (`src/playground/page.ts`) |
 * | `GET /playground/sdk.js` | the SDK bundle: the browser package's source `packages/browser/src/browser/index.ts` built on first use with esbuild (ESM, platform browser, minified; the options of `scripts/build-browser.mjs`) |
 * | `GET /playground/app.js` | the page script `src/playground/main.ts`, bundled with its SDK import mapped to `/playground/sdk.js` |
 * | `GET /favicon.ico` | 204, no body: the icon a browser asks for by itself on any page of the origin (the playground page has its own, inline) |
 *
 * Every row is `devOnly`: with `NODE_ENV=production` none is registered (`/favicon.ico` then answers
 * 404 like any unknown path). The bundles are built from
 * the sources with esbuild, a development dependency, loaded only when a bundle is first asked for;
 * without it the script routes answer 503 `not_configured`.
 *
 * @module
 */
import { fileURLToPath } from 'node:url';
import { envelope, type ProxyAnswer } from '../envelope.js';
import { PLAYGROUND_HTML } from '../playground/page.js';
import { route, type RouteSpec, routeTable } from './route.js';

/** The page's URL. */
export const PLAYGROUND_PATH = '/playground';

/** Sources, resolved from this module (`src/routes` under tsx, `dist/routes` when built). */
const SOURCES = {
  sdk: fileURLToPath(new URL('../../packages/browser/src/browser/index.ts', import.meta.url)),
  app: fileURLToPath(new URL('../../src/playground/main.ts', import.meta.url)),
} as const;

type BundleName = keyof typeof SOURCES;

interface EsbuildPlugin {
  name: string;
  setup(build: { onResolve(options: { filter: RegExp }, callback: () => { path: string; external: boolean }): void }): void;
}

interface EsbuildApi {
  build(options: Record<string, unknown>): Promise<{ outputFiles?: { text: string }[] }>;
}

/** The SDK import of the page script becomes an import of the served SDK bundle. */
const sdkAsExternal: EsbuildPlugin = {
  name: 'playground-sdk-external',
  setup(build) {
    build.onResolve({ filter: /(^|\/)browser\/index\.js$/ }, () => ({ path: `${PLAYGROUND_PATH}/sdk.js`, external: true }));
  },
};

const bundles = new Map<BundleName, Promise<string>>();

async function buildBundle(name: BundleName): Promise<string> {
  const esbuild = (await import('esbuild')) as unknown as EsbuildApi;
  const result = await esbuild.build({
    entryPoints: [SOURCES[name]],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    minify: name === 'sdk',
    legalComments: 'none',
    logLevel: 'silent',
    write: false,
    plugins: name === 'app' ? [sdkAsExternal] : [],
  });
  const text = result.outputFiles?.[0]?.text;
  if (text === undefined) throw new Error(`esbuild produced no output for ${name}`);
  return text;
}

/** A bundle, built once per process (a failed build is retried on the next request). */
function bundle(name: BundleName): Promise<string> {
  let pending = bundles.get(name);
  if (!pending) {
    pending = buildBundle(name);
    bundles.set(name, pending);
    pending.catch(() => bundles.delete(name));
  }
  return pending;
}

async function script(name: BundleName, log: { warn(obj: object, msg: string): void }): Promise<ProxyAnswer> {
  try {
    return { status: 200, body: await bundle(name), contentType: 'text/javascript; charset=utf-8' };
  } catch (error) {
    log.warn({ err: error }, 'playground bundle failed');
    return { status: 503, body: envelope('not_configured', 'The playground bundles need esbuild (a development dependency)') };
  }
}

/** spec 1.6 development-only rows: the playground page, its two scripts and the browser's favicon request. */
export const playgroundRoutes: readonly RouteSpec[] = routeTable('Development', [
  route({
    method: 'GET',
    url: PLAYGROUND_PATH,
    spec: '1.6',
    summary:
      'development playground page: the browser SDK against this proxy (login with its second-factor step, wallet, deposit, games, forced logout)',
    auth: 'none',
    devOnly: true,
    cacheControl: 'no-store',
    upstream: [],
    handler: async () => ({ status: 200, body: PLAYGROUND_HTML, contentType: 'text/html; charset=utf-8' }),
  }),
  route({
    method: 'GET',
    url: `${PLAYGROUND_PATH}/sdk.js`,
    spec: '1.6',
    summary: 'the browser SDK bundle for the playground (ESM, platform browser, minified)',
    auth: 'none',
    devOnly: true,
    cacheControl: 'no-cache',
    upstream: [],
    handler: async (ctx) => script('sdk', ctx.request.log),
  }),
  route({
    method: 'GET',
    url: `${PLAYGROUND_PATH}/app.js`,
    spec: '1.6',
    summary: "the playground page's script, importing the SDK bundle",
    auth: 'none',
    devOnly: true,
    cacheControl: 'no-cache',
    upstream: [],
    handler: async (ctx) => script('app', ctx.request.log),
  }),
  route({
    method: 'GET',
    url: '/favicon.ico',
    spec: '1.6',
    summary: 'the icon browsers request by themselves: 204 without a body, so a development page (the playground, `/debug`) logs no 404',
    auth: 'none',
    devOnly: true,
    cacheControl: 'public, max-age=86400',
    upstream: [],
    handler: async () => ({ status: 204, body: null }),
  }),
]);
