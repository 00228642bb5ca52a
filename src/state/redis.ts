/**
 * The {@link SharedStore} in Redis: every instance behind any load balancer shares it
 * (docs/behaviour.md "Several instances"). The deployment is one of the {@link RedisTopology} modes —
 * one server (`REDIS_URL`), Sentinel (`REDIS_SENTINELS`, `REDIS_SENTINEL_NAME`) or a cluster
 * (`REDIS_CLUSTER_NODES`) — and ioredis does the rest: finding the primary through the sentinels
 * (and asking them again when its connection breaks, when a sentinel announces `+switch-master` —
 * ioredis's `failoverDetector` — or when it answers `READONLY`, demoted), routing each key to its
 * cluster node and following `MOVED` after a failover.
 *
 * The clients: one for commands — short connect and command time limits, no offline queue and no
 * retry of a command whose connection broke, so that nothing waits on a dead primary (a money move
 * then fails closed at once), every call also bounded by {@link REDIS_CALL_DEADLINE_MS},
 * auto-pipelining so that concurrent requests share round trips —, one subscribed to the event
 * channel (classic pub/sub: a cluster delivers a `PUBLISH` to the subscribers of every node), and,
 * when acknowledgements are asked, {@link ACK_LANES} "lanes" for the acknowledged writes. All
 * reconnect by themselves: when a primary answers again (the old one back, or a replica promoted),
 * everything resumes without a restart, and the listeners are told to resync (events may have been
 * missed while the subscription was down). `CLIENT SETINFO` is not sent (Redis 7.0 refuses it).
 *
 * Replication is asynchronous: a write acknowledged by a primary that is then replaced (killed, or
 * demoted by a planned switchover and emptied to follow the new one) is lost unless a replica had it.
 * A money move's records are therefore written with `replicated`: the `SET` is followed by
 * `WAIT <n>` {@link REPLICA_ACK_MS}, where `n` is the configured `REDIS_MIN_REPLICAS_ACK`
 * (`minReplicasAck` of the topology) and never what the primary reports at the moment (a primary
 * left without its replica must not be written to unacknowledged). Fewer acknowledgements in time:
 * the call rejects ({@link StateUnavailableError}: 503 `idempotency_unavailable`, nothing sent
 * upstream) and a pending marker is deleted again, so that the key is free at once.
 *
 * `WAIT` blocks its connection until it returns, so the acknowledged writes never share the command
 * connection: each takes a lane of its own (one `SET` + `WAIT` at a time per lane; a write waits at
 * most {@link LANE_WAIT_MS} for a free lane, then is refused without sending anything). A write is
 * never sent after its caller gave up, and a marker whose `SET` may still run after its caller gave
 * up (the primary slow to answer) is deleted by a compare-and-delete sent on the same lane, so that
 * it runs after the `SET` whenever that runs; the marker's value is unique to the attempt
 * (`setIfAbsent`), so the delete can only remove its own write. Deletes that could not be sent are
 * tried again on the command connection (at most {@link MAX_RELEASES} kept, each until its lease ends).
 *
 * Every key the proxy writes is touched alone (one key per command, per `MULTI` and per script), so
 * no key needs a hash tag to share a cluster slot with another.
 *
 * @module
 */
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import type { RedisTopology } from '../config.js';
import { KEY_PREFIX, type SharedStore, type StateEvent, StateUnavailableError, type WriteOptions } from './store.js';

/** Longest wait for a connection to Redis, in milliseconds. */
export const REDIS_CONNECT_TIMEOUT_MS = 2_000;
/** Longest wait for one Redis command, in milliseconds. */
export const REDIS_COMMAND_TIMEOUT_MS = 1_000;
/** Longest wait for one store call (redirections and a `WAIT` included), in milliseconds. */
export const REDIS_CALL_DEADLINE_MS = 2_500;
/** Longest wait for the replicas to acknowledge a money move's record (`WAIT <n> <ms>`), in milliseconds. */
export const REPLICA_ACK_MS = 500;
/** Connections (lanes) for the acknowledged writes: at most this many `WAIT`s at once per instance. */
export const ACK_LANES = 4;
/** Longest wait for a free lane before an acknowledged write is refused (nothing sent), in milliseconds. */
export const LANE_WAIT_MS = 500;
/** Most writes waiting for a lane at once; more are refused at once. */
export const MAX_LANE_WAITERS = 1_000;
/** Most marker deletes kept to be tried again (see the module documentation). */
export const MAX_RELEASES = 1_000;
/** Pause between two attempts of the kept marker deletes, in milliseconds. */
export const RELEASE_RETRY_MS = 1_000;
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
    (event.type === 'evict' && typeof event.key === 'string' && /^[0-9a-f]{64}$/.test(event.key)) ||
    (event.type === 'session-end' &&
      typeof event.key === 'string' &&
      /^[0-9a-f]{64}$/.test(event.key) &&
      (event.reason === 'logout' || event.reason === 'refused'))
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
    // ioredis 5 names itself with CLIENT SETINFO, which Redis 7.0 refuses (an error per connection).
    disableClientInfo: true,
  };
}

/**
 * What a client does when a command answers `error`: `READONLY` (a primary demoted while it runs: a
 * planned switchover) reconnects, which asks the sentinels again; the command connection sends the
 * command again to the new primary (2), a lane does not (1: the acknowledged write is refused and
 * tried again by its caller, never sent twice).
 */
export function reconnectOnReadonly(error: Error, resend: boolean): false | 1 | 2 {
  return error.message.startsWith('READONLY') ? (resend ? 2 : 1) : false;
}

/** The role of a client: the commands, the event subscription or a lane of acknowledged writes. */
type Role = 'commands' | 'subscriber' | 'lane';

/** The ioredis client of `topology` for `role`. */
function connect(topology: RedisTopology, role: Role): Client {
  const subscriber = role === 'subscriber';
  // The subscription waits for its (re)connection rather than failing: it has no caller to answer.
  // A lane carries one write at a time: nothing to pipeline.
  const queue = subscriber ? { enableOfflineQueue: true, commandTimeout: undefined } : { enableOfflineQueue: false };
  const pipelining = role === 'commands';
  switch (topology.mode) {
    case 'standalone':
      return new Redis(topology.url, { ...nodeOptions(), enableAutoPipelining: pipelining, ...queue });
    case 'sentinel':
      return new Redis({
        ...nodeOptions(),
        enableAutoPipelining: pipelining,
        ...queue,
        sentinels: topology.sentinels.map(({ host, port }) => ({ host, port })),
        name: topology.name,
        role: 'master',
        ...(topology.password === undefined ? {} : { password: topology.password }),
        ...(topology.sentinelPassword === undefined ? {} : { sentinelPassword: topology.sentinelPassword }),
        ...(topology.tls ? { tls: {}, sentinelTLS: {}, enableTLSForSentinelMode: true } : {}),
        sentinelRetryStrategy: reconnectDelay,
        // Subscribed to +switch-master on the sentinels: a planned switchover is followed at once,
        // not when the old primary stops answering or answers READONLY. (The rare close of the client
        // it can cause, a switch announced during a reconnection, is undone by the store: 'end'.)
        failoverDetector: true,
        sentinelReconnectStrategy: reconnectDelay,
        reconnectOnError: (error) => reconnectOnReadonly(error, role === 'commands'),
      });
    case 'cluster': {
      const options: ClusterOptions = {
        enableOfflineQueue: subscriber,
        enableAutoPipelining: pipelining,
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
          reconnectOnError: (error) => reconnectOnReadonly(error, role === 'commands'),
        },
      };
      return new Cluster(
        topology.nodes.map(({ host, port }) => ({ host, port })),
        options,
      );
    }
  }
}

/**
 * Whether `WAIT`'s reply acknowledges a write: a number of replicas at least `wanted`. An error (a
 * replica answering, a primary refusing) or any other reply does not.
 */
export function acknowledgedBy(reply: [Error | null, unknown] | undefined, wanted: number): boolean {
  if (!reply || reply[0]) return false;
  const count = Number(reply[1]);
  return Number.isInteger(count) && count >= wanted;
}

/** One call of the store: `gaveUp` turns true when its caller stopped waiting ({@link REDIS_CALL_DEADLINE_MS}). */
interface Call {
  gaveUp: boolean;
}

/** A marker to delete again if its write fails: its value (unique to the attempt) and its lease, in milliseconds. */
interface Release {
  readonly value: string;
  readonly ttlMs: number;
}

/** A connection for the acknowledged writes, and whether a write holds it. */
interface Lane {
  readonly client: Client;
  busy: boolean;
}

/** See the module documentation. */
export class RedisStore implements SharedStore {
  readonly kind = 'redis';
  readonly #client: Client;
  readonly #subscriber: Client;
  readonly #lanes: Lane[] = [];
  /** Writes waiting for a lane, oldest first. */
  readonly #laneWaiters: ((lane: Lane | undefined) => void)[] = [];
  /** Marker deletes to try again: key → value and the end of its lease (epoch ms). */
  readonly #releases = new Map<string, { value: string; until: number }>();
  #releaseTimer: NodeJS.Timeout | undefined;
  readonly #minReplicasAck: number;
  readonly #listeners: Listener[] = [];
  #up = false;
  #subscribed = false;
  #closed = false;

  /**
   * Connects (in the background: the proxy starts while Redis is down) to `topology`.
   * @param log - told when the connection is lost and when it is back.
   */
  constructor(topology: RedisTopology, log?: StateLog) {
    this.#minReplicasAck = topology.minReplicasAck;
    this.#client = this.#connect(topology, 'commands');
    this.#client.on('ready', () => {
      if (!this.#up) log?.info({ state: 'redis', mode: topology.mode }, 'shared state reachable');
      this.#up = true;
      this.#retryReleases();
    });
    this.#client.on('close', () => {
      if (this.#up) log?.warn({ state: 'redis', mode: topology.mode }, 'shared state unreachable: money moves answer 503, caches use process memory');
      this.#up = false;
    });
    if (this.#minReplicasAck > 0) {
      for (let i = 0; i < ACK_LANES; i++) this.#lanes.push({ client: this.#connect(topology, 'lane'), busy: false });
    }
    this.#subscriber = this.#connect(topology, 'subscriber');
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

  /**
   * A client of `role` that stays connected until {@link close}: ioredis ends a Sentinel client for
   * good when a `+switch-master` interrupts its reconnection; it is started again here.
   */
  #connect(topology: RedisTopology, role: Role): Client {
    const client = connect(topology, role);
    // Errors are reported by the commands that meet them; without a listener ioredis would print them.
    client.on('error', () => {});
    if (client instanceof Redis) {
      client.on('end', () => {
        if (!this.#closed) setTimeout(() => this.#closed || client.connect().catch(() => {}), reconnectDelay(1)).unref();
      });
    }
    return client;
  }

  get up(): boolean {
    return this.#up;
  }

  /** Resolves once every connection is ready, or after `timeoutMs` (whichever comes first). */
  async ready(timeoutMs: number): Promise<boolean> {
    const connected = (client: Client) =>
      client.status === 'ready' ? Promise.resolve() : new Promise<void>((resolve) => client.once('ready', () => resolve()));
    const timer = new Promise<false>((resolve) => setTimeout(resolve, timeoutMs, false).unref());
    const clients = [this.#client, this.#subscriber, ...this.#lanes.map((lane) => lane.client)];
    return Promise.race([Promise.all(clients.map(connected)).then(() => true), timer]);
  }

  async #run<T>(command: (call: Call) => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const call: Call = { gaveUp: false };
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        call.gaveUp = true;
        reject(new Error(`no answer within ${REDIS_CALL_DEADLINE_MS} ms`));
      }, REDIS_CALL_DEADLINE_MS);
    });
    try {
      return await Promise.race([command(call), deadline]);
    } catch (error) {
      throw new StateUnavailableError(undefined, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  /** A free, connected lane, or `undefined` after {@link LANE_WAIT_MS} (or at once when too many wait). */
  #lane(): Promise<Lane | undefined> {
    const free = this.#lanes.find((lane) => !lane.busy && lane.client.status === 'ready');
    if (free) {
      free.busy = true;
      return Promise.resolve(free);
    }
    if (this.#laneWaiters.length >= MAX_LANE_WAITERS) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter = (lane: Lane | undefined) => {
        clearTimeout(timer);
        resolve(lane);
      };
      const timer = setTimeout(() => {
        const at = this.#laneWaiters.indexOf(waiter);
        if (at >= 0) this.#laneWaiters.splice(at, 1);
        resolve(undefined);
      }, LANE_WAIT_MS);
      this.#laneWaiters.push(waiter);
    });
  }

  /** Gives `lane` to the oldest waiting write, or marks it free. */
  #free(lane: Lane): void {
    const next = lane.client.status === 'ready' ? this.#laneWaiters.shift() : undefined;
    if (next) next(lane);
    else lane.busy = false;
  }

  /**
   * `SET key …args` on a lane followed by `WAIT <minReplicasAck>`; resolves to the `SET`'s reply and
   * whether enough replicas acknowledged it. `release` (a marker's own value): deleted again on the
   * same lane when it may have been written but the call fails or its caller gave up.
   */
  async #acknowledged(call: Call, key: string, args: (string | Buffer)[], release: Release | undefined): Promise<{ reply: unknown; acknowledged: boolean }> {
    const lane = await this.#lane();
    if (!lane) throw new Error(`no connection free for an acknowledged write within ${LANE_WAIT_MS} ms`);
    if (call.gaveUp) {
      this.#free(lane);
      throw new Error('the caller gave up before the write was sent');
    }
    let created = false;
    try {
      const replies = await lane.client
        .pipeline()
        .call('SET', key, ...args)
        .call('WAIT', String(this.#minReplicasAck), String(REPLICA_ACK_MS))
        .exec();
      const [set, wait] = replies ?? [];
      if (!set || set[0]) throw set?.[0] ?? new Error('no reply to SET');
      created = set[1] === null || set[1] === 'OK';
      const acknowledged = acknowledgedBy(wait as [Error | null, unknown] | undefined, this.#minReplicasAck);
      if (release !== undefined && created && (!acknowledged || call.gaveUp)) await this.#release(lane, key, release);
      return { reply: set[1], acknowledged };
    } catch (error) {
      // No reply in time, or the connection broke: the SET may have run or may still run.
      if (release !== undefined) await this.#release(lane, key, release);
      throw error;
    } finally {
      this.#free(lane);
    }
  }

  /** Deletes `key` if it still holds the marker, on `lane` (after its `SET`); kept to be tried again if that fails. */
  async #release(lane: Lane, key: string, release: Release): Promise<void> {
    try {
      await lane.client.eval(DELETE_IF_EQUALS, 1, key, release.value);
    } catch {
      this.#keepRelease(key, release.value, Date.now() + release.ttlMs);
    }
  }

  /** Keeps a delete to try again until `until` (epoch ms: the marker's lease ends then anyway). */
  #keepRelease(key: string, value: string, until: number): void {
    if (this.#releases.size >= MAX_RELEASES) this.#releases.delete(this.#releases.keys().next().value as string);
    this.#releases.set(key, { value, until });
    this.#releaseTimer ??= setTimeout(() => {
      this.#releaseTimer = undefined;
      this.#retryReleases();
    }, RELEASE_RETRY_MS).unref();
  }

  /** Tries the kept deletes again on the command connection; those that fail stay for the next try. */
  #retryReleases(): void {
    const now = Date.now();
    for (const [key, { value, until }] of [...this.#releases]) {
      this.#releases.delete(key);
      if (until < now) continue;
      this.#client.eval(DELETE_IF_EQUALS, 1, key, value).catch(() => this.#closed || this.#keepRelease(key, value, until));
    }
  }

  /** `SET …`, acknowledged when `replicated` is asked and replicas are configured. */
  async #write(call: Call, key: string, args: (string | Buffer)[], replicated: boolean | undefined, release?: Release): Promise<{ reply: unknown; acknowledged: boolean }> {
    if (!replicated || this.#minReplicasAck === 0) return { reply: await this.#client.call('SET', key, ...args), acknowledged: true };
    return this.#acknowledged(call, key, args, release);
  }

  setIfAbsent(key: string, value: string, ttlMs: number, options?: WriteOptions): Promise<string | null> {
    return this.#run(async (call) => {
      const { reply, acknowledged } = await this.#write(call, key, [value, 'NX', 'GET', 'PX', String(ttlMs)], options?.replicated, { value, ttlMs });
      const previous = reply as string | Buffer | null;
      if (previous !== null) return previous.toString();
      // Not on enough replicas: a failover now would forget it. Deleted again; the caller is refused.
      if (!acknowledged) throw new Error(`fewer than ${this.#minReplicasAck} replicas acknowledged the write within ${REPLICA_ACK_MS} ms`);
      return null;
    });
  }
  set(key: string, value: string | Buffer, ttlMs: number, options?: WriteOptions): Promise<void> {
    return this.#run(async (call) => {
      const { acknowledged } = await this.#write(call, key, [value, 'PX', String(ttlMs)], options?.replicated);
      if (!acknowledged) throw new Error(`fewer than ${this.#minReplicasAck} replicas acknowledged the write within ${REPLICA_ACK_MS} ms`);
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
    this.#closed = true;
    clearTimeout(this.#releaseTimer);
    for (const waiter of this.#laneWaiters.splice(0)) waiter(undefined);
    this.#client.disconnect();
    this.#subscriber.disconnect();
    for (const lane of this.#lanes) lane.client.disconnect();
  }
}
