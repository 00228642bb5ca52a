// Runs every test/**/*.test.ts file with node's test runner (TypeScript through tsx), after
// building the browser package (packages/browser, `tsc -b`: nothing is redone when it is up to
// date), which the server imports from its dist/.
// A test file whose process would stay alive after its last test (a client still reconnecting, a
// timer left behind) ends with it (`--test-force-exit`): a leak never holds a CI run until its limit.
// Usage: node scripts/run-tests.mjs [substring filter ...]
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

function collect(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...collect(full));
    else if (entry.name.endsWith('.test.ts')) out.push(full);
  }
  return out;
}

const filters = process.argv.slice(2);
const files = collect('test')
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const sdk = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-b', 'packages/browser'], { stdio: 'inherit' });
if (sdk.status !== 0) {
  console.error('the browser package (packages/browser) does not build');
  process.exit(sdk.status ?? 1);
}
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-force-exit', '--test-concurrency=2', '--test-reporter=spec', ...files],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: process.env.TEST_NODE_ENV ?? 'test' } },
);
process.exit(result.status ?? 1);
