/**
 * Which Redis deployment the shared state uses (docs/behaviour.md "Configuration" and "Several instances"),
 * read from the environment at start: exactly one of
 *
 * | variables | topology | ioredis client |
 * |---|---|---|
 * | `REDIS_URL` | one server, or a managed primary endpoint (`redis://` or `rediss://`, password in the URL) | `new Redis(url)` |
 * | `REDIS_SENTINELS` + `REDIS_SENTINEL_NAME` | Sentinel: the sentinels name the primary, and a new one after a failover | `new Redis({ sentinels, name })` |
 * | `REDIS_CLUSTER_NODES` | cluster mode: seed nodes, the others are discovered | `new Cluster(nodes)` |
 *
 * With Sentinel or a cluster, `REDIS_PASSWORD` is the servers' password, `REDIS_SENTINEL_PASSWORD`
 * the sentinels' and `REDIS_TLS=true` turns TLS on towards both (with `REDIS_URL` the URL says all
 * of it: `rediss://:password@host:port`). `REDIS_MIN_REPLICAS_ACK` says which replicas must
 * acknowledge a money move's records before it goes upstream (docs/behaviour.md "Several
 * instances"): `auto` (the default with Sentinel or a cluster) every replica that could be promoted,
 * a number a floor under that (with `REDIS_URL`, where no replica is known to be promotable, the
 * number alone; default 0); never what the primary reports at the moment. Any other combination
 * stops the start with one line naming the variables.
 *
 * @module
 */
import { quoted } from './problems.js';
import { MAX_REPLICAS_ACK, PLAIN_INTEGER } from './schema.js';

/** A server address from `REDIS_SENTINELS` or `REDIS_CLUSTER_NODES`. */
export interface RedisAddress {
  readonly host: string;
  readonly port: number;
}

/** The Redis deployment of the shared state (see the module documentation). */
export type RedisTopology = (
  | { readonly mode: 'standalone'; readonly url: string }
  | {
      readonly mode: 'sentinel';
      readonly sentinels: readonly RedisAddress[];
      /** The primary's name as the sentinels monitor it (`REDIS_SENTINEL_NAME`). */
      readonly name: string;
      readonly password: string | undefined;
      readonly sentinelPassword: string | undefined;
      readonly tls: boolean;
    }
  | { readonly mode: 'cluster'; readonly nodes: readonly RedisAddress[]; readonly password: string | undefined; readonly tls: boolean }
) & {
  /**
   * Which replicas must acknowledge (`WAIT`) a money move's records before it goes upstream
   * (`REDIS_MIN_REPLICAS_ACK`): `auto`, every replica that could be promoted (Sentinel or cluster
   * only); a number, a floor under that (with `REDIS_URL`: that many replicas; `0`: none is asked).
   */
  readonly minReplicasAck: number | 'auto';
};

/** The variables {@link redisTopology} reads. */
export interface RedisVariables {
  readonly REDIS_URL?: string | undefined;
  readonly REDIS_SENTINELS?: string | undefined;
  readonly REDIS_SENTINEL_NAME?: string | undefined;
  readonly REDIS_CLUSTER_NODES?: string | undefined;
  readonly REDIS_PASSWORD?: string | undefined;
  readonly REDIS_SENTINEL_PASSWORD?: string | undefined;
  readonly REDIS_TLS?: string | undefined;
  /** As text (the environment) or as the schema read it. */
  readonly REDIS_MIN_REPLICAS_ACK?: string | number | undefined;
}

/** The default port of a sentinel when an address leaves it out. */
export const SENTINEL_DEFAULT_PORT = 26379;
/** The default port of a Redis server when an address leaves it out. */
export const REDIS_DEFAULT_PORT = 6379;

function checkRedisUrl(value: string, problems: string[]): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    problems.push('REDIS_URL: expected a redis:// or rediss:// URL, such as redis://:password@redis.internal:6379/0');
    return undefined;
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    problems.push(`REDIS_URL: expected a redis:// or rediss:// URL, got protocol "${url.protocol}"`);
    return undefined;
  }
  if (!url.hostname) {
    problems.push('REDIS_URL: expected a host, such as redis://redis.internal:6379');
    return undefined;
  }
  return value;
}

/**
 * `REDIS_MIN_REPLICAS_ACK` (`auto`, or a plain decimal integer 0–{@link MAX_REPLICAS_ACK}), or
 * `undefined` when unset; a bad value is one problem line.
 */
function checkReplicasAck(value: string | number | undefined, problems: string[]): number | 'auto' | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'auto') return 'auto';
  const number = typeof value === 'number' ? value : PLAIN_INTEGER.test(value) ? Number(value) : Number.NaN;
  if (Number.isSafeInteger(number) && number >= 0 && number <= MAX_REPLICAS_ACK) return number;
  problems.push(
    `REDIS_MIN_REPLICAS_ACK: expected auto or a plain decimal integer from 0 to ${MAX_REPLICAS_ACK}, got ${quoted(String(value))}`,
  );
  return undefined;
}

/** Parses `host:port,…` (a bracketed IPv6 host is allowed; a missing port is `defaultPort`). */
function checkAddresses(name: string, value: string, defaultPort: number, example: string, problems: string[]): RedisAddress[] | undefined {
  const items = value.split(',').map((item) => item.trim());
  const addresses: RedisAddress[] = [];
  for (const item of items) {
    let url: URL | undefined;
    try {
      url = new URL(`redis://${item}`);
    } catch {
      url = undefined;
    }
    const plain = url !== undefined && url.host.toLowerCase() === item.toLowerCase() && url.username === '' && url.password === '';
    if (item === '' || url === undefined || !plain || url.hostname === '') {
      // An address with credentials is never echoed: they go in REDIS_PASSWORD and REDIS_SENTINEL_PASSWORD.
      const got = item.includes('@')
        ? 'an address with credentials (REDIS_PASSWORD and REDIS_SENTINEL_PASSWORD hold them)'
        : `"${item.slice(0, 80)}"`;
      problems.push(`${name}: expected comma-separated host:port addresses, such as ${example}, got ${got}`);
      return undefined;
    }
    addresses.push({ host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: url.port === '' ? defaultPort : Number(url.port) });
  }
  return addresses;
}

/**
 * The topology the variables name, or `undefined` when none is set (the state then lives in process
 * memory).
 *
 * @param problems - receives one line per problem, naming the variables (the start then stops).
 */
export function redisTopology(env: RedisVariables, problems: string[]): RedisTopology | undefined {
  const chosen = (['REDIS_URL', 'REDIS_SENTINELS', 'REDIS_CLUSTER_NODES'] as const).filter((name) => env[name] !== undefined);
  if (chosen.length > 1) {
    problems.push(`REDIS_URL, REDIS_SENTINELS, REDIS_CLUSTER_NODES: expected exactly one of them, got ${chosen.join(' and ')}`);
    return undefined;
  }
  const mode = chosen[0];
  const before = problems.length;
  if (env.REDIS_SENTINEL_NAME !== undefined && mode !== 'REDIS_SENTINELS') {
    problems.push('REDIS_SENTINEL_NAME: needs REDIS_SENTINELS (the sentinels that know the primary by this name)');
  }
  if (mode === 'REDIS_SENTINELS' && (env.REDIS_SENTINEL_NAME === undefined || env.REDIS_SENTINEL_NAME.trim() === '')) {
    problems.push(
      "REDIS_SENTINELS, REDIS_SENTINEL_NAME: expected REDIS_SENTINEL_NAME too, the primary's name as the sentinels monitor it (such as mymaster)",
    );
  }
  if (env.REDIS_SENTINEL_PASSWORD !== undefined && mode !== 'REDIS_SENTINELS') {
    problems.push('REDIS_SENTINEL_PASSWORD: needs REDIS_SENTINELS');
  }
  for (const name of ['REDIS_PASSWORD', 'REDIS_TLS'] as const) {
    if (env[name] !== undefined && mode !== 'REDIS_SENTINELS' && mode !== 'REDIS_CLUSTER_NODES') {
      problems.push(
        `${name}: needs REDIS_SENTINELS or REDIS_CLUSTER_NODES (with REDIS_URL, the URL holds the password and rediss:// turns TLS on)`,
      );
    }
  }
  if (env.REDIS_TLS !== undefined && env.REDIS_TLS !== 'true' && env.REDIS_TLS !== 'false') {
    problems.push(`REDIS_TLS: expected one of true, false, got "${env.REDIS_TLS.slice(0, 20)}"`);
  }
  const tls = env.REDIS_TLS === 'true';
  const password = env.REDIS_PASSWORD === '' ? undefined : env.REDIS_PASSWORD;
  const replicasAck = checkReplicasAck(env.REDIS_MIN_REPLICAS_ACK, problems);
  if (replicasAck !== undefined && mode === undefined) {
    problems.push(
      'REDIS_MIN_REPLICAS_ACK: needs REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES (without Redis, money moves are recorded in process memory)',
    );
  }
  switch (mode) {
    case undefined:
      return undefined;
    case 'REDIS_URL': {
      const url = checkRedisUrl(env.REDIS_URL as string, problems);
      if (replicasAck === 'auto') {
        problems.push(
          'REDIS_MIN_REPLICAS_ACK: auto needs REDIS_SENTINELS or REDIS_CLUSTER_NODES (with REDIS_URL no replica is known to be promotable: give the number of replicas that must acknowledge)',
        );
      }
      return url === undefined || problems.length > before
        ? undefined
        : { mode: 'standalone', url, minReplicasAck: (replicasAck as number | undefined) ?? 0 };
    }
    case 'REDIS_SENTINELS': {
      const sentinels = checkAddresses(
        'REDIS_SENTINELS',
        env.REDIS_SENTINELS as string,
        SENTINEL_DEFAULT_PORT,
        'redis-sentinel-0.redis:26379,redis-sentinel-1.redis:26379',
        problems,
      );
      if (sentinels === undefined || problems.length > before) return undefined;
      const sentinelPassword = env.REDIS_SENTINEL_PASSWORD === '' ? undefined : env.REDIS_SENTINEL_PASSWORD;
      return {
        mode: 'sentinel',
        sentinels,
        name: (env.REDIS_SENTINEL_NAME as string).trim(),
        password,
        sentinelPassword,
        tls,
        minReplicasAck: replicasAck ?? 'auto',
      };
    }
    case 'REDIS_CLUSTER_NODES': {
      const nodes = checkAddresses(
        'REDIS_CLUSTER_NODES',
        env.REDIS_CLUSTER_NODES as string,
        REDIS_DEFAULT_PORT,
        'redis-0.redis:6379,redis-1.redis:6379',
        problems,
      );
      return nodes === undefined || problems.length > before
        ? undefined
        : { mode: 'cluster', nodes, password, tls, minReplicasAck: replicasAck ?? 'auto' };
    }
  }
}
