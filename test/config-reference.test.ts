/**
 * The README's configuration table is generated from the configuration schema (`npm run docs:config`):
 * every variable of the schema has its row in the README, every variable of the README's table is
 * one of the schema, and the rows read as the generator writes them (defaults and accepted values
 * from the schema).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { Type } from '@sinclair/typebox';
import {
  CONFIG_TABLE_END,
  CONFIG_TABLE_START,
  renderConfigTable,
  tableVariables,
  withConfigTable,
} from '../scripts/config-reference.js';
import { EnvSchema } from '../src/config.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

function readmeTable(): string[] {
  const start = readme.indexOf(CONFIG_TABLE_START);
  const end = readme.indexOf(CONFIG_TABLE_END);
  assert.ok(start !== -1 && end > start, 'README.md has the configuration table markers');
  return readme
    .slice(start + CONFIG_TABLE_START.length, end)
    .split('\n')
    .filter((l) => l.startsWith('|'));
}

describe('README configuration table', () => {
  test('names every variable of the schema, and only those', () => {
    const inReadme = tableVariables(readmeTable()).sort();
    const inSchema = Object.keys(EnvSchema.properties).sort();
    assert.deepEqual(
      inSchema.filter((v) => !inReadme.includes(v)),
      [],
      'variables of src/config.ts missing from README.md (run npm run docs:config)',
    );
    assert.deepEqual(
      inReadme.filter((v) => !inSchema.includes(v)),
      [],
      'variables of README.md that src/config.ts does not have (run npm run docs:config)',
    );
  });

  test('is the generated table, row for row (run npm run docs:config)', () => {
    assert.deepEqual(readmeTable(), renderConfigTable());
    assert.equal(withConfigTable(readme), readme);
  });

  test('takes defaults and accepted values from the schema', () => {
    const rows = renderConfigTable();
    assert.ok(rows.includes('| `PORT` | `3000` | integer 0–65535 | listen port (`0` = any free port; the log prints the one chosen) |'));
    assert.match(rows.find((r) => r.startsWith('| `WORKERS`')) ?? '', /\| `1` \| integer 1–64 \|/);
  });

  test('refuses a variable it cannot explain and a row for a variable the schema lacks', () => {
    const schema = Type.Object({ PORT: Type.Integer({ default: 1 }), NEW_THING: Type.String() });
    assert.throws(() => renderConfigTable(schema, [{ variables: ['PORT'], meaning: 'port' }]), /NEW_THING: no row/);
    assert.throws(() => renderConfigTable(schema, [{ variables: ['PORT', 'NEW_THING', 'GONE'], meaning: 'x' }]), /GONE has a row/);
    const described = Type.Object({ NEW_THING: Type.String({ description: 'a new thing' }) });
    assert.deepEqual(renderConfigTable(described, []).at(-1), '| `NEW_THING` | none | text | a new thing |');
  });
});
