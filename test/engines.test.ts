/**
 * The supported Node.js lines (package.json `engines`, `>=20.19`): every package of the lockfile
 * accepts the lowest version and the current LTS line (24, the image's), so that `npm ci` prints no
 * `EBADENGINE` warning on either; `.ci/run` runs the suite again on the Dockerfile's Node.js line.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import semver from 'semver';

interface LockPackage {
  version?: string;
  engines?: { node?: string } | string[];
  os?: string[];
}

const read = (file: string): unknown => JSON.parse(readFileSync(new URL(`../${file}`, import.meta.url), 'utf8'));

/** Whether npm installs a package on Linux, where CI and the image run: not when its `os` excludes it. */
const installedOnLinux = (entry: LockPackage): boolean =>
  entry.os === undefined || entry.os.includes('linux') || entry.os.some((os) => os.startsWith('!') && os !== '!linux');

/**
 * The packages of a lockfile whose `engines.node` refuses `version`, as `path: range`; a package for
 * another operating system (an optional native build of a dependency) is never installed there, so
 * npm never checks its engines.
 */
function refusing(lock: { packages: Record<string, LockPackage> }, version: string): string[] {
  const out: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!installedOnLinux(entry)) continue;
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

test('every package of the lockfile accepts Node.js 24, the current LTS line (no EBADENGINE on npm ci)', () => {
  const lock = read('package-lock.json') as { packages: Record<string, LockPackage> };
  assert.deepEqual(refusing(lock, '24.0.0'), []);
});

test('.ci/run runs the test suite again on the Node.js line of the Dockerfile', () => {
  const ci = readFileSync(new URL('../.ci/run', import.meta.url), 'utf8');
  const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8');
  const lines = [...dockerfile.matchAll(/^FROM node:(\d+)[-.@\s]/gm)].map((m) => m[1]);
  assert.ok(lines.length > 0, 'the Dockerfile has node:<major> stages');
  assert.equal(new Set(lines).size, 1, `one Node.js line in the Dockerfile, got ${lines.join(', ')}`);
  assert.match(ci, new RegExp(`^IMAGE_NODE=${lines[0]}$`, 'm'));
  const first = /^npm test$/m.exec(ci);
  const second = /^npx --yes -p "node@\$\{IMAGE_NODE\}" -- node scripts\/run-tests\.mjs$/m.exec(ci);
  assert.ok(first && second, '.ci/run runs npm test, then scripts/run-tests.mjs under node@IMAGE_NODE');
  assert.ok(first.index < second.index, 'the second run uses the build of npm test');
});

test('the check finds a package that wants a newer Node.js', () => {
  const lock = { packages: { '': { engines: { node: '>=20.19' } }, 'node_modules/cookie': { engines: { node: '>=22' } } } };
  assert.deepEqual(refusing(lock, '20.19.0'), ['node_modules/cookie: >=22']);
});

test('a package for another operating system is not counted; one for Linux is', () => {
  const lock = {
    packages: {
      'node_modules/@img/sharp-win32-ia32': { engines: { node: '^20.9.0' }, os: ['win32'] },
      'node_modules/@img/sharp-linux-x64': { engines: { node: '^20.9.0' }, os: ['linux'] },
      'node_modules/not-on-windows': { engines: { node: '^20.9.0' }, os: ['!win32'] },
    },
  };
  assert.deepEqual(refusing(lock, '24.0.0'), ['node_modules/@img/sharp-linux-x64: ^20.9.0', 'node_modules/not-on-windows: ^20.9.0']);
});
