/**
 * The workspace packages as a front-end team gets them: `npm pack` of packages/browser and
 * packages/react (each `prepack` builds it), and a fresh project that installs the tarballs (and
 * react, packed from the repository's node_modules) with `npm install --offline`.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

/** Runs a command; stdout and stderr together; throws with both on a non-zero exit. */
export function runAll(command: string, args: readonly string[], cwd: string): string {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' },
    timeout: 180_000,
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
  const json = JSON.parse(out.slice(out.indexOf('[\n'))) as { name: string; version: string; filename: string; files: { path: string }[] }[];
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
  const result = spawnSync('npm', ['pack', '--json', '--pack-destination', dest, join(REPO, 'node_modules', name)], { cwd: dest, encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`npm pack of node_modules/${name} failed: ${result.stdout}${result.stderr}`);
  const entry = (JSON.parse(result.stdout.slice(result.stdout.indexOf('[\n'))) as { filename: string }[])[0];
  if (!entry) throw new Error(`npm pack of node_modules/${name} printed no entry`);
  return join(dest, entry.filename);
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
