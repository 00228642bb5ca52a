/**
 * The {@link SharedStore} in Redis, shared by every instance. What it promises (one server or a
 * managed endpoint, Sentinel or a cluster; failovers followed without a restart; a money move's
 * records acknowledged by every replica that could be promoted) is docs/behaviour.md "Several
 * instances", and what each topology costs docs/operations.md "Redis topologies". ioredis finds the
 * primary through the sentinels and routes each key to its cluster node; this module adds what it
 * lacks: reconnecting on `READONLY`, `LOADING` or `MASTERDOWN` (a managed endpoint's connections
 * outlive its failover), and following `+switch-master` of its own primary's name only
 * (`SentinelWatch` of `replicas.ts`: ioredis's own detector acts on any name the sentinels watch).
 *
 * The clients: one for commands — short connect and command time limits, no offline queue and no
 * retry of a command whose connection broke, so that nothing waits on a dead primary, every call
 * also bounded by {@link REDIS_CALL_DEADLINE_MS}, auto-pipelining so that concurrent requests share
 * round trips —, one subscribed to the event channel (classic pub/sub: a cluster delivers a
 * `PUBLISH` to the subscribers of every node), and, with Sentinel, a cluster or a floor above 0,
 * {@link ACK_LANES} "lanes" for the acknowledged writes. All reconnect by themselves: when a primary
 * answers again (the old one back, or a replica promoted), everything resumes without a restart, and
 * the listeners are told to resync (events may have been missed while the subscription was down).
 * `CLIENT SETINFO` is not sent (Redis 7.0 refuses it).
 *
 * Replication is asynchronous, so a money move's records are written with `replicated`: the write and
 * `INFO replication` (the primary's offset just after it) go on a lane, then `WAIT` and `INFO
 * replication` again until every replica that could be promoted has acknowledged that offset and at
 * least the `REDIS_MIN_REPLICAS_ACK` floor of replicas have (`replicas.ts`), for at most
 * {@link REPLICA_ACK_MS} — never "any N of them", never what the primary reports at the moment. In a
 * cluster the write goes to its slot's node and a `MOVED` or `ASK` reply is followed to the node it
 * names (`ASKING` first), so that the `WAIT` runs on the connection that wrote. Not acknowledged in
 * time: the call rejects ({@link StateUnavailableError}: 503 `idempotency_unavailable`, nothing sent
 * upstream) and a pending marker is deleted again, so that the key is free at once.
 *
 * `WAIT` blocks its connection until it returns, so the acknowledged writes never share the command
 * connection: each takes a lane of its own (one write at a time per lane; a write waits at most
 * {@link LANE_WAIT_MS} for a free lane, then is refused without sending anything). A write is never
 * sent after its caller gave up, and a marker whose write may still run after its caller gave up (the
 * primary slow to answer, a command timeout) is deleted by a compare-and-delete sent on the same
 * connection, so that it runs after the write whenever that runs; the marker's value is unique to
 * the attempt (`setIfAbsent`), so the delete can only remove its own write. Deletes that could not be
 * sent are tried again on the command connection (at most {@link MAX_RELEASES} kept, each until its
 * lease ends).
 *
 * With `REDIS_URL` the store asks the server for its role once connected: a primary with replicas
 * while no acknowledgement is asked (`REDIS_MIN_REPLICAS_ACK=0`) is logged as a warning naming the
 * variable (a managed endpoint that fails over can forget a marker).
 *
 * Every key the proxy writes is touched alone (one key per command, per `MULTI` and per script), so
 * no key needs a hash tag to share a cluster slot with another.
 *
 @module
 */
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import type { RedisTopology } from '../config.js';
import { isIP } from 'node:net';
import calculateSlot from 'cluster-key-slot';
import { acknowledgement, parseReplicationInfo, SentinelWatch } from './replicas.js';
import { keepSubscribed } from './subscription.js';
import {
  type HandedAnswer,
  KEY_PREFIX,
  type ReplaceCondition,
  type SharedStore,
  type StateEvent,
  StateUnavailableError,
  type WriteOptions,
} from './store.js';

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
/** How long a refused acknowledged write is reported (`refusal`) while no later one was taken, in milliseconds. */
export const REFUSAL_SHOWN_MS = 10_000;
/** The pub/sub channel of the fan-out events. */
export const EVENT_CHANNEL = `${KEY_PREFIX}events`;

const DELETE_IF_EQUALS = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";
/**
 * `replaceIf`: ARGV = value, ttl (ms), `1` when an absent key may be written, then the values the key
 * may hold; 1 when the key holds the value afterwards, else 0.
 */
const REPLACE_IF = [
  "local current = redis.call('GET', KEYS[1])",
  "local write = current == false and ARGV[3] == '1'",
  'if current ~= false then for i = 4, #ARGV do if current == ARGV[i] then write = true end end end',
  "if write then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end",
  'return 0',
].join('\n');

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
      (event.reason === 'logout' || event.reason === 'refused')) ||
    (event.type === 'answers' && typeof event.from === 'string' && Array.isArray(event.answers) && event.answers.every(isHandedAnswer))
  );
}

/** The store key of a money move's record (`state/idempotency.ts` `recordKey`). */
const HANDED_KEY = new RegExp(`^${KEY_PREFIX}idem:[0-9a-f]{64}$`);

function isHandedAnswer(value: unknown): value is HandedAnswer {
  if (!value || typeof value !== 'object') return false;
  const answer = value as Record<string, unknown>;
  return (
    typeof answer.key === 'string' &&
    HANDED_KEY.test(answer.key) &&
    typeof answer.record === 'string' &&
    typeof answer.marker === 'string' &&
    Number.isSafeInteger(answer.ttlMs) &&
    (answer.ttlMs as number) > 0
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

/** Errors after which a connection is made again: the server is not (or no longer) a primary that takes writes. */
const RECONNECT_ON = /^(READONLY|LOADING|MASTERDOWN)\b/;

/**
 * What a client does when a command answers `error`, in every mode: `READONLY` (a primary demoted
 * while it runs: a planned switchover, or a managed endpoint whose connections outlive its
 * failover), `LOADING` (a server loading its data set) and `MASTERDOWN` reconnect — with Sentinel
 * that asks the sentinels again; with `REDIS_URL` it resolves the name again. The command connection
 * sends the command again on the new connection (2), a lane does not (1: the acknowledged write is
 * refused and tried again by its caller, never sent twice).
 */
export function reconnectOnReadonly(error: Error, resend: boolean): false | 1 | 2 {
  return RECONNECT_ON.test(error.message) ? (resend ? 2 : 1) : false;
}

/** Reads a cluster's slots again (bounded by its own `slotsRefreshTimeout`); a failure leaves the old ones. */
function refreshSlots(cluster: Cluster): Promise<void> {
  return new Promise((resolve) => {
    (cluster as unknown as { refreshSlotsCache(callback: () => void): void }).refreshSlotsCache(() => resolve());
  });
}

/** The connection of `cluster` to the node at `address` (`host:port`), with that address. */
function nodeByAddress(cluster: Cluster, address: string): { node: Redis; master: string } {
  const node = cluster.nodes('all').find((n) => `${n.options.host}:${n.options.port}` === address);
  if (!node) throw new Error(`no connection to the cluster node ${address}`);
  return { node, master: address };
}

/** The role of a client: the commands, the event subscription or a lane of acknowledged writes. */
type Role = 'commands' | 'subscriber' | 'lane';

/** The ioredis client of `topology` for `role`. */
function connect(topology: RedisTopology, role: Role): Client {
  const subscriber = role === 'subscriber';
  // The subscription waits for its (re)connection rather than failing: it has no caller to answer.
  // A lane carries one write at a time: nothing to pipeline.
  // Its subscription is made again on every connection by keepSubscribed (cluster: by ioredis's own
  // subscriber connection, which reads the channels of the last confirmed one).
  const queue = subscriber
    ? { enableOfflineQueue: true, commandTimeout: undefined, autoResubscribe: false }
    : { enableOfflineQueue: false };
  const pipelining = role === 'commands';
  switch (topology.mode) {
    case 'standalone':
      return new Redis(topology.url, {
        ...nodeOptions(),
        enableAutoPipelining: pipelining,
        ...queue,
        reconnectOnError: (error) => reconnectOnReadonly(error, role === 'commands'),
      });
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
        // ioredis's failover detector reconnects on a +switch-master of any primary the sentinels
        // watch: the store follows this primary's name only (SentinelWatch) and reconnects itself.
        failoverDetector: false,
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
  /** The operator's floor of acknowledgements (`REDIS_MIN_REPLICAS_ACK`; `auto`: 0). */
  readonly #floor: number;
  /** Whether money moves' records go through the lanes (promotable replicas known, or a floor above 0). */
  readonly #acknowledging: boolean;
  readonly #sentinels: SentinelWatch | undefined;
  /** Why the last acknowledged write failed, while no later one succeeded (`/readyz`), and when (`performance.now()`). */
  #refusal: string | undefined;
  #refusedAt = 0;
  readonly #listeners: Listener[] = [];
  #up = false;
  #subscribed = false;
  #closed = false;

  /**
   * Connects (in the background: the proxy starts while Redis is down) to `topology`.
   * @param log - told when the connection is lost and when it is back.
   */
  constructor(topology: RedisTopology, log?: StateLog) {
    this.#floor = topology.minReplicasAck === 'auto' ? 0 : topology.minReplicasAck;
    this.#acknowledging = topology.mode !== 'standalone' || this.#floor > 0;
    this.#client = this.#connect(topology, 'commands');
    this.#client.on('ready', () => {
      if (!this.#up) log?.info({ state: 'redis', mode: topology.mode }, 'shared state reachable');
      this.#up = true;
      this.#retryReleases();
      if (topology.mode === 'standalone') this.#checkRole(log);
    });
    this.#client.on('close', () => {
      if (this.#up)
        log?.warn({ state: 'redis', mode: topology.mode }, 'shared state unreachable: money moves answer 503, caches use process memory');
      this.#up = false;
    });
    if (this.#acknowledging) {
      for (let i = 0; i < ACK_LANES; i++) this.#lanes.push({ client: this.#connect(topology, 'lane'), busy: false });
    }
    // This primary's switch (and only its own) moves every connection to the new primary at once.
    this.#sentinels =
      topology.mode === 'sentinel'
        ? new SentinelWatch(topology, () => {
            if (this.#closed) return;
            log?.info({ state: 'redis', mode: topology.mode, name: topology.name }, 'primary switched: reconnecting');
            for (const client of [this.#client, this.#subscriber, ...this.#lanes.map((lane) => lane.client)]) {
              if (client instanceof Redis) client.disconnect(true);
            }
          })
        : undefined;
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
    if (this.#subscriber instanceof Cluster) {
      // A cluster moves its subscription to another node by itself when the node it used is lost; the
      // node leaving the pool is the sign that events may have been missed meanwhile.
      this.#subscriber.on('ready', resync);
      this.#subscriber.on('-node', resync);
      this.#subscriber.subscribe(EVENT_CHANNEL).catch(() => {});
    } else {
      keepSubscribed(this.#subscriber, EVENT_CHANNEL, resync);
    }
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
        if (this.#closed) return;
        // A failed start is met again by the next 'end': nothing to report here.
        setTimeout(() => {
          if (!this.#closed) client.connect().catch(() => {});
        }, reconnectDelay(1)).unref();
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
    return Promise.race([Promise.all([...clients.map(connected), this.#sentinels?.ready()]).then(() => true), timer]);
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
   * `command` (a write of `key`) on a lane, then the acknowledgements of {@link #awaitAcknowledgements};
   * resolves to the command's reply and whether they came. `release` (a marker's own value): deleted
   * again on the same connection when it may have been written but the call fails or its caller gave up.
   */
  async #acknowledged(
    call: Call,
    key: string,
    command: readonly [string, ...(string | Buffer)[]],
    release: Release | undefined,
  ): Promise<{ reply: unknown; acknowledged: boolean }> {
    const lane = await this.#lane();
    if (!lane) throw new Error(`no connection free for an acknowledged write within ${LANE_WAIT_MS} ms`);
    if (call.gaveUp) {
      this.#free(lane);
      throw new Error('the caller gave up before the write was sent');
    }
    let node: Redis | undefined;
    try {
      const written = await this.#writeOn(lane, key, command);
      node = written.node;
      const created = written.reply === null || written.reply === 'OK';
      const verdict = await this.#awaitAcknowledgements(written.node, written.offset, written.promotable);
      this.#refused(verdict.ok ? undefined : verdict.reason);
      if (release !== undefined && created && (!verdict.ok || call.gaveUp)) await this.#release(node, key, release);
      return { reply: written.reply, acknowledged: verdict.ok };
    } catch (error) {
      this.#refused(`the primary did not take the write: ${(error as Error).message}`.slice(0, 200));
      // No reply in time, or the connection broke: the write may have run or may still run.
      if (release !== undefined) await this.#release(node ?? (lane.client instanceof Redis ? lane.client : undefined), key, release);
      throw error;
    } finally {
      this.#free(lane);
    }
  }

  /**
   * Sends `command` and `INFO replication` to the primary of `key` on `lane`: with a cluster, to the
   * node of the key's slot, following a `MOVED` (the slots read again) or an `ASK` (`ASKING` first)
   * to the node it names, at most twice. Resolves to that node's connection, the command's reply, the
   * primary's replication offset just after it, and the replicas that could be promoted.
   * @throws Error when the command fails, the server is no primary, or the promotable replicas are unknown.
   */
  async #writeOn(
    lane: Lane,
    key: string,
    command: readonly [string, ...(string | Buffer)[]],
  ): Promise<{ node: Redis; reply: unknown; offset: number; promotable: readonly string[] }> {
    const [name, ...args] = command;
    let target: { node: Redis; master: string | undefined } = this.#nodeOf(lane, key);
    let asking = false;
    for (let redirects = 0; ; redirects++) {
      const pipeline = target.node.pipeline();
      if (asking) pipeline.call('ASKING');
      const replies: [Error | null, unknown][] =
        (await pipeline
          .call(name, ...args)
          .call('INFO', 'replication')
          .exec()) ?? [];
      const [written, info]: ([Error | null, unknown] | undefined)[] = asking ? replies.slice(1) : replies;
      const error: Error | null | undefined = written?.[0];
      const redirect: RegExpExecArray | null = error ? /^(MOVED|ASK) \d+ (\S+)$/.exec(error.message) : null;
      if (redirect && lane.client instanceof Cluster && redirects < 2) {
        asking = redirect[1] === 'ASK';
        if (!asking) await refreshSlots(lane.client);
        target = nodeByAddress(lane.client, redirect[2] as string);
        continue;
      }
      if (!written || error) throw error ?? new Error(`no reply to ${name}`);
      if (!info || info[0]) throw info?.[0] ?? new Error('no reply to INFO replication');
      const replication = parseReplicationInfo(String(info[1]));
      if (replication.role !== 'master') throw new Error(`the server answered as ${replication.role}, not as the primary`);
      const promotable = this.#promotable(lane, target);
      if (promotable === undefined)
        throw new Error(
          'the replicas that could be promoted are not known (no sentinel answered, or the connection is not to the primary the sentinels name)',
        );
      return { node: target.node, reply: written[1], offset: replication.offset, promotable };
    }
  }

  /** The connection of the primary that serves `key` on `lane` (with a cluster: the node of its slot, and its address). */
  #nodeOf(lane: Lane, key: string): { node: Redis; master: string | undefined } {
    const client = lane.client;
    if (client instanceof Redis) return { node: client, master: undefined };
    const master = client.slots[calculateSlot(key)]?.[0];
    if (master === undefined) throw new Error('the cluster slots are not known yet');
    return nodeByAddress(client, master);
  }

  /**
   * The replicas that could be promoted (`ip:port`): Sentinel's list, a cluster master's replicas,
   * none with `REDIS_URL`; `undefined` when not known. With Sentinel, a write that went to another
   * server than the primary the sentinels name (a switch not followed yet) has none that count.
   */
  #promotable(lane: Lane, target: { node: Redis; master: string | undefined }): readonly string[] | undefined {
    if (this.#sentinels) {
      const view = this.#sentinels.view();
      if (view === undefined) return undefined;
      const stream = target.node.stream as { remoteAddress?: string; remotePort?: number } | undefined;
      const host = view.primary?.slice(0, view.primary.lastIndexOf(':')) ?? '';
      const connected = `${(stream?.remoteAddress ?? '').replace(/^::ffff:/, '')}:${stream?.remotePort}`;
      // Compared only when the sentinels name the primary by its address (not by a host name).
      if (isIP(host) !== 0 && connected !== view.primary) return undefined;
      return view.promotable;
    }
    const client = lane.client;
    if (!(client instanceof Cluster) || target.master === undefined) return [];
    for (const nodes of client.slots) if (nodes?.[0] === target.master) return nodes.slice(1);
    return undefined;
  }

  /**
   * Waits, on the write's own connection, until every promotable replica has acknowledged the
   * replication offset `offset` and at least the floor's number of replicas have (`WAIT`, then
   * `INFO replication` for each replica's acknowledged offset), for at most {@link REPLICA_ACK_MS}.
   */
  async #awaitAcknowledgements(
    node: Redis,
    offset: number,
    promotable: readonly string[],
  ): Promise<{ ok: true } | { ok: false; reason: string }> {
    let wanted = Math.max(this.#floor, promotable.length);
    if (wanted === 0) return { ok: true };
    const deadline = performance.now() + REPLICA_ACK_MS;
    for (;;) {
      const left = Math.max(1, Math.round(deadline - performance.now()));
      const [wait, info] = (await node.pipeline().call('WAIT', String(wanted), String(left)).call('INFO', 'replication').exec()) ?? [];
      if (!wait || wait[0]) return { ok: false, reason: `WAIT failed: ${wait?.[0]?.message ?? 'no reply'}` };
      if (!info || info[0]) return { ok: false, reason: 'INFO replication failed' };
      const verdict = acknowledgement(offset, parseReplicationInfo(String(info[1])).replicas, promotable, this.#floor);
      if (verdict.ok) return { ok: true };
      if (performance.now() >= deadline) {
        const missing =
          verdict.missing.length > 0
            ? `promotable replicas ${verdict.missing.join(', ')} did not acknowledge`
            : `${verdict.acknowledged} of at least ${this.#floor} replicas acknowledged`;
        return { ok: false, reason: `${missing} within ${REPLICA_ACK_MS} ms` };
      }
      wanted = verdict.acknowledged + 1;
    }
  }

  /**
   * Deletes `key` if it still holds the marker, on `node` — the connection its write went on, so that
   * the delete runs after the write whenever that runs; kept to be tried again if that fails.
   */
  async #release(node: Redis | undefined, key: string, release: Release): Promise<void> {
    try {
      if (node === undefined) throw new Error('no connection of the write');
      await node.eval(DELETE_IF_EQUALS, 1, key, release.value);
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

  /** `command` (a write of `key`), acknowledged when `replicated` is asked and replicas are configured. */
  async #write(
    call: Call,
    key: string,
    command: readonly [string, ...(string | Buffer)[]],
    replicated: boolean | undefined,
    release?: Release,
  ): Promise<{ reply: unknown; acknowledged: boolean }> {
    if (!replicated || !this.#acknowledging) return { reply: await this.#client.call(...command), acknowledged: true };
    return this.#acknowledged(call, key, command, release);
  }

  setIfAbsent(key: string, value: string, ttlMs: number, options?: WriteOptions): Promise<string | null> {
    return this.#run(async (call) => {
      const { reply, acknowledged } = await this.#write(
        call,
        key,
        ['SET', key, value, 'NX', 'GET', 'PX', String(ttlMs)],
        options?.replicated,
        { value, ttlMs },
      );
      const previous = reply as string | Buffer | null;
      if (previous !== null) return previous.toString();
      // Not on every replica that could be promoted: a failover now would forget it. Deleted again; the caller is refused.
      if (!acknowledged) throw new Error(this.#refusal ?? 'the replicas did not acknowledge the write');
      return null;
    });
  }
  set(key: string, value: string | Buffer, ttlMs: number, options?: WriteOptions): Promise<void> {
    return this.#run(async (call) => {
      const { acknowledged } = await this.#write(call, key, ['SET', key, value, 'PX', String(ttlMs)], options?.replicated);
      if (!acknowledged) throw new Error(this.#refusal ?? 'the replicas did not acknowledge the write');
    });
  }
  replaceIf(key: string, value: string, ttlMs: number, condition: ReplaceCondition, options?: WriteOptions): Promise<boolean> {
    return this.#run(async (call) => {
      const args = [value, String(ttlMs), condition.ifAbsent === true ? '1' : '0', ...condition.ifEquals];
      const { reply, acknowledged } = await this.#write(call, key, ['EVAL', REPLACE_IF, '1', key, ...args], options?.replicated);
      if (Number(reply) !== 1) return false;
      if (!acknowledged) throw new Error(this.#refusal ?? 'the replicas did not acknowledge the write');
      return true;
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
  #refused(reason: string | undefined): void {
    this.#refusal = reason;
    this.#refusedAt = performance.now();
  }

  /**
   * Why money moves are refused now, or `undefined`: the store unreachable, or the last acknowledged
   * write refused within {@link REFUSAL_SHOWN_MS} (no later one taken). `/readyz` says it.
   */
  get refusal(): string | undefined {
    if (!this.#up) return 'the shared state cannot be reached';
    return performance.now() - this.#refusedAt <= REFUSAL_SHOWN_MS ? this.#refusal : undefined;
  }

  /**
   * With `REDIS_URL`, once connected: asks the server for its role and replicas; a primary with
   * replicas while no acknowledgement is asked (`REDIS_MIN_REPLICAS_ACK=0`) is a warning, and so is
   * a replica (writes are refused).
   */
  #checkRole(log: StateLog | undefined): void {
    this.#client
      .info('replication')
      .then((text) => {
        const { role, replicas } = parseReplicationInfo(text);
        if (role === 'master' && replicas.length > 0 && this.#floor === 0) {
          log?.warn(
            { state: 'redis', mode: 'standalone', replicas: replicas.length },
            'REDIS_URL names a primary with replicas while REDIS_MIN_REPLICAS_ACK is 0: a failover of this endpoint can forget a money move in flight and charge it twice; set REDIS_MIN_REPLICAS_ACK to its replicas (docs/operations.md "Redis topologies")',
          );
        } else if (role !== 'master') {
          log?.warn(
            { state: 'redis', mode: 'standalone', role },
            'REDIS_URL names a server that is not a primary: money moves answer 503 until it is one',
          );
        }
      })
      .catch(() => {});
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#sentinels?.close();
    clearTimeout(this.#releaseTimer);
    for (const waiter of this.#laneWaiters.splice(0)) waiter(undefined);
    this.#client.disconnect();
    this.#subscriber.disconnect();
    for (const lane of this.#lanes) lane.client.disconnect();
  }
}
