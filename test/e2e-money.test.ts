/**
 * End to end against the embedded sandbox (no BFF_BASE_URL): the demo user deposits by PIX, polls the
 * charge until paid, sees the wallet and the transaction, withdraws (and is refused above the
 * balance), gets the receipt, passes KYC, redeems a reward once, generates an income report, and uses
 * the account routes of spec 4.2 / 4.3 and the bank-account hub of spec 4.5.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createServer } from '../src/app.js';

let app: FastifyInstance;
let base: string;
let bffUrl: string;
let cookie = '';

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: Record<string, unknown>;
}

async function call(method: string, path: string, json?: unknown, extraCookie = ''): Promise<Answer> {
  const headers: Record<string, string> = { cookie: extraCookie ? `${cookie}; ${extraCookie}` : cookie };
  if (json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = {};
  }
  return { status: res.status, headers: res.headers, text, body };
}

async function poll(path: string, done: (a: Answer) => boolean, tries = 6): Promise<Answer> {
  let last: Answer | undefined;
  for (let i = 0; i < tries; i++) {
    last = await call('GET', path);
    assert.equal(last.status, 200, last.text);
    if (done(last)) return last;
  }
  assert.fail(`${path} did not finish: ${last?.text}`);
}

async function balanceCents(): Promise<number> {
  const res = await call('POST', '/api/wallet/refresh');
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.body.missing, []);
  return (res.body.wallet as { balance: number }).balance;
}

before(async () => {
  app = await createServer({ NODE_ENV: 'test', LOG_LEVEL: 'silent' });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  bffUrl = app.sandboxUrls?.BFF_BASE_URL ?? '';
  const login = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ login: 'demo@example.com', password: 'Demo#2026' }),
  });
  assert.equal(login.status, 200);
  cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  assert.match(cookie, /^access_token=/);
});
after(async () => {
  await app.close();
});

describe('money flow of the demo user', () => {
  let withdrawalId = '';

  test('providers: BRL methods with icons and classes', async () => {
    const res = await call('GET', '/api/payments/providers?currency=BRL');
    assert.equal(res.status, 200);
    const deposit = res.body.deposit as Record<string, unknown>[];
    const pix = deposit.find((p) => p.method === 'pix');
    assert.equal(pix?.iconUrl, '/icons/payments/pix.svg');
    assert.equal(pix?.methodClass, 'pix-like');
    assert.ok(deposit.every((p) => p.methodClass !== null));
    assert.ok((res.body.withdraw as unknown[]).length > 0);
  });

  test('deposit 5000 cents by PIX, poll until paid, the balance rises by 50.00 and the transaction is listed', async () => {
    const before = await balanceCents();
    const tracking = encodeURIComponent(JSON.stringify({ utm_source: 'e2e', utm_campaign: 'money' }));
    const res = await call(
      'POST',
      '/api/payments/deposit',
      { userId: 1001, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL', src: 'x', affiliation_code: 'AFF', appSource: 'web' },
      `cookie_tracking=${tracking}; _ga=GA1.1.42.1700000000`,
    );
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.status, 'pending');
    const payment = res.body.payment as Record<string, unknown>;
    assert.equal(typeof payment.qr_code, 'string');
    assert.match(String(payment.qr_code_text), /^000201/);
    const wallet = res.body.wallet as Record<string, number>;
    assert.equal(wallet.balance, before / 100, 'real-wallet balance in currency units');
    assert.equal(wallet.balance_cents, before);

    const received = (await (await fetch(`${bffUrl}/__sandbox/requests?path=/wallet/add-credit`)).json()) as {
      requests: { body: Record<string, unknown> }[];
    };
    const wire = received.requests.at(-1)?.body ?? {};
    assert.deepEqual(Object.keys(wire).sort(), [
      'credit_amount',
      'currency',
      'ga_client_id',
      'payment_method',
      'user_id',
      'utm_campaign',
      'utm_source',
    ]);

    const id = String(res.body.transaction_id);
    const paid = await poll(`/api/payments/deposit-status?transactionId=${id}`, (a) => a.body.status === 'paid');
    assert.equal((paid.body.wallet as Record<string, number>).balance, (before + 5000) / 100);

    const after = await balanceCents();
    assert.equal((after - before) / 100, 50);

    const list = await call('POST', '/api/wallet/transactions', { type: 'deposit', page: 1 });
    assert.equal(list.status, 200);
    const tx = (list.body.data as Record<string, unknown>[])[0];
    assert.equal(tx?.amount, 5000);
    assert.equal(tx?.status, 'paid');
    assert.equal(tx?.method, 'pix');
  });

  test('a double-clicked deposit creates one charge', async () => {
    const body = { userId: 1001, creditAmount: 2000, paymentMethod: 'pix', currency: 'BRL' };
    const [a, b] = await Promise.all([call('POST', '/api/payments/deposit', body), call('POST', '/api/payments/deposit', body)]);
    assert.equal(a.status, 201);
    assert.equal(a.body.transaction_id, b.body.transaction_id);
  });

  test('a deposit above the responsible-gaming limit carries limitError', async () => {
    const res = await call('POST', '/api/payments/deposit', {
      userId: 1001,
      creditAmount: 4_000_000,
      paymentMethod: 'pix',
      currency: 'BRL',
    });
    assert.equal(res.status, 422);
    assert.equal(res.body.error, 'deposit_limit_exceeded');
    const limit = res.body.limitError as Record<string, unknown>;
    assert.equal(limit.reason, 'deposit_limit_exceeded');
    assert.equal(limit.limit, 500_000);
    assert.equal(limit.period, 'monthly');
  });

  test('a deposit for another user is refused before the BFF', async () => {
    const res = await call('POST', '/api/payments/deposit', { userId: 1002, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' });
    assert.equal(res.status, 403);
    assert.equal(res.body.error, 'user_mismatch');
  });

  test('withdraw debits the wallet; an amount above the balance is refused with insufficient_balance', async () => {
    const before = await balanceCents();
    const ok = await call('POST', '/api/payments/withdraw', { amount: 2500, method: 'pix' });
    assert.equal(ok.status, 201, ok.text);
    withdrawalId = String(ok.body.id);
    assert.equal(await balanceCents(), before - 2500);
    const tooMuch = await call('POST', '/api/payments/withdraw', { amount: before, method: 'pix' });
    assert.equal(tooMuch.status, 422);
    assert.equal(tooMuch.body.error, 'insufficient_balance');
    assert.equal(await balanceCents(), before - 2500);
  });

  test('the withdrawal receipt is HTML streamed through', async () => {
    const res = await call('POST', '/api/wallet/receipt', { transactionId: withdrawalId });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(res.text, /Withdrawal receipt/);
    const missing = await call('POST', '/api/wallet/receipt', { id: 'tx_unknown' });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error, 'withdraw_not_found');
  });

  test('bonus and cashback transfers move money into the real balance', async () => {
    const before = await balanceCents();
    const bonus = await call('POST', '/api/wallet/action', { action: 'bonus-transfer' });
    assert.equal(bonus.status, 200, bonus.text);
    const cashback = await call('POST', '/api/wallet/action', { action: 'cashback-transfer', amount: 200 });
    assert.equal(cashback.status, 200, cashback.text);
    assert.equal(await balanceCents(), before + 2500 + 200);
    const again = await call('POST', '/api/wallet/action', { action: 'bonus-transfer' });
    assert.equal(again.status, 422);
    assert.equal(again.body.error, 'no_bonus_balance');
  });
});

describe('KYC, rewards, income report', () => {
  test('KYC start → pending → approved', async () => {
    const start = await call('GET', '/api/kyc/start?source=withdraw');
    assert.equal(start.status, 200);
    assert.equal(start.body.status, 'pending');
    const done = await poll(`/api/kyc/status?kyc_id=${String(start.body.kyc_id)}`, (a) => a.body.status === 'approved');
    assert.equal(done.body.flow, 'normal');
    const recovery = await call('GET', '/api/kyc/start?source=login&recovery=1');
    assert.equal(recovery.body.flow, 'recovery');
    const recovered = await poll(`/api/kyc/status?kyc_id=${String(recovery.body.kyc_id)}&recovery=1`, (a) => a.body.status === 'approved');
    assert.equal(recovered.body.flow, 'recovery');
  });

  test('a reward is redeemed once; the second time is refused', async () => {
    const list = await call('POST', '/api/rewards/list', { page: 1, per_page: 2, type: 'bonus' });
    assert.equal(list.status, 200);
    const [reward] = list.body.data as Record<string, unknown>[];
    assert.equal(reward?.type, 'bonus');
    const first = await call('POST', '/api/rewards/redeem', { reward_id: reward?.id });
    assert.equal(first.status, 200);
    const second = await call('POST', '/api/rewards/redeem', { reward_id: reward?.id });
    assert.equal(second.status, 409);
    assert.equal(second.body.error, 'already_redeemed');
  });

  test('income report: available years, generate, poll until ready', async () => {
    const years = await call('GET', '/api/income-report/available-years');
    const [year] = years.body.years as number[];
    assert.equal(typeof year, 'number');
    const generated = await call('POST', '/api/income-report/generate', { year });
    assert.equal(generated.status, 202);
    assert.equal(generated.body.status, 'processing');
    const ready = await poll(`/api/income-report/status/${String(generated.body.id)}`, (a) => a.body.status === 'ready');
    assert.match(String(ready.body.download_url), /\.pdf$/);
  });
});

describe('account and bank data', () => {
  test('bank-account hub and PIX key', async () => {
    const saved = await call('POST', '/api/payments/bank-account', { type: 'save-generic', bank_code: '001', account_number: '12345-6' });
    assert.equal(saved.status, 200, saved.text);
    const read = await call('POST', '/api/payments/bank-account', { type: 'get-generic' });
    assert.equal((read.body.account as Record<string, unknown>).account_number, '12345-6');
    const update = await call('POST', '/api/payments/pix-key', { pix_key: 'demo@example.com', pix_key_type: 'email' });
    assert.equal(update.status, 200);
    const key = await call('GET', '/api/payments/pix-key');
    assert.equal(key.body.pix_key, 'demo@example.com');
    const coupon = await call('GET', '/api/payments/coupon?code=WELCOME10');
    assert.equal(coupon.body.percentage, 10);
    const unknown = await call('GET', '/api/payments/coupon?code=NOPE');
    assert.equal(unknown.status, 404);
    const banks = await call('GET', '/api/payments/bank-list');
    assert.ok((banks.body.banks as unknown[]).length > 0);
  });

  test('profile, preferences, e-mail validation, referrals, document upload', async () => {
    const profile = await call('PATCH', '/api/user/update-profile', { name: 'Ana Beatriz S', id: 1002 });
    assert.equal(profile.status, 200, profile.text);
    assert.equal((profile.body.user as Record<string, unknown>).id, 1001);
    const prefs = await call('PATCH', '/api/user/update-preferences', { theme: 'dark', language: 'pt-BR' });
    assert.deepEqual(prefs.body.metadata, { theme: 'dark', language: 'pt-BR' });
    assert.equal((await call('POST', '/api/validation/email/send')).status, 200);
    assert.equal((await call('POST', '/api/validation/email/verify', { code: '000000' })).status, 422);
    assert.equal((await call('POST', '/api/validation/email/verify', { code: '123456' })).body.valid, true);
    const stats = await call('GET', '/api/user/indication-stats');
    assert.equal(stats.body.user_id, 1001);
    const indicator = await call('GET', '/api/user/referral-indicator');
    assert.equal(indicator.body.code, 'REF1001');
    const referrals = await call('POST', '/api/user/referrals');
    assert.equal(referrals.status, 200);
    const form = new FormData();
    form.append('endpoint', 'selfie');
    form.append('file', new Blob([Buffer.alloc(4096, 9)], { type: 'image/jpeg' }), 'selfie.jpg');
    const upload = await fetch(`${base}/api/user/store-document`, { method: 'POST', headers: { cookie }, body: form });
    const uploaded = (await upload.json()) as Record<string, unknown>;
    assert.equal(upload.status, 201);
    assert.equal(uploaded.endpoint, 'selfie');
    assert.equal(uploaded.content_type, 'image/jpeg');
    const cep = await fetch(`${base}/api/address/lookup-by-postal-code`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ cep: '01310-100' }),
    });
    assert.equal(cep.status, 200, 'no session needed');
    assert.equal(((await cep.json()) as Record<string, unknown>).street, 'Avenida Paulista');
  });
});
