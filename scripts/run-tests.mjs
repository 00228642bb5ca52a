// Runs every test/**/*.test.ts file with node's test runner (TypeScript through tsx), after
// building the browser package (packages/browser, `tsc -b`: nothing is redone when it is up to
// date), which the server imports from its dist/.
// No `--test-force-exit`: with it the runner can drop the last verdicts of a file (its report
// stream cut when the child exits; nodejs/node#64833), so a run would count fewer tests than ran,
// failures included. A file whose process stays alive after its last test (a client still
// reconnecting, a timer left behind) is a defect of that file; the whole run is bounded by
// TEST_RUN_LIMIT_S (default 2,700 s), after which it is stopped and fails, naming the limit.
// At the end it prints the time of each test file (the sum of its top-level tests, as
// scripts/test-durations.mjs reports them), the slowest TEST_DURATIONS_TOP (default 15) and the total, and the
// run's wall-clock time against the suite's budget of 10 minutes (TEST_BUDGET_S, in seconds). Over
// the budget it warns loudly on stderr and keeps the exit status of the tests: a machine's speed is
// no test result (a shared CI runner would fail at random), the table says which files to move
// behind `npm run test:hardening` or to bound.
// Files outside the budget (OUTSIDE_BUDGET: a row that starts real Redis deployments one after the
// other for minutes) are left out of a run without filters and run by `--outside-budget` alone
// (`npm run test:outside-budget`; `.ci/run` runs it after `npm test`, on both Node.js lines); a
// filter that names one runs it as any other file.
// Usage: node scripts/run-tests.mjs [--outside-budget] [substring filter ...]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

function collect(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...collect(full));
    else if (entry.name.endsWith('.test.ts')) out.push(full);
  }
  return out;
}

/** Test files run apart from the suite's budget (see the header). */
const OUTSIDE_BUDGET = ['test/hardening/redis-failover.test.ts'];
const outsideBudget = process.argv.includes('--outside-budget');
const filters = process.argv.slice(2).filter((arg) => arg !== '--outside-budget');
const isOutside = (f) => OUTSIDE_BUDGET.includes(relative(process.cwd(), f).split('\\').join('/'));
const files = collect('test')
  .filter((f) => (outsideBudget ? isOutside(f) : filters.length > 0 || !isOutside(f)))
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
if (!outsideBudget && filters.length === 0) {
  console.log(`left out of this run, outside the suite's budget (npm run test:outside-budget runs them): ${OUTSIDE_BUDGET.join(', ')}`);
}
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const sdk = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-b', 'packages/browser'], { stdio: 'inherit' });
if (sdk.status !== 0) {
  console.error('the browser package (packages/browser) does not build');
  process.exit(sdk.status ?? 1);
}
const BUDGET_S = Number(process.env.TEST_BUDGET_S ?? 600);
const RUN_LIMIT_S = Number(process.env.TEST_RUN_LIMIT_S ?? 2700);
const TOP = Number(process.env.TEST_DURATIONS_TOP ?? 15);
const scratch = mkdtempSync(join(tmpdir(), 'test-durations-'));
const durationsFile = join(scratch, 'durations.tsv');
const started = performance.now();
const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-concurrency=2',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./scripts/test-durations.mjs',
    '--test-reporter-destination=stdout',
    ...files,
  ],
  {
    stdio: 'inherit',
    timeout: RUN_LIMIT_S * 1000,
    killSignal: 'SIGKILL',
    env: { ...process.env, NODE_ENV: process.env.TEST_NODE_ENV ?? 'test', TEST_DURATIONS_FILE: durationsFile },
  },
);
const wallS = (performance.now() - started) / 1000;
printDurations();
if (result.error || result.signal) {
  console.error(`the test run was stopped after ${wallS.toFixed(0)} s (TEST_RUN_LIMIT_S=${RUN_LIMIT_S}): a test file did not end`);
  process.exit(1);
}
process.exit(result.status ?? 1);

/** The per-file table, the total and the budget check (see the header). */
function printDurations() {
  const byFile = {};
  let text = '';
  try {
    text = readFileSync(durationsFile, 'utf8');
  } catch {
    // No test reported (a crash before the first): the table is empty.
  }
  for (const line of text.split('\n')) {
    const tab = line.indexOf('\t');
    if (tab > 0) byFile[line.slice(tab + 1)] = (byFile[line.slice(tab + 1)] ?? 0) + Number(line.slice(0, tab));
  }
  rmSync(scratch, { recursive: true, force: true });
  const rows = Object.entries(byFile).sort((a, b) => b[1] - a[1]);
  const totalS = rows.reduce((sum, [, ms]) => sum + ms, 0) / 1000;
  const lines = ['', `test files by time (top ${Math.min(TOP, rows.length)} of ${rows.length}):`];
  for (const [file, ms] of rows.slice(0, TOP)) lines.push(`  ${(ms / 1000).toFixed(1).padStart(7)} s  ${relative(process.cwd(), file)}`);
  lines.push(
    `  ${totalS.toFixed(1).padStart(7)} s  total of the files (2 at a time)`,
    `  ${wallS.toFixed(1).padStart(7)} s  wall clock of this run (budget ${BUDGET_S} s)`,
  );
  console.log(lines.join('\n'));
  if (wallS > BUDGET_S && !outsideBudget) {
    const bar = '!'.repeat(72);
    console.error(
      `${bar}\nthe tests took ${wallS.toFixed(0)} s, over the budget of ${BUDGET_S} s: bound the slowest files above or move them behind npm run test:hardening\n${bar}`,
    );
  }
}
