import { hash } from 'node:crypto';

/** The last token digested and its digest: one request asks for the same token's key several times. */
let lastToken: string | undefined;
let lastKey = '';

/**
 * SHA-256 hex digest of a token: the only form in which a token is used as a cache key (spec 4.1, 8).
 * One-shot `crypto.hash` (no Hash stream object per call). A request asks for its token's key in the
 * auth gate, the rate limit and the profile cache: the last token's digest is kept, so that the
 * second and third asks cost a string comparison instead of a digest, which matters on the refusals
 * that do little else. Only that one token is kept, until another is digested.
 */
export function tokenKey(token: string): string {
  if (token !== lastToken) {
    lastKey = hash('sha256', token, 'hex');
    lastToken = token;
  }
  return lastKey;
}
