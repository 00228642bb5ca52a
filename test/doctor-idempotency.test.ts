// The doctor's opt-in check of the BFF's own idempotency (docs/doctor.md "Does the BFF honour
// Idempotency-Key?"): the verdict table, then over real sockets against a recording fake BFF that
// honours the key, one that charges twice and one that refuses the repeat, and against the embedded
// sandbox (which honours it); never without a login, never in a default run.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type DepositAnswer, judgeIdempotency, transactionIdOf } from '../src/doctor/idempotency.js';
import { formatReport } from '../src/doctor/report.js';
import { DoctorUsageError, runDoctor } from '../src/doctor/run.js';
import { type SandboxHandle, startSandbox } from '../src/sandbox/index.js';
import { sampleProfile } from './helpers/doctor-samples.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEMO = { login: 'demo@example.com', password: 'Demo#2026' };

const ok = (body: object): DepositAnswer => ({ status: 201, body: JSON.stringify(body), ...(transactionIdOf(JSON.stringify(body)) === undefined ? {} : { transactionId: transactionIdOf(JSON.stringify(body)) as string }) });

describe('the verdict of two answers to one deposit sent twice with one key', () => {
  const cases: { name: string; first: DepositAnswer; second: DepositAnswer; verdict: string }[] = [
    { name: 'the same body', first: ok({ transaction_id: 'tx1', at: 1 }), second: ok({ transaction_id: 'tx1', at: 1 }), verdict: 'honoured' },
    { name: 'the same transaction id, another body', first: ok({ transaction_id: 'tx1', at: 1 }), second: ok({ transaction_id: 'tx1', at: 2 }), verdict: 'honoured' },
    { name: 'the repeat refused 409', first: ok({ transaction_id: 'tx1' }), second: { status: 409, body: '{}' }, verdict: 'honoured' },
    { name: 'the repeat refused 422', first: ok({ transaction_id: 'tx1' }), second: { status: 422, body: '{}' }, verdict: 'honoured' },
    { name: 'two transaction ids', first: ok({ transaction_id: 'tx1' }), second: ok({ transaction_id: 'tx2' }), verdict: 'not-honoured' },
    { name: 'two ids under data', first: ok({ data: { id: 5 } }), second: ok({ data: { id: 6 } }), verdict: 'not-honoured' },
    { name: 'other bodies without ids', first: ok({ at: 1 }), second: ok({ at: 2 }), verdict: 'inconclusive' },
    { name: 'the first refused', first: { status: 422, body: '{}' }, second: { status: 422, body: '{}' }, verdict: 'inconclusive' },
    { name: 'no first answer', first: { status: null, body: '', error: 'TimeoutError' }, second: ok({ transaction_id: 'tx1' }), verdict: 'inconclusive' },
    { name: 'the repeat a 5xx', first: ok({ transaction_id: 'tx1' }), second: { status: 502, body: '' }, verdict: 'inconclusive' },
    { name: 'no repeat answer', first: ok({ transaction_id: 'tx1' }), second: { status: null, body: '', error: 'ECONNRESET' }, verdict: 'inconclusive' },
  ];
  for (const c of cases) {
    test(`${c.name}: ${c.verdict}`, () => {
      assert.equal(judgeIdempotency(c.first, c.second).verdict, c.verdict);
    });
  }
});

type Behaviour = 'honours' | 'charges twice' | 'refuses the repeat';

/** A BFF on loopback whose deposit does `behaviour` with a repeated `Idempotency-Key`; it records each deposit's headers. */
function startFakeBff(behaviour: Behaviour): Promise<{ url: string; deposits: IncomingHttpHeaders[]; close(): Promise<void> }> {
  const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const jwt = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: '7', exp: Math.floor(Date.now() / 1000) + 3600 })}.c2ln`;
  const { user, userInfo } = sampleProfile(7);
  const deposits: IncomingHttpHeaders[] = [];
  const answers = new Map<string, string>();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    req.resume();
    req.on('end', () => {
      const send = (status: number, body: string) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(body);
      };
      if (path === '/auth/login') return send(200, JSON.stringify({ access_token: jwt, expires_in: 3600, token_type: 'bearer', user, userInfo }));
      if (path === '/auth/user-profile') return send(200, JSON.stringify({ user, userInfo }));
      if (path === '/users/refresh-token') return send(200, JSON.stringify({ access_token: jwt }));
      if (path === '/wallet/add-credit' && req.method === 'POST') {
        deposits.push(req.headers);
        const key = String(req.headers['idempotency-key']);
        const seen = answers.get(key);
        if (seen !== undefined && behaviour === 'honours') return send(201, seen);
        if (seen !== undefined && behaviour === 'refuses the repeat') return send(409, JSON.stringify({ message: 'duplicate' }));
        const body = JSON.stringify({ transaction_id: `tx${deposits.length}`, status: 'pending' });
        answers.set(key, body);
        return send(201, body);
      }
      return send(200, JSON.stringify({ data: [] }));
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        deposits,
        close: () => {
          server.closeAllConnections();
          return new Promise((r) => server.close(() => r()));
        },
      });
    });
  });
}

describe('--check-idempotency against a recording fake BFF', () => {
  const expected: Record<Behaviour, string> = { honours: 'honoured', 'charges twice': 'not-honoured', 'refuses the repeat': 'honoured' };
  for (const behaviour of Object.keys(expected) as Behaviour[]) {
    test(`a BFF that ${behaviour}: ${expected[behaviour]}, the same key on both deposits, straight to the BFF`, async () => {
      const fake = await startFakeBff(behaviour);
      try {
        const report = await runDoctor({ bffUrl: fake.url, ...DEMO, checkIdempotency: true, probeTimeoutMs: 2_000 });
        const check = report.idempotency;
        assert.ok(check, 'the report holds the check');
        assert.equal(check.verdict, expected[behaviour], check.meaning);
        assert.equal(fake.deposits.length, 2, 'two deposits sent');
        const keys = fake.deposits.map((h) => h['idempotency-key']);
        assert.equal(keys[0], keys[1]);
        assert.equal(keys[0], check.key);
        assert.match(check.key, /^doctor-[0-9a-f-]{36}$/);
        assert.ok(fake.deposits.every((h) => typeof h.authorization === 'string' && h.authorization.startsWith('Bearer ')), 'with the session');
        const text = formatReport(report);
        assert.match(text, new RegExp(`Idempotency-Key honoured by the BFF: ${check.verdict}`));
        if (behaviour === 'charges twice') {
          assert.deepEqual([check.first.transactionId, check.second.transactionId], ['tx1', 'tx2']);
          assert.match(check.meaning, /Redis alone/);
        }
        assert.ok(!JSON.stringify(report).includes(String(fake.deposits[0]?.authorization).slice(7)), 'the session JWT is not in the report');
      } finally {
        await fake.close();
      }
    });
  }

  test('never in a default run, and refused without a login', async () => {
    const fake = await startFakeBff('charges twice');
    try {
      const report = await runDoctor({ bffUrl: fake.url, ...DEMO, probeTimeoutMs: 2_000 });
      assert.equal(report.idempotency, undefined);
      assert.equal(fake.deposits.length, 0, 'no deposit without --check-idempotency');
      await assert.rejects(runDoctor({ bffUrl: fake.url, checkIdempotency: true }), (e: unknown) => e instanceof DoctorUsageError && /staging account/.test(e.message));
      const cli = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        execFile(process.execPath, ['--import', 'tsx', 'src/doctor/main.ts', '--bff', fake.url, '--check-idempotency'], { cwd: ROOT, timeout: 30_000 }, (error, _stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stderr }),
        );
      });
      assert.equal(cli.code, 2);
      assert.match(cli.stderr, /--check-idempotency needs --login .*real deposits/);
      assert.equal(fake.deposits.length, 0);
    } finally {
      await fake.close();
    }
  });
});

describe('--check-idempotency against the embedded sandbox', () => {
  let sandbox: SandboxHandle;
  before(async () => {
    sandbox = await startSandbox();
  });
  after(() => sandbox.close());

  test('the sandbox honours Idempotency-Key: one charge, the same answer replayed', async () => {
    await fetch(`${sandbox.bffUrl}/__sandbox/requests`, { method: 'DELETE' });
    const report = await runDoctor({ bffUrl: sandbox.bffUrl, ...DEMO, checkIdempotency: true });
    const check = report.idempotency;
    assert.ok(check);
    assert.equal(check.verdict, 'honoured', check.meaning);
    assert.deepEqual([check.first.status, check.second.status], [201, 201]);
    assert.ok(check.first.transactionId !== undefined && check.first.transactionId === check.second.transactionId, JSON.stringify(check));
    const log = (await (await fetch(`${sandbox.bffUrl}/__sandbox/requests?limit=200`)).json()) as { requests: { method: string; path: string }[] };
    assert.equal(log.requests.filter((r) => r.method === 'POST' && r.path === '/wallet/add-credit').length, 2);
    // A run that is green otherwise stays green with the check (exit 0); --strict holds it to `honoured`.
    assert.equal(report.exitCode, 0, JSON.stringify(report.rows.filter((r) => r.verdict === 'fail')));
  });

  test('the sandbox deposit: the same key and body replayed (one transaction), another body 422, another key a new charge', async () => {
    const login = (await (await fetch(`${sandbox.bffUrl}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(DEMO) })).json()) as { access_token: string };
    const profile = (await (await fetch(`${sandbox.bffUrl}/auth/user-profile`, { headers: { authorization: `Bearer ${login.access_token}` } })).json()) as { user: { id: number } };
    const deposit = async (key: string, amount: number) => {
      const res = await fetch(`${sandbox.bffUrl}/wallet/add-credit`, {
        method: 'POST',
        headers: { authorization: `Bearer ${login.access_token}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ user_id: profile.user.id, credit_amount: amount, payment_method: 'pix', currency: 'BRL' }),
      });
      return { status: res.status, replayed: res.headers.get('idempotent-replayed'), body: (await res.json()) as { transaction_id?: string; reason?: string } };
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
});
