/**
 * The browser SDK stays browser-only: src/browser imports only src/browser and src/errors, plus the
 * types-only src/contracts/shapes.ts through `import type` / `export type` (erased from the bundle),
 * and uses no Node built-ins or globals; `scripts/build-browser.mjs` builds it for platform browser into one
 * minified ESM file and prints its raw and gzipped sizes; the bundle exposes the public API of
 * CONTRACT.md ("Public modules", `./browser`).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIR = new URL('../src/browser/', import.meta.url);
const files = readdirSync(DIR).filter((f) => f.endsWith('.ts'));

/** The types-only module of the spec part 2 shapes, which src/browser may import with `import type` only. */
const SHAPES = '../contracts/shapes.js';

describe('src/browser imports nothing but src/browser and src/errors (and the shared shapes, as types)', () => {
  test('the SDK modules exist', () => {
    for (const f of ['index.ts', 'refresh-cycle.ts', 'refresh-driver.ts', 'proxy-client.ts', 'routes.ts', 'beacon.ts', 'forced-logout.ts']) {
      assert.ok(files.includes(f), f);
    }
  });

  test('src/contracts/shapes.ts is types only: no imports, only exported interfaces and types', () => {
    const code = readFileSync(new URL(SHAPES.replace(/\.js$/, '.ts'), DIR), 'utf8').replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, '');
    assert.doesNotMatch(code, /\bimport\b|\brequire\(/);
    const declarations = code.split('\n').filter((line) => /^[A-Za-z]/.test(line));
    assert.ok(declarations.length > 0);
    for (const line of declarations) assert.match(line, /^export (interface|type) /, line);
  });

  for (const file of files) {
    test(`${file}: relative imports inside src/browser or src/errors, shapes as types only, no Node built-ins or globals`, () => {
      const code = readFileSync(new URL(file, DIR), 'utf8').replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, '');
      const imports = [...code.matchAll(/\b(?:(import|export)(\s+type\b)?[^;'"]*?\bfrom\s+|import\s*\(?\s*)'([^']+)'/g)];
      for (const [, , typeOnly, s = ''] of imports) {
        if (s === SHAPES) assert.ok(typeOnly, `${file} imports ${s} without \`import type\` / \`export type\``);
        else assert.match(s, /^(\.\/[a-z-]+|\.\.\/errors\/index)\.js$/, `${file} imports ${s}`);
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
