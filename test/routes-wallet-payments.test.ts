/**
 * spec 4.4 Wallet and 4.5 Payments against a recording upstream over real sockets: the upstream
 * method, path, query and body of every row; the deposit of spec 2.7 (wire body, attribution,
 * signup-only fields, card fields, own user id, cents → units, limitError, amount bounds
 * (minimumCents / maximumCents), double submit, one
 * attempt); providers of spec 2.8; the streamed receipt; 401 without the cookie; invalid input → 400
 * with zero upstream calls.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, test } from 'node:test';
import { paymentsRoutes } from '../src/routes/payments.js';
import { RECEIPT_HTML_CSP, walletRoutes } from '../src/routes/wallet.js';
import { ConcurrencyBarrier, fakeJwt, send, startProxy, useProxyWithRecorder } from './helpers/recording-upstream.js';

const { upstream, proxy } = useProxyWithRecorder({ UPSTREAM_TIMEOUT_MS: '2000' });
let token = fakeJwt();
const USER_ID = 7;
const PROFILE = '/auth/user-profile';

beforeEach(() => {
  token = fakeJwt({ sub: String(USER_ID), n: Math.random() });
  upstream.on('GET', PROFILE, { json: { user: { id: USER_ID }, userInfo: {} } });
});

/** The requests the upstream got, without the profile reads. */
function calls() {
  return upstream.requests.filter((r) => r.path !== PROFILE);
}

function post(url: string, json?: unknown, headers: Record<string, string> = {}) {
  return send(proxy.url, 'POST', url, { json, token, headers });
}

const deposit = { userId: USER_ID, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' };

describe('spec 4.4 /api/wallet/refresh', () => {
  test('calls the wallet and both rollover endpoints and answers them together', async () => {
    upstream.on('GET', '/users/wallet', { json: { balance: 150_000, currency: 'BRL' } });
    upstream.on('GET', '/bonus/rollover', { json: { required: 100, wagered: 50 } });
    upstream.on('GET', '/bonus/rollover-accomplished', { json: { accomplished: false } });
    const res = await post('/api/wallet/refresh');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, {
      wallet: { balance: 150_000, currency: 'BRL' },
      rollover: { required: 100, wagered: 50 },
      rolloverAccomplished: { accomplished: false },
      missing: [],
    });
    assert.deepEqual(
      calls()
        .map((r) => `${r.method} ${r.path}`)
        .sort(),
      ['GET /bonus/rollover', 'GET /bonus/rollover-accomplished', 'GET /users/wallet'],
    );
  });

  test('the three calls run in parallel', async () => {
    const barrier = new ConcurrencyBarrier(3);
    for (const path of ['/users/wallet', '/bonus/rollover', '/bonus/rollover-accomplished']) {
      upstream.on('GET', path, barrier.reply({}));
    }
    const res = await post('/api/wallet/refresh');
    assert.equal(res.status, 200);
    assert.equal(barrier.maxInFlight, 3, 'not one after the other');
  });

  test('a failed rollover call does not prevent the wallet; the answer says which part is missing', async () => {
    upstream.on('GET', '/users/wallet', { json: { balance: 1 } });
    upstream.on('GET', '/bonus/rollover', { status: 500, json: { message: 'down' } });
    upstream.on('GET', '/bonus/rollover-accomplished', (_req, res) => res.socket?.destroy());
    const res = await post('/api/wallet/refresh');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, {
      wallet: { balance: 1 },
      rollover: null,
      rolloverAccomplished: null,
      missing: ['rollover', 'rolloverAccomplished'],
    });
  });

  test('a failed wallet call is the answer: 401 byte for byte, other statuses the envelope', async () => {
    upstream.on('GET', '/users/wallet', { status: 401, text: '{"reason":"revoked"}' });
    const revoked = await post('/api/wallet/refresh');
    assert.equal(revoked.status, 401);
    assert.equal(revoked.text, '{"reason":"revoked"}');
    upstream.on('GET', '/users/wallet', { status: 503, json: { message: 'Down for maintenance' } });
    const down = await post('/api/wallet/refresh');
    assert.equal(down.status, 503);
    assert.deepEqual(down.json, { ok: false, error: 'service_unavailable', detail: 'Down for maintenance' });
  });
});

describe('spec 4.4 transactions and actions', () => {
  const rows: [string, unknown, string, string, string, unknown][] = [
    [
      '/api/wallet/transactions',
      { type: 'deposit', period: '30d', page: 2 },
      'POST',
      '/bff/transactions',
      '',
      { type: 'deposit', period: '30d', page: 2 },
    ],
    ['/api/wallet/transactions', undefined, 'POST', '/bff/transactions', '', {}],
    [
      '/api/wallet/transactions',
      { type: 'cashback', page: 3, per_page: 10 },
      'GET',
      '/transactions/cashback',
      'page=3&per_page=10',
      undefined,
    ],
    ['/api/wallet/action', { action: 'bonus-transfer', amount: 500 }, 'POST', '/bonus/transfer', '', { amount: 500 }],
    ['/api/wallet/action', { action: 'cashback-transfer' }, 'POST', '/cashback/transfer', '', {}],
  ];
  for (const [url, json, method, path, query, body] of rows) {
    test(`${url} ${JSON.stringify(json)} → ${method} ${path}${query ? `?${query}` : ''}`, async () => {
      const res = await post(url, json);
      assert.equal(res.status, 200);
      const [call] = calls();
      assert.equal(call?.method, method);
      assert.equal(call?.path, path);
      assert.equal(call?.query, query);
      assert.deepEqual(call?.json, body);
    });
  }
});

describe('spec 4.4 /api/wallet/receipt (raw passthrough)', () => {
  test('HTML is streamed through with its content type, inline, under a sandboxing CSP', async () => {
    const html = '<!doctype html><p>Receipt</p>';
    upstream.on('GET', '/withdraw/tx_9/generate', { text: html, headers: { 'content-type': 'text/html; charset=utf-8' } });
    const res = await post('/api/wallet/receipt', { transactionId: 'tx_9' });
    assert.equal(res.status, 200);
    assert.equal(res.text, html);
    assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(res.headers.get('content-security-policy'), RECEIPT_HTML_CSP);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.match(res.headers.get('content-disposition') ?? '', /^inline; filename="receipt-tx_9\.html"$/);
    assert.equal(calls()[0]?.headers.authorization, `Bearer ${token}`);
  });

  test('a PDF is streamed: the first bytes reach the client before the upstream has finished', async () => {
    const head = Buffer.from('%PDF-1.4\n');
    const rest = Buffer.alloc(1024 * 1024, 0x41);
    let finished = 0;
    upstream.on('GET', '/withdraw/42/generate', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      res.write(head);
      setTimeout(() => {
        finished = Date.now();
        res.end(rest);
      }, 300);
    });
    const res = await fetch(`${proxy.url}/api/wallet/receipt`, {
      method: 'POST',
      headers: { cookie: `access_token=${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 42 }),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/pdf');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    assert.equal(finished, 0, 'the first chunk arrived while the upstream was still sending');
    const chunks = [Buffer.from(first.value ?? [])];
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(Buffer.from(r.value));
    assert.ok(Buffer.concat(chunks).equals(Buffer.concat([head, rest])));
    assert.equal(calls()[0]?.path, '/withdraw/42/generate');
  });

  test('another content type → 502; upstream 404 → envelope; 403 → byte for byte', async () => {
    upstream.on('GET', '/withdraw/1/generate', { json: { not: 'a receipt' } });
    const json = await post('/api/wallet/receipt', { id: '1' });
    assert.equal(json.status, 502);
    assert.equal((json.json as Record<string, unknown>).error, 'upstream_bad_response');
    upstream.on('GET', '/withdraw/2/generate', { status: 404, json: { reason: 'withdraw_not_found', message: 'Not found' } });
    const missing = await post('/api/wallet/receipt', { id: '2' });
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.json, { ok: false, error: 'withdraw_not_found', detail: 'Not found' });
    upstream.on('GET', '/withdraw/3/generate', { status: 403, text: '{"reason":"not_yours"}' });
    const forbidden = await post('/api/wallet/receipt', { id: '3' });
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.text, '{"reason":"not_yours"}');
  });
});

describe('spec 4.5 / 2.8 /api/payments/providers', () => {
  const providers = {
    deposit: [
      { method: 'pix', icon: 'payments/pix', currency: 'BRL' },
      { method: 'spei', icon: 'payments/spei', currency: 'MXN' },
      { method: 'crypto', icon: 'payments/crypto', currencies: ['BRL', 'MXN'] },
      { method: 'mystery', icon: 'https://evil.example/x.svg' },
    ],
    withdraw: [{ slug: 'credit-card-2', icon: 'payments/credit-card-2', currency: 'MXN' }],
  };

  test('both collections, each provider with iconUrl and methodClass', async () => {
    upstream.on('GET', '/payment-providers', { json: providers });
    const res = await send(proxy.url, 'GET', '/api/payments/providers', { token });
    assert.equal(res.status, 200);
    const body = res.json as { deposit: Record<string, unknown>[]; withdraw: Record<string, unknown>[] };
    assert.deepEqual(
      body.deposit.map((p) => [p.method, p.iconUrl, p.methodClass]),
      [
        ['pix', '/icons/payments/pix.svg', 'pix-like'],
        ['spei', '/icons/payments/spei.svg', 'spei'],
        ['crypto', '/icons/payments/crypto.svg', 'redirect'],
        ['mystery', null, null],
      ],
    );
    assert.deepEqual(
      body.withdraw.map((p) => [p.slug, p.methodClass]),
      [['credit-card-2', 'card-form']],
    );
    assert.equal(calls()[0]?.path, '/payment-providers');
  });

  test('?currency filters both collections (and is passed upstream)', async () => {
    upstream.on('GET', '/payment-providers', { json: providers });
    const res = await send(proxy.url, 'GET', '/api/payments/providers?currency=MXN', { token });
    const body = res.json as { deposit: Record<string, unknown>[]; withdraw: Record<string, unknown>[] };
    assert.deepEqual(
      body.deposit.map((p) => p.method),
      ['spei', 'crypto', 'mystery'],
    );
    assert.deepEqual(
      body.withdraw.map((p) => p.slug),
      ['credit-card-2'],
    );
    assert.equal(calls()[0]?.query, 'currency=MXN');
    const bad = await send(proxy.url, 'GET', '/api/payments/providers?currency=brl', { token });
    assert.equal(bad.status, 400);
  });

  test('PAYMENT_ICON_PREFIX: <prefix>/payments/<method>.svg', async () => {
    const other = await startProxy(upstream.url, { PAYMENT_ICON_PREFIX: 'https://cdn.example.com/static/' });
    try {
      upstream.on('GET', '/payment-providers', { json: providers });
      const res = await send(other.url, 'GET', '/api/payments/providers', { token });
      const body = res.json as { deposit: Record<string, unknown>[] };
      assert.equal(body.deposit[0]?.iconUrl, 'https://cdn.example.com/static/payments/pix.svg');
    } finally {
      await other.close();
    }
  });
});

describe('spec 4.5 / 2.7 /api/payments/deposit', () => {
  const answer = { transaction_id: 'ch_1', status: 'pending', amount: 5000, wallet: { balance: 155_000, currency: 'BRL' } };

  test('sends the snake_case wire body to POST /wallet/add-credit; the wallet balance comes back in units', async () => {
    upstream.on('POST', '/wallet/add-credit', { status: 201, json: answer });
    const res = await post('/api/payments/deposit', { ...deposit, couponCode: 'WELCOME10' });
    assert.equal(res.status, 201);
    assert.deepEqual(res.json, { ...answer, wallet: { balance: 1550, balance_cents: 155_000, currency: 'BRL' } });
    const [call] = calls();
    assert.equal(call?.method, 'POST');
    assert.equal(call?.path, '/wallet/add-credit');
    assert.deepEqual(call?.json, { user_id: 7, credit_amount: 5000, payment_method: 'pix', currency: 'BRL', coupon_code: 'WELCOME10' });
    // The text the exactly-once key was taken over is the body sent, as a JSON body: compact, in the table's order.
    assert.equal(call?.body, '{"user_id":7,"credit_amount":5000,"payment_method":"pix","currency":"BRL","coupon_code":"WELCOME10"}');
    assert.equal(call?.headers['content-type'], 'application/json');
    assert.equal(call?.headers.authorization, `Bearer ${token}`);
  });

  test('spec 2.7 rule 1: src, utm_src, affiliation_code, app_source never reach the upstream (camelCase or snake_case)', async () => {
    upstream.on('POST', '/wallet/add-credit', { json: answer });
    const res = await post(
      '/api/payments/deposit',
      {
        ...deposit,
        src: 'legacy',
        utm_src: 'legacy',
        utmSrc: 'legacy',
        affiliation_code: 'AFF',
        affiliationCode: 'AFF',
        app_source: 'ios',
        appSource: 'ios',
      },
      { cookie: `access_token=${token}; cookie_tracking=${encodeURIComponent('{"utm_source":"ads","src":"x"}')}` },
    );
    assert.equal(res.status, 200);
    const body = calls()[0]?.json as Record<string, unknown>;
    for (const field of ['src', 'utm_src', 'utmSrc', 'affiliation_code', 'affiliationCode', 'app_source', 'appSource']) {
      assert.equal(field in body, false, `${field} reached the upstream`);
    }
    assert.equal(body.utm_source, 'ads');
  });

  test('attribution: cookie_tracking and _ga fill what the body does not have; body values win', async () => {
    upstream.on('POST', '/wallet/add-credit', { json: answer });
    const tracking = encodeURIComponent(
      JSON.stringify({ utm_source: 'cookie-src', utm_medium: 'cookie-med', utm_campaign: 'cookie-camp' }),
    );
    await post(
      '/api/payments/deposit',
      { ...deposit, utmCampaign: 'body-camp' },
      { cookie: `access_token=${token}; cookie_tracking=${tracking}; _ga=GA1.1.111.222` },
    );
    const body = calls()[0]?.json as Record<string, unknown>;
    assert.equal(body.utm_source, 'cookie-src');
    assert.equal(body.utm_medium, 'cookie-med');
    assert.equal(body.utm_campaign, 'body-camp');
    assert.equal(body.ga_client_id, '111.222');
  });

  test('card fields: sent for a card-form slug, 400 for any other method (zero upstream calls)', async () => {
    const card = { cardNumber: '4111111111111111', cardName: 'ANA', cardExpiryMonth: '09', cardExpiryYear: '2031', cardCvv: '123' };
    const refused = await post('/api/payments/deposit', { ...deposit, ...card });
    assert.equal(refused.status, 400);
    const partial = await post('/api/payments/deposit', {
      ...deposit,
      paymentMethod: 'credit-card-2',
      currency: 'MXN',
      cardNumber: card.cardNumber,
    });
    assert.equal(partial.status, 400);
    assert.equal(upstream.requests.length, 0);
    upstream.on('POST', '/wallet/add-credit', { json: answer });
    const ok = await post('/api/payments/deposit', { ...deposit, paymentMethod: 'credit-card-form', currency: 'CLP', ...card });
    assert.equal(ok.status, 200);
    assert.deepEqual(calls()[0]?.json, {
      user_id: 7,
      credit_amount: 5000,
      payment_method: 'credit-card-form',
      currency: 'CLP',
      card_number: '4111111111111111',
      card_name: 'ANA',
      card_expiry_month: '09',
      card_expiry_year: '2031',
      card_cvv: '123',
    });
  });

  test("userId must be the session's own user: 403 user_mismatch, no deposit call", async () => {
    const res = await post('/api/payments/deposit', { ...deposit, userId: 8 });
    assert.equal(res.status, 403);
    assert.equal((res.json as Record<string, unknown>).error, 'user_mismatch');
    assert.equal(calls().length, 0);
  });

  test('a responsible-gaming limit failure carries limitError; a 403 is passed through untouched', async () => {
    upstream.on('POST', '/wallet/add-credit', {
      status: 422,
      json: { reason: 'deposit_limit_exceeded', message: 'Limit reached', limit: 500_000, remaining: 1000, period: 'monthly' },
    });
    const limited = await post('/api/payments/deposit', deposit);
    assert.equal(limited.status, 422);
    assert.deepEqual(limited.json, {
      ok: false,
      error: 'deposit_limit_exceeded',
      detail: 'Limit reached',
      limitError: { reason: 'deposit_limit_exceeded', limit: 500_000, remaining: 1000, period: 'monthly' },
    });
    token = fakeJwt({ n: 'second' });
    upstream.on('POST', '/wallet/add-credit', { status: 403, text: '{"reason":"spa_deposit_limit"}' });
    const forbidden = await post('/api/payments/deposit', deposit);
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.text, '{"reason":"spa_deposit_limit"}');
    token = fakeJwt({ n: 'third' });
    upstream.on('POST', '/wallet/add-credit', { status: 422, json: { reason: 'card_declined', message: 'Declined' } });
    const declined = await post('/api/payments/deposit', deposit);
    assert.equal((declined.json as Record<string, unknown>).limitError, undefined);
  });

  test('spec 7.4.2: an amount the upstream refuses carries the bound it gave, in cents (minimumCents / maximumCents)', async () => {
    upstream.on('POST', '/wallet/add-credit', {
      status: 422,
      json: { reason: 'amount_below_minimum', message: 'The amount is below the minimum.', min_amount: 1000 },
    });
    const below = await post('/api/payments/deposit', { ...deposit, creditAmount: 500 });
    assert.equal(below.status, 422);
    assert.deepEqual(below.json, {
      ok: false,
      error: 'amount_below_minimum',
      detail: 'The amount is below the minimum.',
      minimumCents: 1000,
    });
    assert.equal(calls().length, 1, 'one upstream call, no retry');
    token = fakeJwt({ n: 'above' });
    upstream.on('POST', '/wallet/add-credit', {
      status: 422,
      json: { reason: 'amount_above_maximum', message: 'The amount is above the maximum.', max_amount: 5_000_000 },
    });
    const above = await post('/api/payments/deposit', { ...deposit, creditAmount: 6_000_000 });
    assert.deepEqual(above.json, {
      ok: false,
      error: 'amount_above_maximum',
      detail: 'The amount is above the maximum.',
      maximumCents: 5_000_000,
    });
    token = fakeJwt({ n: 'no bound' });
    upstream.on('POST', '/wallet/add-credit', {
      status: 422,
      json: { reason: 'amount_below_minimum', message: 'Too small', min_amount: '10.00' },
    });
    const unsaid = await post('/api/payments/deposit', deposit);
    assert.deepEqual(
      unsaid.json,
      { ok: false, error: 'amount_below_minimum', detail: 'Too small' },
      'a bound that is not integer cents is not passed on',
    );
  });

  test('an amount outside the proxy range → 400 invalid_request with the bound in cents; nothing sent upstream', async () => {
    const zero = await post('/api/payments/deposit', { ...deposit, creditAmount: 0 });
    assert.equal(zero.status, 400);
    assert.deepEqual(zero.json, { ok: false, error: 'invalid_request', detail: 'body.creditAmount must be >= 1', minimumCents: 1 });
    const huge = await post('/api/payments/deposit', { ...deposit, creditAmount: 100_000_001 });
    assert.equal((huge.json as Record<string, unknown>).maximumCents, 100_000_000);
    assert.equal((huge.json as Record<string, unknown>).minimumCents, undefined);
    const fractional = await post('/api/payments/deposit', { ...deposit, creditAmount: 50.5 });
    assert.equal(fractional.status, 400);
    assert.equal((fractional.json as Record<string, unknown>).minimumCents, undefined, 'a type failure says no bound');
    const withdraw = await post('/api/payments/withdraw', { amount: 0, method: 'pix' });
    assert.equal((withdraw.json as Record<string, unknown>).minimumCents, 1);
    const badUser = await post('/api/payments/deposit', { ...deposit, userId: 0 });
    assert.equal((badUser.json as Record<string, unknown>).minimumCents, undefined, 'only amounts say a bound in cents');
    assert.equal(upstream.requests.length, 0);
  });

  test('double submit: 5 concurrent identical deposits reach the upstream once and all get its answer', async () => {
    upstream.on('POST', '/wallet/add-credit', { status: 201, json: answer, delayMs: 100 });
    const results = await Promise.all(Array.from({ length: 5 }, () => post('/api/payments/deposit', deposit)));
    assert.equal(calls().length, 1);
    for (const r of results) {
      assert.equal(r.status, 201);
      assert.deepEqual(r.json, results[0]?.json);
    }
  });

  test('double submit: back to back within the window → one upstream call; another amount or session → its own call', async () => {
    upstream.on('POST', '/wallet/add-credit', { status: 201, json: answer });
    await post('/api/payments/deposit', deposit);
    const again = await post('/api/payments/deposit', { currency: 'BRL', paymentMethod: 'pix', creditAmount: 5000, userId: USER_ID });
    assert.equal(again.status, 201);
    assert.equal(calls().length, 1, 'same body (any key order) from the same session');
    await post('/api/payments/deposit', { ...deposit, creditAmount: 5001 });
    assert.equal(calls().length, 2);
    token = fakeJwt({ n: 'other-session' });
    await post('/api/payments/deposit', deposit);
    assert.equal(calls().length, 3);
  });

  test('double submit: attribution from the tracking cookie or from the body is the same deposit', async () => {
    upstream.on('POST', '/wallet/add-credit', { status: 201, json: answer });
    const tracking = { cookie: `cookie_tracking=${encodeURIComponent(JSON.stringify({ utm_source: 'news' }))}` };
    const first = await post('/api/payments/deposit', { ...deposit, couponCode: 'SPRING', utmMedium: 'mail' }, tracking);
    assert.equal(first.status, 201);
    const again = await post('/api/payments/deposit', { couponCode: 'SPRING', ...deposit, utmMedium: 'mail', utmSource: 'news' });
    assert.equal(again.status, 201);
    assert.equal(calls().length, 1, 'equal wire bodies, whatever the source of their fields and their key order');
    assert.deepEqual(Object.keys(calls()[0]?.json as object), [
      'user_id',
      'credit_amount',
      'payment_method',
      'currency',
      'coupon_code',
      'utm_source',
      'utm_medium',
    ]);
  });

  test('a deposit keeps the cached profile: one profile read for several deposits of one session', async () => {
    upstream.on('POST', '/wallet/add-credit', { status: 201, json: answer });
    for (const creditAmount of [5000, 5001, 5002]) {
      assert.equal((await post('/api/payments/deposit', { ...deposit, creditAmount })).status, 201);
    }
    assert.equal(calls().length, 3);
    assert.equal(upstream.requests.filter((r) => r.path === PROFILE).length, 1, 'the user id came from the cached profile each time');
  });

  test('exactly one upstream attempt: a 500, a reset and a timeout are never retried', async () => {
    upstream.on('POST', '/wallet/add-credit', { status: 500, json: { message: 'boom' } });
    const failed = await post('/api/payments/deposit', deposit);
    assert.equal(failed.status, 500);
    assert.equal(calls().length, 1);
    upstream.reset();
    upstream.on('GET', PROFILE, { json: { user: { id: USER_ID } } });
    upstream.on('POST', '/wallet/add-credit', (_req, res) => res.socket?.destroy());
    const reset = await post('/api/payments/deposit', { ...deposit, creditAmount: 7000 });
    assert.equal(reset.status, 502);
    assert.equal(calls().length, 1);
    const repeat = await post('/api/payments/deposit', { ...deposit, creditAmount: 7000 });
    assert.equal(repeat.status, 409, 'the repeat of an unknown outcome answers request_in_progress until the lease ends');
    assert.equal((repeat.json as Record<string, unknown>).error, 'request_in_progress');
    assert.ok(Number(repeat.headers.get('retry-after')) >= 1, 'with Retry-After');
    assert.equal(calls().length, 1, 'and no second attempt');
    upstream.on('POST', '/wallet/add-credit', { json: answer, delayMs: 4000 });
    const slow = await post('/api/payments/deposit', { ...deposit, creditAmount: 8000 });
    assert.equal(slow.status, 504);
    assert.equal(calls().length, 2);
  });

  const invalid: [string, unknown][] = [
    ['negative cents', { ...deposit, creditAmount: -100 }],
    ['zero', { ...deposit, creditAmount: 0 }],
    ['fractional cents', { ...deposit, creditAmount: 50.5 }],
    ['cents as a string', { ...deposit, creditAmount: '5000' }],
    ['above the maximum', { ...deposit, creditAmount: 100_000_001 }],
    ['no userId', { creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' }],
    ['snake_case only', { user_id: 7, credit_amount: 5000, payment_method: 'pix', currency: 'BRL' }],
    ['bad currency', { ...deposit, currency: 'brl' }],
    ['bad method slug', { ...deposit, paymentMethod: '../pix' }],
    ['bad card number', { ...deposit, paymentMethod: 'credit-card-2', cardNumber: '4111-1111' }],
  ];
  for (const [name, body] of invalid) {
    test(`invalid: ${name} → 400, zero upstream calls`, async () => {
      const res = await post('/api/payments/deposit', body);
      assert.equal(res.status, 400);
      assert.equal((res.json as Record<string, unknown>).error, 'invalid_request');
      assert.equal(upstream.requests.length, 0);
    });
  }
});

describe('spec 4.5 deposit status, withdraw, bank list, coupon, PIX key', () => {
  test('deposit-status → GET /wallet/charge/{transactionId}; wallet balance in units', async () => {
    upstream.on('GET', '/wallet/charge/ch_abc-1', { json: { status: 'paid', wallet: { balance: 100 } } });
    const res = await send(proxy.url, 'GET', '/api/payments/deposit-status?transactionId=ch_abc-1', { token });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { status: 'paid', wallet: { balance: 1, balance_cents: 100 } });
    assert.equal(calls()[0]?.method, 'GET');
    assert.equal(calls()[0]?.path, '/wallet/charge/ch_abc-1');
  });

  test('withdraw → POST /new-withdraws with the listed fields only; repeats within the window answered once', async () => {
    upstream.on('POST', '/new-withdraws', { status: 201, json: { id: 'tx_1', status: 'approved' } });
    const body = { amount: 2500, method: 'pix', pix_key: '52998224725', pix_key_type: 'cpf', user_id: 99, src: 'x' };
    const [a, b] = await Promise.all([post('/api/payments/withdraw', body), post('/api/payments/withdraw', body)]);
    assert.equal(a.status, 201);
    assert.deepEqual(a.json, b.json);
    assert.equal(calls().length, 1);
    assert.deepEqual(calls()[0]?.json, { amount: 2500, method: 'pix', pix_key: '52998224725', pix_key_type: 'cpf' });
    const spei = await post('/api/payments/withdraw', { amount: 10_000, method: 'spei', clabe: '012345678901234567' });
    assert.equal(spei.status, 201);
    const phone = await post('/api/payments/withdraw', { amount: 10_000, method: 'mobile-money', ddi: '52', phone: '5512345678' });
    assert.equal(phone.status, 201);
    assert.deepEqual(calls()[2]?.json, { amount: 10_000, method: 'mobile-money', ddi: '52', phone: '5512345678' });
  });

  test('a withdrawal the upstream refuses for its amount carries minimumCents / maximumCents; a success is untouched', async () => {
    upstream.on('POST', '/new-withdraws', { status: 422, json: { reason: 'amount_below_minimum', message: 'Below', min_amount: 2000 } });
    const below = await post('/api/payments/withdraw', { amount: 1500, method: 'pix', pix_key: 'demo@example.com', pix_key_type: 'email' });
    assert.equal(below.status, 422);
    assert.deepEqual(below.json, { ok: false, error: 'amount_below_minimum', detail: 'Below', minimumCents: 2000 });
    upstream.on('POST', '/new-withdraws', {
      status: 422,
      json: { reason: 'amount_above_maximum', message: 'Above', max_amount: 5_000_000 },
    });
    const above = await post('/api/payments/withdraw', {
      amount: 6_000_000,
      method: 'pix',
      pix_key: 'demo@example.com',
      pix_key_type: 'email',
    });
    assert.equal((above.json as Record<string, unknown>).maximumCents, 5_000_000);
    upstream.on('POST', '/new-withdraws', {
      status: 201,
      json: { id: 'tx_2', status: 'approved', min_amount: 2000, reason: 'amount_below_minimum' },
    });
    const ok = await post('/api/payments/withdraw', { amount: 2500, method: 'pix', pix_key: 'demo@example.com', pix_key_type: 'email' });
    assert.deepEqual(ok.json, { id: 'tx_2', status: 'approved', min_amount: 2000, reason: 'amount_below_minimum' });
    assert.equal(calls().length, 3);
  });

  test('bank-list, coupon, PIX key read and update', async () => {
    const rows: [string, string, unknown, string, string, unknown][] = [
      ['GET', '/api/payments/bank-list', undefined, 'GET', '/bff/users/bank-list', undefined],
      ['GET', '/api/payments/coupon?code=WELCOME10', undefined, 'GET', '/coupons/WELCOME10', undefined],
      ['GET', '/api/payments/pix-key', undefined, 'POST', '/pix-keys/user-key', {}],
      [
        'POST',
        '/api/payments/pix-key',
        { pix_key: 'ana@example.com', pix_key_type: 'email', user_id: 3 },
        'POST',
        '/pix-keys/update-user-key-v2',
        { pix_key: 'ana@example.com', pix_key_type: 'email' },
      ],
    ];
    for (const [method, url, json, upMethod, upPath, upBody] of rows) {
      upstream.reset();
      const res = await send(proxy.url, method, url, { json, token });
      assert.equal(res.status, 200, url);
      assert.equal(upstream.requests[0]?.method, upMethod, url);
      assert.equal(upstream.requests[0]?.path, upPath, url);
      assert.deepEqual(upstream.requests[0]?.json, upBody, url);
    }
  });

  const hub: [string, string, string, unknown][] = [
    ['get-pix', 'POST', '/pix-keys/user-key', {}],
    ['update-pix', 'POST', '/pix-keys/update-user-key-v2', { pix_key: 'ana@example.com', pix_key_type: 'email' }],
    ['get-mex', 'GET', '/mex-bank-accounts/user-account', undefined],
    ['save-mex', 'POST', '/mex-bank-accounts/store', { clabe: '012345678901234567', bank: 'BBVA' }],
    ['get-generic', 'GET', '/generic-bank-accounts/user-account', undefined],
    ['save-generic', 'POST', '/generic-bank-accounts/store', { bank_code: '001', account_number: '12345-6' }],
  ];
  for (const [type, method, path, body] of hub) {
    test(`bank-account hub: type ${type} → ${method} ${path}`, async () => {
      const data = (body ?? {}) as Record<string, unknown>;
      const res = await post('/api/payments/bank-account', { type, ...data, user_id: 99, id: 5 });
      assert.equal(res.status, 200);
      const [call] = calls();
      assert.equal(call?.method, method);
      assert.equal(call?.path, path);
      assert.deepEqual(call?.json, method === 'GET' ? undefined : type.startsWith('get') ? {} : body);
    });
  }

  const invalid: [string, string, unknown?][] = [
    ['POST', '/api/payments/bank-account', { type: 'delete-pix' }],
    ['POST', '/api/payments/bank-account', { type: 'get-pix', nested: { a: 1 } }],
    ['POST', '/api/payments/bank-account', { clabe: '1' }],
    ['POST', '/api/payments/withdraw', { amount: -1, method: 'pix' }],
    ['POST', '/api/payments/withdraw', { amount: 10.5, method: 'pix' }],
    ['POST', '/api/payments/withdraw', { amount: 0, method: 'pix' }],
    ['POST', '/api/payments/withdraw', { amount: 100, method: 'spei', clabe: '123' }],
    ['POST', '/api/payments/pix-key', { pix_key: 'x', pix_key_type: 'passport' }],
    ['POST', '/api/payments/pix-key'],
    ['POST', '/api/wallet/action', { action: 'steal' }],
    ['POST', '/api/wallet/action', { action: 'bonus-transfer', amount: -5 }],
    ['POST', '/api/wallet/transactions', { page: 0 }],
    ['POST', '/api/wallet/transactions', { type: 'x', extra: 1 }],
    ['POST', '/api/wallet/receipt', {}],
    ['POST', '/api/wallet/receipt', { id: '../x' }],
    ['POST', '/api/wallet/receipt', { transactionId: 'a/b' }],
    ['POST', '/api/wallet/receipt', { id: '..' }],
    ['GET', '/api/payments/deposit-status'],
    ['GET', '/api/payments/deposit-status?transactionId=..%2f'],
    ['GET', '/api/payments/deposit-status?transactionId=%2e%2e'],
    ['GET', '/api/payments/deposit-status?transactionId=a%2Fb'],
    ['GET', '/api/payments/deposit-status?transactionId=%2e%2e%2fadmin'],
    ['GET', '/api/payments/coupon?code=..%2fadmin'],
    ['GET', '/api/payments/coupon?code=a%2Fb'],
    ['GET', '/api/payments/coupon?code=%2e%2e'],
  ];
  for (const [method, url, json] of invalid) {
    test(`invalid: ${method} ${url} ${json === undefined ? '' : JSON.stringify(json)} → 400, zero upstream calls`, async () => {
      const res = await send(proxy.url, method, url, { json, token });
      assert.equal(res.status, 400, res.text);
      assert.equal((res.json as Record<string, unknown>).error, 'invalid_request');
      assert.equal(upstream.requests.length, 0);
    });
  }
});

describe('no session cookie → 401 { reason: no_token }, no upstream call', () => {
  for (const r of [...walletRoutes, ...paymentsRoutes]) {
    for (const method of Array.isArray(r.method) ? r.method : [r.method]) {
      test(`${method} ${r.url}`, async () => {
        const res = await send(proxy.url, method, r.url, method === 'GET' ? {} : { json: deposit });
        assert.equal(res.status, 401);
        assert.equal(res.text, '{"reason":"no_token"}');
        assert.equal(upstream.requests.length, 0);
      });
    }
  }
});
