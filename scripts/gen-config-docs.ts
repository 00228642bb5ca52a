/**
 * Writes the configuration table of docs/configuration.md from the configuration schema
 * (`npm run docs:config`); with `--check`, exits 1 when the page is out of date instead of writing it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { CONFIG_PAGE, withConfigTable } from './config-reference.js';

const target = new URL(`../${CONFIG_PAGE}`, import.meta.url);
const current = readFileSync(target, 'utf8');
const next = withConfigTable(current);
if (process.argv.includes('--check')) {
  if (current !== next) {
    process.stderr.write(`${CONFIG_PAGE}: the configuration table is out of date: run npm run docs:config\n`);
    process.exit(1);
  }
} else {
  writeFileSync(target, next);
  process.stdout.write(`wrote the configuration table of ${CONFIG_PAGE}\n`);
}
