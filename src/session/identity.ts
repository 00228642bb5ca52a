/**
 * Who a request is for (spec 4.1, 2.5): the session's profile, read through the profile cache, and the
 * session user's id taken from it; the upstream fetches behind the profile and refresh caches. The
 * session JWT itself comes from the cookie (`cookie.ts`), and is only ever used as a cache key through
 * its SHA-256 digest (`hash.ts`).
 *
 * Routes ask this module; they never import each other for it.
 *
 * @module
 */
import { envelope, type ProxyAnswer, parseJson, upstreamFailureAnswer } from '../envelope.js';
import { authService } from '../upstream/auth-service.js';
import type { UpstreamResponse } from '../upstream/client.js';
import { UpstreamError } from '../upstream/errors.js';
import type { UpstreamCaller } from '../upstream/services.js';
import { sessionMaxAge, sessionTokenKey, tokenOf } from './cookie.js';
import { PROFILE_MAX_ENTRIES, PROFILE_TTL_MS, TokenCache, UpstreamAnswerError } from './profile-cache.js';

/** A refreshed session: the new JWT and its cookie lifetime in seconds. */
export interface RefreshedSession {
  token: string;
  maxAge: number;
}

/** The per-token caches of the sessions (spec 4.1 profile caching rule, refresh de-duplication). */
export interface SessionCaches {
  /** Successful profile answers per token (spec 4.1, 8). */
  readonly profileCache: TokenCache<UpstreamResponse, UpstreamCaller>;
  /** Refresh results per old token, so that concurrent refreshes share one upstream call. */
  readonly refreshCache: TokenCache<RefreshedSession, UpstreamCaller>;
}

/** What the identity functions need of a request: its upstream calls and the profile cache. */
export interface SessionContext extends UpstreamCaller {
  readonly deps: Pick<SessionCaches, 'profileCache'>;
}

/**
 * Builds the profile and refresh caches (10 s, 100 entries each, spec 8).
 * @param onProfileEvict - told the key of each profile eviction (logout, profile update, refresh).
 * @param onProfileRead - told how each profile read was answered (the metrics' cache `profile`).
 */
export function createSessionCaches(
  onProfileEvict?: (key: string) => void,
  onProfileRead?: (result: 'hit' | 'miss') => void,
): SessionCaches {
  return {
    profileCache: new TokenCache({
      ttlMs: PROFILE_TTL_MS,
      max: PROFILE_MAX_ENTRIES,
      fetch: fetchProfile,
      onEvict: onProfileEvict,
      onRead: onProfileRead,
    }),
    refreshCache: new TokenCache({ ttlMs: PROFILE_TTL_MS, max: PROFILE_MAX_ENTRIES, fetch: fetchRefresh }),
  };
}

/**
 * Reads the profile of `token` through the cache (spec 4.1 profile caching rule).
 * @throws UpstreamAnswerError with the upstream's non-200 answer; UpstreamError on transport failures.
 */
export async function cachedProfile(ctx: SessionContext, token: string): Promise<UpstreamResponse> {
  return ctx.deps.profileCache.get(token, ctx, sessionTokenKey(ctx.request, token));
}

/**
 * The upstream profile fetch behind the profile cache: only a 200 whose body is a JSON object
 * resolves (and is cached); anything else rejects and leaves nothing behind.
 * @throws UpstreamAnswerError with a non-200 answer; UpstreamError `upstream_bad_response` for a 2xx
 *   (204 included) that is empty or not a JSON object (docs/behaviour.md "Upstream answers": never cached), or on transport failures.
 */
export async function fetchProfile(token: string, caller: UpstreamCaller): Promise<UpstreamResponse> {
  const res = await authService((req) => caller.call('bff', req, { bearer: token, shared: true })).getUserProfile(false);
  if (res.status < 200 || res.status >= 300) throw new UpstreamAnswerError(res);
  const data = parseJson(res.body);
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new UpstreamError('upstream_bad_response', { detail: 'The service sent a profile that is not a JSON object' });
  }
  if (res.status !== 200) throw new UpstreamAnswerError(res);
  return res;
}

/** The upstream refresh behind the refresh de-duplication: the new token and its cookie lifetime. */
export async function fetchRefresh(token: string, caller: UpstreamCaller): Promise<RefreshedSession> {
  const res = await authService((req) => caller.call('bff', req, { bearer: token, shared: true })).refreshToken();
  if (res.status < 200 || res.status >= 300) throw new UpstreamAnswerError(res);
  const data = parseJson(res.body) as Record<string, unknown> | undefined;
  const fresh = tokenOf(data);
  if (!fresh) throw new UpstreamError('upstream_bad_response');
  return { token: fresh, maxAge: sessionMaxAge(fresh, data?.expires_in) };
}

/**
 * The session user's id, read from the cached profile (`user.id`, spec 2.5), or the answer to send
 * when the profile cannot be read (the upstream's 401/403 passes through, spec 7.4.1; a profile
 * without a usable id is 502 `upstream_bad_response`).
 *
 * @throws UpstreamError on transport failures.
 */
export async function sessionUserId(ctx: SessionContext): Promise<{ id: number } | { answer: ProxyAnswer }> {
  let res: UpstreamResponse;
  try {
    res = await cachedProfile(ctx, ctx.token as string);
  } catch (error) {
    if (error instanceof UpstreamAnswerError) return { answer: upstreamFailureAnswer(error.response) };
    throw error;
  }
  const id = profileUserId(res);
  if (id !== undefined) return { id };
  return { answer: { status: 502, body: envelope('upstream_bad_response', 'The profile has no user id') } };
}

/** The user id of each cached profile answer, read once per answer (the answer objects are the cache's). */
const profileUserIds = new WeakMap<UpstreamResponse, number | null>();

/** `user.id` of a profile answer (spec 2.5): a positive safe integer, or its decimal text; else undefined. */
function profileUserId(res: UpstreamResponse): number | undefined {
  let id = profileUserIds.get(res);
  if (id === undefined) {
    const value = (parseJson(res.body) as { user?: { id?: unknown } } | undefined)?.user?.id;
    id = null;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) id = value;
    else if (typeof value === 'string' && /^[1-9][0-9]{0,15}$/.test(value)) id = Number(value);
    profileUserIds.set(res, id);
  }
  return id ?? undefined;
}
