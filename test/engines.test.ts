/**
 * The supported Node.js line (package.json `engines`, `>=20.19`): every package of the lockfile
 * accepts its lowest version, so that `npm ci` on Node 20.19+ prints no `EBADENGINE` warning.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import semver from 'semver';

interface LockPackage {
  version?: string;
  engines?: { node?: string } | string[];
}

const read = (file: string): unknown => JSON.parse(readFileSync(new URL(`../${file}`, import.meta.url), 'utf8'));

/** The packages of a lockfile whose `engines.node` refuses `version`, as `path: range`. */
function refusing(lock: { packages: Record<string, LockPackage> }, version: string): string[] {
  const out: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    if (range && !semver.satisfies(version, range)) out.push(`${path || '(root)'}: ${range}`);
  }
  return out;
}

test('package.json supports Node.js 20.19 and later', () => {
  const pkg = read('package.json') as { engines: { node: string } };
  assert.equal(pkg.engines.node, '>=20.19');
  assert.equal(semver.minVersion(pkg.engines.node)?.version, '20.19.0');
});

test('every package of the lockfile accepts Node.js 20.19.0 (no EBADENGINE on npm ci)', () => {
  const lock = read('package-lock.json') as { packages: Record<string, LockPackage> };
  assert.deepEqual(refusing(lock, '20.19.0'), []);
});

test('the check finds a package that wants a newer Node.js', () => {
  const lock = { packages: { '': { engines: { node: '>=20.19' } }, 'node_modules/cookie': { engines: { node: '>=22' } } } };
  assert.deepEqual(refusing(lock, '20.19.0'), ['node_modules/cookie: >=22']);
});
