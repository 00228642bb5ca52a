/**
 * The sticker API handshake tokens of the sessions (spec 4.9, 5.6): before a sticker call the proxy
 * performs `POST /auth/token` on the sticker API with the user's session, and keeps the token it gets
 * per session in memory (cache registry name `sticker-handshake`), keyed by the SHA-256 hex digest of
 * the session JWT (never the JWT itself), for the lifetime the sticker API gives (`expires_in`,
 * seconds) minus {@link HANDSHAKE_MARGIN_MS}, at most {@link HANDSHAKE_MAX_TTL_MS} (and
 * {@link HANDSHAKE_DEFAULT_TTL_MS} when it gives none); at most {@link HANDSHAKE_MAX_ENTRIES}
 * sessions. Concurrent requests of one session share one handshake.
 *
 * @module
 */
import { LRUCache } from 'lru-cache';
import { parseJson } from '../envelope.js';
import type { CacheRegistry } from '../state/caches.js';
import { UpstreamError } from '../upstream/errors.js';
import type { UpstreamCaller } from '../upstream/services.js';
import { sessionTokenKey } from './cookie.js';
import { tokenKey } from './hash.js';
import { UpstreamAnswerError } from './profile-cache.js';

/** Most sessions whose handshake token is kept. */
export const HANDSHAKE_MAX_ENTRIES = 1_000;
/** A handshake token is forgotten this long before the sticker API says it expires (30 s). */
export const HANDSHAKE_MARGIN_MS = 30_000;
/** Longest a handshake token is kept (15 min). */
export const HANDSHAKE_MAX_TTL_MS = 15 * 60_000;
/** How long a handshake token without `expires_in` is kept (5 min). */
export const HANDSHAKE_DEFAULT_TTL_MS = 5 * 60_000;
/** Name of the handshake cache in `deps.caches`. */
export const HANDSHAKE_CACHE_NAME = 'sticker-handshake';

interface Handshake {
  token: string;
}

function handshakeToken(data: unknown): { token: string; ttlMs: number } | undefined {
  if (!data || typeof data !== 'object') return undefined;
  const record = data as Record<string, unknown>;
  const token = [record.access_token, record.token, record.accessToken].find((t) => typeof t === 'string' && t.length > 0);
  if (typeof token !== 'string') return undefined;
  const expiresIn = record.expires_in ?? record.expiresIn;
  const ttlMs =
    typeof expiresIn === 'number' && Number.isFinite(expiresIn)
      ? Math.min(HANDSHAKE_MAX_TTL_MS, expiresIn * 1000 - HANDSHAKE_MARGIN_MS)
      : HANDSHAKE_DEFAULT_TTL_MS;
  return { token, ttlMs };
}

/** The handshake tokens of one app (see the module documentation). */
export class StickerHandshakes {
  readonly #cache = new LRUCache<string, Handshake, UpstreamCaller>({
    max: HANDSHAKE_MAX_ENTRIES,
    ttl: HANDSHAKE_DEFAULT_TTL_MS,
    allowStale: false,
    updateAgeOnGet: false,
    // A forget or clear (logout, cache purge) during a handshake must not fail its waiters with
    // lru-cache's abort: they get the handshake, which is then not stored.
    ignoreFetchAbort: true,
    fetchMethod: async (_key, _stale, { context, options }) => {
      const res = await context.call('sticker', { method: 'POST', path: '/auth/token' });
      if (res.status < 200 || res.status >= 300) throw new UpstreamAnswerError(res);
      const found = handshakeToken(parseJson(res.body));
      if (!found) throw new UpstreamError('upstream_bad_response');
      options.ttl = Math.max(1, found.ttlMs);
      return { token: found.token };
    },
  });

  /**
   * The handshake token of the request's session: remembered, shared with a handshake in progress,
   * or obtained now. `fresh` is false when it was remembered.
   *
   * @throws UpstreamAnswerError when the sticker API refused the handshake; UpstreamError on transport failures.
   */
  async get(ctx: UpstreamCaller): Promise<{ token: string; fresh: boolean }> {
    const status: LRUCache.Status<string, Handshake, UpstreamCaller> = {};
    const value = await this.#cache.fetch(sessionTokenKey(ctx.request, ctx.token as string), { context: ctx, status });
    if (!value) throw new UpstreamError('upstream_bad_response');
    return { token: value.token, fresh: status.fetch !== 'hit' };
  }

  /** Forgets the handshake token of a session. */
  forget(sessionToken: string): void {
    this.#cache.delete(tokenKey(sessionToken));
  }

  /** Forgets a handshake token by its session's key (the token's SHA-256 hex digest). */
  forgetKey(key: string): void {
    this.#cache.delete(key);
  }

  clear(): void {
    this.#cache.clear();
  }

  get size(): number {
    return this.#cache.size;
  }
}

const handshakes = new WeakMap<CacheRegistry, StickerHandshakes>();

/** The handshake cache of an app, created and registered in its cache registry on first use. */
export function handshakesOf(caches: CacheRegistry): StickerHandshakes {
  let cache = handshakes.get(caches);
  if (!cache) {
    cache = new StickerHandshakes();
    handshakes.set(caches, cache);
    caches.set(HANDSHAKE_CACHE_NAME, cache);
  }
  return cache;
}
