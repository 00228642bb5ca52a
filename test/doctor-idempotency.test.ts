// The doctor's opt-in check of the BFF's own idempotency (docs/doctor.md "Does the BFF honour
// Idempotency-Key?"): the verdict table, then over real sockets against a recording fake BFF that
// honours the key, one that charges twice and one that refuses the repeat (the embedded sandbox,
// which honours it, in doctor.test.ts); never without a login, never in a default run.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import type { IncomingHttpHeaders } from 'node:http';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type DepositAnswer, judgeIdempotency, transactionIdOf } from '../src/doctor/idempotency.js';
import { formatReport } from '../src/doctor/report.js';
import { DoctorUsageError, runDoctor } from '../src/doctor/run.js';
import { sampleProfile } from './helpers/doctor-samples.js';
import { startRecordingUpstream } from './helpers/recording-upstream.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEMO = { login: 'demo@example.com', password: 'Demo#2026' };

const ok = (body: object): DepositAnswer => ({
  status: 201,
  body: JSON.stringify(body),
  ...(transactionIdOf(JSON.stringify(body)) === undefined ? {} : { transactionId: transactionIdOf(JSON.stringify(body)) as string }),
});

describe('the verdict of two answers to one deposit sent twice with one key', () => {
  const cases: { name: string; first: DepositAnswer; second: DepositAnswer; verdict: string }[] = [
    {
      name: 'the same body',
      first: ok({ transaction_id: 'tx1', at: 1 }),
      second: ok({ transaction_id: 'tx1', at: 1 }),
      verdict: 'honoured',
    },
    {
      name: 'the same transaction id, another body',
      first: ok({ transaction_id: 'tx1', at: 1 }),
      second: ok({ transaction_id: 'tx1', at: 2 }),
      verdict: 'honoured',
    },
    { name: 'the repeat refused 409', first: ok({ transaction_id: 'tx1' }), second: { status: 409, body: '{}' }, verdict: 'honoured' },
    { name: 'the repeat refused 422', first: ok({ transaction_id: 'tx1' }), second: { status: 422, body: '{}' }, verdict: 'honoured' },
    { name: 'two transaction ids', first: ok({ transaction_id: 'tx1' }), second: ok({ transaction_id: 'tx2' }), verdict: 'not-honoured' },
    { name: 'two ids under data', first: ok({ data: { id: 5 } }), second: ok({ data: { id: 6 } }), verdict: 'not-honoured' },
    { name: 'other bodies without ids', first: ok({ at: 1 }), second: ok({ at: 2 }), verdict: 'inconclusive' },
    { name: 'the first refused', first: { status: 422, body: '{}' }, second: { status: 422, body: '{}' }, verdict: 'inconclusive' },
    {
      name: 'no first answer',
      first: { status: null, body: '', error: 'TimeoutError' },
      second: ok({ transaction_id: 'tx1' }),
      verdict: 'inconclusive',
    },
    { name: 'the repeat a 5xx', first: ok({ transaction_id: 'tx1' }), second: { status: 502, body: '' }, verdict: 'inconclusive' },
    {
      name: 'no repeat answer',
      first: ok({ transaction_id: 'tx1' }),
      second: { status: null, body: '', error: 'ECONNRESET' },
      verdict: 'inconclusive',
    },
  ];
  for (const c of cases) {
    test(`${c.name}: ${c.verdict}`, () => {
      assert.equal(judgeIdempotency(c.first, c.second).verdict, c.verdict);
    });
  }
});

type Behaviour = 'honours' | 'charges twice' | 'refuses the repeat';

/** A recording fake BFF whose deposit does `behaviour` with a repeated `Idempotency-Key`; `deposits` are the deposit requests' headers. */
async function startFakeBff(behaviour: Behaviour): Promise<{ url: string; deposits: () => IncomingHttpHeaders[]; close(): Promise<void> }> {
  const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const jwt = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: '7', exp: Math.floor(Date.now() / 1000) + 3600 })}.c2ln`;
  const { user, userInfo } = sampleProfile(7);
  const upstream = await startRecordingUpstream();
  upstream.setDefault({ json: { data: [] } });
  upstream.on('POST', '/auth/login', { json: { access_token: jwt, expires_in: 3600, token_type: 'bearer', user, userInfo } });
  upstream.on('GET', '/auth/user-profile', { json: { user, userInfo } });
  upstream.on('POST', '/users/refresh-token', { json: { access_token: jwt } });
  const deposits = () => upstream.requests.filter((r) => r.method === 'POST' && r.path === '/wallet/add-credit').map((r) => r.headers);
  const answers = new Map<string, string>();
  upstream.on('POST', '/wallet/add-credit', (req, res) => {
    const key = String(req.headers['idempotency-key']);
    const seen = answers.get(key);
    const send = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    };
    if (seen !== undefined && behaviour === 'honours') return send(201, seen);
    if (seen !== undefined && behaviour === 'refuses the repeat') return send(409, JSON.stringify({ message: 'duplicate' }));
    const body = JSON.stringify({ transaction_id: `tx${deposits().length}`, status: 'pending' });
    answers.set(key, body);
    return send(201, body);
  });
  return { url: upstream.url, deposits, close: () => upstream.close() };
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
        assert.equal(fake.deposits().length, 2, 'two deposits sent');
        const keys = fake.deposits().map((h) => h['idempotency-key']);
        assert.equal(keys[0], keys[1]);
        assert.equal(keys[0], check.key);
        assert.match(check.key, /^doctor-[0-9a-f-]{36}$/);
        assert.ok(
          fake.deposits().every((h) => typeof h.authorization === 'string' && h.authorization.startsWith('Bearer ')),
          'with the session',
        );
        const text = formatReport(report);
        assert.match(text, new RegExp(`Idempotency-Key honoured by the BFF: ${check.verdict}`));
        if (behaviour === 'charges twice') {
          assert.deepEqual([check.first.transactionId, check.second.transactionId], ['tx1', 'tx2']);
          assert.match(check.meaning, /Redis alone/);
        }
        assert.ok(
          !JSON.stringify(report).includes(String(fake.deposits()[0]?.authorization).slice(7)),
          'the session JWT is not in the report',
        );
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
      assert.equal(fake.deposits().length, 0, 'no deposit without --check-idempotency');
      await assert.rejects(
        runDoctor({ bffUrl: fake.url, checkIdempotency: true }),
        (e: unknown) => e instanceof DoctorUsageError && /staging account/.test(e.message),
      );
      const cli = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          ['--import', 'tsx', 'src/doctor/main.ts', '--bff', fake.url, '--check-idempotency'],
          { cwd: ROOT, timeout: 30_000 },
          (error, _stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stderr }),
        );
      });
      assert.equal(cli.code, 2);
      assert.match(cli.stderr, /--check-idempotency needs --login .*real deposits/);
      assert.equal(fake.deposits().length, 0);
    } finally {
      await fake.close();
    }
  });
});
