/**
 * Pure parts of issue 45's rules, table-driven: the values of the session cookie the browser sent
 * (all of them redacted from answers), the `Cookie` header sent upstream without the session cookie,
 * and the protocol edges the client-errors step refuses.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { protocolRefusal } from '../src/pipeline/client-errors.js';
import { withoutCookie } from '../src/session/redact.js';
import { redactBody, redactText, sentCookieValues, splitSessionCookie } from '../src/session/redact.js';

const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXZhbHVl';

test('sentCookieValues: every value sent as the session cookie, as sent and decoded, long enough to redact', () => {
  const rows: [string | undefined, string[]][] = [
    [undefined, []],
    ['', []],
    ['theme=dark; _ga=GA1.2.3', []],
    [`access_token=${JWT}`, [JWT]],
    [`theme=dark; access_token=${JWT}; _ga=GA1`, [JWT]],
    [`access_token="${JWT}"`, [`"${JWT}"`, JWT]],
    [`access_token=${JWT.replaceAll('.', '%2E')}`, [JWT.replaceAll('.', '%2E'), JWT]],
    [`access_token=not-a-jwt-but-long-enough; access_token=${JWT}`, ['not-a-jwt-but-long-enough', JWT]],
    ['access_token=short', []],
    [`x_access_token=${JWT}`, []],
    [`access_token=%E0%A4%A-broken-escape-0123`, ['%E0%A4%A-broken-escape-0123']],
    [Array.from({ length: 20 }, (_, i) => `access_token=${JWT}${i}`).join('; '), Array.from({ length: 8 }, (_, i) => `${JWT}${i}`)],
  ];
  for (const [header, expected] of rows) assert.deepEqual(sentCookieValues(header, 'access_token'), expected, String(header));
});

test('withoutCookie: the session cookie dropped, every other pair kept in order', () => {
  const rows: [string, string][] = [
    [`access_token=${JWT}`, ''],
    [`theme=dark; access_token=${JWT}; _ga=GA1.2.3`, 'theme=dark; _ga=GA1.2.3'],
    [`access_token=a;access_token=b;lang=pt`, 'lang=pt'],
    ['theme=dark; _ga=GA1', 'theme=dark; _ga=GA1'],
    [`x_access_token=1; access_token_old=2; access_token=${JWT}`, 'x_access_token=1; access_token_old=2'],
    [' access_token = v ; lang=pt', 'lang=pt'],
  ];
  for (const [header, expected] of rows) assert.equal(withoutCookie(header, 'access_token'), expected, header);
});

test('splitSessionCookie: the values and the other pairs of one header from one pass, as the two readings give them', () => {
  const rows: [string | undefined, string[], string][] = [
    [undefined, [], ''],
    ['', [], ''],
    ['theme=dark; _ga=GA1.2.3', [], 'theme=dark; _ga=GA1.2.3'],
    [`theme=dark; access_token=${JWT}; _ga=GA1`, [JWT], 'theme=dark; _ga=GA1'],
    [`access%5Ftoken=${JWT};lang=pt`, [JWT], 'lang=pt'],
    [`Access.Token="${JWT}"`, [`"${JWT}"`, JWT], ''],
    [' access_token = short ;  ; lang=pt ', [], 'lang=pt'],
    [`x_access_token=${JWT}`, [], `x_access_token=${JWT}`],
  ];
  for (const [header, values, others] of rows) {
    assert.deepEqual(splitSessionCookie(header, 'access_token'), { values, others }, String(header));
    assert.deepEqual(sentCookieValues(header, 'access_token'), values, String(header));
    if (header !== undefined) assert.equal(withoutCookie(header, 'access_token'), others, header);
  }
});

test('redactText and redactBody: every value replaced, the longest first; short values never', () => {
  const other = 'not-a-jwt-but-long-enough';
  assert.equal(redactText(`a ${JWT} b ${other}`, [JWT, other]), 'a [redacted] b [redacted]');
  assert.equal(redactText('a short b', ['short']), 'a short b');
  assert.equal(redactText(`x${JWT}x`, undefined), `x${JWT}x`);
  const escaped = JSON.stringify({ t: other }).replace('n', '\\u006e');
  assert.equal(redactBody(escaped, [JWT, other]), '{"t":"[redacted]"}');
  assert.equal(redactBody(Buffer.from(`{"t":"${JWT}"}`), [JWT]), '{"t":"[redacted]"}');
});

test('protocolRefusal: HTTP/0.9 and HTTP/1.1 without Host are refused; HTTP/1.0 without Host is not', () => {
  const rows: [number, number, Record<string, string>, boolean][] = [
    [0, 9, {}, true],
    [0, 9, { host: 'x' }, true],
    [1, 1, {}, true],
    [1, 1, { host: 'x' }, false],
    [1, 0, {}, false],
    [1, 0, { host: 'x' }, false],
    [2, 0, { host: 'x' }, true],
  ];
  for (const [major, minor, headers, refused] of rows) {
    assert.equal(
      protocolRefusal({ httpVersionMajor: major, httpVersionMinor: minor, headers }) !== undefined,
      refused,
      `${major}.${minor} ${JSON.stringify(headers)}`,
    );
  }
});
