/**
 * Writes docs/api-reference.md from the route tables (`npm run docs:api`); with `--check`, exits 1
 * when the file is out of date instead of writing it.
 */
import { renderApiReference } from '../src/routes/reference.js';
import { writeOrCheck } from './generated-file.js';

writeOrCheck(new URL('../docs/api-reference.md', import.meta.url), renderApiReference(), 'docs/api-reference.md', 'npm run docs:api');
