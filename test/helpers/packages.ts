/**
 * The workspace packages as a front-end team gets them: `npm pack` of packages/browser and
 * packages/react (each `prepack` builds it), and a fresh project that installs the tarballs (and any
 * other package the npm cache already holds, e.g. react) with `npm install --offline`.
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

/** The version of a package installed in the repository (e.g. react), for an offline install from the npm cache. */
export function repoVersion(name: string): string {
  return (JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * A fresh project in `dir` (`type: module`) with `specs` installed by `npm install --offline`
 * (tarballs, or `name@version` the npm cache holds). Returns npm's output (its warnings included).
 */
export function freshProject(dir: string, specs: readonly string[]): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'front-end', private: true, type: 'module' }, null, 2));
  return runAll('npm', ['install', '--offline', '--no-audit', '--no-fund', ...specs], dir);
}
