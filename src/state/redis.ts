/**
 * The {@link SharedStore} in Redis: every instance behind any load balancer shares it (CONTRACT.md
 * "Several instances"). The deployment is one of the {@link RedisTopology} modes — one server
 * (`REDIS_URL`), Sentinel (`REDIS_SENTINELS`, `REDIS_SENTINEL_NAME`) or a cluster
 * (`REDIS_CLUSTER_NODES`) — and ioredis does the rest: finding the primary through the sentinels
 * (and asking them again when its connection breaks or it answers `READONLY`, demoted), routing each
 * key to its cluster node and following `MOVED` after a failover.
 *
 * Two ioredis clients: one for commands — short connect and command time limits, no offline queue
 * and no retry of a command whose connection broke, so that nothing waits on a dead primary (a money
 * move then fails closed at once), every call also bounded by {@link REDIS_CALL_DEADLINE_MS},
 * auto-pipelining so that concurrent requests share round trips — and one subscribed to the event
 * channel (classic pub/sub: a cluster delivers a `PUBLISH` to the subscribers of every node). Both
 * reconnect by themselves: when a primary answers again (the old one back, or a replica promoted),
 * everything resumes without a restart, and the listeners are told to resync (events may have been
 * missed while the subscription was down).
 *
 * Replication is asynchronous: a write acknowledged by a primary that dies before its replicas have
 * it is lost at failover. A money move's records are therefore written with `replicated`: where the
 * key's primary has replicas, the `SET` is followed on the same connection by `WAIT 1`
 * {@link REPLICA_ACK_MS} (one round trip, pipelined), and a pending marker no replica acknowledged in
 * time is deleted again and the move refused (503 `idempotency_unavailable`). Whether replicas exist
 * is read cheaply: one server or Sentinel, `INFO replication` of the primary (replicas `online`),
 * kept {@link REPLICA_CHECK_MS} and read again after a reconnect or a missing acknowledgement; a
 * cluster, the replicas ioredis knows for the key's slot (`CLUSTER SLOTS`, refreshed every
 * {@link CLUSTER_SLOTS_REFRESH_MS} and after a redirection). A primary without replicas is not asked
 * to `WAIT`.
 *
 * Every key the proxy writes is touched alone (one key per command, per `MULTI` and per script), so
 * no key needs a hash tag to share a cluster slot with another.
 *
 * @module
 */
import clusterKeySlot from 'cluster-key-slot';
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import type { RedisTopology } from '../config.js';
import { KEY_PREFIX, type SharedStore, type StateEvent, StateUnavailableError, type WriteOptions } from './store.js';

/** Longest wait for a connection to Redis, in milliseconds. */
export const REDIS_CONNECT_TIMEOUT_MS = 2_000;
/** Longest wait for one Redis command, in milliseconds. */
export const REDIS_COMMAND_TIMEOUT_MS = 1_000;
/** Longest wait for one store call (redirections and a `WAIT` included), in milliseconds. */
export const REDIS_CALL_DEADLINE_MS = 2_500;
/** Longest wait for a replica to acknowledge a money move's record (`WAIT 1 <ms>`), in milliseconds. */
export const REPLICA_ACK_MS = 500;
/** How long the primary's count of replicas is trusted before it is read again, in milliseconds. */
export const REPLICA_CHECK_MS = 1_000;
/** How often a cluster client reads the slots (and their replicas) again, in milliseconds. */
export const CLUSTER_SLOTS_REFRESH_MS = 2_000;
/** The pub/sub channel of the fan-out events. */
export const EVENT_CHANNEL = `${KEY_PREFIX}events`;

const DELETE_IF_EQUALS = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

/** Where the store reports its connection changes (a pino logger fits). */
export interface StateLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

type Listener = Parameters<SharedStore['subscribe']>[0];
type Client = Redis | Cluster;

function isEvent(value: unknown): value is StateEvent {
  if (!value || typeof value !== 'object') return false;
  const event = value as Record<string, unknown>;
  return (
    (event.type === 'purge' && Number.isSafeInteger(event.generation)) ||
    (event.type === 'evict' && typeof event.key === 'string' && /^[0-9a-f]{64}$/.test(event.key))
  );
}

/** How long ioredis waits before the next attempt to reconnect, in milliseconds (at most 1 s). */
const reconnectDelay = (times: number): number => Math.min(100 * times, 1_000);

/** The options of a connection to one Redis server (a cluster node, a Sentinel primary, one server). */
function nodeOptions(): RedisOptions {
  return {
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: reconnectDelay,
  };
}

/** The ioredis client of `topology`: commands (`subscriber` false) or the event subscription. */
function connect(topology: RedisTopology, subscriber: boolean): Client {
  // The subscription waits for its (re)connection rather than failing: it has no caller to answer.
  const queue = subscriber ? { enableOfflineQueue: true, commandTimeout: undefined } : { enableOfflineQueue: false };
  switch (topology.mode) {
    case 'standalone':
      return new Redis(topology.url, { ...nodeOptions(), enableAutoPipelining: !subscriber, ...queue });
    case 'sentinel':
      return new Redis({
        ...nodeOptions(),
        enableAutoPipelining: !subscriber,
        ...queue,
        sentinels: topology.sentinels.map(({ host, port }) => ({ host, port })),
        name: topology.name,
        role: 'master',
        ...(topology.password === undefined ? {} : { password: topology.password }),
        ...(topology.sentinelPassword === undefined ? {} : { sentinelPassword: topology.sentinelPassword }),
        ...(topology.tls ? { tls: {}, sentinelTLS: {}, enableTLSForSentinelMode: true } : {}),
        sentinelRetryStrategy: reconnectDelay,
        // A primary demoted while it still runs (a manual failover) answers writes READONLY: reconnect,
        // which asks the sentinels again, and send the command to the new primary. (ioredis's
        // failoverDetector is left off: a +switch-master arriving while the client reconnects to a
        // killed primary could leave it closed for good.)
        reconnectOnError: (error) => (error.message.startsWith('READONLY') ? 2 : false),
      });
    case 'cluster': {
      const options: ClusterOptions = {
        enableOfflineQueue: subscriber,
        enableAutoPipelining: !subscriber,
        clusterRetryStrategy: reconnectDelay,
        // A redirection after a failover or a resharding is followed a few times, then the call fails.
        maxRedirections: 6,
        retryDelayOnFailover: 200,
        retryDelayOnClusterDown: 200,
        retryDelayOnTryAgain: 100,
        slotsRefreshTimeout: REDIS_COMMAND_TIMEOUT_MS,
        slotsRefreshInterval: CLUSTER_SLOTS_REFRESH_MS,
        scaleReads: 'master',
        redisOptions: {
          ...nodeOptions(),
          ...(subscriber ? { commandTimeout: undefined } : {}),
          ...(topology.password === undefined ? {} : { password: topology.password }),
          ...(topology.tls ? { tls: {} } : {}),
        },
      };
      return new Cluster(
        topology.nodes.map(({ host, port }) => ({ host, port })),
        options,
      );
    }
  }
}

/** Counts the replicas an `INFO replication` reply lists as `online`. */
export function onlineReplicas(info: string): number {
  return info.split('\n').filter((line) => /^slave\d+:.*\bstate=online\b/.test(line)).length;
}

/** See the module documentation. */
export class RedisStore implements SharedStore {
  readonly kind = 'redis';
  readonly #client: Client;
  readonly #subscriber: Client;
  readonly #listeners: Listener[] = [];
  #up = false;
  #subscribed = false;
  /** The primary's online replicas (one server or Sentinel), when read, and when. */
  #replicas: { count: number; readAt: number } | undefined;
  #readingReplicas: Promise<number> | undefined;

  /**
   * Connects (in the background: the proxy starts while Redis is down) to `topology`.
   * @param log - told when the connection is lost and when it is back.
   */
  constructor(topology: RedisTopology, log?: StateLog) {
    this.#client = connect(topology, false);
    this.#client.on('ready', () => {
      if (!this.#up) log?.info({ state: 'redis', mode: topology.mode }, 'shared state reachable');
      this.#up = true;
      this.#replicas = undefined;
    });
    this.#client.on('close', () => {
      if (this.#up) log?.warn({ state: 'redis', mode: topology.mode }, 'shared state unreachable: money moves answer 503, caches use process memory');
      this.#up = false;
      this.#replicas = undefined;
    });
    // Errors are reported by the commands that meet them; without a listener ioredis would print them.
    this.#client.on('error', () => {});
    this.#subscriber = connect(topology, true);
    this.#subscriber.on('error', () => {});
    this.#subscriber.on('message', (_channel: string, message: string) => {
      let event: unknown;
      try {
        event = JSON.parse(message);
      } catch {
        return;
      }
      if (isEvent(event)) for (const listener of this.#listeners) listener.event(event);
    });
    const resync = () => {
      // (Re)subscribed: whatever was published while the subscription was down is lost.
      if (this.#subscribed) for (const listener of this.#listeners) listener.resync();
      this.#subscribed = true;
    };
    this.#subscriber.on('ready', resync);
    // A cluster moves its subscription to another node by itself when the node it used is lost; the
    // node leaving the pool is the sign that events may have been missed meanwhile.
    if (this.#subscriber instanceof Cluster) this.#subscriber.on('-node', resync);
    this.#subscriber.subscribe(EVENT_CHANNEL).catch(() => {});
  }

  get up(): boolean {
    return this.#up;
  }

  /** Resolves once both connections are ready, or after `timeoutMs` (whichever comes first). */
  async ready(timeoutMs: number): Promise<boolean> {
    const connected = (client: Client) =>
      client.status === 'ready' ? Promise.resolve() : new Promise<void>((resolve) => client.once('ready', () => resolve()));
    const timer = new Promise<false>((resolve) => setTimeout(resolve, timeoutMs, false).unref());
    return Promise.race([Promise.all([connected(this.#client), connected(this.#subscriber)]).then(() => true), timer]);
  }

  async #run<T>(command: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${REDIS_CALL_DEADLINE_MS} ms`)), REDIS_CALL_DEADLINE_MS);
    });
    try {
      return await Promise.race([command(), deadline]);
    } catch (error) {
      throw new StateUnavailableError(undefined, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  /** The online replicas of `key`'s primary (0 when it has none; see the module documentation). */
  async #replicasOf(key: string): Promise<number> {
    if (this.#client instanceof Cluster) return Math.max(0, (this.#client.slots[clusterKeySlot(key)]?.length ?? 1) - 1);
    const known = this.#replicas;
    const fresh = known !== undefined && Date.now() - known.readAt < REPLICA_CHECK_MS;
    if (!fresh && this.#readingReplicas === undefined) {
      const client = this.#client;
      this.#readingReplicas = client
        .info('replication')
        .then((info) => {
          const count = onlineReplicas(info);
          this.#replicas = { count, readAt: Date.now() };
          return count;
        })
        .finally(() => {
          this.#readingReplicas = undefined;
        });
    }
    // A count read before keeps serving while it is read again; none yet: wait for it.
    return known?.count ?? (await (this.#readingReplicas as Promise<number>));
  }

  /** `SET … ` then, where the key's primary has replicas and `replicated` is asked, `WAIT 1` on the same connection. */
  async #write(key: string, args: (string | Buffer)[], replicated: boolean | undefined): Promise<{ reply: unknown; acknowledged: boolean }> {
    if (!replicated || (await this.#replicasOf(key)) === 0) {
      return { reply: await this.#client.call('SET', key, ...args), acknowledged: true };
    }
    const replies = await this.#client
      .pipeline()
      .call('SET', key, ...args)
      .call('WAIT', '1', String(REPLICA_ACK_MS))
      .exec();
    const [set, wait] = replies ?? [];
    if (!set || set[0]) throw set?.[0] ?? new Error('no reply to SET');
    const acknowledged = !wait?.[0] && Number(wait?.[1]) >= 1;
    // A replica gone since it was counted: count again before the next move.
    if (!acknowledged) this.#replicas = undefined;
    return { reply: set[1], acknowledged };
  }

  setIfAbsent(key: string, value: string, ttlMs: number, options?: WriteOptions): Promise<string | null> {
    return this.#run(async () => {
      const { reply, acknowledged } = await this.#write(key, [value, 'NX', 'GET', 'PX', String(ttlMs)], options?.replicated);
      const previous = reply as string | Buffer | null;
      if (previous !== null) return previous.toString();
      if (!acknowledged) {
        // Not on a replica: a failover now would forget it. The key is left free and the caller refused.
        await this.#client.eval(DELETE_IF_EQUALS, 1, key, value).catch(() => {});
        throw new Error(`no replica acknowledged the write within ${REPLICA_ACK_MS} ms`);
      }
      return null;
    });
  }
  set(key: string, value: string | Buffer, ttlMs: number, options?: WriteOptions): Promise<void> {
    return this.#run(async () => {
      await this.#write(key, [value, 'PX', String(ttlMs)], options?.replicated);
    });
  }
  get(key: string): Promise<string | null> {
    return this.#run(() => this.#client.get(key));
  }
  getBytes(key: string): Promise<Buffer | null> {
    return this.#run(() => this.#client.getBuffer(key));
  }
  deleteIfEquals(key: string, value: string): Promise<void> {
    return this.#run(async () => {
      await this.#client.eval(DELETE_IF_EQUALS, 1, key, value);
    });
  }
  increment(key: string): Promise<number> {
    return this.#run(() => this.#client.incr(key));
  }
  countHit(key: string, windowMs: number): Promise<{ count: number; ttlMs: number }> {
    return this.#run(async () => {
      const replies = await this.#client.multi().incr(key).pexpire(key, windowMs, 'NX').pttl(key).exec();
      const count = Number(replies?.[0]?.[1] ?? 0);
      const ttlMs = Number(replies?.[2]?.[1] ?? windowMs);
      return { count, ttlMs: ttlMs > 0 ? ttlMs : windowMs };
    });
  }
  hits(key: string): Promise<{ count: number; ttlMs: number }> {
    return this.#run(async () => {
      const replies = await this.#client.multi().get(key).pttl(key).exec();
      const count = Number(replies?.[0]?.[1] ?? 0);
      const ttlMs = Number(replies?.[1]?.[1] ?? 0);
      return { count: Number.isFinite(count) ? count : 0, ttlMs: ttlMs > 0 ? ttlMs : 0 };
    });
  }
  publish(event: StateEvent): Promise<void> {
    return this.#run(async () => {
      await this.#client.publish(EVENT_CHANNEL, JSON.stringify(event));
    });
  }
  subscribe(listener: Listener): void {
    this.#listeners.push(listener);
  }
  async close(): Promise<void> {
    this.#client.disconnect();
    this.#subscriber.disconnect();
  }
}
