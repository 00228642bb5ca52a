// spec 7.1: codes are append-only. packages/browser/src/errors/codes.lock.json records every published code
// and its value; this test fails when a locked code is edited, removed or reused, and when a
// registry code has not been appended to the lock. Procedure: docs/adding-error-codes.md.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { ENDPOINT_LIST, ERROR_LIST } from '../../src/errors/index.js';
import { endpointLockValue, errorLockValue } from './lock-values.js';

const LOCK_URL = new URL('../../packages/browser/src/errors/codes.lock.json', import.meta.url);
const lockText = readFileSync(LOCK_URL, 'utf8');
const lock = JSON.parse(lockText) as { endpoints: Record<string, string>; errors: Record<string, string> };

const tables = [
  { name: 'endpoints', locked: lock.endpoints, current: new Map(ENDPOINT_LIST.map((e) => [e.code as string, endpointLockValue(e)])) },
  { name: 'errors', locked: lock.errors, current: new Map(ERROR_LIST.map((e) => [e.code as string, errorLockValue(e)])) },
] as const;

describe('spec 7.1: append-only codes (packages/browser/src/errors/codes.lock.json)', () => {
  test('the lock file is well formed: two sections of code → value strings', () => {
    assert.equal(typeof lock.endpoints, 'object');
    assert.equal(typeof lock.errors, 'object');
    for (const { name, locked } of tables) {
      const prefix = name === 'endpoints' ? 'EP' : 'EM';
      for (const [code, value] of Object.entries(locked)) {
        assert.match(code, new RegExp(`^${prefix}\\d{4}$`), `${name}: ${code}`);
        assert.equal(typeof value, 'string', `${name}: ${code}`);
      }
    }
  });

  test('no code is written twice in the lock file (JSON would keep only the last value)', () => {
    const keys = [...lockText.matchAll(/"(E[PM]\d{4})"\s*:/g)].map((m) => m[1]);
    const dupes = keys.filter((k, i) => keys.indexOf(k) !== i);
    assert.deepEqual(dupes, [], `written twice: ${dupes.join(', ')}`);
  });

  for (const { name, locked, current } of tables) {
    test(`${name}: no locked code was removed or edited`, () => {
      const problems: string[] = [];
      for (const [code, value] of Object.entries(locked)) {
        const now = current.get(code);
        if (now === undefined) problems.push(`${code} was removed from the registry (locked as "${value}")`);
        else if (now !== value) problems.push(`${code} changed value: locked "${value}", registry "${now}"`);
      }
      assert.deepEqual(
        problems,
        [],
        `Published codes never change or disappear (spec 7.1). Restore them, and give a new meaning a new code:\n${problems.join('\n')}`,
      );
    });

    test(`${name}: every registry code is appended to the lock`, () => {
      const missing = [...current].filter(([code]) => !(code in locked));
      assert.deepEqual(
        missing.map(([code]) => code),
        [],
        `New codes must be appended to the end of "${name}" in packages/browser/src/errors/codes.lock.json (see docs/adding-error-codes.md). Add:\n${missing
          .map(([code, value]) => `    ${JSON.stringify(code)}: ${JSON.stringify(value)}`)
          .join(',\n')}`,
      );
    });
  }

  test('no two locked codes carry the same value (a meaning is never given a second code)', () => {
    for (const { name, locked } of tables) {
      const byValue = new Map<string, string>();
      for (const [code, value] of Object.entries(locked)) {
        assert.equal(byValue.get(value), undefined, `${name}: ${code} reuses the value of ${byValue.get(value)}`);
        byValue.set(value, code);
      }
    }
  });
});
