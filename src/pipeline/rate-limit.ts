/**
 * Pipeline step **rate limits** (a route-level `onRequest` hook, after the global ones: after the
 * auth gate and the media-type check, before the body is read; docs/behaviour.md "Rate limits and client
 * address"): `@fastify/rate-limit` with the limits of the configuration, by the route's declared
 * `limit`:
 *
 * | `limit` | counted per | shared by every instance | limit per minute |
 * |---|---|---|---|
 * | `preauth` (login, register, recovery, social, validate-document, together) | client address (IPv6: its /64) | yes | `RATE_LIMIT_PREAUTH_PER_MIN` (20) |
 * | `beacon` (`/api/logs/auth-logout`) | client address (IPv6: its /64) | yes | `RATE_LIMIT_BEACON_PER_MIN` (10) |
 * | `api` (every other `/api` route) | session, else client address | no (per process, off the shared hot path) | `RATE_LIMIT_API_PER_MIN` (600) |
 * | `api-address` (the same routes, beside `api`) | client address (IPv6: its /64), over all its sessions; not a request whose token verified | no (per process) | `RATE_LIMIT_API_PER_ADDRESS_PER_MIN` (6,000) |
 *
 * The address ceiling exists because a session token costs nothing to mint: without it, every
 * made-up cookie value would be a new `api` bucket. It is checked first, so a request it refuses is
 * not counted against a session. An IPv6 client picks its address freely inside its /64, so the
 * ceiling counts the /64, as every per-address count does (`addressKey`, `state/address-key.ts`). With the BFF's keys (`JWT_JWKS_URL`,
 * `JWT_PUBLIC_KEY` or `JWT_SECRET`), a request whose token the auth gate verified is not counted
 * (`request.sessionTokenVerified`; the gate, a global `onRequest` hook, runs before this route-level
 * one): an attacker cannot mint one, and a mobile carrier's NAT puts thousands of players behind one
 * address. Anonymous requests and tokens that passed unverified still count.
 *
 * A refused request answers 429 `rate_limited` with `Retry-After` (seconds) and calls nothing
 * upstream. `0` turns a limit off. The client address is Fastify's `request.ip`, which believes
 * `X-Forwarded-For` only from `TRUSTED_PROXIES`, read once per request (`clientAddress`, `session/client.ts`). Shared counters fall back to per-process counting
 * while the shared state cannot be reached (`state/rate-limit-store.ts`).
 *
 * @module
 */
import rateLimit, { type RateLimitPluginOptions } from '@fastify/rate-limit';
import type { FastifyContextConfig, FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { clientAddress } from '../session/client.js';
import { readSessionToken, sessionTokenKey } from '../session/cookie.js';
import { addressKey } from '../state/address-key.js';
import { LocalCounters, rateLimitStore } from '../state/rate-limit-store.js';
import { withoutStack } from '../upstream/errors.js';
import type { SharedStore } from '../state/store.js';

/** The limits a request can be refused by (`api-address` applies beside `api`, never alone). */
export type RateLimitName = 'preauth' | 'beacon' | 'api' | 'api-address';

/** The window of every limit, in milliseconds (one minute). */
export const RATE_WINDOW_MS = 60_000;

/** Thrown by the limiter for a refused request; the errors step answers it with the envelope. */
export class RateLimitedError extends Error {
  readonly statusCode = 429;
  readonly code = 'FP_RATE_LIMITED';
  /** Which limit refused it. */
  readonly limit: RateLimitName;
  /** Seconds until the window ends. */
  readonly retryAfterSeconds: number;
  constructor(limit: RateLimitName, retryAfterSeconds: number) {
    super(`rate limit ${limit} exceeded`);
    this.name = 'RateLimitedError';
    this.limit = limit;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Options of the {@link rateLimits} plugin. */
export interface RateLimitOptions {
  config: Pick<Config, 'rateLimits'>;
  store: SharedStore;
  /** Told the name of each limit that refused a request (metrics). */
  onRefused?: (limit: RateLimitName) => void;
}

/** The shared limits count a client address by {@link addressKey} (IPv6: its /64). */
const byAddress = (request: FastifyRequest): string => addressKey(clientAddress(request));

/** The limits (see the module documentation). */
export const rateLimits = fp(
  async (app: FastifyInstance, { config, store, onRefused }: RateLimitOptions) => {
    const perMinute: Record<Exclude<RateLimitName, 'api-address'>, number> = {
      preauth: config.rateLimits.preAuthPerMin,
      beacon: config.rateLimits.beaconPerMin,
      api: config.rateLimits.apiPerMin,
    };
    const perAddress = config.rateLimits.apiPerAddressPerMin;
    // Every limit counted in process memory shares one map (their keys differ by prefix).
    const local = new LocalCounters();
    const addressCeiling = perAddress === 0 ? undefined : addressCeilingHook(local, perAddress, onRefused);
    const bySession = (request: FastifyRequest): string => {
      const token = readSessionToken(request);
      return token ? `s:${sessionTokenKey(request, token)}` : `a:${addressKey(clientAddress(request))}`;
    };
    // Runs before the limiter's own onRoute hook (registered below): turns each route's declared
    // `limit` into the limiter's per-route options.
    app.addHook('onRoute', (route) => {
      const name = route.config?.limit;
      if (name === 'api' && addressCeiling) {
        const own = route.onRequest;
        route.onRequest = own === undefined ? [addressCeiling] : [addressCeiling, ...(Array.isArray(own) ? own : [own])];
      }
      if (!name || perMinute[name] === 0) return;
      const shared = name !== 'api';
      route.config = {
        ...route.config,
        rateLimit: {
          max: perMinute[name],
          timeWindow: RATE_WINDOW_MS,
          groupId: name,
          shared,
          keyGenerator: shared ? byAddress : bySession,
          errorResponseBuilder: (_request: FastifyRequest, context: { ttl: number }) => {
            onRefused?.(name);
            return withoutStack(() => new RateLimitedError(name, Math.max(1, Math.ceil(context.ttl / 1000))));
          },
          // `shared` is read by the store (state/rate-limit-store.ts), which gets these options.
        } as unknown as NonNullable<FastifyContextConfig['rateLimit']>,
      };
    });
    await app.register(rateLimit, {
      global: false,
      store: rateLimitStore(store, local) as unknown as RateLimitPluginOptions['store'],
      addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
      addHeaders: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true, 'retry-after': true },
    });
  },
  { name: 'rate-limits' },
);

/**
 * The `api-address` ceiling as a route `onRequest` hook (synchronous: it counts in process memory,
 * `local`, under `addr:` and the client's {@link addressKey}): refuses with {@link RateLimitedError}
 * `api-address` and `Retry-After` (seconds until the window ends) once an address has made more than
 * `max` requests in the window ({@link RATE_WINDOW_MS}), and tells `onRefused`. A request whose
 * session token the auth gate verified is neither counted nor refused.
 */
function addressCeilingHook(
  local: LocalCounters,
  max: number,
  onRefused: ((limit: RateLimitName) => void) | undefined,
): onRequestHookHandler {
  return (request, reply, done) => {
    if (request.sessionTokenVerified) return done();
    const now = Date.now();
    const window = local.hit(`addr:${addressKey(clientAddress(request))}`, RATE_WINDOW_MS, now);
    if (window.count <= max) return done();
    onRefused?.('api-address');
    const retryAfter = Math.max(1, Math.ceil((window.resetAt - now) / 1000));
    reply.header('retry-after', retryAfter);
    done(withoutStack(() => new RateLimitedError('api-address', retryAfter)));
  };
}
