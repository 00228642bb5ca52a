/**
 * The {@link SharedStore} in Redis (`REDIS_URL`, `redis://` or `rediss://`, password in the URL): every
 * instance behind any load balancer shares it (CONTRACT.md "Several instances").
 *
 * Two ioredis connections: one for commands — short connect and command time limits, no offline
 * queue and no retry of a command whose connection broke, so that nothing waits on a dead Redis (a
 * money move then fails closed at once), auto-pipelining so that concurrent requests share round
 * trips — and one subscribed to the event channel. Both reconnect by themselves: when Redis is back,
 * everything resumes without a restart, and the listeners are told to resync (events may have been
 * missed while the subscription was down).
 *
 * @module
 */
import { Redis, type RedisOptions } from 'ioredis';
import { KEY_PREFIX, type SharedStore, type StateEvent, StateUnavailableError } from './store.js';

/** Longest wait for a connection to Redis, in milliseconds. */
export const REDIS_CONNECT_TIMEOUT_MS = 2_000;
/** Longest wait for one Redis command, in milliseconds. */
export const REDIS_COMMAND_TIMEOUT_MS = 1_000;
/** The pub/sub channel of the fan-out events. */
export const EVENT_CHANNEL = `${KEY_PREFIX}events`;

const DELETE_IF_EQUALS = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

/** Where the store reports its connection changes (a pino logger fits). */
export interface StateLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

type Listener = Parameters<SharedStore['subscribe']>[0];

function isEvent(value: unknown): value is StateEvent {
  if (!value || typeof value !== 'object') return false;
  const event = value as Record<string, unknown>;
  return (
    (event.type === 'purge' && Number.isSafeInteger(event.generation)) ||
    (event.type === 'evict' && typeof event.key === 'string' && /^[0-9a-f]{64}$/.test(event.key))
  );
}

/** See the module documentation. */
export class RedisStore implements SharedStore {
  readonly kind = 'redis';
  readonly #client: Redis;
  readonly #subscriber: Redis;
  readonly #listeners: Listener[] = [];
  #up = false;
  #subscribed = false;

  /**
   * Connects (in the background: the proxy starts while Redis is down) to `url`.
   * @param log - told when the connection is lost and when it is back.
   */
  constructor(url: string, log?: StateLog) {
    const options: RedisOptions = {
      connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      enableAutoPipelining: true,
      retryStrategy: (times) => Math.min(100 * times, 1_000),
      lazyConnect: false,
    };
    this.#client = new Redis(url, options);
    this.#client.on('ready', () => {
      if (!this.#up) log?.info({ state: 'redis' }, 'shared state reachable');
      this.#up = true;
    });
    this.#client.on('close', () => {
      if (this.#up) log?.warn({ state: 'redis' }, 'shared state unreachable: money moves answer 503, caches use process memory');
      this.#up = false;
    });
    // Errors are reported by the commands that meet them; without a listener ioredis would print them.
    this.#client.on('error', () => {});
    this.#subscriber = this.#client.duplicate({ enableOfflineQueue: true, commandTimeout: undefined });
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
    this.#subscriber.on('ready', () => {
      // (Re)subscribed: whatever was published while the subscription was down is lost.
      if (this.#subscribed) for (const listener of this.#listeners) listener.resync();
      this.#subscribed = true;
    });
    this.#subscriber.subscribe(EVENT_CHANNEL).catch(() => {});
  }

  get up(): boolean {
    return this.#up;
  }

  /** Resolves once both connections are ready, or after `timeoutMs` (whichever comes first). */
  async ready(timeoutMs: number): Promise<boolean> {
    const connected = (client: Redis) =>
      client.status === 'ready' ? Promise.resolve() : new Promise<void>((resolve) => client.once('ready', () => resolve()));
    const timer = new Promise<false>((resolve) => setTimeout(resolve, timeoutMs, false).unref());
    return Promise.race([Promise.all([connected(this.#client), connected(this.#subscriber)]).then(() => true), timer]);
  }

  async #run<T>(command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      throw new StateUnavailableError(undefined, { cause: error });
    }
  }

  setIfAbsent(key: string, value: string, ttlMs: number): Promise<string | null> {
    return this.#run(async () => {
      const previous = (await this.#client.call('SET', key, value, 'NX', 'GET', 'PX', String(ttlMs))) as string | Buffer | null;
      return previous === null ? null : previous.toString();
    });
  }
  set(key: string, value: string | Buffer, ttlMs: number): Promise<void> {
    return this.#run(async () => {
      await this.#client.set(key, value, 'PX', ttlMs);
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
