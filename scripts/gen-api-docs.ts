/**
 * Writes docs/api-reference.md from the OpenAPI document (`npm run docs:api`); with `--check`, exits 1
 * when the file is out of date instead of writing it.
 */
import { renderApiReference } from './api-reference.js';
import { writeOrCheck } from './generated-file.js';
import { openapiDocument } from './openapi-document.js';

writeOrCheck(
  new URL('../docs/api-reference.md', import.meta.url),
  renderApiReference(await openapiDocument()),
  'docs/api-reference.md',
  'npm run docs:api',
);
