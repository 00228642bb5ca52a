// Builds the browser SDK bundle dist/browser/front-proxy-sdk.js from the browser package's source
// (packages/browser/src/browser/index.ts) with esbuild: one ESM file, platform browser, minified,
// with a source map; prints its raw and gzipped sizes. A Node built-in or a module outside the
// package reaching the bundle fails the build.
// Usage: node scripts/build-browser.mjs [--json]
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

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
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
