// Writes docs/error-codes.md from the EP and EM registries in src/errors (spec 7).
// Usage: npm run docs:errors            (write the file)
//        npm run docs:errors -- --check (exit 1 when the file is out of date; writes nothing)
import { readFileSync, writeFileSync } from 'node:fs';
import { renderErrorCodesMarkdown } from '../src/errors/docs.js';

const target = new URL('../docs/error-codes.md', import.meta.url);
const wanted = renderErrorCodesMarkdown();
let current: string | undefined;
try {
  current = readFileSync(target, 'utf8');
} catch {
  current = undefined;
}

if (process.argv.includes('--check')) {
  if (current !== wanted) {
    console.error('docs/error-codes.md is out of date: run npm run docs:errors');
    process.exit(1);
  }
  console.log('docs/error-codes.md is up to date');
} else if (current === wanted) {
  console.log('docs/error-codes.md is up to date');
} else {
  writeFileSync(target, wanted);
  console.log('wrote docs/error-codes.md');
}
