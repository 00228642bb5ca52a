/**
 * Writes docs/api-reference.md from the route tables (`npm run docs:api`); with `--check`, exits 1
 * when the file is out of date instead of writing it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { renderApiReference } from '../src/routes/reference.js';

const target = new URL('../docs/api-reference.md', import.meta.url);
const text = renderApiReference();
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // missing counts as out of date
  }
  if (current !== text) {
    process.stderr.write('docs/api-reference.md is out of date: run npm run docs:api\n');
    process.exit(1);
  }
} else {
  writeFileSync(target, text);
  process.stdout.write('wrote docs/api-reference.md\n');
}
