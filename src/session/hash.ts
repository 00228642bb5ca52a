import { hash } from 'node:crypto';

/**
 * SHA-256 hex digest of a token: the only form in which a token is used as a cache key (spec 4.1, 8).
 * One-shot `crypto.hash` (no Hash stream object per call). Nothing is remembered here: the digest of a
 * session token is made once per token by the auth gate (`TokenChecks` in `token.ts`, a bounded cache
 * by the exact token string) and kept on each request that carries it (`sessionTokenKey` in
 * `cookie.ts`).
 */
export function tokenKey(token: string): string {
  return hash('sha256', token, 'hex');
}
