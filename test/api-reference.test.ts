/**
 * docs/api-reference.md is generated from the route tables; this test fails when they differ. The
 * OpenAPI document is checked by `openapi.test.ts`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { renderApiReference } from '../src/routes/reference.js';

test('docs/api-reference.md matches the route tables (run npm run docs:api)', () => {
  const file = readFileSync(new URL('../docs/api-reference.md', import.meta.url), 'utf8');
  assert.equal(file, renderApiReference());
});
