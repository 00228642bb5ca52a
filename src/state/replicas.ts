/**
 * Which replicas must acknowledge a money move's record (docs/behaviour.md "Several instances";
 * docs/operations.md "Redis topologies"): every replica that could be promoted, never "any N of
 * them", and never what the primary reports at that moment.
 *
 * - Sentinel: the sentinels' own list of the primary's replicas (`SENTINEL REPLICAS <name>`), less
 *   those they see down (`s_down`, `o_down`, `disconnected`) and those of priority 0, which they never
 *   promote. {@link SentinelWatch} reads it every {@link SENTINEL_POLL_MS} from one sentinel (the
 *   next one when it does not answer) and follows `+switch-master` of this primary's name only.
 * - Cluster: the replicas of the key's slot as `CLUSTER SLOTS` lists them (it leaves out failed
 *   replicas), read by the cluster client.
 * - `REDIS_URL`: none is known; only the operator's floor counts.
 *
 * `REDIS_MIN_REPLICAS_ACK` is a floor on top (`auto`: 0). A write counts as acknowledged when every
 * promotable replica's acknowledged replication offset (`INFO replication`: `slaveN:…,offset=`) has
 * reached the primary's offset just after the write, and at least the floor's number of replicas
 * have ({@link acknowledgement}). A primary with no promotable replica left (its only replica
 * crashed, or promoted) takes writes at once under `auto`, and refuses them under a floor above 0.
 *
 * @module
 */
import { Redis } from 'ioredis';
import { keepSubscribed } from './subscription.js';

/** How often the sentinels are asked for the primary's replicas and address, in milliseconds. */
export const SENTINEL_POLL_MS = 500;
/** Longest wait for a sentinel's answer before the next sentinel is asked, in milliseconds. */
export const SENTINEL_TIMEOUT_MS = 1_000;
/** How long a list of replicas read from the sentinels stays usable without a newer one, in milliseconds. */
export const SENTINEL_LIST_MAX_AGE_MS = 5_000;

/** One replica as the primary's `INFO replication` lists it. */
export interface ReplicaOffset {
  /** `ip:port`, as the sentinels and `CLUSTER SLOTS` name it. */
  readonly address: string;
  /** The replication offset the replica acknowledged. */
  readonly offset: number;
}

/** What the primary's `INFO replication` says of itself and its replicas. */
export interface ReplicationInfo {
  readonly role: string;
  /** `master_repl_offset`. */
  readonly offset: number;
  readonly replicas: readonly ReplicaOffset[];
}

/** Parses the text of `INFO replication`; an unparsable text gives role `unknown`, offset −1 and no replica. */
export function parseReplicationInfo(text: string): ReplicationInfo {
  let role = 'unknown';
  let offset = -1;
  const replicas: ReplicaOffset[] = [];
  for (const line of text.split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at < 0) continue;
    const name = line.slice(0, at);
    const value = line.slice(at + 1).trim();
    if (name === 'role') role = value;
    else if (name === 'master_repl_offset') offset = Number(value);
    else if (/^slave\d+$/.test(name)) {
      const fields = new Map(value.split(',').map((pair) => pair.split('=') as [string, string]));
      const ip = fields.get('ip');
      const port = fields.get('port');
      const acked = Number(fields.get('offset'));
      if (ip !== undefined && port !== undefined && Number.isFinite(acked)) replicas.push({ address: `${ip}:${port}`, offset: acked });
    }
  }
  return { role, offset: Number.isFinite(offset) ? offset : -1, replicas };
}

/** The verdict on one write's acknowledgements. */
export interface Acknowledgement {
  readonly ok: boolean;
  /** Replicas that acknowledged the write. */
  readonly acknowledged: number;
  /** Promotable replicas that did not acknowledge it (yet). */
  readonly missing: readonly string[];
}

/**
 * Whether a write at `writeOffset` is acknowledged: by every replica of `promotable` (`ip:port`) and
 * by at least `floor` replicas in all. A promotable replica the primary does not list has not.
 */
export function acknowledgement(
  writeOffset: number,
  replicas: readonly ReplicaOffset[],
  promotable: readonly string[],
  floor: number,
): Acknowledgement {
  const acked = new Set(replicas.filter((r) => writeOffset >= 0 && r.offset >= writeOffset).map((r) => r.address));
  const missing = promotable.filter((address) => !acked.has(address));
  return { ok: missing.length === 0 && acked.size >= floor, acknowledged: acked.size, missing };
}

/**
 * The promotable replicas in the reply of `SENTINEL REPLICAS <name>` (an array of flat
 * field/value arrays): not flagged down (`s_down`, `o_down`, `disconnected`) and not priority 0.
 */
export function promotableFromSentinel(reply: unknown): string[] {
  if (!Array.isArray(reply)) return [];
  const out: string[] = [];
  for (const entry of reply) {
    if (!Array.isArray(entry)) continue;
    const fields = new Map<string, string>();
    for (let i = 0; i + 1 < entry.length; i += 2) fields.set(String(entry[i]), String(entry[i + 1]));
    const flags = (fields.get('flags') ?? '').split(',');
    if (flags.some((flag) => flag === 's_down' || flag === 'o_down' || flag === 'disconnected')) continue;
    const priority = fields.get('replica-priority') ?? fields.get('slave-priority');
    if (priority !== undefined && Number(priority) === 0) continue;
    const ip = fields.get('ip');
    const port = fields.get('port');
    if (ip !== undefined && port !== undefined) out.push(`${ip}:${port}`);
  }
  return out;
}

/** The sentinels' addresses and credentials ({@link SentinelWatch}). */
export interface SentinelSettings {
  readonly sentinels: readonly { readonly host: string; readonly port: number }[];
  readonly name: string;
  readonly sentinelPassword: string | undefined;
  readonly tls: boolean;
}

/**
 * The sentinels' view of this primary (see the module documentation): its promotable replicas, and a
 * `+switch-master` of its name (`onSwitch`; another primary's switch on the same sentinels is
 * ignored). One sentinel is asked at a time; one that fails is left for the next.
 */
export class SentinelWatch {
  readonly #settings: SentinelSettings;
  readonly #onSwitch: () => void;
  #index = 0;
  #client: Redis | undefined;
  #subscriber: Redis | undefined;
  #timer: NodeJS.Timeout | undefined;
  #promotable: string[] | undefined;
  #readAt = 0;
  #primary: string | undefined;
  #closed = false;
  readonly #first: Promise<void>;

  /** @param onSwitch - told when this primary's address changes (`+switch-master`, or a newer address read). */
  constructor(settings: SentinelSettings, onSwitch: () => void) {
    this.#settings = settings;
    this.#onSwitch = onSwitch;
    this.#connect();
    this.#first = this.#poll();
  }

  /** Resolves after the first read of the sentinels (answered or not). */
  ready(): Promise<void> {
    return this.#first;
  }

  /**
   * The promotable replicas (`ip:port`) and the primary's address as one sentinel gave them together,
   * or `undefined` when no sentinel answered within {@link SENTINEL_LIST_MAX_AGE_MS} (a write then
   * counts as not acknowledged).
   */
  view(now = Date.now()): { readonly primary: string | undefined; readonly promotable: readonly string[] } | undefined {
    if (now - this.#readAt > SENTINEL_LIST_MAX_AGE_MS || this.#promotable === undefined) return undefined;
    return { primary: this.#primary, promotable: this.#promotable };
  }

  #options() {
    const { sentinelPassword, tls } = this.#settings;
    return {
      connectTimeout: SENTINEL_TIMEOUT_MS,
      commandTimeout: SENTINEL_TIMEOUT_MS,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      disableClientInfo: true,
      retryStrategy: () => null,
      ...(sentinelPassword === undefined ? {} : { password: sentinelPassword }),
      ...(tls ? { tls: {} } : {}),
    };
  }

  /** Connects to the current sentinel: one connection to ask, one subscribed to `+switch-master`. */
  #connect(): void {
    const address = this.#settings.sentinels[this.#index % this.#settings.sentinels.length] as { host: string; port: number };
    this.#client = new Redis({ host: address.host, port: address.port, ...this.#options() });
    this.#client.on('error', () => {});
    const subscriber = new Redis({
      host: address.host,
      port: address.port,
      ...this.#options(),
      enableOfflineQueue: true,
      commandTimeout: undefined,
      retryStrategy: (times: number) => Math.min(100 * times, 1_000),
      autoResubscribe: false,
    });
    subscriber.on('error', () => {});
    subscriber.on('message', (_channel: string, message: string) => {
      // "<name> <old ip> <old port> <new ip> <new port>": only this primary's switch counts.
      const [name, , , ip, port] = message.split(' ');
      if (name !== this.#settings.name) return;
      this.#primary = `${ip}:${port}`;
      this.#onSwitch();
    });
    keepSubscribed(subscriber, '+switch-master', () => {});
    this.#subscriber = subscriber;
  }

  /** Leaves the current sentinel for the next one. */
  #next(): void {
    this.#client?.disconnect();
    this.#subscriber?.disconnect();
    this.#index++;
    if (!this.#closed) this.#connect();
  }

  async #poll(): Promise<void> {
    const client = this.#client;
    try {
      if (!client) return;
      if (client.status === 'wait' || client.status === 'end') await client.connect();
      else if (client.status !== 'ready')
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('sentinel not ready')), SENTINEL_TIMEOUT_MS);
          client.once('ready', () => {
            clearTimeout(timer);
            resolve();
          });
        });
      const [replicas, address] = await Promise.all([
        client.call('SENTINEL', 'REPLICAS', this.#settings.name),
        client.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', this.#settings.name),
      ]);
      this.#promotable = promotableFromSentinel(replicas);
      this.#readAt = Date.now();
      const primary = Array.isArray(address) && address.length === 2 ? `${address[0]}:${address[1]}` : undefined;
      if (primary !== undefined && this.#primary !== undefined && primary !== this.#primary) this.#onSwitch();
      if (primary !== undefined) this.#primary = primary;
    } catch {
      if (!this.#closed) this.#next();
    } finally {
      if (!this.#closed) {
        this.#timer = setTimeout(() => void this.#poll(), SENTINEL_POLL_MS);
        this.#timer.unref();
      }
    }
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#client?.disconnect();
    this.#subscriber?.disconnect();
  }
}
