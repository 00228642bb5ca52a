/**
 * Turns the bench's child-process scripts (`upstream.ts`, `reference.ts`, `refusal-floor.ts`, `peer.ts`, `peer-assembled.ts`, `collector.ts`, `steps-off.ts`)
 * into plain JavaScript before a run, so that they run on bare `node` like the proxy
 * (`dist/server.js`) does: no TypeScript loader thread in their memory or CPU figures. The bench
 * modules they import (`serve.ts`) are compiled with them. The output goes to
 * `node_modules/.cache/front-proxy-bench/<checkout>/`, from where their packages resolve as usual.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const BENCH = dirname(fileURLToPath(import.meta.url));
/**
 * Where the compiled scripts are written: a folder per checkout (named by a hash of this folder's
 * path), so that checkouts sharing one `node_modules` never run each other's scripts.
 */
export const COMPILED_DIR = resolve(
  BENCH,
  '..',
  'node_modules',
  '.cache',
  'front-proxy-bench',
  createHash('sha256').update(BENCH).digest('hex').slice(0, 12),
);

/** A relative import of another bench module, as written in TypeScript sources (`./serve.js`). */
const LOCAL_IMPORT = /(from\s+|import\s*\(\s*)(['"])\.\/([\w-]+)\.js\2/g;

/**
 * Compiles `bench/<name>.ts` to an ES module, and the bench modules it imports (`./<other>.js`, e.g.
 * `serve.ts`) next to it, their specifiers rewritten to `./<other>.mjs`; packages resolve as usual.
 * @returns the path of the `.mjs` file.
 */
export function compileScript(name: string, done: Set<string> = new Set()): string {
  const out = join(COMPILED_DIR, `${name}.mjs`);
  if (done.has(name)) return out;
  done.add(name);
  const source = readFileSync(join(BENCH, `${name}.ts`), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    fileName: `${name}.ts`,
  });
  const linked = outputText.replace(LOCAL_IMPORT, (_match, lead: string, quote: string, local: string) => {
    compileScript(local, done);
    return `${lead}${quote}./${local}.mjs${quote}`;
  });
  mkdirSync(COMPILED_DIR, { recursive: true });
  // Several lanes of one run compile the same script while another lane's process may be loading
  // it: the file is replaced whole (written beside it, then renamed), never truncated in place, and
  // left alone when it already holds this text.
  if (!existsSync(out) || readFileSync(out, 'utf8') !== linked) {
    const partial = `${out}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    writeFileSync(partial, linked);
    renameSync(partial, out);
  }
  return out;
}
