/**
 * `tokenKey` (src/session/hash.ts): the SHA-256 hex digest of a token; `sessionTokenKey`
 * (src/session/cookie.ts): the digest the auth gate kept on the request, for the request's own token
 * only. Whatever order tokens come in, each key is the digest of its own token.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { sessionTokenKey } from '../src/session/cookie.js';
import { tokenKey } from '../src/session/hash.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

test('each key is the SHA-256 of its own token, asked in any order, repeated or alternating', () => {
  const a = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl';
  const b = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIyIn0.c2lnbmF0dXJl';
  // The same text as another string object (built at run time) is the same token.
  const aAgain = ['eyJhbGciOiJIUzI1NiJ9', 'eyJzdWIiOiIxIn0', 'c2lnbmF0dXJl'].join('.');
  for (const token of [a, a, b, a, b, b, aAgain, '', 'x', '', a]) assert.equal(tokenKey(token), sha256(token), JSON.stringify(token));
  assert.notEqual(tokenKey(a), tokenKey(b));
});

test("sessionTokenKey reads the request's kept digest for its own token only, and digests any other", () => {
  const own = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl';
  const other = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIyIn0.c2lnbmF0dXJl';
  // A kept digest that is not the token's own shows which path answered.
  const request = { sessionToken: own, sessionTokenKey: 'kept' };
  const rows: [object | undefined, string, string][] = [
    [request, own, 'kept'],
    [request, other, sha256(other)],
    [{ sessionToken: own, sessionTokenKey: undefined }, own, sha256(own)],
    [{ sessionToken: undefined, sessionTokenKey: undefined }, own, sha256(own)],
    [undefined, own, sha256(own)],
  ];
  for (const [holder, token, expected] of rows) assert.equal(sessionTokenKey(holder, token), expected, JSON.stringify(holder));
});
