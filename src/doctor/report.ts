/**
 * The doctor's report as text: one row per upstream endpoint (EP code, method, path, status, latency
 * in ms, verdict), each finding on an indented line under its row, then the summary and the exit code.
 * Pure; `main.ts` prints it. The JSON report is the {@link DoctorReport} itself.
 *
 * @example
 * process.stdout.write(formatReport(await runDoctor({ bffUrl })));
 *
 * @module
 */
import type { DoctorReport, DoctorRow } from './run.js';

/** Longest path shown in the table, in characters (longer ones are cut with `…`). */
const PATH_WIDTH = 52;

const VERDICT_TEXT: Readonly<Record<DoctorRow['verdict'], string>> = { pass: 'pass', warn: 'WARN', fail: 'FAIL', skip: 'skip' };

/** How a row that was not called for what it does reads in the verdict column. */
const NOT_CALLED: Readonly<Partial<Record<DoctorRow['kind'], string>>> = {
  write: 'not called (mutation)',
  money: 'not called (money move)',
  'side-effect': 'not called (side effect)',
};

function cut(text: string, width: number): string {
  return text.length <= width ? text.padEnd(width) : `${text.slice(0, width - 1)}…`;
}

/** What an exit code means, as `formatReport` prints it. */
export const EXIT_MEANINGS: Readonly<Record<DoctorReport['exitCode'], string>> = {
  0: 'every required endpoint conforms',
  1: 'a required endpoint deviates: see the FAIL rows (and, with --strict, WARN rows and an Idempotency-Key not honoured)',
  3: 'required endpoints were not probed: see the skip rows',
};

/**
 * The report as a text table. `verbose` adds the notes of passing rows (extra fields, accepted 404s);
 * findings of `warn` and `fail` rows, and the reason of a skipped required row, are always shown.
 */
export function formatReport(report: DoctorReport, verbose = false): string {
  const lines: string[] = [];
  lines.push(`BFF ${report.bffUrl}${report.sandbox ? ' (sandbox)' : ''}, ${report.startedAt}`);
  lines.push('');
  lines.push(`${'EP'.padEnd(7)} ${'method'.padEnd(6)} ${'path'.padEnd(PATH_WIDTH)} ${'status'.padStart(6)} ${'ms'.padStart(6)}  verdict`);
  for (const row of report.rows) {
    const status = row.status === null ? '-' : String(row.status);
    const ms = row.latencyMs === null ? '-' : String(row.latencyMs);
    const optional = row.required ? '' : ' (optional)';
    const verdict = row.verdict === 'skip' && NOT_CALLED[row.kind] !== undefined ? NOT_CALLED[row.kind] : VERDICT_TEXT[row.verdict];
    lines.push(
      `${row.code.padEnd(7)} ${row.method.padEnd(6)} ${cut(row.path, PATH_WIDTH)} ${status.padStart(6)} ${ms.padStart(6)}  ${verdict}${optional}`,
    );
    const show = verbose || row.verdict === 'warn' || row.verdict === 'fail';
    for (const f of row.findings) {
      if (show || (row.verdict === 'skip' && row.required && (row.kind === 'read' || row.kind === 'session'))) {
        if (!verbose && row.verdict !== 'skip' && f.level === 'note') continue;
        lines.push(`        ${f.level === 'fail' ? '✗' : f.level === 'warn' ? '!' : '·'} ${f.text}`);
      }
    }
  }
  for (const [code, why] of Object.entries(report.unprobed)) lines.push(`${code.padEnd(7)} not probed: ${why}`);
  const check = report.idempotency;
  if (check !== undefined) {
    const answer = (a: typeof check.first) =>
      `${a.status ?? a.error ?? 'no answer'}${a.transactionId === undefined ? '' : ` ${a.transactionId}`}`;
    lines.push('');
    lines.push(
      `Idempotency-Key honoured by the BFF: ${check.verdict} (the deposit twice with ${check.key}: ${answer(check.first)}, then ${answer(check.second)})`,
    );
    lines.push(`        ${check.meaning}`);
  }
  const s = report.summary;
  lines.push('');
  lines.push(
    `${s.pass} pass, ${s.warn} warn, ${s.fail} fail, ${s.skip} not probed, ${s.notCalled} not called (writes), in ${report.durationMs} ms`,
  );
  lines.push(`exit ${report.exitCode}: ${EXIT_MEANINGS[report.exitCode]}`);
  return `${lines.join('\n')}\n`;
}
