/**
 * The workspace packages as a front-end team gets them: `npm pack` of packages/browser and
 * packages/react (each `prepack` builds it), and a fresh project that installs the tarballs (and
 * react, packed from the repository's node_modules) with `npm install --offline`.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root folder. */
export const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** The workspace packages, by directory below packages/. */
export const WORKSPACES = ['browser', 'react'] as const;

/** A packed workspace package. */
export interface Packed {
  readonly name: string;
  readonly version: string;
  /** Absolute path of the tarball. */
  readonly tarball: string;
  /** The paths inside the tarball (below `package/`). */
  readonly files: readonly string[];
  /** The manifest as packed. */
  readonly manifest: Record<string, unknown>;
}

/**
 * Runs a command (within `timeoutMs`, default 180 s; `env` added to this process's); stdout and
 * stderr together; throws with both on a non-zero exit.
 */
export function runAll(
  command: string,
  args: readonly string[],
  cwd: string,
  env: Record<string, string> = {},
  timeoutMs = 180_000,
): string {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false', ...env },
    timeout: timeoutMs,
  });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status}): ${result.stdout}${result.stderr}`);
  return `${result.stdout}${result.stderr}`;
}

/** `npm pack --json` of a workspace package into `dest`. */
export function pack(workspace: (typeof WORKSPACES)[number], dest: string): Packed {
  const dir = join(REPO, 'packages', workspace);
  const result = spawnSync('npm', ['pack', '--json', '--pack-destination', dest], { cwd: dir, encoding: 'utf8', timeout: 180_000 });
  if (result.status !== 0) throw new Error(`npm pack of ${workspace} failed: ${result.stdout}${result.stderr}`);
  // npm prints the prepack build's output before the JSON (on stdout too).
  const out = result.stdout;
  const json = JSON.parse(out.slice(out.indexOf('[\n'))) as {
    name: string;
    version: string;
    filename: string;
    files: { path: string }[];
  }[];
  const entry = json[0];
  if (!entry) throw new Error(`npm pack of ${workspace} printed no entry`);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  return { name: entry.name, version: entry.version, tarball: join(dest, entry.filename), files: entry.files.map((f) => f.path), manifest };
}

/** The version of a package installed in the repository (e.g. react). */
export function repoVersion(name: string): string {
  return (JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * A tarball of a package as the repository's `npm ci` installed it (react, react-dom, scheduler,
 * @types/react: development dependencies), packed from node_modules into `dest`, so that a fresh
 * project installs it offline whatever the npm cache holds. Returns the tarball's path.
 */
export function packInstalled(name: string, dest: string): string {
  const result = spawnSync('npm', ['pack', '--json', '--pack-destination', dest, join(REPO, 'node_modules', name)], {
    cwd: dest,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (result.status !== 0) throw new Error(`npm pack of node_modules/${name} failed: ${result.stdout}${result.stderr}`);
  const entry = (JSON.parse(result.stdout.slice(result.stdout.indexOf('[\n'))) as { filename: string }[])[0];
  if (!entry) throw new Error(`npm pack of node_modules/${name} printed no entry`);
  return join(dest, entry.filename);
}

/**
 * Where Node's resolution finds the installed package `name` from the folder `from` (its own
 * node_modules, then each parent's, up to the repository's); `undefined` when it is not installed.
 */
function installedDir(name: string, from: string): string | undefined {
  const root = REPO.replace(/\/$/, '');
  for (let dir = from.replace(/\/$/, ''); dir.startsWith(root); dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
  }
  return undefined;
}

/**
 * Tarballs of an installed package and of every package it depends on as the repository's `npm ci`
 * installed them (`dependencies` and the `optionalDependencies` present on this machine, e.g. the
 * platform's `@next/swc-*` binary; not its peers), one each, so that a fresh project installs the
 * whole tree with `npm install --offline` whatever the npm cache holds. `skip` names dependencies
 * left out (an optional one the app does not use). Each tarball is the installed folder under
 * `package/`, gzipped at level 1 with the system's `tar`: `npm pack` compresses at level 9, about
 * 30 s for next's 200 MB against 3 s. Returns the tarballs' paths.
 */
export function packInstalledTree(name: string, dest: string, skip: readonly string[] = []): string[] {
  const seen = new Map<string, string>();
  const visit = (dependency: string, from: string): void => {
    const dir = installedDir(dependency, from);
    if (dir === undefined) return; // an optional dependency of another platform
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    const key = `${manifest.name}@${manifest.version}`;
    if (seen.has(key)) return;
    const tarball = join(dest, `${key.replace(/^@/, '').replace(/[/@]/g, '-')}.tgz`);
    runAll('sh', ['-c', 'tar -C "$1" --transform "s,^\\.,package," -cf - . | gzip -1 > "$2"', 'sh', dir, tarball], dest);
    seen.set(key, tarball);
    for (const next of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
      if (!skip.includes(next)) visit(next, dir);
    }
  };
  visit(name, REPO);
  return [...seen.values()];
}

/**
 * A fresh project in `dir` (`type: module`) with the tarballs `specs` installed by
 * `npm install --offline`. Returns npm's output (its warnings included).
 */
export function freshProject(dir: string, specs: readonly string[]): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'front-end', private: true, type: 'module' }, null, 2));
  return runAll('npm', ['install', '--offline', '--no-audit', '--no-fund', ...specs], dir);
}

/** The fields of a package's manifest that its entry in a lockfile repeats. */
const LOCKED_FIELDS = [
  'license',
  'dependencies',
  'optionalDependencies',
  'peerDependencies',
  'peerDependenciesMeta',
  'bin',
  'engines',
] as const;

/**
 * A fresh project in `dir` (`type: module`) with the tarballs `tarballs` as its dependencies and a
 * lockfile written from their manifests (each at `node_modules/<name>`, `resolved` the tarball,
 * its sha512 `integrity`; an optional dependency no tarball holds, e.g. another platform's binary,
 * left out), installed by `npm ci --offline`. For a large tree (next): `npm install` of tarballs
 * unpacks each one once to read its manifest and once to install it, `npm ci` only once (about
 * 10 s against 40-60 s for next on a loaded machine). Throws when two tarballs hold the same
 * package. Returns npm's output (its warnings included).
 */
export function lockedProject(dir: string, tarballs: readonly string[]): string {
  mkdirSync(dir, { recursive: true });
  const dependencies: Record<string, string> = {};
  const packages: Record<string, Record<string, unknown>> = {};
  for (const tarball of tarballs) {
    const manifest = JSON.parse(runAll('tar', ['-xzOf', tarball, 'package/package.json'], dir)) as Record<string, unknown> & {
      name: string;
      version: string;
    };
    const key = `node_modules/${manifest.name}`;
    if (packages[key]) throw new Error(`two tarballs hold ${manifest.name}: ${String(packages[key].resolved)} and ${tarball}`);
    const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
    packages[key] = { version: manifest.version, resolved: `file:${tarball}`, integrity };
    for (const field of LOCKED_FIELDS) if (manifest[field] !== undefined) packages[key][field] = manifest[field];
    dependencies[manifest.name] = `file:${tarball}`;
  }
  for (const entry of Object.values(packages)) {
    const optional = entry.optionalDependencies as Record<string, string> | undefined;
    if (optional === undefined) continue;
    const present = Object.entries(optional).filter(([name]) => packages[`node_modules/${name}`] !== undefined);
    if (present.length > 0) entry.optionalDependencies = Object.fromEntries(present);
    else delete entry.optionalDependencies;
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'front-end', private: true, type: 'module', dependencies }, null, 2));
  const lock = {
    name: 'front-end',
    lockfileVersion: 3,
    requires: true,
    packages: { '': { name: 'front-end', dependencies }, ...packages },
  };
  writeFileSync(join(dir, 'package-lock.json'), JSON.stringify(lock, null, 2));
  return runAll('npm', ['ci', '--offline', '--no-audit', '--no-fund'], dir);
}
