import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ENDPOINT_LIST, ERROR_LIST, explainRef, formatRef, parseRef } from '../../src/errors/index.js';

describe('spec 7.1: formatRef', () => {
  test('numbers are zero-padded to four digits', () => {
    assert.equal(formatRef(3, 5), 'EP0003-EM0005');
    assert.equal(formatRef(0, 0), 'EP0000-EM0000');
    assert.equal(formatRef(799, 99), 'EP0799-EM0099');
    assert.equal(formatRef(9999, 9999), 'EP9999-EM9999');
  });

  test('code strings are accepted as they are, and mixed with numbers', () => {
    assert.equal(formatRef('EP0003', 'EM0005'), 'EP0003-EM0005');
    assert.equal(formatRef('EP0120', 12), 'EP0120-EM0012');
  });

  test('out-of-range or non-integer numbers throw RangeError', () => {
    for (const n of [-1, 10000, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => formatRef(n, 1), RangeError, String(n));
      assert.throws(() => formatRef(1, n), RangeError, String(n));
    }
  });

  test('malformed strings and other types throw TypeError', () => {
    for (const s of ['EP3', 'EP00003', 'ep0003', 'EM0003', '0003', 'EP0003 ', '#EP0003', 'EPabcd', '']) {
      assert.throws(() => formatRef(s, 1), TypeError, s);
    }
    assert.throws(() => formatRef(1, 'EP0001'), TypeError);
    assert.throws(() => formatRef(null as never, 1), TypeError);
  });
});

describe('spec 7.1: parseRef', () => {
  test('parses EPdddd-EMdddd, with or without the # display prefix', () => {
    const expected = { ref: 'EP0003-EM0005', endpointCode: 'EP0003', errorCode: 'EM0005', endpointNumber: 3, errorNumber: 5 };
    assert.deepEqual(parseRef('EP0003-EM0005'), expected);
    assert.deepEqual(parseRef('#EP0003-EM0005'), expected);
  });

  test('well-formed but unknown codes still parse (a newer registry may have them)', () => {
    assert.equal(parseRef('EP9999-EM9999')?.ref, 'EP9999-EM9999');
  });

  test('anything else gives null and never throws', () => {
    for (const s of [
      '',
      '#',
      '##EP0003-EM0005',
      'EP003-EM0005',
      'EP0003-EM005',
      'EP00003-EM0005',
      'ep0003-em0005',
      'EP0003_EM0005',
      'EP0003-EP0005',
      'EM0003-EP0005',
      ' EP0003-EM0005',
      'EP0003-EM0005 ',
      'EP0003-EM0005\n',
      'EP0003-EM0005x',
      'xEP0003-EM0005',
      'EP٠٠٠٣-EM0005',
      'EP0003-EM0005'.repeat(100_000),
    ]) {
      assert.equal(parseRef(s), null, JSON.stringify(s.slice(0, 30)));
    }
    for (const v of [null, undefined, 3, {}, ['EP0003-EM0005']]) assert.equal(parseRef(v), null);
  });

  test('formatRef and parseRef round-trip for every registered pair', () => {
    for (const ep of ENDPOINT_LIST) {
      for (const em of ERROR_LIST) {
        const ref = formatRef(ep.code, em.code);
        const parsed = parseRef(`#${ref}`);
        assert.equal(parsed?.endpointCode, ep.code);
        assert.equal(parsed?.errorCode, em.code);
        assert.equal(formatRef(parsed?.endpointNumber ?? -1, parsed?.errorNumber ?? -1), ref);
      }
    }
  });
});

describe('spec 7.1-7.3: explainRef', () => {
  test('a known reference gives the EP row and the EM row', () => {
    assert.deepEqual(explainRef('#EP0031-EM0003'), {
      ref: 'EP0031-EM0003',
      valid: true,
      endpoint: {
        known: true,
        code: 'EP0031',
        method: 'GET/POST/DELETE',
        methods: ['GET', 'POST', 'DELETE'],
        path: '/bff/users/account-social',
        meaning: 'linked social accounts',
        group: 'user',
        groupTitle: 'User / account',
      },
      error: {
        known: true,
        code: 'EM0003',
        family: 'session',
        familyTitle: '401 (EM0001-EM0019)',
        match: 'expired, token_expired, anything starting with exp',
        meaning: 'session expired',
        message: 'Your session has expired. Please log in again.',
        sessionEnding: true,
      },
    });
  });

  test('EP0000 and EM0099 are known codes', () => {
    const x = explainRef('EP0000-EM0099');
    assert.equal(x.endpoint.known && x.endpoint.path, null);
    assert.equal(x.error.known && x.error.meaning, 'final fallback');
  });

  test('unknown codes give a marker in their part, not a throw', () => {
    const x = explainRef('EP0999-EM0003');
    assert.equal(x.valid, true);
    assert.deepEqual(x.endpoint, { known: false, code: 'EP0999', meaning: 'unknown endpoint code EP0999' });
    assert.equal(x.error.known, true);
    const y = explainRef('EP0001-EM0777');
    assert.deepEqual(y.error, { known: false, code: 'EM0777', meaning: 'unknown error code EM0777' });
  });

  test('an unparsable input gives valid: false and null codes, not a throw', () => {
    for (const v of ['nonsense', '', null, 42]) {
      const x = explainRef(v);
      assert.equal(x.valid, false);
      assert.equal(x.ref, null);
      assert.equal(x.endpoint.known, false);
      assert.equal(x.endpoint.code, null);
      assert.equal(x.error.code, null);
    }
  });
});
