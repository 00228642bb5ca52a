// The security and fault-injection suite (test/hardening), one file per row, run one file at a time
// so that the timing checks are not disturbed by each other; then the combined table of the figures
// each row wrote to test-output/hardening/<row>.json.
//
// Usage: node scripts/hardening.mjs [--full] [row-file-substring ...]
//   --full   the full minimums (HARDENING_FULL=1); without it, the bounded counts of `npm test`
// `npm run test:hardening` runs `node scripts/hardening.mjs --full`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const full = args.includes('--full');
const filters = args.filter((a) => !a.startsWith('--'));
const dir = join('test', 'hardening');
const out = join('test-output', 'hardening');

const files = readdirSync(dir)
  .filter((f) => f.endsWith('.test.ts'))
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort()
  .map((f) => join(dir, f));
if (files.length === 0) {
  console.error('no hardening file matched');
  process.exit(1);
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const started = Date.now();
const run = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-reporter=dot', ...files], {
  stdio: 'inherit',
  env: {
    ...process.env,
    NODE_ENV: process.env.TEST_NODE_ENV ?? 'test',
    HARDENING_FIGURES_DIR: join(process.cwd(), out),
    ...(full ? { HARDENING_FULL: '1' } : {}),
  },
});
const seconds = Math.round((Date.now() - started) / 1000);

const rows = [];
for (const file of files) {
  const id = file.slice(dir.length + 1).replace(/\.test\.ts$/, '');
  const path = join(out, `${id}.json`);
  if (existsSync(path)) rows.push(JSON.parse(readFileSync(path, 'utf8')));
  else rows.push({ id, row: 99, title: id, verdict: 'missing', statuses: {}, failures: ['the row wrote no figures'], notes: [] });
}
rows.sort((a, b) => a.row - b.row);

const n = (v) => (typeof v === 'number' ? v.toLocaleString('en-US') : '—');
const statuses = (s) =>
  Object.entries(s ?? {})
    .map(([k, v]) => (k.includes('×') ? k : `${k}×${n(v)}`))
    .join(', ') || '—';
const cell = (v) => String(v ?? '—').replaceAll('|', '\\|');

console.log('');
console.log(
  `Hardening suite, ${full ? 'full run (HARDENING_FULL=1)' : 'bounded run'}: ${files.length} files, ${seconds} s, node ${process.version}`,
);
console.log('');
console.log(
  '| # | Row | Inputs tried | Faults injected | Statuses seen | Upstream calls for rejected input | Canary occurrences | Cache sizes | Memory | Verdict |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(
    `| ${r.row} | ${cell(r.title)} | ${n(r.inputs)} | ${n(r.faults)} | ${cell(statuses(r.statuses))} | ${n(r.upstreamCallsForRejected)} | ${n(r.canaryOccurrences)} | ${cell(r.cacheSizes)} | ${cell(r.memory)} | ${r.verdict === 'pass' ? 'pass' : `**${r.verdict}**`} |`,
  );
}
console.log('');
for (const r of rows) {
  const lines = [...(r.notes ?? []), ...(r.failures ?? []).map((f) => `FAILED: ${f}`)];
  if (lines.length === 0) continue;
  console.log(`Row ${r.row} (${r.title}):`);
  for (const line of lines) console.log(`  - ${line}`);
}

const failed = rows.filter((r) => r.verdict !== 'pass');
if (run.status !== 0 || failed.length > 0) {
  console.log('');
  console.log(`FAILED: ${failed.map((r) => r.title).join(', ') || 'the test runner reported a failure'}`);
  process.exit(1);
}
