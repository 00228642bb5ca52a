// `npm run doctor` over real sockets: green against the embedded sandbox, read-only by default (the
// sandbox's request log shows no write), and each deviation of a fake BFF reported on its own row.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { type DoctorReport, DoctorUsageError, runDoctor } from '../src/doctor/run.js';
import { type SandboxHandle, startSandbox } from '../src/sandbox/index.js';
import { sampleProfile } from './helpers/doctor-samples.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEMO = { login: 'demo@example.com', password: 'Demo#2026' };

const rowOf = (report: DoctorReport, code: string, path?: string) => {
  const row = report.rows.find((r) => r.code === code && (path === undefined || r.path.startsWith(path)));
  assert.ok(row, `row ${code}`);
  return row;
};
const said = (report: DoctorReport, code: string, pattern: RegExp, path?: string): void => {
  const row = rowOf(report, code, path);
  assert.ok(
    row.findings.some((f) => pattern.test(f.text)),
    `${code}: ${pattern} in ${JSON.stringify(row.findings)}`,
  );
};

/**
 * Runs the CLI (TypeScript through tsx) in a child process, without blocking this process (which serves
 * the BFF it probes); answers its exit code and output.
 */
function cli(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const options = { cwd: ROOT, encoding: 'utf8' as const, timeout: 60_000, env: { ...process.env, ...env } };
    execFile(process.execPath, ['--import', 'tsx', 'src/doctor/main.ts', ...args], options, (error, stdout, stderr) => {
      resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

describe('against the embedded sandbox', () => {
  let sandbox: SandboxHandle;
  before(async () => {
    sandbox = await startSandbox();
  });
  after(() => sandbox.close());

  test('every required endpoint conforms: exit 0, and no call but reads and the session flow reached the BFF', async () => {
    await fetch(`${sandbox.bffUrl}/__sandbox/requests`, { method: 'DELETE' });
    const report = await runDoctor({ bffUrl: sandbox.bffUrl, ...DEMO });
    const failing = report.rows.filter((r) => r.verdict === 'fail' || r.verdict === 'warn');
    assert.deepEqual(failing, []);
    assert.equal(report.exitCode, 0);
    assert.equal(report.sandbox, true);
    for (const code of ['EP0001', 'EP0003', 'EP0004', 'EP0002', 'EP0143', 'EP0034'])
      assert.equal(rowOf(report, code).verdict, 'pass', code);
    assert.ok(report.summary.pass > 50, JSON.stringify(report.summary));
    // Read-only: the writes are listed, not called.
    for (const code of ['EP0091', 'EP0093', 'EP0146', 'EP0191', 'EP0020']) assert.equal(rowOf(report, code).verdict, 'skip', code);
    const log = (await (await fetch(`${sandbox.bffUrl}/__sandbox/requests?limit=200`)).json()) as {
      requests: { method: string; path: string }[];
    };
    const calls = log.requests.map((r) => `${r.method} ${r.path}`);
    const allowed = new Set([
      'POST /auth/login',
      'POST /users/refresh-token',
      'POST /auth/logout', // the doctor's own session
      'POST /documents/validate',
      'POST /apicep',
      'POST /users/list-referrals',
      'POST /bff/users/list-referrals',
      'POST /bff/transactions',
      'POST /pix-keys/user-key',
      'POST /bookmaker-settings', // reads sent as POST
    ]);
    assert.ok(calls.length > 50, `${calls.length} calls logged`);
    assert.deepEqual(
      calls.filter((c) => !c.startsWith('GET ') && !allowed.has(c)),
      [],
    );
    for (const path of [
      '/start-game-v2',
      '/core-sportbook/launch',
      '/bff/users/kyc',
      '/sportsbook-partner-b/token',
      '/bff/users/support-desk/create-or-update-user',
    ]) {
      assert.ok(!calls.includes(`GET ${path}`), `${path} not called`);
    }
  });

  test('--allow-writes against the sandbox calls the side-effect GETs and the deposit', async () => {
    const report = await runDoctor({ bffUrl: sandbox.bffUrl, ...DEMO, allowWrites: true });
    assert.equal(report.exitCode, 0, JSON.stringify(report.rows.filter((r) => r.verdict === 'fail')));
    for (const code of ['EP0091', 'EP0146', 'EP0191', 'EP0054']) assert.equal(rowOf(report, code).verdict, 'pass', code);
  });

  // --check-idempotency (docs/doctor.md "Does the BFF honour Idempotency-Key?"): the sandbox honours the key, as a BFF should.
  test('the sandbox honours Idempotency-Key: one charge, the same answer replayed', async () => {
    await fetch(`${sandbox.bffUrl}/__sandbox/requests`, { method: 'DELETE' });
    const report = await runDoctor({ bffUrl: sandbox.bffUrl, ...DEMO, checkIdempotency: true });
    const check = report.idempotency;
    assert.ok(check);
    assert.equal(check.verdict, 'honoured', check.meaning);
    assert.deepEqual([check.first.status, check.second.status], [201, 201]);
    assert.ok(check.first.transactionId !== undefined && check.first.transactionId === check.second.transactionId, JSON.stringify(check));
    const log = (await (await fetch(`${sandbox.bffUrl}/__sandbox/requests?limit=200`)).json()) as {
      requests: { method: string; path: string }[];
    };
    assert.equal(log.requests.filter((r) => r.method === 'POST' && r.path === '/wallet/add-credit').length, 2);
    // A run that is green otherwise stays green with the check (exit 0); --strict holds it to `honoured`.
    assert.equal(report.exitCode, 0, JSON.stringify(report.rows.filter((r) => r.verdict === 'fail')));
  });

  test('the sandbox deposit: the same key and body replayed (one transaction), another body 422, another key a new charge', async () => {
    const login = (await (
      await fetch(`${sandbox.bffUrl}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(DEMO),
      })
    ).json()) as { access_token: string };
    const profile = (await (
      await fetch(`${sandbox.bffUrl}/auth/user-profile`, { headers: { authorization: `Bearer ${login.access_token}` } })
    ).json()) as { user: { id: number } };
    const deposit = async (key: string, amount: number) => {
      const res = await fetch(`${sandbox.bffUrl}/wallet/add-credit`, {
        method: 'POST',
        headers: { authorization: `Bearer ${login.access_token}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ user_id: profile.user.id, credit_amount: amount, payment_method: 'pix', currency: 'BRL' }),
      });
      return {
        status: res.status,
        replayed: res.headers.get('idempotent-replayed'),
        body: (await res.json()) as { transaction_id?: string; reason?: string },
      };
    };
    const first = await deposit('sandbox-key-1', 1_500);
    const repeat = await deposit('sandbox-key-1', 1_500);
    const reused = await deposit('sandbox-key-1', 1_600);
    const other = await deposit('sandbox-key-2', 1_500);
    assert.equal(first.status, 201);
    assert.deepEqual([repeat.status, repeat.replayed, repeat.body], [201, 'true', first.body]);
    assert.deepEqual([reused.status, reused.body.reason], [422, 'idempotency_key_reused']);
    assert.equal(other.status, 201);
    assert.notEqual(other.body.transaction_id, first.body.transaction_id);
  });

  test('without a login, the session rows are skipped and the exit code says so (3)', async () => {
    const report = await runDoctor({ bffUrl: sandbox.bffUrl });
    assert.equal(report.exitCode, 3);
    assert.equal(rowOf(report, 'EP0003').verdict, 'skip');
    assert.equal(rowOf(report, 'EP0143').verdict, 'pass');
  });

  test('the CLI: the table on stdout, the JSON report, exit 0; the JWT appears in neither', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'doctor-'));
    try {
      const out = join(dir, 'report.json');
      const r = await cli(['--bff', sandbox.bffUrl, '--login', DEMO.login, '--json', out], { DOCTOR_PASSWORD: DEMO.password });
      assert.equal(r.status, 0, r.stderr + r.stdout);
      assert.match(r.stdout, /^EP0003 +GET +\/auth\/user-profile\?check_spa_again=1 +200 +\d+ +pass$/m);
      assert.match(r.stdout, /exit 0: every required endpoint conforms/);
      const report = JSON.parse(readFileSync(out, 'utf8')) as DoctorReport;
      assert.equal(report.exitCode, 0);
      assert.equal(report.rows.length, r.stdout.split('\n').filter((l) => /^EP\d{4} +[A-Z]+ /.test(l)).length);
      for (const text of [r.stdout, readFileSync(out, 'utf8')]) assert.doesNotMatch(text, /eyJ[A-Za-z0-9_-]+\.eyJ/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A BFF with known deviations, on loopback. */
function startDeviatingBff(options: { opaqueLogin: boolean }): Promise<{ url: string; close(): Promise<void> }> {
  const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const jwt = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: '7', exp: Math.floor(Date.now() / 1000) + 3600 })}.c2ln`;
  const { user, userInfo, userWithoutId } = sampleProfile(7);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    req.resume();
    req.on('end', () => {
      const send = (status: number, body: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }) => {
        res.writeHead(status, headers);
        res.end(body);
      };
      switch (path) {
        case '/auth/login':
          return send(
            200,
            JSON.stringify({
              access_token: options.opaqueLogin ? 'opaque-session-5f1c9a' : jwt,
              expires_in: 3600,
              token_type: 'bearer',
              user,
              userInfo,
            }),
          );
        case '/auth/user-profile':
          return send(200, JSON.stringify({ user: userWithoutId, userInfo }));
        case '/users/refresh-token':
          return send(200, JSON.stringify({ access_token: jwt }));
        case '/users/wallet':
          return send(200, gzipSync(JSON.stringify({ balance: 100, currency: 'BRL' })), {
            'content-type': 'application/json',
            'content-encoding': 'gzip',
          });
        case '/casino-games/home':
          return send(200, '<!doctype html><title>Under maintenance</title>', { 'content-type': 'text/html' });
        case '/bff/users/login-history':
          return send(401, JSON.stringify({ reason: 'mystery_reason' }));
        case '/casino-games/list/base':
          return send(200, JSON.stringify({ data: 'x'.repeat(80 * 1024) }));
        case '/bff/games/last-wins':
          return; // never answers
        case '/payment-providers':
          return send(200, JSON.stringify({ deposit: 'pix', withdraw: [] }));
        default:
          return send(200, JSON.stringify({ data: [] }));
      }
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () => {
          server.closeAllConnections();
          return new Promise((r) => server.close(() => r()));
        },
      });
    });
  });
}

describe('against a BFF with known deviations', () => {
  let fake: { url: string; close(): Promise<void> };
  before(async () => {
    fake = await startDeviatingBff({ opaqueLogin: false });
  });
  after(() => fake.close());

  test('each deviation is reported on its own row, and the run fails (exit 1)', async () => {
    const started = Date.now();
    const report = await runDoctor({ bffUrl: fake.url, ...DEMO, maxBytes: 64 * 1024, probeTimeoutMs: 1_000 });
    assert.ok(Date.now() - started < 15_000, 'the run is bounded');
    assert.equal(report.exitCode, 1);
    assert.equal(report.sandbox, false);
    assert.equal(rowOf(report, 'EP0001').verdict, 'pass');
    // One finding for the field, the one that says why (the shape check found it missing too).
    assert.deepEqual(
      rowOf(report, 'EP0003')
        .findings.filter((f) => f.text.startsWith('user.id'))
        .map((f) => f.text),
      ["user.id: missing; the proxy needs it for the user's own upstream paths (/users/update/{id})"],
    );
    assert.equal(rowOf(report, 'EP0034').verdict, 'warn');
    said(report, 'EP0034', /Content-Encoding gzip although the call asked for Accept-Encoding: identity/);
    said(
      report,
      'EP0141',
      /^the body is an HTML page \(47 bytes\) \(Content-Type text\/html\): the proxy answers 502 upstream_bad_response$/,
    );
    said(report, 'EP0032', /401 with reason "mystery_reason", which no 401 row of the EM table maps \(EP0032-EM0005\)/);
    said(report, 'EP0142', /over 65536 bytes: the proxy answers 502 upstream_response_too_large/);
    said(report, 'EP0090', /^deposit: expected array, got string$/);
    said(report, 'EP0149', /no answer within 1000 ms \(the proxy answers 504 upstream_timeout\)/);
    for (const code of ['EP0003', 'EP0141', 'EP0032', 'EP0142', 'EP0090', 'EP0149'])
      assert.equal(rowOf(report, code).verdict, 'fail', code);
    // Rows without a deviation stay green.
    assert.equal(rowOf(report, 'EP0147').verdict, 'pass');
  });

  test('a coded answer alone passes with a warning, and fails the run with strict', async () => {
    // A BFF whose every answer is a gzip-coded JSON body, and nothing else wrong with it.
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync('{"data":[]}'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const bffUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const lenient = await runDoctor({ bffUrl, probeTimeoutMs: 1_000 });
      assert.equal(rowOf(lenient, 'EP0143').verdict, 'warn');
      assert.equal(lenient.summary.fail, 0, JSON.stringify(lenient.rows.filter((r) => r.verdict === 'fail')));
      assert.equal(lenient.exitCode, 3, 'no login: incomplete, yet no failure');
      const strict = await runDoctor({ bffUrl, probeTimeoutMs: 1_000, strict: true });
      assert.equal(strict.exitCode, 1);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  test('--allow-writes is refused against a BFF that is not a sandbox', async () => {
    await assert.rejects(runDoctor({ bffUrl: fake.url, ...DEMO, allowWrites: true }), DoctorUsageError);
    const r = await cli(['--bff', fake.url, '--allow-writes']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--allow-writes is refused: http:\/\/127\.0\.0\.1:\d+ is not a sandbox/);
  });

  test('the CLI exits 1 and prints the failing rows with their findings', async () => {
    const r = await cli(['--bff', fake.url, '--login', DEMO.login, '--max-bytes', '65536', '--timeout', '1000'], {
      DOCTOR_PASSWORD: DEMO.password,
    });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stdout, /^EP0141 +GET +\/casino-games\/home +200 +\d+ +FAIL$/m);
    assert.match(r.stdout, /exit 1: a required endpoint deviates/);
  });
});

describe('against a BFF whose login answers an opaque token', () => {
  let fake: { url: string; close(): Promise<void> };
  before(async () => {
    fake = await startDeviatingBff({ opaqueLogin: true });
  });
  after(() => fake.close());

  test('the login row says so, without quoting the token, and the session rows cannot be probed', async () => {
    const report = await runDoctor({ bffUrl: fake.url, ...DEMO, probeTimeoutMs: 1_000 });
    assert.equal(report.exitCode, 1);
    said(report, 'EP0001', /access_token is not a well-formed JWT \(an opaque token of 21 characters\?\)/);
    assert.doesNotMatch(JSON.stringify(report), /opaque-session-5f1c9a/);
    said(report, 'EP0003', /the login gave no session/);
  });
});

describe('the time limit of the whole run', () => {
  let fake: { url: string; close(): Promise<void> };
  before(async () => {
    fake = await startDeviatingBff({ opaqueLogin: false });
  });
  after(() => fake.close());

  test('probes not started within --total-timeout are skipped, and the run says it is incomplete', async () => {
    const started = Date.now();
    // The catalogue's last-wins probe hangs for its whole 800 ms limit, past the run's 500 ms.
    const report = await runDoctor({ bffUrl: fake.url, probeTimeoutMs: 800, totalTimeoutMs: 500 });
    assert.ok(Date.now() - started < 5_000, `${Date.now() - started} ms`);
    const skipped = report.rows.filter((r) => r.findings.some((f) => /the run's time limit \(500 ms\) was reached/.test(f.text)));
    assert.ok(skipped.length > 0, 'some probes were skipped');
    assert.notEqual(report.exitCode, 0);
  });
});
