/**
 * The shared state of one app (docs/behaviour.md "Several instances", "Money moves: exactly once"): the
 * store — Redis with `REDIS_URL`, `REDIS_SENTINELS` or `REDIS_CLUSTER_NODES`, else process memory — and what is built on it: the idempotency of
 * the money moves, the fleet's purge and eviction announcements, and the registry of the proxy's
 * caches.
 *
 * @module
 */
import type { Config, RedisTopology } from '../config.js';
import { longestCallMs } from '../upstream/deadline.js';
import { type CacheRegistry } from './caches.js';
import { Fleet, GENERATION_KEY } from './fleet.js';
import { Idempotency, type IdempotencyDecision } from './idempotency.js';
import { LoginFailures } from './login-failures.js';
import { MemoryStore } from './memory.js';
import type { StateLog } from './redis.js';
import type { SharedStore } from './store.js';

/** How long `createState` waits for Redis before the proxy starts anyway, in milliseconds. */
export const STATE_READY_WAIT_MS = 1_000;

/** The shared state of one app. */
export interface AppState {
  readonly store: SharedStore;
  readonly fleet: Fleet;
  readonly idempotency: Idempotency;
  /** Failed logins per login identifier and client address. */
  readonly loginFailures: LoginFailures;
  readonly caches: CacheRegistry;
  /**
   * Writes the money moves' answers still waiting to be stored (`Idempotency.flush`), hands what it
   * could not write to the other instances (`Idempotency.handOff`), then closes the store's connections.
   */
  close(): Promise<void>;
}

/**
 * Builds the shared state. With `redis` (a {@link RedisTopology}) it connects to Redis and waits up to
 * {@link STATE_READY_WAIT_MS} for it (the proxy starts while Redis is down: money moves answer 503
 * until it is back), then reads the purge generation.
 *
 * @param config.upstreamTimeoutMs, config.upstreamLimits - the upstream time limit and the endpoints'
 *   queue wait, in milliseconds: the money moves' lease covers both (`longestCallMs`).
 * @param observers.idempotencyDecision - told each money move's decision (the metrics); omit it when
 *   nothing observes.
 */
export async function createState(
  config: Pick<Config, 'redis' | 'upstreamTimeoutMs' | 'rateLimits'> & Partial<Pick<Config, 'upstreamLimits'>>,
  log?: StateLog,
  observers: { readonly idempotencyDecision?: ((decision: IdempotencyDecision) => void) | undefined } = {},
): Promise<AppState> {
  let store: SharedStore;
  if (config.redis) {
    // Loaded only with Redis: a single process never loads the Redis client.
    const { RedisStore } = await import('./redis.js');
    const redis = new RedisStore(config.redis, log);
    await redis.ready(STATE_READY_WAIT_MS);
    store = redis;
  } else {
    store = new MemoryStore();
  }
  const caches: CacheRegistry = new Map();
  const idempotency = new Idempotency(store, longestCallMs(config), { onDecision: observers.idempotencyDecision });
  const fleet = new Fleet(store, caches);
  await fleet.init();
  return {
    store,
    fleet,
    idempotency,
    loginFailures: new LoginFailures(store, {
      perAddress: config.rateLimits.loginFailures,
      perLogin: config.rateLimits.loginFailuresPerLogin,
    }),
    caches,
    close: async () => {
      const left = await idempotency.flush();
      if (left > 0) {
        const handed = await idempotency.handOff();
        if (handed > 0)
          log?.warn(
            { state: store.kind, unstored: left, handedOff: handed },
            'money-move answers not stored at shutdown: handed to the other instances, which store them when the store takes them',
          );
        if (handed < left)
          log?.warn(
            { state: store.kind, unstored: left - handed },
            'money-move answers not stored at shutdown: a repeat elsewhere goes upstream again with the same Idempotency-Key',
          );
      }
      await store.close();
    },
  };
}

export { GENERATION_KEY };
export type { IdempotencyDecision, RedisTopology, SharedStore };
