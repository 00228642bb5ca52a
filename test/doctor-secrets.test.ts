/**
 * The doctor never shows the password (docs/doctor.md "The password"): `npm run doctor` as a user runs
 * it, a real npm and a real child process over the build (`dist/doctor/`), against a fake BFF whose
 * 422 login answer echoes the login body, whose catalogue answers an HTML error page and a reason
 * quoting a JWT. The password comes from `DOCTOR_PASSWORD`, from the variable `--password-env` names,
 * or from standard input (`--password -`); it is searched for in the doctor's standard output and
 * error, npm's debug log (npm's cache pointed at a temporary directory) and the `--json` file. A
 * password on the command line is refused, saying how; an unreachable BFF is one line and exit 2.
 * Before (history/2026-12-01-hardening-rounds.md "Issue 45: keys in rotation, RSA-PSS keys, private keys, the doctor's password"), the documented `--password X` put it in npm's banner
 * and debug log, and the 422's reason put it in the table and the JSON report.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A password with a quote and a backslash (escaped when a BFF echoes it inside JSON) around a random core. */
const CORE = randomBytes(9).toString('hex');
const PASSWORD = `Pw"${CORE}\\x`;
/** A JWT-like value a BFF quotes in an error reason. */
const QUOTED_JWT = `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI3In0.${randomBytes(16).toString('base64url')}`;
const HTML_PAGE = `<!doctype html><html><head><title>Down for maintenance</title></head><body><h1>We'll be back soon</h1>${'<p>…</p>'.repeat(20)}</body></html>`;

interface FakeBff {
  url: string;
  /** The bodies of the login calls received. */
  logins: string[];
  close(): Promise<void>;
}

/** A BFF on loopback whose login answers 422 echoing the request body, with an HTML 503 and a reason quoting a JWT in the catalogue. */
async function startEchoingBff(): Promise<FakeBff> {
  const logins: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '').split('?')[0];
      const json = (status: number, value: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      if (path === '/auth/login') {
        logins.push(body);
        return json(422, { reason: `invalid login body: ${body}` });
      }
      if (path === '/casino-games/home') return res.writeHead(503, { 'content-type': 'text/html; charset=utf-8' }).end(HTML_PAGE);
      if (path === '/bff/games/top-wins-dl') return json(401, { reason: `token ${QUOTED_JWT} rejected` });
      return json(200, { data: [] });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    logins,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
  /** Every file npm wrote under its cache's `_logs`, concatenated. */
  npmLog: string;
  npmLogFiles: number;
}

/**
 * `npm run doctor -- <args>` in a child process, with npm's cache (and so its debug log) in `dir`,
 * `env` added to a minimal environment, and `stdin` written to its standard input.
 */
function npmDoctor(dir: string, args: string[], env: Record<string, string> = {}, stdin?: string): Promise<Run> {
  const cache = join(dir, 'npm-cache');
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', 'doctor', '--', ...args], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: dir,
        npm_config_cache: cache,
        npm_config_update_notifier: 'false',
        npm_config_fund: 'false',
        ...env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('error', reject);
    child.once('close', (status) => {
      clearTimeout(timer);
      let files: string[] = [];
      try {
        files = readdirSync(join(cache, '_logs'));
      } catch {
        files = [];
      }
      const npmLog = files.map((f) => readFileSync(join(cache, '_logs', f), 'utf8')).join('\n');
      resolve({ status, stdout, stderr, npmLog, npmLogFiles: files.length });
    });
    child.stdin.end(stdin ?? '');
  });
}

/** The forms of the password a leak would show: as given, escaped in JSON, and its random core alone. */
const LEAKS = [PASSWORD, JSON.stringify(PASSWORD).slice(1, -1), CORE];

function assertNoLeak(label: string, text: string): void {
  for (const form of LEAKS) assert.ok(!text.includes(form), `${label} holds the password (${form.length} characters)`);
  assert.ok(!text.includes(QUOTED_JWT) && !/eyJ[A-Za-z0-9_-]+\.eyJ/.test(text), `${label} holds a JWT`);
}

/** The lines the doctor itself wrote (npm's banner, `> …` and blank lines, left out). */
const doctorLines = (text: string) => text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('> '));

describe('npm run doctor: the password never shows', () => {
  let bff: FakeBff;
  let dir: string;
  before(async () => {
    bff = await startEchoingBff();
    dir = mkdtempSync(join(tmpdir(), 'doctor-secrets-'));
  });
  after(async () => {
    await bff.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('from DOCTOR_PASSWORD: not in stdout, stderr, npm debug log or the --json file; the 422 echo and the JWT are scrubbed; the HTML page is described', async () => {
    const out = join(dir, 'report.json');
    const run = await npmDoctor(dir, ['--bff', bff.url, '--login', 'qa@example.com', '--json', out, '--timeout', '5000'], {
      DOCTOR_PASSWORD: PASSWORD,
    });
    assert.equal(run.status, 1, run.stderr + run.stdout);
    assert.equal(bff.logins.length, 1);
    assert.ok(bff.logins[0]?.includes(JSON.stringify(PASSWORD)), 'the BFF received the password in the login body (and echoed it)');
    assert.ok(run.npmLogFiles > 0, 'npm wrote its debug log where the test reads it');
    assert.match(run.npmLog, /run doctor/, 'the debug log is of this run');
    const json = readFileSync(out, 'utf8');
    for (const [label, text] of [
      ['stdout', run.stdout],
      ['stderr', run.stderr],
      ['npm debug log', run.npmLog],
      ['--json file', json],
    ] as const)
      assertNoLeak(label, text);
    // The reasons are still reported, with the secrets taken out.
    assert.match(run.stdout, /422 with reason "invalid login body: \{"login":"qa@example\.com","password":"\[redacted\]"\}"/);
    assert.match(run.stdout, /401 with reason "token \[redacted JWT\] rejected"/);
    assert.match(run.stdout, new RegExp(`a server error 503 with an HTML page \\(${Buffer.byteLength(HTML_PAGE)} bytes\\)`));
    assert.ok(!run.stdout.includes('maintenance') && !json.includes('maintenance'), 'the HTML page is not quoted');
  });

  test('from the variable --password-env names, and from standard input with --password -', async () => {
    const viaEnv = await npmDoctor(dir, ['--bff', bff.url, '--login', 'qa@example.com', '--password-env', 'QA_PASSWORD'], {
      QA_PASSWORD: PASSWORD,
    });
    assert.equal(viaEnv.status, 1, viaEnv.stderr);
    const viaStdin = await npmDoctor(dir, ['--bff', bff.url, '--login', 'qa@example.com', '--password', '-'], {}, `${PASSWORD}\n`);
    assert.equal(viaStdin.status, 1, viaStdin.stderr);
    assert.equal(bff.logins.length, 3);
    for (const body of bff.logins.slice(1)) assert.deepEqual(JSON.parse(body), { login: 'qa@example.com', password: PASSWORD });
    for (const run of [viaEnv, viaStdin]) {
      assertNoLeak('stdout', run.stdout);
      assertNoLeak('stderr', run.stderr);
      assertNoLeak('npm debug log', run.npmLog);
    }
  });

  test('a password on the command line is refused, saying how; the doctor does not repeat it', async () => {
    const logins = bff.logins.length;
    const run = await npmDoctor(dir, ['--bff', bff.url, '--login', 'qa@example.com', '--password', 'hunter2-on-the-command-line']);
    assert.equal(run.status, 2);
    const [first = ''] = doctorLines(run.stderr);
    assert.match(
      first,
      /^--password: a password on the command line is refused .*; give it in the environment variable DOCTOR_PASSWORD, or in another one named with --password-env <NAME>, or on standard input with --password -$/,
    );
    assert.ok(!run.stderr.includes('hunter2'), 'stderr does not repeat it');
    assert.equal(bff.logins.length, logins, 'nothing was sent');
    const missing = await npmDoctor(dir, ['--bff', bff.url, '--login', 'qa@example.com']);
    assert.equal(missing.status, 2);
    assert.match(
      doctorLines(missing.stderr)[0] ?? '',
      /^--login needs the account's password: the environment variable DOCTOR_PASSWORD is not set; /,
    );
  });

  test('an unreachable BFF: one line on stderr, nothing on stdout but npm banner, exit 2', async () => {
    const closed = await startEchoingBff();
    const url = closed.url;
    await closed.close();
    const run = await npmDoctor(dir, ['--bff', url, '--login', 'qa@example.com'], { DOCTOR_PASSWORD: PASSWORD });
    assert.equal(run.status, 2);
    assert.deepEqual(doctorLines(run.stderr), [
      `the BFF at ${url} cannot be reached (ECONNREFUSED): nothing was probed; check --bff and that the BFF is running`,
    ]);
    assert.deepEqual(doctorLines(run.stdout), []);
  });
});
