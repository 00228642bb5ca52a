/**
 * Real `redis-server`s for a test file (Debian's package; `.ci/run` installs it): started on free
 * loopback ports in a temporary directory with persistence off (`--save '' --appendonly no`), stopped
 * by PID; a server can be killed and started again on the same port to see Redis fail and come back.
 * Besides one server: a Sentinel deployment (one primary, one or two replicas, three sentinels; a
 * replica's link may go through a TCP relay that holds it) and a cluster (three primaries with a
 * replica each), for the failover tests (docs/behaviour.md "Several instances").
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer, type Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './proxy-process.js';
import { type RecordingUpstream, startProxy, startRecordingUpstream, type TestProxy } from './recording-upstream.js';

/** True when a `redis-server` binary is on the PATH. */
export const HAVE_REDIS = spawnSync('redis-server', ['--version']).status === 0;

async function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1');
  });
}

/** Every redis-server child this process started and that has not exited. */
const children = new Set<ChildProcess>();
// A file stopped before its parts stopped their servers (a failed part, a guard's exit) leaves none
// running: the children are killed with the process.
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** A running redis-server. */
export interface TestRedis {
  readonly port: number;
  readonly url: string;
  /** Kills it (SIGKILL): clients see the connection drop. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: persistence is off), with `extra` arguments after the others (`--replicaof …`). */
  start(extra?: readonly string[]): Promise<void>;
  /** Stops (SIGSTOP) or continues (SIGCONT) the process: it keeps its connections but answers nothing meanwhile. */
  pause(paused: boolean): void;
  /** Stops it for good and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Starts a redis-server on a free port of 127.0.0.1 (or `port`), with `args` after the common ones
 * (`--sentinel` and a configuration file make it a sentinel).
 */
export async function startRedis(
  options: { port?: number; args?: readonly string[]; dir?: string; configFile?: string } = {},
): Promise<TestRedis> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'front-proxy-redis-'));
  const port = options.port ?? (await freePort());
  let child: ChildProcess | undefined;
  const start = async (extra: readonly string[] = []) => {
    const common = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
    child = spawn(
      'redis-server',
      [...(options.configFile === undefined ? [] : [options.configFile]), ...common, ...(options.args ?? []), ...extra],
      {
        stdio: 'ignore',
      },
    );
    const started = child;
    children.add(started);
    started.once('exit', () => children.delete(started));
    // A spawn that fails (no binary, no process slot) is met by the wait below, never thrown.
    started.on('error', () => children.delete(started));
    for (let i = 0; i < 100; i++) {
      if (await accepting(port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('redis-server did not start');
  };
  const kill = async () => {
    const running = child;
    child = undefined;
    // Never started, or exited already (on its own, or by a signal): no 'exit' event is to come.
    if (!running || running.pid === undefined || running.exitCode !== null || running.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill('SIGKILL');
    });
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    start,
    pause(paused: boolean) {
      child?.kill(paused ? 'SIGSTOP' : 'SIGCONT');
    },
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A real redis-server, one recording upstream and proxies in front of it sharing that Redis. */
export interface RedisFleet {
  readonly redis: TestRedis;
  readonly upstream: RecordingUpstream;
  readonly proxies: readonly TestProxy[];
  /** Closes the proxies, the upstream and Redis. */
  close(): Promise<void>;
}

/**
 * Starts a redis-server, a recording upstream (given to `prepare` before any proxy starts) and `count`
 * proxies with `REDIS_URL` and `env`.
 */
export async function startRedisFleet(
  count: number,
  env: Record<string, string> = {},
  prepare: (upstream: RecordingUpstream) => void = () => {},
): Promise<RedisFleet> {
  const redis = await startRedis();
  const upstream = await startRecordingUpstream();
  prepare(upstream);
  const proxies: TestProxy[] = [];
  for (let i = 0; i < count; i++) proxies.push(await startProxy(upstream.url, { ...env, REDIS_URL: redis.url }));
  return {
    redis,
    upstream,
    proxies,
    async close() {
      for (const proxy of proxies) await proxy.close();
      await upstream.close();
      await redis.stop();
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The arguments of the data servers of a Sentinel deployment or a cluster: `DEBUG` allowed from
 * loopback (a test pauses a server with `DEBUG SLEEP`), and, as docs/operations.md asks of a
 * deployment, a primary refuses writes while fewer than `minReplicasToWrite` replicas acknowledged
 * it within the last 10 s (`min-replicas-to-write`, `min-replicas-max-lag`; 0 turns it off).
 */
export function dataServerArgs(minReplicasToWrite: number): string[] {
  return [
    '--enable-debug-command',
    'local',
    ...(minReplicasToWrite > 0 ? ['--min-replicas-to-write', String(minReplicasToWrite), '--min-replicas-max-lag', '10'] : []),
  ];
}

/**
 * `DEBUG SLEEP <seconds>` on the server at `port`: it answers nothing meanwhile (its connections stay
 * open, as in a long pause of its process); resolves when it answers again.
 */
export function debugSleep(port: number, seconds: number): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      'redis-cli',
      ['-h', '127.0.0.1', '-p', String(port), 'DEBUG', 'SLEEP', String(seconds)],
      { timeout: seconds * 1000 + 10_000 },
      (error) => (error ? reject(error) : resolve()),
    );
  });
}

/** Runs `redis-cli -p <port> args…` (without blocking the event loop: proxies run in this process). */
export function redisCli(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 5_000 }, (error, stdout) =>
      error ? reject(error) : resolve(stdout.trim()),
    );
  });
}

/** Polls `check` every 50 ms until it resolves true, for at most `limitMs`; throws `what` after. */
async function until(limitMs: number, what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} not within ${limitMs} ms`);
    await sleep(50);
  }
}

/** The name the sentinels monitor the primary under. */
export const SENTINEL_NAME = 'front-proxy-primary';

/** A TCP relay on a free loopback port: a held or re-pointed link (a replica's, a managed endpoint's). */
export interface TcpRelay {
  readonly port: number;
  /** Stops moving bytes both ways (`true`), the connections kept open, or moves them again (`false`). */
  hold(held: boolean): void;
  /** Sends new connections to `port`; the open ones stay where they are. */
  retarget(port: number): void;
  /** Closes every relayed connection. */
  cut(): void;
  close(): Promise<void>;
}

/** Starts a {@link TcpRelay} to `targetPort` on 127.0.0.1. */
export async function startRelay(targetPort: number): Promise<TcpRelay> {
  let target = targetPort;
  let held = false;
  const pairs = new Set<[Socket, Socket]>();
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
    if (held) for (const socket of pair) socket.pause();
    upstream.connect(target, '127.0.0.1');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    for (const [client, upstream] of [...pairs]) {
      client.destroy();
      upstream.destroy();
    }
  };
  return {
    port: (server.address() as AddressInfo).port,
    hold(value: boolean) {
      held = value;
      for (const pair of pairs)
        for (const socket of pair)
          if (value) socket.pause();
          else socket.resume();
    },
    retarget(port: number) {
      target = port;
    },
    cut,
    close() {
      cut();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The data servers' settings of {@link startRedisSentinel} and {@link startRedisCluster}. */
export interface RedisDeploymentOptions {
  /** Replicas of the (each) primary: 1 by default (Sentinel only: 1 or 2). */
  readonly replicas?: number;
  /** `min-replicas-to-write` of the data servers ({@link dataServerArgs}); 1 by default, 0 turns it off. */
  readonly minReplicasToWrite?: number;
  /** Sentinel only: each replica's `replica-priority` (default 100; lower is promoted first). */
  readonly replicaPriorities?: readonly number[];
  /** Sentinel only: the replicas whose link to the primary goes through a {@link TcpRelay} (by index). */
  readonly relayed?: readonly number[];
  /**
   * Sentinel only: `failover-timeout` (default 5 s); longer keeps the sentinels from pointing a
   * relayed replica at the primary directly (`+fix-slave-config` comes after it).
   */
  readonly failoverTimeoutMs?: number;
  /** Sentinel only: `down-after-milliseconds` (default 1 s). */
  readonly downAfterMs?: number;
  /** More arguments of every data server (`--repl-diskless-sync-delay 0`). */
  readonly serverArgs?: readonly string[];
}

/** A Sentinel deployment: one primary, one replica (or two), three sentinels (quorum 2). */
export interface TestSentinel {
  /** The first primary and its replica, as started (the replica becomes primary after a failover). */
  readonly primary: TestRedis;
  readonly replica: TestRedis;
  /** Every replica as started (`replica` first). */
  readonly replicas: readonly TestRedis[];
  /** The relays of the replicas' links (by replica index; see {@link RedisDeploymentOptions.relayed}). */
  readonly relays: ReadonlyMap<number, TcpRelay>;
  readonly sentinels: readonly TestRedis[];
  /** `REDIS_SENTINELS` and `REDIS_SENTINEL_NAME` for a proxy. */
  readonly env: Readonly<Record<string, string>>;
  /** The port of the primary the sentinels name now. */
  primaryPort(): Promise<number>;
  /** Stops every server and removes their directories. */
  stop(): Promise<void>;
}

/**
 * Starts a Sentinel deployment on free ports. The sentinels find the primary down after 1 s
 * (`down-after-milliseconds`), so a killed primary is replaced within a few seconds. The data
 * servers run with {@link dataServerArgs}.
 */
export async function startRedisSentinel(options: RedisDeploymentOptions = {}): Promise<TestSentinel> {
  const started: TestRedis[] = [];
  const relays = new Map<number, TcpRelay>();
  const args = [...dataServerArgs(options.minReplicasToWrite ?? 1), ...(options.serverArgs ?? [])];
  try {
    const primary = await startRedis({ args });
    started.push(primary);
    const replicas: TestRedis[] = [];
    for (let i = 0; i < (options.replicas ?? 1); i++) {
      let port = primary.port;
      if (options.relayed?.includes(i)) {
        const relay = await startRelay(primary.port);
        relays.set(i, relay);
        port = relay.port;
      }
      const priority = options.replicaPriorities?.[i];
      const replica = await startRedis({
        args: [
          ...args,
          ...(priority === undefined ? [] : ['--replica-priority', String(priority)]),
          '--replicaof',
          '127.0.0.1',
          String(port),
        ],
      });
      started.push(replica);
      replicas.push(replica);
      await until(10_000, 'replica in sync', async () =>
        (await redisCli(replica.port, 'INFO', 'replication')).includes('master_link_status:up'),
      );
    }
    const replica = replicas[0] as TestRedis;
    const sentinels: TestRedis[] = [];
    for (let i = 0; i < 3; i++) {
      const dir = mkdtempSync(join(tmpdir(), 'front-proxy-sentinel-'));
      const configFile = join(dir, 'sentinel.conf');
      writeFileSync(
        configFile,
        [
          `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${primary.port} 2`,
          `sentinel down-after-milliseconds ${SENTINEL_NAME} ${options.downAfterMs ?? 1000}`,
          `sentinel failover-timeout ${SENTINEL_NAME} ${options.failoverTimeoutMs ?? 5000}`,
          `sentinel parallel-syncs ${SENTINEL_NAME} 1`,
          '',
        ].join('\n'),
      );
      const sentinel = await startRedis({ dir, configFile, args: ['--sentinel'] });
      sentinels.push(sentinel);
      started.push(sentinel);
    }
    // Every sentinel has found the replica and the other sentinels.
    await until(15_000, 'sentinels ready', async () => {
      for (const sentinel of sentinels) {
        const info = await redisCli(sentinel.port, 'SENTINEL', 'MASTER', SENTINEL_NAME);
        const fields = info.split('\n');
        const value = (name: string) => Number(fields[fields.indexOf(name) + 1]);
        if (value('num-slaves') < replicas.length || value('num-other-sentinels') < 2) return false;
      }
      return true;
    });
    return {
      primary,
      replica,
      replicas,
      relays,
      sentinels,
      env: { REDIS_SENTINELS: sentinels.map((s) => `127.0.0.1:${s.port}`).join(','), REDIS_SENTINEL_NAME: SENTINEL_NAME },
      async primaryPort() {
        const reply = await redisCli(sentinels[0]!.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_NAME);
        return Number(reply.split('\n')[1]);
      },
      async stop() {
        for (const server of started) await server.stop();
        for (const relay of relays.values()) await relay.close();
      },
    };
  } catch (error) {
    for (const server of started) await server.stop();
    for (const relay of relays.values()) await relay.close();
    throw error;
  }
}

/** A cluster of three primaries with a replica each. */
export interface TestCluster {
  readonly nodes: readonly TestRedis[];
  /** `REDIS_CLUSTER_NODES` for a proxy. */
  readonly env: Readonly<Record<string, string>>;
  /** The node that serves `key`'s slot now (as the cluster answers `CLUSTER KEYSLOT` and `CLUSTER SLOTS`). */
  primaryOf(key: string): Promise<TestRedis>;
  /** Stops every node and removes their directories. */
  stop(): Promise<void>;
}

/**
 * Starts a cluster of 6 nodes on free ports (`--cluster-enabled yes`, the bus on a free port of its
 * own, `cluster-node-timeout` 1 s so that a killed primary's replica takes over within seconds), then
 * `redis-cli --cluster create … --cluster-replicas 1`, and waits until every node reads `cluster_state:ok`.
 */
export async function startRedisCluster(options: Pick<RedisDeploymentOptions, 'minReplicasToWrite'> = {}): Promise<TestCluster> {
  const nodes: TestRedis[] = [];
  const args = dataServerArgs(options.minReplicasToWrite ?? 1);
  const root = mkdtempSync(join(tmpdir(), 'front-proxy-cluster-'));
  try {
    for (let i = 0; i < 6; i++) {
      const dir = join(root, String(i));
      mkdirSync(dir);
      const busPort = await freePort();
      nodes.push(
        await startRedis({
          dir,
          args: [
            ...args,
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            '1000',
            '--cluster-port',
            String(busPort),
          ],
        }),
      );
    }
    await redisCli(
      nodes[0]!.port,
      '--cluster',
      'create',
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      '--cluster-replicas',
      '1',
      '--cluster-yes',
    );
    await until(20_000, 'cluster ready', async () => {
      let online = 0;
      for (const node of nodes) {
        if (!(await redisCli(node.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return false;
        online += (await redisCli(node.port, 'INFO', 'replication'))
          .split('\n')
          .filter((line) => /^slave\d+:.*state=online/.test(line)).length;
      }
      // Every primary's replica is in sync, so a WAIT 1 is acknowledged from the first write.
      return online === 3;
    });
    // CLUSTER SLOTS names a replica once its replication offset is above 0: a write to each shard.
    for (let i = 0; i < 30; i++) await redisCli(nodes[0]!.port, '-c', 'SET', `front-proxy-test:warm:${i}`, '1');
    await until(20_000, 'replicas listed by CLUSTER SLOTS', async () => {
      const slots = JSON.parse(await redisCli(nodes[0]!.port, '--json', 'CLUSTER', 'SLOTS')) as unknown[][];
      return slots.length === 3 && slots.every((range) => range.length >= 4);
    });
    return {
      nodes,
      env: { REDIS_CLUSTER_NODES: nodes.map((n) => `127.0.0.1:${n.port}`).join(',') },
      async primaryOf(key: string) {
        for (const node of nodes) {
          const slot = Number(await redisCli(node.port, 'CLUSTER', 'KEYSLOT', key).catch(() => 'x'));
          if (!Number.isInteger(slot)) continue;
          const slots = (await redisCli(node.port, '--json', 'CLUSTER', 'SLOTS').catch(() => '')) || '[]';
          for (const [from, to, [, port]] of JSON.parse(slots) as [number, number, [string, number]][]) {
            if (slot >= from && slot <= to) {
              const owner = nodes.find((n) => n.port === port);
              if (owner) return owner;
            }
          }
        }
        throw new Error(`no node serves ${key}`);
      },
      async stop() {
        for (const node of nodes) await node.stop();
        rmSync(root, { recursive: true, force: true });
      },
    };
  } catch (error) {
    for (const node of nodes) await node.stop();
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
}
