// Builds the browser package (packages/browser, `tsc -b`: nothing is redone when it is up to date),
// then dist/ with tsc when it is missing or older than any file under src/.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    const t = entry.isDirectory() ? newest(full) : statSync(full).mtimeMs;
    if (t > latest) latest = t;
  }
  return latest;
}

execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-b', 'packages/browser'], { stdio: 'inherit' });
const stamp = 'dist/server.js';
const stale = !existsSync(stamp) || newest('src') > statSync(stamp).mtimeMs;
if (stale) {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
}
