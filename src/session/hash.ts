import { hash } from 'node:crypto';

/**
 * SHA-256 hex digest of a token: the only form in which a token is used as a cache key (spec 4.1, 8).
 * One-shot `crypto.hash` (no Hash stream object per call).
 */
export function tokenKey(token: string): string {
  return hash('sha256', token, 'hex');
}
