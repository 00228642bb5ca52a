import { hash } from 'node:crypto';

/**
 * SHA-256 hex digest of a token: the only form in which a token is used as a cache key (spec 4.1, 8).
 * One-shot `crypto.hash` (no Hash stream object per call). Nothing is remembered here: the digest of a
 * request's own session token is made once and kept on the request (`sessionTokenKey` in
 * `cookie.ts`), so that no token outlives its request.
 */
export function tokenKey(token: string): string {
  return hash('sha256', token, 'hex');
}
