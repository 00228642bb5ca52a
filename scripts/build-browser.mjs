// Builds the browser SDK bundle dist/browser/front-proxy-sdk.js from the browser package's source
// (packages/browser/src/browser/index.ts) with esbuild: one ESM file, platform browser, minified,
// with a source map; prints its raw and gzipped sizes. A Node built-in or a module outside the
// package reaching the bundle fails the build.
// With --sizes, instead: the gzipped sizes of what a page bundles (esbuild, minified, tree-shaken)
// for the core entry alone, the core with one message table, and the main entry with every table.
// Usage: node scripts/build-browser.mjs [--json] [--sizes]
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outfile = join(root, 'dist/browser/front-proxy-sdk.js');

/** esbuild options of the SDK bundle; the playground's on-the-fly build uses the same ones. */
export const SDK_BUILD_OPTIONS = {
  entryPoints: [join(root, 'packages/browser/src/browser/index.ts')],
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022'],
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
};

/** Builds the bundle and returns its sizes in bytes. */
export async function buildBrowserBundle() {
  mkdirSync(dirname(outfile), { recursive: true });
  const result = await build({ ...SDK_BUILD_OPTIONS, outfile, sourcemap: 'linked', metafile: true });
  const inputs = Object.keys(result.metafile.inputs);
  const outside = inputs.filter((p) => !/^packages\/browser\/src\//.test(p.replace(/\\/g, '/')));
  if (outside.length > 0) throw new Error(`the browser bundle includes modules outside packages/browser/src: ${outside.join(', ')}`);
  const code = readFileSync(outfile);
  return { file: outfile, bytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length, modules: inputs.length };
}

const SRC = join(root, 'packages/browser/src/browser');
const REACT_SRC = join(root, 'packages/react/src');

/** What a page imports, by case: its module source (imports from the package's sources). */
export const SIZE_CASES = {
  'core (English only): createProxyClient': `import { createProxyClient } from '${SRC}/core.ts'; export const c = createProxyClient();`,
  'core + pt-BR: createProxyClient({ messages: ptBR })': `import { createProxyClient } from '${SRC}/core.ts'; import { ptBR } from '${SRC}/messages/pt-BR.ts'; export const c = createProxyClient({ messages: ptBR });`,
  'all three tables: createProxyClient({ locale })': `import { createProxyClient } from '${SRC}/index.ts'; export const c = createProxyClient({ locale: 'pt-BR' });`,
  'core + pt-BR, with startRefreshDriver': `import { createProxyClient, startRefreshDriver } from '${SRC}/core.ts'; import { ptBR } from '${SRC}/messages/pt-BR.ts'; export const d = startRefreshDriver({ client: createProxyClient({ messages: ptBR }) });`,
  'all three tables, with startRefreshDriver': `import { createProxyClient, startRefreshDriver } from '${SRC}/index.ts'; export const d = startRefreshDriver({ client: createProxyClient({ locale: 'pt-BR' }) });`,
  'core + pt-BR + @front-proxy/react (react itself not counted)': `import { createProxyClient } from '${SRC}/core.ts'; import { ptBR } from '${SRC}/messages/pt-BR.ts'; import * as bindings from '${REACT_SRC}/index.ts'; export const c = createProxyClient({ messages: ptBR }); export { bindings };`,
};

/** The raw and gzipped (level 9) size in bytes of each {@link SIZE_CASES} page bundle. */
export async function measureSizes() {
  const sizes = {};
  for (const [name, contents] of Object.entries(SIZE_CASES)) {
    const result = await build({
      ...SDK_BUILD_OPTIONS,
      entryPoints: undefined,
      stdin: { contents, resolveDir: root, loader: 'js' },
      write: false,
      // The React bindings read the SDK from its sources too (one copy of each module), React stays the page's own.
      alias: { '@front-proxy/browser/core': `${SRC}/core.ts`, '@front-proxy/browser': `${SRC}/index.ts` },
      external: ['react'],
    });
    const code = result.outputFiles[0]?.contents ?? new Uint8Array();
    sizes[name] = { bytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length, text: result.outputFiles[0]?.text ?? '' };
  }
  return sizes;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1] && process.argv.includes('--sizes')) {
  const sizes = await measureSizes();
  for (const [name, size] of Object.entries(sizes)) {
    console.log(`${name}: ${size.bytes} bytes, gzipped ${size.gzipBytes} bytes (${(size.gzipBytes / 1024).toFixed(1)} KiB)`);
  }
} else if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const size = await buildBrowserBundle();
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify(size));
  } else {
    const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
    console.log(
      `dist/browser/front-proxy-sdk.js: ${size.bytes} bytes (${kib(size.bytes)}), gzipped ${size.gzipBytes} bytes (${kib(size.gzipBytes)}), ${size.modules} modules`,
    );
  }
}
