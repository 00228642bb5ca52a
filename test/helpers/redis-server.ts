/**
 * A real `redis-server` for a test file (Debian's package; `.ci/run` installs it): started on a free
 * loopback port in a temporary directory with persistence off (`--save '' --appendonly no`), stopped
 * by PID; it can be killed and started again on the same port to see Redis fail and come back.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
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

/** A running redis-server. */
export interface TestRedis {
  readonly port: number;
  readonly url: string;
  /** Kills it (SIGKILL): clients see the connection drop. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: persistence is off). */
  start(): Promise<void>;
  /** Stops it for good and removes its directory. */
  stop(): Promise<void>;
}

/** Starts a redis-server on a free port of 127.0.0.1. */
export async function startRedis(): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'front-proxy-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
      stdio: 'ignore',
    });
    for (let i = 0; i < 100; i++) {
      if (await accepting(port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('redis-server did not start');
  };
  const kill = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
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
