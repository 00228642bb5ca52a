/**
 * docs/configuration.md is the one home of the configuration variables. Its table is generated from
 * the configuration schema (`npm run docs:config`): every variable of the schema has its row, every
 * variable of the table is one of the schema, and the rows read as the generator writes them
 * (defaults and accepted values from the schema). No other page describes a variable: none holds a
 * table with a default column keyed by variables, nor states a variable's default in prose (a page
 * names the variable and links to its entry); every link to an entry reaches an anchor of the table.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import {
  CONFIG_PAGE,
  CONFIG_TABLE_END,
  CONFIG_TABLE_START,
  configAnchor,
  renderConfigTable,
  tableVariables,
  withConfigTable,
} from '../scripts/config-reference.js';
import { EnvSchema } from '../src/config.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const page = readFileSync(new URL(`../${CONFIG_PAGE}`, import.meta.url), 'utf8');
const VARIABLES = Object.keys(EnvSchema.properties);

function pageTable(): string[] {
  const start = page.indexOf(CONFIG_TABLE_START);
  const end = page.indexOf(CONFIG_TABLE_END);
  assert.ok(start !== -1 && end > start, `${CONFIG_PAGE} has the configuration table markers`);
  return page
    .slice(start + CONFIG_TABLE_START.length, end)
    .split('\n')
    .filter((l) => l.startsWith('|'));
}

/** One place outside the configuration page that describes a variable. */
interface Finding {
  readonly file: string;
  readonly line: number;
  readonly what: string;
}

/** The schema's default of a variable, as text, when it has one. */
function schemaDefault(variable: string): string | undefined {
  const value = (EnvSchema.properties as Record<string, { default?: unknown }>)[variable]?.default;
  return value === undefined ? undefined : String(value);
}

/** How a variable's default may be written: as it is, and a time in milliseconds also in seconds (`15000`, `15 s`). */
function spellings(variable: string): string[] {
  const value = schemaDefault(variable);
  if (value === undefined) return [];
  const ms = Number(value);
  return variable.endsWith('_MS') && Number.isInteger(ms) && ms > 0 ? [value, `${value} ms`, `${ms / 1000} s`] : [value];
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Where a Markdown text describes a configuration variable instead of linking to its entry:
 * - a table whose header has a `default` column and whose row's first cell names a variable, or
 *   another cell is a variable alone;
 * - a variable followed in the same clause by the word "default" (`` `VAR` (default 4 MiB) ``,
 *   `` `VAR=auto`, the default ``, `` `VAR` defaults to ``), the variable linked or not;
 * - a variable followed by its schema default in parentheses (`` `SHUTDOWN_DELAY_MS` (0) ``,
 *   `` `UPSTREAM_TIMEOUT_MS` (15 s) ``).
 * A variable named in prose, with or without a link to its entry, and a variable set to a value
 * other than its default (`` `SHUTDOWN_DELAY_MS` (5000) `` in a deployment's file) are not findings.
 */
export function describedOutside(file: string, markdown: string, variables: readonly string[] = VARIABLES): Finding[] {
  const findings: Finding[] = [];
  const names = variables.map(escape).join('|');
  const lines = markdown.split('\n');
  const named = new RegExp(`\`(?:${names})\``);
  const alone = new RegExp(`^\\[?\`(?:${names})\`(?:\\]\\([^)]*\\))?$`);
  let defaultColumn = false;
  lines.forEach((line, i) => {
    if (!line.startsWith('|')) {
      defaultColumn = false;
      return;
    }
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    if (cells.some((c) => /^-+:?$|^:-+/.test(c))) return;
    if (cells.some((c) => /^defaults?$/i.test(c))) {
      defaultColumn = true;
      return;
    }
    const first = cells[0] ?? '';
    const keyed = named.test(first) || cells.some((c) => alone.test(c));
    if (defaultColumn && keyed) findings.push({ file, line: i + 1, what: `a table row with a default column: ${line.slice(0, 80)}` });
  });
  // Prose and list items, wrapped lines joined; `](…)` after a name is a link to it.
  const text = markdown.replace(/\n(?!\n)/g, ' ');
  const lineAt = (offset: number): number => markdown.slice(0, offset).split('\n').length;
  const mention = String.raw`\`(${names})(?:=([^\`]*))?\`(?:\]\([^)]*\))?`;
  for (const m of text.matchAll(new RegExp(String.raw`${mention}[^.;|\n]{0,40}?\bdefaults?\b`, 'g'))) {
    const [, variable = '', set] = m;
    // `NODE_ENV=production`, …, the default rate limits: a value other than the default is set, and
    // "default" speaks of something else.
    const other = set !== undefined && schemaDefault(variable) !== undefined && schemaDefault(variable) !== set;
    if (!other) findings.push({ file, line: lineAt(m.index), what: `states the default of ${variable}: ${m[0]}` });
  }
  for (const m of text.matchAll(new RegExp(String.raw`${mention} \(\`?([^()\`]+?)\`?\)`, 'g'))) {
    const [, variable = '', , value = ''] = m;
    if (spellings(variable).includes(value.trim()))
      findings.push({ file, line: lineAt(m.index), what: `states the default of ${variable}: ${m[0]}` });
  }
  return findings;
}

/** Tracked Markdown files other than the configuration page, the changelogs and history/ (records of what held then). */
function otherPages(): Map<string, string> {
  const listed = execFileSync('git', ['ls-files', '-z', '*.md'], { cwd: ROOT, encoding: 'utf8' }).split('\0');
  const pages = new Map<string, string>();
  for (const path of listed) {
    if (!path || path === CONFIG_PAGE || path.startsWith('history/') || path.endsWith('CHANGELOG.md')) continue;
    try {
      pages.set(path, readFileSync(`${ROOT}${path}`, 'utf8'));
    } catch {
      // deleted in the work tree, not yet in the index
    }
  }
  return pages;
}

describe('docs/configuration.md, the configuration table', () => {
  test('names every variable of the schema, and only those', () => {
    const inPage = tableVariables(pageTable()).sort();
    const inSchema = [...VARIABLES].sort();
    assert.deepEqual(
      inSchema.filter((v) => !inPage.includes(v)),
      [],
      `variables of src/config/schema.ts missing from ${CONFIG_PAGE} (run npm run docs:config)`,
    );
    assert.deepEqual(
      inPage.filter((v) => !inSchema.includes(v)),
      [],
      `variables of ${CONFIG_PAGE} that src/config/schema.ts does not have (run npm run docs:config)`,
    );
  });

  test('is the generated table, row for row (run npm run docs:config)', () => {
    assert.deepEqual(pageTable(), renderConfigTable());
    assert.equal(withConfigTable(page), page);
  });

  test('takes defaults and accepted values from the schema, with an anchor per variable', () => {
    const rows = renderConfigTable();
    assert.ok(
      rows.includes(
        '| <a id="port"></a>`PORT` | `3000` | integer 0–65535 | listen port (`0` = any free port; the log prints the one chosen) |',
      ),
    );
    assert.match(rows.find((r) => r.includes('`WORKERS`')) ?? '', /\| `1` \| integer 1–64 \|/);
    assert.match(
      rows.find((r) => r.startsWith('| <a id="redis_sentinels">')) ?? '',
      /^\| <a id="redis_sentinels"><\/a>`REDIS_SENTINELS`, <a id="redis_sentinel_name"><\/a>`REDIS_SENTINEL_NAME` \|/,
    );
    assert.deepEqual(tableVariables(rows.filter((r) => r.startsWith('| <a id="redis_sentinels">'))), [
      'REDIS_SENTINELS',
      'REDIS_SENTINEL_NAME',
    ]);
  });

  test('refuses a variable it cannot explain and a row for a variable the schema lacks', () => {
    const schema = Type.Object({ PORT: Type.Integer({ default: 1 }), NEW_THING: Type.String() });
    assert.throws(() => renderConfigTable(schema, [{ variables: ['PORT'], meaning: 'port' }]), /NEW_THING: no row/);
    assert.throws(() => renderConfigTable(schema, [{ variables: ['PORT', 'NEW_THING', 'GONE'], meaning: 'x' }]), /GONE has a row/);
    const described = Type.Object({ NEW_THING: Type.String({ description: 'a new thing' }) });
    assert.deepEqual(renderConfigTable(described, []).at(-1), '| <a id="new_thing"></a>`NEW_THING` | none | text | a new thing |');
  });
});

describe('a configuration variable is described only in docs/configuration.md', () => {
  const cases: ReadonlyArray<{ readonly name: string; readonly text: string; readonly found: number }> = [
    {
      name: 'a table keyed by variables with a default column',
      text: '| variable | default | what |\n|---|---|---|\n| `PORT` | `3000` | the port |',
      found: 1,
    },
    {
      name: 'a table with a default column and a variable in its second column',
      text: '| limit | variable | default |\n|---|---|---|\n| calls | [`WORKERS`](configuration.md#workers) | 1 |',
      found: 1,
    },
    { name: 'a table without a default column', text: '| topology | events |\n|---|---|\n| `REDIS_URL` | 2 |', found: 0 },
    {
      name: 'a default in parentheses after the name',
      text: 'Raise `UPSTREAM_MAX_RESPONSE_BYTES` (default 4 MiB) when the\nBFF answers more.',
      found: 1,
    },
    { name: 'a default said after a linked name', text: 'Set [`WORKERS`](configuration.md#workers), which defaults to one.', found: 1 },
    { name: 'the schema default alone in parentheses', text: '- `SHUTDOWN_DELAY_MS` (0): the listener closes.', found: 1 },
    {
      name: 'a default in milliseconds written in seconds',
      text: 'The Ingress waits 60 s, longer than `UPSTREAM_TIMEOUT_MS` (15 s).',
      found: 1,
    },
    { name: 'a value that is not the default', text: 'The ConfigMap sets `SHUTDOWN_DELAY_MS` (5000).', found: 0 },
    {
      name: 'a name in prose with a link',
      text: 'With [`REDIS_URL`](configuration.md#redis_url) set, every instance shares the state.',
      found: 0,
    },
    { name: 'a default said of something else in a later clause', text: 'Set `REDIS_URL`. The default pool is used.', found: 0 },
    {
      name: 'another value set, then a default of something else',
      text: 'It runs with `NODE_ENV=production`, the default rate limits.',
      found: 0,
    },
    { name: 'the default value set and called so', text: 'With `WORKERS=1`, the default, one process serves.', found: 1 },
  ];
  for (const { name, text, found } of cases) {
    test(name, () => assert.equal(describedOutside('x.md', text).length, found, JSON.stringify(describedOutside('x.md', text))));
  }

  test('no tracked page other than docs/configuration.md describes one', () => {
    const findings = [...otherPages()].flatMap(([file, text]) => describedOutside(file, text));
    const list = findings.map((f) => `${f.file}:${f.line}: ${f.what}`).join('\n');
    assert.equal(findings.length, 0, `link to the variable's entry (${CONFIG_PAGE}#<name in lower case>) instead:\n${list}`);
  });

  test('every link into docs/configuration.md reaches an entry of its table or a heading', () => {
    const slug = (heading: string): string =>
      heading
        .toLowerCase()
        .replace(/[^\w\s-]/g, '')
        .replace(/\s/g, '-');
    const targets = new Set([...VARIABLES.map(configAnchor), ...[...page.matchAll(/^#+\s+(.+)$/gm)].map((m) => slug(m[1] ?? ''))]);
    const bad: string[] = [];
    for (const [file, text] of otherPages()) {
      for (const m of text.matchAll(/\]\((?:[\w./]*\/)?configuration\.md#([^)\s]+)\)/g))
        if (!targets.has(m[1] ?? '')) bad.push(`${file}: #${m[1]}`);
    }
    assert.deepEqual(bad, [], 'links to anchors docs/configuration.md does not have');
  });
});
