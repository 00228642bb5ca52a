/**
 * The subscriptions of the shared state (docs/behaviour.md "Several instances") over a real
 * redis-server and a real sentinel, through a relay that cuts a connection as its `SUBSCRIBE`
 * passes: the connection is lost after it was ready and before the subscription was confirmed, as
 * when a failover or a switch of primary closes it again at once. The store's event subscription
 * and the sentinels' `+switch-master` subscription are made again on the next connection (the store
 * hears the events published after it); nothing is left unhandled.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type AddressInfo, createServer, type Server, Socket } from 'node:net';
import type { RedisTopology } from '../src/config.js';
import { EVENT_CHANNEL, RedisStore } from '../src/state/redis.js';
import { SentinelWatch } from '../src/state/replicas.js';
import type { StateEvent } from '../src/state/store.js';
import { HAVE_REDIS, redisCli, startRedis, type TestRedis } from './helpers/redis-server.js';

/**
 * A TCP relay to `targetPort` that destroys a connection, without passing its bytes on, when they
 * hold `SUBSCRIBE` while {@link CuttingRelay.cutsLeft} is above 0 (each such cut counts one down).
 */
interface CuttingRelay {
  readonly port: number;
  cutsLeft: number;
  /** Connections destroyed as their `SUBSCRIBE` passed. */
  cuts: number;
  /** `SUBSCRIBE`s passed on to the server. */
  passed: number;
  /** Closes the connections that passed a `SUBSCRIBE` on (their clients reconnect). */
  cutSubscribed(): void;
  close(): Promise<void>;
}

async function startCuttingRelay(targetPort: number): Promise<CuttingRelay> {
  const pairs = new Map<Socket, { upstream: Socket; subscribed: boolean }>();
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    const pair = { upstream, subscribed: false };
    pairs.set(client, pair);
    const end = () => {
      pairs.delete(client);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.on('data', (chunk: Buffer) => {
      if (/subscribe/i.test(chunk.toString('latin1'))) {
        if (relay.cutsLeft > 0) {
          relay.cutsLeft--;
          relay.cuts++;
          end();
          return;
        }
        relay.passed++;
        pair.subscribed = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    upstream.connect(targetPort, '127.0.0.1');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const relay: CuttingRelay = {
    port: (server.address() as AddressInfo).port,
    cutsLeft: 0,
    cuts: 0,
    passed: 0,
    cutSubscribed: () => {
      for (const [client, { upstream, subscribed }] of pairs) {
        if (!subscribed) continue;
        client.destroy();
        upstream.destroy();
      }
    },
    close: () => {
      for (const [client, { upstream }] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return relay;
}

/** Clients of the server at `port` subscribed to a channel now (`CLIENT LIST`, `sub=1`). */
async function subscribedClients(port: number): Promise<number> {
  return (await redisCli(port, 'CLIENT', 'LIST')).split('\n').filter((line) => / sub=[1-9]/.test(line)).length;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Publishes a purge of `generation` on the server every 100 ms until `heard` says it came, for at most `limitMs`. */
async function heardWithin(redis: TestRedis, generation: number, heard: () => boolean, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    await redisCli(redis.port, 'PUBLISH', EVENT_CHANNEL, JSON.stringify({ type: 'purge', generation }));
    await sleep(100);
    if (heard()) return true;
  }
  return false;
}

describe(
  'the event subscription survives a connection lost before its SUBSCRIBE was answered',
  { skip: HAVE_REDIS ? false : 'redis-server is not installed (.ci/run installs it)' },
  () => {
    let redis: TestRedis;
    let relay: CuttingRelay;
    let store: RedisStore;
    const events: StateEvent[] = [];
    let resyncs = 0;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);

    before(async () => {
      process.on('unhandledRejection', onUnhandled);
      redis = await startRedis();
      relay = await startCuttingRelay(redis.port);
      const topology: RedisTopology = { mode: 'standalone', url: `redis://127.0.0.1:${relay.port}`, minReplicasAck: 0 };
      store = new RedisStore(topology);
      store.subscribe({ event: (event) => events.push(event), resync: () => resyncs++ });
      assert.equal(await store.ready(5_000), true, 'the store did not connect');
    });
    after(async () => {
      process.off('unhandledRejection', onUnhandled);
      await store?.close();
      await relay?.close();
      await redis?.stop();
    });

    const heard = (generation: number) => () => events.some((e) => e.type === 'purge' && e.generation === generation);

    test('subscribed at the start: an event published is heard', async () => {
      assert.equal(await heardWithin(redis, 1, heard(1), 5_000), true);
    });

    test('cut as its SUBSCRIBE passes, twice: subscribed again on the next connection, no rejection left unhandled', async () => {
      relay.cutsLeft = 2;
      relay.cutSubscribed();
      assert.equal(await heardWithin(redis, 2, heard(2), 8_000), true, `no event heard after ${relay.cuts} cuts`);
      assert.equal(relay.cuts, 2, 'the relay did not cut both SUBSCRIBEs');
      assert.equal(await subscribedClients(redis.port), 1);
      // Whatever was published while it was not subscribed is lost: the listeners were told.
      assert.ok(resyncs >= 1, 'no resync after the subscription came back');
      assert.deepEqual(
        unhandled.map((reason) => String(reason)),
        [],
      );
    });
  },
);

describe(
  "the sentinels' +switch-master subscription survives a connection lost before its SUBSCRIBE was answered",
  { skip: HAVE_REDIS ? false : 'redis-server is not installed (.ci/run installs it)' },
  () => {
    let primary: TestRedis;
    let sentinel: TestRedis;
    let relay: CuttingRelay;
    let watch: SentinelWatch;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);

    before(async () => {
      process.on('unhandledRejection', onUnhandled);
      primary = await startRedis();
      const dir = mkdtempSync(join(tmpdir(), 'front-proxy-sentinel-'));
      const configFile = join(dir, 'sentinel.conf');
      writeFileSync(configFile, `sentinel monitor subscription-test 127.0.0.1 ${primary.port} 1\n`);
      sentinel = await startRedis({ dir, configFile, args: ['--sentinel'] });
      relay = await startCuttingRelay(sentinel.port);
      watch = new SentinelWatch(
        { sentinels: [{ host: '127.0.0.1', port: relay.port }], name: 'subscription-test', sentinelPassword: undefined, tls: false },
        () => {},
      );
      await watch.ready();
    });
    after(async () => {
      process.off('unhandledRejection', onUnhandled);
      watch?.close();
      await relay?.close();
      await sentinel?.stop();
      await primary?.stop();
    });

    test('subscribed again after two cuts, no rejection left unhandled, the sentinels still read', async () => {
      const subscribed = async (limitMs: number) => {
        const deadline = Date.now() + limitMs;
        while (Date.now() < deadline) {
          if ((await subscribedClients(sentinel.port)) === 1) return true;
          await sleep(100);
        }
        return false;
      };
      assert.equal(await subscribed(5_000), true, 'not subscribed at the start');
      const passedBefore = relay.passed;
      relay.cutsLeft = 2;
      relay.cutSubscribed();
      assert.equal(await subscribed(8_000), true, `not subscribed again after ${relay.cuts} cuts`);
      assert.equal(relay.cuts, 2);
      assert.equal(relay.passed, passedBefore + 1, 'one SUBSCRIBE passed after the cuts');
      assert.ok(watch.view() !== undefined, 'the sentinels are no longer read');
      assert.deepEqual(
        unhandled.map((reason) => String(reason)),
        [],
      );
    });
  },
);
