/**
 * `npm run doctor -- --bff <url> [--login <login> --password <password>] [--json <file>] [--allow-writes]`:
 * checks a running BFF against what the proxy needs of it (see `run.ts`) and prints one row per upstream
 * endpoint. Options (`node:util` `parseArgs`):
 *
 * | option | meaning |
 * |---|---|
 * | `--bff <url>` | `{bff_base_url}` (required) |
 * | `--login`, `--password` | a test account; without them the session rows are skipped (exit 3) |
 * | `--json <file>` | also write the report as JSON to that file |
 * | `--allow-writes` | also call side-effect GETs, mutations and money moves; refused unless the BFF is a sandbox |
 * | `--cookie-name <name>` | the session cookie's name sent upstream (`SESSION_COOKIE_NAME`), default `access_token` |
 * | `--timeout <ms>` | limit of one call, default 10000 |
 * | `--total-timeout <ms>` | limit of the whole run, default 120000 |
 * | `--max-bytes <n>` | largest answer (`UPSTREAM_MAX_RESPONSE_BYTES`), default 4194304 |
 * | `--strict` | a `WARN` row (a deviation the proxy absorbs, such as a coded answer) fails the run too |
 * | `--verbose` | also print the notes of passing rows |
 * | `--from-metrics <url>` | instead of probing: what the live contract checks saw, read from a metrics endpoint (`from-metrics.ts`) |
 *
 * Exit codes: 0 every required endpoint conforms; 1 one deviates; 2 bad options or a refused
 * `--allow-writes`; 3 required reads not probed. Reads only `process.argv`; the token is never printed.
 *
 * @module
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fromMetricsOption, runFromMetrics } from './from-metrics.js';
import { formatReport } from './report.js';
import { DoctorUsageError, runDoctor } from './run.js';

const USAGE = `usage: npm run doctor -- --bff <url> [--login <login> --password <password>] [--json <file>] [--allow-writes]
       [--cookie-name <name>] [--timeout <ms>] [--total-timeout <ms>] [--max-bytes <n>] [--strict] [--verbose]`;

function usage(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

function positiveInteger(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[1-9]\d{0,9}$/.test(text)) usage(`--${name}: expected a positive integer, got "${text}"`);
  return Number(text);
}

// `--from-metrics <url>`: what the live contract checks saw, instead of probing a BFF (from-metrics.ts).
if (fromMetricsOption(process.argv.slice(2)) !== undefined) process.exit(await runFromMetrics(process.argv.slice(2)));

let values;
try {
  ({ values } = parseArgs({
    options: {
      bff: { type: 'string' },
      login: { type: 'string' },
      password: { type: 'string' },
      json: { type: 'string' },
      'allow-writes': { type: 'boolean', default: false },
      'cookie-name': { type: 'string' },
      timeout: { type: 'string' },
      'total-timeout': { type: 'string' },
      'max-bytes': { type: 'string' },
      strict: { type: 'boolean', default: false },
      verbose: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  }));
} catch (error) {
  usage((error as Error).message);
}
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (values.bff === undefined) usage('--bff is required');
try {
  const url = new URL(values.bff);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
} catch {
  usage(`--bff: expected an http:// or https:// URL, got "${values.bff}"`);
}
if ((values.login === undefined) !== (values.password === undefined)) usage('--login and --password go together');

try {
  const report = await runDoctor({
    bffUrl: values.bff,
    login: values.login,
    password: values.password,
    allowWrites: values['allow-writes'],
    cookieName: values['cookie-name'],
    probeTimeoutMs: positiveInteger('timeout', values.timeout),
    totalTimeoutMs: positiveInteger('total-timeout', values['total-timeout']),
    maxBytes: positiveInteger('max-bytes', values['max-bytes']),
    strict: values.strict,
  });
  process.stdout.write(formatReport(report, values.verbose));
  if (values.json !== undefined) {
    try {
      writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
    } catch (error) {
      usage(`--json: cannot write ${values.json}: ${(error as Error).message}`);
    }
  }
  process.exitCode = report.exitCode;
} catch (error) {
  if (error instanceof DoctorUsageError) usage(error.message);
  throw error;
}
