/**
 * Writes the table of the proxy's own error names in docs/behaviour.md from `src/proxy-errors.ts`
 * (`npm run docs:envelope`); with `--check`, exits 1 when the table is out of date instead.
 */
import { readFileSync } from 'node:fs';
import { withEnvelopeTable } from './envelope-reference.js';
import { writeOrCheck } from './generated-file.js';

const target = new URL('../docs/behaviour.md', import.meta.url);
writeOrCheck(target, withEnvelopeTable(readFileSync(target, 'utf8')), 'docs/behaviour.md', 'npm run docs:envelope');
