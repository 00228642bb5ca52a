import { createHash } from 'node:crypto';

/** SHA-256 hex digest of a token: the only form in which a token is used as a cache key (spec 4.1, 8). */
export function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
