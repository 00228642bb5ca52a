// The registry (packages/browser/src/errors) runs in Node and in the browser (spec 7, docs/architecture.md "Habits" (habit 17)): no Node built-ins, no
// imports from outside its folder, no dependencies, no Node globals.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

const DIR = new URL('../../packages/browser/src/errors/', import.meta.url);
const files = readdirSync(DIR).filter((f) => f.endsWith('.ts'));

describe('packages/browser/src/errors is isomorphic', () => {
  test('the module files exist', () => {
    for (const f of ['endpoint-codes.ts', 'error-codes.ts', 'classify.ts', 'ref.ts', 'index.ts']) {
      assert.ok(files.includes(f), f);
    }
  });

  for (const file of files) {
    test(`${file}: imports only sibling modules, uses no Node globals`, () => {
      const source = readFileSync(new URL(file, DIR), 'utf8');
      const code = source.replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, '');
      const specifiers = [...code.matchAll(/\bfrom\s+'([^']+)'|\bimport\s*\(\s*'([^']+)'/g)].map((m) => m[1] ?? m[2] ?? '');
      for (const s of specifiers) {
        assert.match(s, /^\.\/[a-z-]+\.js$/, `${file} imports ${s}`);
      }
      for (const global of ['process.', 'Buffer', 'require(', '__dirname', 'globalThis.process', 'node:']) {
        assert.ok(!code.includes(global), `${file} uses ${global}`);
      }
    });
  }
});
