/**
 * Turns the bench's child-process scripts (`upstream.ts`, `reference.ts`, `peer.ts`, `collector.ts`) into plain
 * JavaScript before a run, so that they run on bare `node` like the proxy (`dist/server.js`) does:
 * no TypeScript loader thread in their memory or CPU figures. The output goes to
 * `node_modules/.cache/front-proxy-bench/`, from where their packages resolve as usual.
 *
 * @module
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const BENCH = dirname(fileURLToPath(import.meta.url));
/** Where the compiled scripts are written. */
export const COMPILED_DIR = resolve(BENCH, '..', 'node_modules', '.cache', 'front-proxy-bench');

/**
 * Compiles `bench/<name>.ts` (which must import only packages, no local files) to an ES module.
 * @returns the path of the `.mjs` file.
 */
export function compileScript(name: string): string {
  const source = readFileSync(join(BENCH, `${name}.ts`), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    fileName: `${name}.ts`,
  });
  mkdirSync(COMPILED_DIR, { recursive: true });
  const out = join(COMPILED_DIR, `${name}.mjs`);
  writeFileSync(out, outputText);
  return out;
}
