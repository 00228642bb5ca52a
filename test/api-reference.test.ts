/**
 * docs/api-reference.md is rendered from the OpenAPI document (scripts/api-reference.ts); this test
 * fails when the file and the document differ. The document itself is checked by `openapi.test.ts`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { renderApiReference } from '../scripts/api-reference.js';
import { openapiDocument } from '../scripts/openapi-document.js';

test('docs/api-reference.md matches the OpenAPI document (run npm run docs:api)', async () => {
  const file = readFileSync(new URL('../docs/api-reference.md', import.meta.url), 'utf8');
  const doc = await openapiDocument();
  const rendered = renderApiReference(doc);
  assert.ok(file === rendered, 'docs/api-reference.md is out of date: run npm run docs:api');
  // Every operation of the document has its section, under its area.
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(item)) assert.ok(rendered.includes(`### ${method.toUpperCase()} \`${path}\``), `${method} ${path}`);
  }
});
