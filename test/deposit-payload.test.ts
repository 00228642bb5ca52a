/**
 * spec 2.7 DepositPayload and spec 2.8 method classes, as units: the camelCase → snake_case mapping
 * (table-driven from spec 2.7's table), the signup-only fields that never reach a deposit, card fields,
 * attribution from the cookies, the real-wallet conversion, icon URLs and the double-submit guard.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import {
  CARD_FORM_SLUGS,
  cardFieldProblem,
  DEPOSIT_WIRE_NAMES,
  DepositPayload,
  FORBIDDEN_DEPOSIT_FIELDS,
  iconUrl,
  MAX_AMOUNT_CENTS,
  METHOD_CLASSES,
  METHOD_CLASS_BY_SLUG,
  methodClassOf,
  providerView,
  realWalletInUnits,
  toDepositWire,
} from '../src/contracts/payments.js';
import { canonicalJson } from '../src/routes/payments.js';

/** spec 2.7's table: client field, wire name, a sample value. */
const SPEC_2_7: readonly [client: keyof DepositPayload, wire: string, sample: string | number][] = [
  ['userId', 'user_id', 7],
  ['creditAmount', 'credit_amount', 5000],
  ['paymentMethod', 'payment_method', 'credit-card-2'],
  ['currency', 'currency', 'MXN'],
  ['couponCode', 'coupon_code', 'WELCOME10'],
  ['utmCampaign', 'utm_campaign', 'spring'],
  ['utmSource', 'utm_source', 'newsletter'],
  ['utmMedium', 'utm_medium', 'email'],
  ['utmContent', 'utm_content', 'banner-a'],
  ['gaClientId', 'ga_client_id', '1234567890.1700000000'],
  ['cardNumber', 'card_number', '4111111111111111'],
  ['cardName', 'card_name', 'ANA B SOUZA'],
  ['cardExpiryMonth', 'card_expiry_month', '09'],
  ['cardExpiryYear', 'card_expiry_year', '2031'],
  ['cardCvv', 'card_cvv', '123'],
];

const base = { userId: 7, creditAmount: 5000, paymentMethod: 'pix', currency: 'BRL' } as const;

describe('spec 2.7 DepositPayload → wire body', () => {
  test('the mapping table is exactly spec 2.7, in its order', () => {
    assert.deepEqual(
      Object.entries(DEPOSIT_WIRE_NAMES),
      SPEC_2_7.map(([client, wire]) => [client, wire]),
    );
  });

  for (const [client, wire, sample] of SPEC_2_7) {
    test(`${client} → ${wire}`, () => {
      const payload = { ...Object.fromEntries(SPEC_2_7.map(([c, , s]) => [c, s])) } as unknown as DepositPayload;
      assert.ok(Value.Check(DepositPayload, payload), 'the sample payload is valid');
      const body = toDepositWire(payload) as Record<string, unknown>;
      assert.equal(body[wire], sample);
      assert.equal(client in body && client !== wire, false, 'the client name is not sent');
    });
  }

  test('only present fields are sent; nothing else', () => {
    assert.deepEqual(toDepositWire({ ...base }), { user_id: 7, credit_amount: 5000, payment_method: 'pix', currency: 'BRL' });
  });

  test('rule 1: a source field never reaches the wire body, in camelCase or snake_case', () => {
    const polluted = {
      ...base,
      src: 'x',
      utm_src: 'x',
      utmSrc: 'x',
      affiliation_code: 'AFF',
      affiliationCode: 'AFF',
      app_source: 'ios',
      appSource: 'ios',
      user_id: 999,
      credit_amount: 1,
    } as unknown as DepositPayload;
    assert.ok(Value.Check(DepositPayload, polluted), 'unknown fields are tolerated (and dropped)');
    const body = toDepositWire(polluted) as Record<string, unknown>;
    for (const field of [...FORBIDDEN_DEPOSIT_FIELDS, 'utmSrc', 'affiliationCode', 'appSource']) {
      assert.equal(field in body, false, `${field} must not be sent`);
    }
    assert.equal(body.user_id, 7, 'a snake_case user_id in the body does not override userId');
    assert.equal(body.credit_amount, 5000);
    for (const wire of Object.values(DEPOSIT_WIRE_NAMES)) {
      assert.equal((FORBIDDEN_DEPOSIT_FIELDS as readonly string[]).includes(wire), false, `${wire} is a signup-only field`);
    }
  });

  test('attribution: body values win, cookies fill what is absent', () => {
    const body = toDepositWire(
      { ...base, utmSource: 'from-body', gaClientId: 'body.1' },
      { utm_source: 'from-cookie', utm_medium: 'cookie-medium', ga_client_id: 'cookie.2' },
    );
    assert.equal(body.utm_source, 'from-body');
    assert.equal(body.utm_medium, 'cookie-medium');
    assert.equal(body.ga_client_id, 'body.1');
    const fromCookies = toDepositWire({ ...base }, { utm_campaign: 'c', ga_client_id: 'cookie.2' });
    assert.equal(fromCookies.utm_campaign, 'c');
    assert.equal(fromCookies.ga_client_id, 'cookie.2');
  });

  test('creditAmount: positive integer cents up to the maximum', () => {
    for (const bad of [-1, 0, 0.5, 10.25, MAX_AMOUNT_CENTS + 1, '5000', null]) {
      assert.equal(Value.Check(DepositPayload, { ...base, creditAmount: bad }), false, String(bad));
    }
    for (const good of [1, 5000, MAX_AMOUNT_CENTS]) assert.ok(Value.Check(DepositPayload, { ...base, creditAmount: good }));
  });

  test('card fields: all five for the card-form slugs, none for other methods', () => {
    const card = {
      cardNumber: '4111111111111111',
      cardName: 'ANA',
      cardExpiryMonth: '01',
      cardExpiryYear: '30',
      cardCvv: '123',
    };
    assert.deepEqual(CARD_FORM_SLUGS, ['credit-card-2', 'credit-card-form']);
    for (const slug of CARD_FORM_SLUGS) {
      assert.equal(cardFieldProblem({ ...base, paymentMethod: slug, ...card }), undefined);
      assert.match(cardFieldProblem({ ...base, paymentMethod: slug, cardNumber: card.cardNumber }) ?? '', /needs the card fields/);
    }
    for (const slug of ['pix', 'spei', 'credit-card', 'crypto']) {
      assert.equal(cardFieldProblem({ ...base, paymentMethod: slug }), undefined);
      assert.match(cardFieldProblem({ ...base, paymentMethod: slug, cardCvv: '123' }) ?? '', /only accepted for/);
    }
  });

  test('rule 2: the real-wallet balance is converted from cents to units, the original kept', () => {
    assert.deepEqual(realWalletInUnits({ status: 'pending', wallet: { balance: 155_001, currency: 'BRL' } }), {
      status: 'pending',
      wallet: { balance: 1550.01, balance_cents: 155_001, currency: 'BRL' },
    });
    assert.deepEqual(realWalletInUnits({ real_wallet: { balance: 100 }, wallet: { balance: 5 } }), {
      real_wallet: { balance: 1, balance_cents: 100 },
      wallet: { balance: 5 },
    });
    assert.deepEqual(realWalletInUnits({ wallet: { balance: '12.50' } }), { wallet: { balance: '12.50' } }, 'not an integer: untouched');
    assert.equal(realWalletInUnits(null), null);
    // The serialised answer keeps the upstream's key order, the wallet in its place; the input is not changed.
    const upstream = { transaction_id: 'tx-1', real_wallet: { id: 1, balance: 155_001 }, status: 'pending' };
    assert.equal(
      JSON.stringify(realWalletInUnits(upstream)),
      '{"transaction_id":"tx-1","real_wallet":{"id":1,"balance":1550.01,"balance_cents":155001},"status":"pending"}',
    );
    assert.deepEqual(upstream.real_wallet, { id: 1, balance: 155_001 });
  });
});

describe('spec 2.8 method classes and icons', () => {
  test('every slug of the table has one of the eight classes; the spec examples are where the spec puts them', () => {
    for (const c of Object.values(METHOD_CLASS_BY_SLUG)) assert.ok((METHOD_CLASSES as readonly string[]).includes(c));
    const examples: [string, string][] = [
      ['pix', 'pix-like'],
      ['pix-express', 'pix-like'],
      ['spei', 'spei'],
      ['oxxo', 'oxxo'],
      ['credit-card', 'checkout-page'],
      ['bank-transfer', 'checkout-page'],
      ['credit-card-2', 'card-form'],
      ['wallet', 'wallet'],
      ['crypto', 'redirect'],
      ['bank-link', 'external-redirect'],
    ];
    for (const [slug, c] of examples) assert.equal(methodClassOf(slug), c, slug);
    assert.equal(methodClassOf('unknown'), null);
    assert.equal(methodClassOf('constructor'), null);
    assert.equal(methodClassOf('__proto__'), null);
  });

  test('icons: payments/<method> → /icons/payments/<method>.svg or <prefix>/payments/<method>.svg', () => {
    assert.equal(iconUrl('payments/pix', undefined), '/icons/payments/pix.svg');
    assert.equal(iconUrl('payments/pix', 'https://cdn.example.com/assets'), 'https://cdn.example.com/assets/payments/pix.svg');
    for (const bad of ['payments/../x', 'https://evil/x.svg', 'payments/', 'games/pix', 42, undefined]) {
      assert.equal(iconUrl(bad, undefined), null, String(bad));
    }
    assert.deepEqual(providerView({ method: 'spei', icon: 'payments/spei' }, undefined), {
      method: 'spei',
      icon: 'payments/spei',
      iconUrl: '/icons/payments/spei.svg',
      methodClass: 'spei',
    });
  });
});

describe('canonical wire body', () => {
  test('canonical JSON ignores key order and undefined values', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } }), '{"a":{"d":[1,{"x":1,"y":2}]},"b":1}');
    assert.equal(canonicalJson({ a: 1, b: 2 }), canonicalJson({ b: 2, a: 1 }));
  });
});
