/**
 * CHANGELOG.md in Keep a Changelog form (1.1.0): `## [Unreleased]` first, then each version as
 * `## [x.y.z] - YYYY-MM-DD`, newest first, with a link reference each; only the format's change
 * groups; the browser SDK's own changelog linked, and present.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import semver from 'semver';

const read = (path: string): string => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

/** The problems of a changelog's text; empty when it keeps the form. */
function changelogProblems(text: string): string[] {
  const out: string[] = [];
  const versions = [...text.matchAll(/^## (.*)$/gm)].map((m) => m[1] as string);
  if (versions[0] !== '[Unreleased]') out.push(`the first section is ${versions[0] ?? 'missing'}, not [Unreleased]`);
  const released = versions.slice(1).map((heading) => {
    const m = /^\[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$/.exec(heading);
    if (!m) out.push(`"## ${heading}" is not "## [x.y.z] - YYYY-MM-DD"`);
    else if (Number.isNaN(Date.parse(`${m[2]}T00:00:00Z`)) || new Date(`${m[2]}T00:00:00Z`).toISOString().slice(0, 10) !== m[2])
      out.push(`${heading}: not a date`);
    return m ? { version: m[1] as string, date: m[2] as string } : undefined;
  });
  const known = released.filter((r): r is { version: string; date: string } => r !== undefined);
  for (let i = 1; i < known.length; i++) {
    const [newer, older] = [known[i - 1], known[i]] as [{ version: string; date: string }, { version: string; date: string }];
    if (!semver.gt(newer.version, older.version) || newer.date < older.date)
      out.push(`${newer.version} (${newer.date}) is listed before ${older.version} (${older.date})`);
  }
  for (const group of text.matchAll(/^### (.*)$/gm)) {
    if (!['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security'].includes(group[1] as string))
      out.push(`"### ${group[1]}" is not a change group`);
  }
  for (const name of ['Unreleased', ...known.map((r) => r.version)]) {
    if (!new RegExp(`^\\[${name.replace(/\./g, '\\.')}\\]: \\S+$`, 'm').test(text)) out.push(`no link reference for [${name}]`);
  }
  return out;
}

test('CHANGELOG.md keeps the Keep a Changelog form: Unreleased first, then dated versions, newest first', () => {
  assert.deepEqual(changelogProblems(read('CHANGELOG.md')), []);
});

test('CHANGELOG.md links the browser SDK changelog, which exists', () => {
  const text = read('CHANGELOG.md');
  assert.match(text, /\(packages\/browser\/CHANGELOG\.md\)/);
  assert.ok(existsSync(new URL('../packages/browser/CHANGELOG.md', import.meta.url)));
  assert.doesNotMatch(text, /once it is\s+a package of its own/);
});

test('the check finds an undated version, versions out of order and an unknown group', () => {
  const bad = ['# Changelog', '## [Unreleased]', '### Added', '## [0.1.0]', '## [0.2.0] - 2026-11-28', '### Misc', '[Unreleased]: x'].join(
    '\n',
  );
  const problems = changelogProblems(bad).join('\n');
  assert.match(problems, /"## \[0\.1\.0\]" is not/);
  assert.match(problems, /"### Misc" is not a change group/);
  assert.match(problems, /no link reference for \[0\.2\.0\]/);
  assert.match(
    changelogProblems('## [Unreleased]\n## [0.1.0] - 2026-11-27\n## [0.2.0] - 2026-11-28\n[Unreleased]: x\n[0.1.0]: x\n[0.2.0]: x').join(
      '\n',
    ),
    /0\.1\.0 \(2026-11-27\) is listed before 0\.2\.0/,
  );
  assert.match(changelogProblems('## [0.1.0] - 2026-11-27').join('\n'), /not \[Unreleased\]/);
});
