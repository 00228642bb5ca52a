// docs/error-codes.md is generated from the registries (npm run docs:errors); it must match
// them in both directions (docs/architecture.md "Habits" (habit 1)).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { ENDPOINT_LIST, ERROR_LIST } from '../../src/errors/index.js';
import { renderErrorCodesMarkdown } from '../../src/errors/docs.js';

const DOC_URL = new URL('../../docs/error-codes.md', import.meta.url);
const onDisk = readFileSync(DOC_URL, 'utf8');
const codeRows = (md: string) => [...md.matchAll(/^\| (E[PM]\d{4}) \|/gm)].map((m) => m[1] ?? '');

describe('spec 7: docs/error-codes.md matches the registry', () => {
  test('every registry code has a row in the document', () => {
    const inDoc = new Set(codeRows(onDisk));
    const missing = [...ENDPOINT_LIST, ...ERROR_LIST].map((e) => e.code).filter((c) => !inDoc.has(c));
    assert.deepEqual(missing, [], 'run npm run docs:errors');
  });

  test('every code row of the document is in the registry, once', () => {
    const known = new Set<string>([...ENDPOINT_LIST, ...ERROR_LIST].map((e) => e.code));
    const rows = codeRows(onDisk);
    assert.deepEqual(
      rows.filter((c) => !known.has(c)),
      [],
      'the document lists codes the registry does not have',
    );
    assert.equal(new Set(rows).size, rows.length, 'a code appears twice');
  });

  test('the document is exactly what npm run docs:errors generates', () => {
    assert.equal(onDisk, renderErrorCodesMarkdown(), 'docs/error-codes.md is out of date: run npm run docs:errors');
  });

  test('the generator is deterministic', () => {
    assert.equal(renderErrorCodesMarkdown(), renderErrorCodesMarkdown());
  });
});
