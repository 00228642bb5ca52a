/**
 * The browser package stays browser-only and self-contained (docs/architecture.md "Habits" (habit 17)): every module of
 * packages/browser/src imports only modules of the package (the SDK `browser/`, the registry
 * `errors/`, the types-only shapes `contracts/shapes.ts` through `import type` / `export type`),
 * the registry never imports the SDK, and nothing uses a Node built-in or global; the package
 * declares no runtime dependency. `scripts/build-browser.mjs` builds the SDK for platform browser
 * into one minified ESM file and prints its raw and gzipped sizes; the bundle exposes the public
 * API of docs/behaviour.md ("Public modules", `./browser`).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PACKAGE = new URL('../packages/browser/', import.meta.url);
const SRC = new URL('src/', PACKAGE);

/** Every `.ts` module of the package, as a path below its src/ (`browser/index.ts`). */
const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
  .map((f) => f.replace(/\\/g, '/'))
  .filter((f) => f.endsWith('.ts'))
  .sort();

/** The types-only module of the spec part 2 shapes, which the SDK may import with `import type` only. */
const SHAPES = 'contracts/shapes.ts';

describe('packages/browser imports nothing outside itself, and no Node built-in', () => {
  test('the SDK and registry modules exist', () => {
    for (const f of [
      'browser/index.ts',
      'browser/refresh-cycle.ts',
      'browser/refresh-driver.ts',
      'browser/proxy-client.ts',
      'browser/routes.ts',
      'browser/beacon.ts',
      'browser/forced-logout.ts',
      'errors/index.ts',
      'errors/classify.ts',
      SHAPES,
    ]) {
      assert.ok(files.includes(f), f);
    }
  });

  test('package.json: no runtime dependencies, exports with types, files, a version, a prepack build', () => {
    const pkg = JSON.parse(readFileSync(new URL('package.json', PACKAGE), 'utf8')) as Record<string, unknown>;
    assert.equal(pkg.dependencies, undefined);
    assert.equal(pkg.peerDependencies, undefined);
    assert.equal(pkg.optionalDependencies, undefined);
    assert.match(String(pkg.version), /^\d+\.\d+\.\d+/);
    assert.ok(Array.isArray(pkg.files));
    assert.match(String((pkg.scripts as Record<string, string>).prepack), /build/);
    const exportsMap = pkg.exports as Record<string, { types?: string; default?: string } | string>;
    const subpaths = ['.', './core', './errors', './shapes', './messages/pt-BR', './messages/en', './messages/es'];
    for (const subpath of subpaths) {
      const entry = exportsMap[subpath];
      assert.ok(typeof entry === 'object' && entry.types?.endsWith('.d.ts') && entry.default?.endsWith('.js'), subpath);
      // typesVersions: the same declarations for `moduleResolution: node`, which reads no `exports`.
      const types = typeof entry === 'object' ? (entry.types ?? '') : '';
      if (subpath !== '.')
        assert.deepEqual((pkg.typesVersions as Record<string, Record<string, string[]>>)['*']?.[subpath.slice(2)], [types], subpath);
      assert.ok(
        existsSync(new URL(`src/${types.slice('./dist/'.length).replace(/\.d\.ts$/, '.ts')}`, PACKAGE)),
        `${subpath}: a source module`,
      );
    }
    const root = exportsMap['.'] as { types: string; default: string };
    assert.deepEqual([pkg.main, pkg.types], [root.default, root.types], 'main and types: the fallbacks of `.`');
    // Nothing runs at install: an install script is flagged by npm and by security reviews.
    for (const script of ['preinstall', 'install', 'postinstall', 'prepare'])
      assert.equal((pkg.scripts as Record<string, string>)[script], undefined, script);
    assert.equal(pkg.license, 'MIT');
    assert.ok((pkg.files as string[]).includes('LICENSE') && existsSync(new URL('LICENSE', PACKAGE)), 'the LICENSE file ships');
  });

  test(`${SHAPES} is types only: no imports, only exported interfaces and types`, () => {
    const code = readFileSync(new URL(SHAPES, SRC), 'utf8').replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, '');
    assert.doesNotMatch(code, /\bimport\b|\brequire\(/);
    const declarations = code.split('\n').filter((line) => /^[A-Za-z]/.test(line));
    assert.ok(declarations.length > 0);
    for (const line of declarations) assert.match(line, /^export (interface|type) /, line);
  });

  for (const file of files) {
    test(`${file}: relative imports inside the package (errors/ never imports browser/), shapes as types only, no Node built-ins or globals`, () => {
      const code = readFileSync(new URL(file, SRC), 'utf8').replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, '');
      const imports = [...code.matchAll(/\b(?:(import|export)(\s+type\b)?[^;'"]*?\bfrom\s+|import\s*\(?\s*)'([^']+)'/g)];
      for (const [, , typeOnly, s = ''] of imports) {
        assert.match(s, /^\.\.?\//, `${file} imports ${s}: only relative imports inside the package`);
        const target = new URL(s.replace(/\.js$/, '.ts'), new URL(file, SRC)).href.slice(SRC.href.length);
        assert.ok(files.includes(target), `${file} imports ${s}, outside the package`);
        if (target === SHAPES) assert.ok(typeOnly, `${file} imports ${s} without \`import type\` / \`export type\``);
        if (file.startsWith('errors/')) assert.ok(target.startsWith('errors/'), `${file}: the registry imports ${s}`);
      }
      for (const global of ['process.', 'Buffer', 'require(', '__dirname', 'node:', 'globalThis.process']) {
        assert.ok(!code.includes(global), `${file} uses ${global}`);
      }
    });
  }
});

describe('scripts/build-browser.mjs', () => {
  let size: { file: string; bytes: number; gzipBytes: number; modules: number };

  test('builds dist/browser/front-proxy-sdk.js for platform browser and reports raw and gzipped sizes', () => {
    const out = execFileSync(process.execPath, ['scripts/build-browser.mjs', '--json'], { cwd: ROOT, encoding: 'utf8' });
    size = JSON.parse(out.trim().split('\n').pop() ?? '{}');
    assert.ok(size.file.endsWith('dist/browser/front-proxy-sdk.js'));
    assert.ok(size.bytes > 1000 && size.gzipBytes > 500 && size.gzipBytes < size.bytes, JSON.stringify(size));
    assert.ok(size.gzipBytes < 32 * 1024, `gzipped bundle under 32 KiB (${size.gzipBytes})`);
    const human = execFileSync(process.execPath, ['scripts/build-browser.mjs'], { cwd: ROOT, encoding: 'utf8' });
    assert.match(human, /front-proxy-sdk\.js: \d+ bytes .* gzipped \d+ bytes/);
  });

  test('--sizes: a page that imports the core and one table bundles that table only (smaller than all three)', async () => {
    const { measureSizes } = (await import(pathToFileURL(`${ROOT}/scripts/build-browser.mjs`).href)) as {
      measureSizes: () => Promise<Record<string, { gzipBytes: number; text: string }>>;
    };
    const sizes = Object.values(await measureSizes());
    const [core, one, all] = sizes;
    assert.ok(core && one && all);
    // ASCII phrases: esbuild escapes other characters.
    const pt = /Login ou senha incorretos/;
    const es = /El usuario o la contrase/;
    assert.ok(!pt.test(core.text) && !es.test(core.text), 'the core: English only');
    assert.ok(pt.test(one.text) && !es.test(one.text), 'core + pt-BR: Portuguese, no Spanish');
    assert.ok(pt.test(all.text) && es.test(all.text), 'the main entry: every table');
    assert.ok(core.gzipBytes < one.gzipBytes && one.gzipBytes < all.gzipBytes, sizes.map((s) => s.gzipBytes).join(' < '));
    // The EP registry: the internal proxy rows the client's calls are classified on, no BFF row.
    for (const page of sizes) {
      assert.ok(page.text.includes('/api/wallet/*') && page.text.includes('/api/games/*'), 'the internal rows (EP0710, EP0717)');
      assert.ok(!page.text.includes('/users/wallet') && !page.text.includes('/auth/user-profile'), 'no BFF row (EP0034, EP0003)');
    }
  });

  test('the bundle is one minified ESM file exposing the public API', async () => {
    const code = readFileSync(size.file, 'utf8');
    assert.ok(code.split('\n').length < 5, 'minified');
    assert.ok(!/\bimport\s*[{*"']|require\(/.test(code), 'self-contained');
    const sdk = (await import(pathToFileURL(size.file).href)) as Record<string, unknown>;
    for (const name of [
      'initialRefreshState',
      'markTokenSaved',
      'shouldRefreshToken',
      'markRefreshStarted',
      'markRefreshCompleted',
      'createProxyClient',
      'startRefreshDriver',
      'ProxyError',
      'sendForcedLogoutBeacon',
      'buildForcedLogoutBeacon',
      'ROUTES',
      'classifyError',
    ]) {
      assert.equal(typeof sdk[name] === 'function' || Array.isArray(sdk[name]), true, name);
    }
    const cycle = sdk as {
      initialRefreshState: () => unknown;
      markTokenSaved: (s: unknown, now?: number) => unknown;
      shouldRefreshToken: (s: unknown, now?: number) => boolean;
    };
    const saved = cycle.markTokenSaved(cycle.initialRefreshState(), 0);
    assert.equal(cycle.shouldRefreshToken(saved, 6 * 3600 * 1000 - 1000), false);
    assert.equal(cycle.shouldRefreshToken(saved, 6 * 3600 * 1000 + 1000), true);
  });
});

describe('the root package\'s ./errors and ./browser subpaths (docs/behaviour.md "Public modules")', () => {
  const built = existsSync(new URL('../dist/errors/index.js', import.meta.url));
  const skip = built ? false : 'dist/ is not built: run npm run build (npm test does)';

  /** Imports a built module by its package specifier (a variable: the type checker does not need dist/). */
  const load = (specifier: string) => import(specifier) as Promise<Record<string, unknown>>;

  test('re-export the browser package: one registry, one SDK', { skip }, async () => {
    const rootErrors = await load('front-proxy/errors');
    const packageErrors = await load('@front-proxy/browser/errors');
    const rootBrowser = await load('front-proxy/browser');
    const packageBrowser = await load('@front-proxy/browser');
    for (const name of ['classifyError', 'ERROR_CODES', 'ENDPOINT_CODES', 'parseRef', 'formatRef', 'explainRef']) {
      assert.ok(rootErrors[name] !== undefined && rootErrors[name] === packageErrors[name], `./errors ${name}`);
    }
    assert.deepEqual(Object.keys(rootErrors).sort(), Object.keys(packageErrors).sort());
    for (const name of ['createProxyClient', 'ProxyError', 'startRefreshDriver', 'markTokenSaved', 'resolveLocale', 'classifyError']) {
      assert.ok(rootBrowser[name] !== undefined && rootBrowser[name] === packageBrowser[name], `./browser ${name}`);
    }
    assert.deepEqual(Object.keys(rootBrowser).sort(), Object.keys(packageBrowser).sort());
  });
});
