/**
 * `npm run doctor -- --bff <url> [--login <login>] [--json <file>] [--allow-writes]`, the password of
 * `--login` in the environment variable `DOCTOR_PASSWORD`: checks a running BFF against what the proxy
 * needs of it (see `run.ts`) and prints one row per upstream endpoint. Options (`node:util` `parseArgs`):
 *
 * | option | meaning |
 * |---|---|
 * | `--bff <url>` | `{bff_base_url}` (required) |
 * | `--login <login>` | a test account; without it the session rows are skipped (exit 3) |
 * | password | never on the command line: the variable `DOCTOR_PASSWORD`, or the one `--password-env <NAME>` names, or standard input with `--password -` (one line; not echoed on a terminal) |
 * | `--json <file>` | also write the report as JSON to that file |
 * | `--allow-writes` | also call side-effect GETs, mutations and money moves; refused unless the BFF is a sandbox |
 * | `--check-idempotency` | also send the deposit (1000 cents) twice with one `Idempotency-Key` and report whether the BFF honours it (`idempotency.ts`): **real deposits** (one, or two when it does not), so never by default and refused without `--login` (a staging account) |
 * | `--cookie-name <name>` | the session cookie's name sent upstream (`SESSION_COOKIE_NAME`), default `access_token` |
 * | `--timeout <ms>` | limit of one call, default 10000 |
 * | `--total-timeout <ms>` | limit of the whole run, default 120000 |
 * | `--max-bytes <n>` | largest answer (`UPSTREAM_MAX_RESPONSE_BYTES`), default 4194304 |
 * | `--strict` | a `WARN` row (a deviation the proxy absorbs, such as a coded answer) fails the run too |
 * | `--verbose` | also print the notes of passing rows |
 * | `--from-metrics <url>` | instead of probing: what the live contract checks saw, read from a metrics endpoint (`from-metrics.ts`) |
 *
 * `--password` with any value but `-` is refused (exit 2): a password on the command line shows in
 * the process list, in npm's command banner and in npm's debug log. Every text printed or written
 * (standard output, standard error, the `--json` file) is scrubbed of the password and of any
 * JWT-like value (`scrub.ts`).
 *
 * Exit codes: 0 every required endpoint conforms; 1 one deviates (or, with `--strict`, the idempotency
 * check is not `honoured`); 2 bad options, a refused `--allow-writes`, `--check-idempotency` without
 * `--login`, or a BFF that cannot be reached (one line); 3 required reads not probed.
 *
 * @module
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fromMetricsOption, runFromMetrics } from './from-metrics.js';
import { formatReport } from './report.js';
import { DoctorUnreachableError, DoctorUsageError, runDoctor } from './run.js';
import { scrubText } from './scrub.js';

const USAGE = `usage: DOCTOR_PASSWORD=… npm run doctor -- --bff <url> [--login <login>] [--json <file>] [--allow-writes] [--check-idempotency]
       [--password-env <NAME> | --password -] [--cookie-name <name>] [--timeout <ms>] [--total-timeout <ms>] [--max-bytes <n>] [--strict] [--verbose]
  --check-idempotency  also send one deposit of 1000 cents twice with the same Idempotency-Key, straight to the BFF,
                       and report whether it honours the key (one charge) or not (two): it makes REAL deposits on
                       the BFF it is pointed at, so it never runs by default and needs --login of a staging account`;

/** The variable the password is read from unless `--password-env` names another. */
const PASSWORD_VARIABLE = 'DOCTOR_PASSWORD';

/** Longest password read from standard input, in bytes. */
const MAX_PASSWORD_BYTES = 4096;

/** How long `--password -` waits for the password on standard input, in ms. */
const STDIN_WAIT_MS = 120_000;

/** The password of the run, once known: every text written is scrubbed of it. */
let password: string | undefined;

/** Writes `text` to `stream`, scrubbed of the password and of any JWT-like value. */
function write(stream: NodeJS.WriteStream, text: string): void {
  stream.write(scrubText(text, [password]));
}

function usage(message: string): never {
  write(process.stderr, `${message}\n${USAGE}\n`);
  process.exit(2);
}

/**
 * The first line of standard input (at most {@link MAX_PASSWORD_BYTES} bytes, without its line break),
 * waited for at most {@link STDIN_WAIT_MS}; on a terminal, read with echo off.
 * @throws Error when nothing comes in time, or the line is empty or too long.
 */
async function passwordFromStdin(): Promise<string> {
  const stdin = process.stdin;
  const terminal = stdin.isTTY;
  if (terminal) {
    process.stderr.write('password (not shown): ');
    stdin.setRawMode(true);
  }
  let text = '';
  try {
    return await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no password on standard input within ${STDIN_WAIT_MS / 1000} s`)), STDIN_WAIT_MS);
      const done = (error?: Error) => {
        clearTimeout(timer);
        stdin.off('data', onData);
        stdin.off('end', onEnd);
        stdin.pause();
        const line = text.replace(/\r$/, '');
        if (error) reject(error);
        else if (line === '') reject(new Error('the password on standard input is empty'));
        else resolve(line);
      };
      const onData = (chunk: Buffer) => {
        for (const char of chunk.toString('utf8')) {
          if (char === '\n' || (terminal && char === '\r')) return done();
          if (terminal && char === '\u0003') return done(new Error('interrupted'));
          if (terminal && (char === '\u007f' || char === '\b')) text = text.slice(0, -1);
          else text += char;
          if (Buffer.byteLength(text) > MAX_PASSWORD_BYTES)
            return done(new Error(`the password on standard input is over ${MAX_PASSWORD_BYTES} bytes`));
        }
      };
      const onEnd = () => done();
      stdin.on('data', onData);
      stdin.on('end', onEnd);
      stdin.resume();
    });
  } finally {
    if (terminal) {
      stdin.setRawMode(false);
      process.stderr.write('\n');
    }
  }
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
      'password-env': { type: 'string' },
      json: { type: 'string' },
      'allow-writes': { type: 'boolean', default: false },
      'check-idempotency': { type: 'boolean', default: false },
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
const HOW = `give it in the environment variable ${PASSWORD_VARIABLE}, or in another one named with --password-env <NAME>, or on standard input with --password -`;
if (values.password !== undefined && values.password !== '-') {
  // The value itself is never repeated: it is the password.
  usage(
    `--password: a password on the command line is refused (it shows in the process list, npm's command banner and npm's debug log); ${HOW}`,
  );
}
if (values.password === '-' && values['password-env'] !== undefined) usage('--password - and --password-env: give one of them');
const explicit = values.password !== undefined || values['password-env'] !== undefined;
if (explicit && values.login === undefined)
  usage(`--login is required with ${values.password === '-' ? '--password -' : '--password-env'}`);
if (values['check-idempotency'] && values.login === undefined) {
  usage(
    '--check-idempotency needs --login (and its password) of a staging account: it makes real deposits (one or two of 1000 cents) on the BFF',
  );
}
if (values.login !== undefined) {
  if (values.password === '-') {
    try {
      password = await passwordFromStdin();
    } catch (error) {
      usage(`--password -: ${(error as Error).message}`);
    }
  } else {
    const name = values['password-env'] ?? PASSWORD_VARIABLE;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      usage(`--password-env: expected the name of an environment variable, got "${name.slice(0, 40)}"`);
    password = process.env[name];
    if (password === undefined || password === '')
      usage(`--login needs the account's password: the environment variable ${name} is not set; ${HOW}`);
  }
}

try {
  const report = await runDoctor({
    bffUrl: values.bff,
    login: values.login,
    password,
    allowWrites: values['allow-writes'],
    cookieName: values['cookie-name'],
    probeTimeoutMs: positiveInteger('timeout', values.timeout),
    totalTimeoutMs: positiveInteger('total-timeout', values['total-timeout']),
    maxBytes: positiveInteger('max-bytes', values['max-bytes']),
    strict: values.strict,
    checkIdempotency: values['check-idempotency'],
  });
  write(process.stdout, formatReport(report, values.verbose));
  if (values.json !== undefined) {
    try {
      writeFileSync(values.json, scrubText(`${JSON.stringify(report, null, 2)}\n`, [password]));
    } catch (error) {
      usage(`--json: cannot write ${values.json}: ${(error as Error).message}`);
    }
  }
  process.exitCode = report.exitCode;
} catch (error) {
  if (error instanceof DoctorUsageError) usage(error.message);
  if (error instanceof DoctorUnreachableError) {
    write(process.stderr, `${error.message}\n`);
    process.exit(2);
  }
  // Anything else: one line, scrubbed (an error of the run may quote what the BFF answered).
  write(process.stderr, `the doctor stopped: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
