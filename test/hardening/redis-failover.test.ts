/**
 * Hardening row 19, Redis failover (docs/behaviour.md "Several instances", "Money moves: exactly once"):
 * two proxy instances in front of one recording upstream, on a real Sentinel deployment (one primary,
 * one replica, three sentinels) and on a real cluster (three primaries with a replica each). In each:
 *
 * 0. every operation of the store (counters, `SET NX`, compare-and-delete, bytes) on keys spread over
 *    the cluster's slots;
 * 1. the replica is stopped (SIGSTOP): a deposit on an instance with `REDIS_MIN_REPLICAS_ACK=1`
 *    answers 503 `idempotency_unavailable` without reaching the upstream (no replica acknowledged its
 *    marker), and once the replica runs again the same deposit goes through (its key was left free);
 * 2. 200 deposits, each submitted to both instances at once with one `Idempotency-Key` and submitted
 *    again until one submission answers 200, while the primary (on the cluster: the one serving the
 *    purge generation) is killed with SIGKILL after the first 60 have started; meanwhile every
 *    250 ms a probe of 20 fresh deposits, until all 20 answer 200 at once;
 * 3. after the failover: a purge and a logout on one instance seen by the other;
 * 4. every deposit submitted again: replayed, never sent again;
 * 5. the events table (below): planned switchovers (with and without the runbook of
 *    docs/operations.md), paused and killed replicas, each on a deployment of its own, with a repeat
 *    pass once every lease ended;
 * 6. the exactly-once rows of the topologies operators run (below): a crashed primary that is not
 *    started again, two replicas of which the first to promote lags, a managed endpoint's switchover
 *    that keeps its connections and its crash, two deposits without a key 6 s apart, a 15 s queue
 *    wait, the only replica down while an instance (a process of its own) is stopped by SIGTERM and
 *    started again, a second master on the same sentinels switched over, a cluster slot migrating.
 *
 * The data servers run with `min-replicas-to-write 1` (docs/operations.md "Redis topologies"); a
 * killed primary is started again as a replica once the other is promoted.
 *
 * Pass: every `Idempotency-Key` reaches the upstream at most once (0 doubles) and each of the 200
 * exactly once; the probe's 20 deposits answer 200 within 15 s of the kill; purge and eviction seen
 * by the other instance within 1 s; every answer 200, 409 or 503.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import { type RedisTopology, redisTopology } from '../../src/config.js';
import calculateSlot from 'cluster-key-slot';
import { GENERATION_KEY } from '../../src/state/fleet.js';
import { recordKey } from '../../src/state/idempotency.js';
import { ACK_LANES, RedisStore } from '../../src/state/redis.js';
import { guardFile } from '../helpers/file-guard.js';
import { proxyProcess } from '../helpers/fleet-processes.js';
import {
  fakeJwt,
  type RecordingUpstream,
  send,
  startProxy,
  startRecordingUpstream,
  type TestProxy,
} from '../helpers/recording-upstream.js';
import {
  debugSleep,
  HAVE_REDIS,
  redisCli,
  SENTINEL_NAME,
  startRedis,
  startRedisCluster,
  startRedisSentinel,
  startRelay,
  type TestCluster,
  type TestRedis,
  type TestSentinel,
} from '../helpers/redis-server.js';
import { Figures, FULL } from './helpers/figures.js';

const figures = new Figures('redis-failover', 19, 'Redis failover');
guardFile('row 19: Redis failover', 600_000);
/** The runbook's sidecar (docs/operations.md "Redis topologies"). */
const FOLLOW_SWITCH = fileURLToPath(new URL('../../deploy/redis/follow-switch.sh', import.meta.url));
const DEPOSITS = 200;
const KILL_AFTER = 60;
const CONCURRENT = 10;
const PROBE = 20;
const RESUME_LIMIT_MS = 15_000;
const PURGE_TOKEN = 'operator-secret-of-the-failover-row';
const DEPOSIT_PATH = '/wallet/add-credit';
const PROFILE_PATH = '/auth/user-profile';
/** Waits `ms` milliseconds (none when `ms` is not above 0: a deadline already passed). */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

async function within(limitMs: number, pauseMs: number, check: () => Promise<boolean>): Promise<number | undefined> {
  const started = Date.now();
  while (!(await check().catch(() => false))) {
    if (Date.now() - started > limitMs) return undefined;
    await sleep(pauseMs);
  }
  return Date.now() - started;
}

/** Upstream deposit calls by `Idempotency-Key`. */
function callsByKey(upstream: RecordingUpstream): Map<string, number> {
  const calls = new Map<string, number>();
  for (const r of upstream.requests) {
    if (r.method !== 'POST' || r.path !== DEPOSIT_PATH) continue;
    const key = String(r.headers['idempotency-key']);
    calls.set(key, (calls.get(key) ?? 0) + 1);
  }
  return calls;
}

/** The Redis deployment of one run: its proxy variables, the server to stop and the primary to kill. */
interface Deployment {
  readonly env: Readonly<Record<string, string>>;
  /** A replica of the primary that serves a deposit's marker (on the cluster: every replica). */
  readonly replicas: readonly TestRedis[];
  /** The primary to kill. */
  victim(): Promise<TestRedis>;
  /** The primaries as started. */
  primaries(): Promise<TestRedis[]>;
  /** True once the deployment names another primary than the victim. */
  promoted(): Promise<boolean>;
  /** Starts the killed victim again, as a replica of the promoted one (as its pod would come back). */
  restartVictim(): Promise<void>;
  /** What the deployment says of itself (noted when the moves do not resume). */
  describe(): Promise<string>;
  stop(): Promise<void>;
}

async function sentinelDeployment(): Promise<Deployment> {
  const sentinel = await startRedisSentinel();
  return {
    env: sentinel.env,
    replicas: [sentinel.replica],
    victim: async () => sentinel.primary,
    primaries: async () => [sentinel.primary],
    promoted: async () => (await sentinel.primaryPort()) === sentinel.replica.port,
    restartVictim: () => sentinel.primary.start(['--replicaof', '127.0.0.1', String(sentinel.replica.port)]),
    describe: async () => {
      const views = await Promise.all(
        sentinel.sentinels.map((s) =>
          redisCli(s.port, 'SENTINEL', 'MASTER', SENTINEL_NAME).then((text) => {
            const fields = text.split('\n');
            const field = (name: string) => fields[fields.indexOf(name) + 1];
            return `${field('port')} ${field('flags')} failover ${field('failover-state')}`;
          }, String),
        ),
      );
      const role = await redisCli(sentinel.replica.port, 'ROLE').catch(String);
      return `sentinels: ${views.join('; ')}; replica ${sentinel.replica.port} role ${role.split('\n')[0]}`;
    },
    stop: () => sentinel.stop(),
  };
}

async function clusterDeployment(): Promise<Deployment> {
  const cluster = await startRedisCluster();
  const victim = await cluster.primaryOf(GENERATION_KEY);
  const replicas: TestRedis[] = [];
  for (const node of cluster.nodes) if ((await redisCli(node.port, 'ROLE')).startsWith('slave')) replicas.push(node);
  return {
    env: cluster.env,
    // The three replicas: whichever shard holds the marker, its replica stops answering.
    replicas,
    victim: async () => victim,
    primaries: async () => cluster.nodes.filter((n) => !replicas.includes(n)),
    promoted: async () => (await cluster.primaryOf(GENERATION_KEY)) !== victim,
    // Its nodes.conf is kept: it joins the cluster again as the replica of the promoted node.
    restartVictim: () => victim.start(),
    describe: async () => {
      const views = await Promise.all(
        replicas.map((n) => redisCli(n.port, 'ROLE').then((role) => `${n.port} ${role.split('\n')[0]}`, String)),
      );
      return `killed ${victim.port}; former replicas: ${views.join(', ')}`;
    },
    stop: () => cluster.stop(),
  };
}

async function run(topology: 'Sentinel' | 'cluster', deploy: () => Promise<Deployment>): Promise<void> {
  const upstream = await startRecordingUpstream();
  upstream.on('GET', PROFILE_PATH, { json: { user: { id: 7 }, userInfo: {} } });
  upstream.on('POST', DEPOSIT_PATH, { json: { transaction_id: 'ch_failover', status: 'pending' }, delayMs: 20 });
  let version = 1;
  upstream.on('GET', '/casino-games/list/', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data: [{ slug: `v${version}` }] }));
  });
  const deployment = await deploy();
  const proxies: TestProxy[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      proxies.push(await startProxy(upstream.url, { ...deployment.env, CACHE_PURGE_TOKEN: PURGE_TOKEN, UPSTREAM_TIMEOUT_MS: '3000' }));
    }
    const [a, b] = proxies as [TestProxy, TestProxy];
    const token = fakeJwt({ sub: '7', n: Math.random() });
    const tag = `${topology}-${Math.random().toString(36).slice(2)}`;
    const submit = (proxy: TestProxy, key: string, amount: number) =>
      send(proxy.url, 'POST', '/api/payments/deposit', {
        json: { userId: 7, creditAmount: amount, paymentMethod: 'pix', currency: 'BRL' },
        token,
        headers: { 'idempotency-key': key },
      });
    const count = (answer: { status: number; json: unknown }) => {
      const { status } = answer;
      figures.inputs++;
      figures.status(status === 503 ? `503 ${(answer.json as { error?: string } | undefined)?.error}` : status);
      figures.check(status === 200 || status === 409 || status === 503, `${topology}: a deposit answered ${status}`);
    };

    await figures.run(`${topology}: every store operation`, async () => {
      // Keys spread over the cluster's slots; each operation touches one key (no hash tag needed).
      const problems: string[] = [];
      const store = new RedisStore(redisTopology(deployment.env, problems) as RedisTopology);
      try {
        figures.check(problems.length === 0 && (await store.ready(5_000)), `${topology}: the store did not connect ${problems.join('; ')}`);
        for (const name of ['a', 'b', 'c', 'd', 'e', 'f']) {
          const key = `front-proxy:test:${tag}:${name}`;
          const hits = [
            await store.countHit(`${key}:rate`, 60_000),
            await store.countHit(`${key}:rate`, 60_000),
            await store.hits(`${key}:rate`),
          ];
          figures.check(
            hits.map((h) => h.count).join() === '1,2,2' && hits.every((h) => h.ttlMs > 0),
            `${topology}: countHit/hits ${JSON.stringify(hits)}`,
          );
          figures.check(
            (await store.setIfAbsent(key, 'mine', 10_000, { replicated: true })) === null,
            `${topology}: setIfAbsent on a free key`,
          );
          figures.check((await store.setIfAbsent(key, 'theirs', 10_000)) === 'mine', `${topology}: setIfAbsent on a taken key`);
          await store.deleteIfEquals(key, 'theirs');
          figures.check((await store.get(key)) === 'mine', `${topology}: deleteIfEquals removed another's value`);
          await store.deleteIfEquals(key, 'mine');
          figures.check((await store.get(key)) === null, `${topology}: deleteIfEquals kept its own value`);
          await store.set(`${key}:bytes`, Buffer.from([0, 255, 10]), 10_000, { replicated: true });
          figures.check((await store.getBytes(`${key}:bytes`))?.equals(Buffer.from([0, 255, 10])) === true, `${topology}: bytes read back`);
          figures.check((await store.increment(`${key}:n`)) === 1, `${topology}: increment`);
        }
      } finally {
        await store.close();
      }
    });

    await figures.run(`${topology}: no replica acknowledges`, async () => {
      // Under `auto` a paused replica stops moves only until the deployment sees it down (then it is
      // no longer promotable); an operator floor of 1 refuses for as long as none acknowledges.
      const floor = await startProxy(upstream.url, { ...deployment.env, REDIS_MIN_REPLICAS_ACK: '1', UPSTREAM_TIMEOUT_MS: '3000' });
      for (const replica of deployment.replicas) replica.pause(true);
      figures.faults++;
      const key = `${tag}-unacknowledged`;
      let refused;
      try {
        refused = await submit(floor, key, 1);
      } finally {
        for (const replica of deployment.replicas) replica.pause(false);
        await floor.close();
      }
      count(refused);
      figures.check(
        refused.status === 503 && (refused.json as { error?: string }).error === 'idempotency_unavailable',
        `${topology}: replica stopped: deposit ${refused.status} ${refused.text.slice(0, 80)}`,
      );
      figures.check(!callsByKey(upstream).has(key), `${topology}: an unacknowledged deposit reached the upstream`);
      const waits = await Promise.all(
        (await deployment.primaries()).map(async (p) => /cmdstat_wait:calls=[1-9]/.test(await redisCli(p.port, 'INFO', 'commandstats'))),
      );
      figures.check(waits.some(Boolean), `${topology}: no primary was asked to WAIT for its replica`);
      const ms = await within(5_000, 100, async () => (await submit(b, key, 1)).status === 200);
      figures.check(ms !== undefined, `${topology}: the key was not left free after the replica came back`);
    });

    const settled = new Array<boolean>(DEPOSITS).fill(false);
    let killedAt = 0;
    let resumeMs: number | undefined;
    let probes = 0;
    await figures.run(`${topology}: deposits while the primary is killed`, async () => {
      const victim = await deployment.victim();
      let started = 0;
      let killing: Promise<void> | undefined;
      let restarting: Promise<void> | undefined;
      const deposit = async (i: number) => {
        const key = `${tag}-${i}`;
        const deadline = Date.now() + 30_000;
        for (let round = 0; !settled[i] && Date.now() < deadline; round++) {
          // Both instances at once, as a double click landing on two pods; then again until one answers 200.
          const answers = await Promise.all((round % 2 === 0 ? [a, b] : [b, a]).map((p) => submit(p, key, 1_000 + i)));
          for (const r of answers) count(r);
          if (answers.some((r) => r.status === 200)) settled[i] = true;
          else await sleep(150);
        }
      };
      const worker = async () => {
        while (started < DEPOSITS) {
          const i = started++;
          if (i === KILL_AFTER) {
            killing = victim.kill().then(() => {
              killedAt = Date.now();
              figures.faults++;
            });
            // The promoted replica has no replica of its own until the victim comes back: money moves
            // wait for it (REDIS_MIN_REPLICAS_ACK=1), as with a pod restarted by its controller.
            restarting = killing.then(async () => {
              if ((await within(2 * RESUME_LIMIT_MS, 100, () => deployment.promoted())) !== undefined) await deployment.restartVictim();
            });
          }
          await deposit(i);
        }
      };
      const prober = async () => {
        while (killing === undefined) await sleep(20);
        await killing;
        while (resumeMs === undefined && Date.now() - killedAt < 2 * RESUME_LIMIT_MS) {
          const round = probes++;
          const answers = await Promise.all(
            Array.from({ length: PROBE }, (_, j) => submit(j % 2 === 0 ? a : b, `${tag}-probe-${round}-${j}`, 50_000 + j)),
          );
          for (const r of answers) count(r);
          if (answers.every((r) => r.status === 200)) resumeMs = Date.now() - killedAt;
          else await sleep(250);
        }
      };
      await Promise.all([...Array.from({ length: CONCURRENT }, worker), prober()]);
      await restarting;
      figures.check(settled.every(Boolean), `${topology}: ${settled.filter((s) => !s).length} deposits never answered 200 within 30 s`);
      figures.check(
        resumeMs !== undefined && resumeMs <= RESUME_LIMIT_MS,
        `${topology}: deposits answered again ${resumeMs ?? 'never'} ms after the kill (limit ${RESUME_LIMIT_MS} ms)`,
      );
      figures.check(await deployment.promoted(), `${topology}: no replica was promoted`);
      if (resumeMs === undefined) figures.note(`${topology} after the kill: ${await deployment.describe()}`);
    });

    await figures.run(`${topology}: purge after the failover`, async () => {
      await send(b.url, 'GET', '/api/games/list?page=19');
      version++;
      const purge = await send(a.url, 'POST', '/api/cache/purge', { headers: { authorization: `Bearer ${PURGE_TOKEN}` } });
      figures.inputs++;
      figures.status(purge.status);
      figures.check(purge.status === 200, `${topology}: purge after the failover answered ${purge.status}`);
      const ms = await within(1_000, 20, async () =>
        new RegExp(`"v${version}"`).test((await send(b.url, 'GET', '/api/games/list?page=19')).text),
      );
      figures.check(ms !== undefined, `${topology}: the other instance still served the purged catalogue 1 s after the purge`);
      figures.note(`${topology}: purge seen by the other instance ${ms ?? '—'} ms after it`);
    });

    await figures.run(`${topology}: logout after the failover`, async () => {
      const session = fakeJwt({ sub: '7', n: Math.random() });
      await send(b.url, 'GET', '/api/auth/profile', { token: session });
      const reads = () => upstream.requests.filter((r) => r.path === PROFILE_PATH).length;
      const before = reads();
      await send(b.url, 'GET', '/api/auth/profile', { token: session });
      figures.check(reads() === before, `${topology}: the profile was not cached on the other instance`);
      const out = await send(a.url, 'POST', '/api/auth/logout', { token: session });
      figures.inputs++;
      figures.status(out.status);
      const ms = await within(1_000, 20, async () => {
        const seen = reads();
        await send(b.url, 'GET', '/api/auth/profile', { token: session });
        return reads() > seen;
      });
      figures.check(ms !== undefined, `${topology}: the other instance still answered the cached profile 1 s after the logout`);
      figures.note(`${topology}: logout eviction seen by the other instance ${ms ?? '—'} ms after it`);
    });

    await figures.run(`${topology}: every deposit submitted again`, async () => {
      let replayed = 0;
      for (let i = 0; i < DEPOSITS; i += CONCURRENT) {
        await Promise.all(
          Array.from({ length: Math.min(CONCURRENT, DEPOSITS - i) }, async (_, j) => {
            // A marker whose answer is still being stored after the failover answers 409 meanwhile.
            const ms = await within(10_000, 250, async () => {
              const r = await submit((i + j) % 2 === 0 ? b : a, `${tag}-${i + j}`, 1_000 + i + j);
              count(r);
              return r.status === 200 && r.headers.get('idempotent-replayed') === 'true';
            });
            if (ms !== undefined) replayed++;
          }),
        );
      }
      figures.check(replayed === DEPOSITS, `${topology}: ${DEPOSITS - replayed} deposits were not replayed`);
    });

    const calls = callsByKey(upstream);
    const doubles = [...calls.values()].filter((n) => n > 1).length;
    const once = Array.from({ length: DEPOSITS }, (_, i) => calls.get(`${tag}-${i}`) ?? 0).filter((n) => n === 1).length;
    figures.upstreamCallsForRejected += [...calls.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0);
    figures.check(doubles === 0, `${topology}: ${doubles} Idempotency-Keys reached the upstream more than once`);
    figures.check(once === DEPOSITS, `${topology}: ${DEPOSITS - once} of the ${DEPOSITS} deposits did not reach the upstream exactly once`);
    figures.note(
      `${topology}: ${DEPOSITS} deposits (and ${probes} probes of ${PROBE}), primary killed after ${KILL_AFTER} had started: ${doubles} doubles, ` +
        `${once} of ${DEPOSITS} sent upstream exactly once, deposits answered again ${resumeMs === undefined ? 'never' : `${(resumeMs / 1000).toFixed(1)} s`} after the kill`,
    );
  } finally {
    for (const proxy of proxies) await proxy.close();
    await upstream.close();
    await deployment.stop();
  }
}

/*
 * The events table: the failovers operators plan (a switchover for an upgrade, a replica's
 * maintenance) beside the crashes, each on a deployment of its own (docs/behaviour.md "Several
 * instances"). Two proxies; KEYS deposits with their own `Idempotency-Key` started one every PACE_MS,
 * each tried up to four times across both proxies until one answers 200, the event set off once a
 * quarter of them have started; meanwhile a probe of two fresh deposits (one per proxy) every 250 ms.
 * Then, once every pending marker's lease has ended, the repeat pass sends every key once more: a
 * settled key must be replayed, never charged again. Figures per event: keys, charges at the BFF,
 * doubles in the loop, doubles in the repeat pass, keys refused (never settled in the loop), keys left
 * blocked (a 409 for a key the BFF never received), seconds to resume (from the event, or from the
 * moment the paused or killed replica is back; 0 when money never stopped).
 */
const EVENT_KEYS = FULL ? 180 : 24;
const PACE_MS = 100;
const ATTEMPTS = 4;
const ATTEMPT_PAUSE_MS = 400;
/** How long a replica sleeps or stays down, in seconds (the issue's 20–30 s in the full run). */
const DOWN_S = FULL ? 20 : 3;
const EVENT_UPSTREAM_TIMEOUT_MS = 2_000;
/** The pending marker's lease (the default 1 s `UPSTREAM_QUEUE_WAIT_MS` + `UPSTREAM_TIMEOUT_MS` + the 5 s margin), in milliseconds. */
const LEASE_MS = 1_000 + EVENT_UPSTREAM_TIMEOUT_MS + 5_000;
/** `min-replicas-to-write` of the data servers (0: as in the issue's measurement, without it). */
const MIN_REPLICAS_TO_WRITE = Number(process.env.REDIS_FAILOVER_MIN_REPLICAS_TO_WRITE ?? '1');

/** A deployment of one event: the proxies' variables, the event itself, and the teardown. */
interface EventDeployment {
  readonly env: Readonly<Record<string, string>>;
  /** Sets the event off; resolves once it is over, with the instant (epoch ms) the time to resume is counted from. */
  disrupt(): Promise<number>;
  stop(): Promise<void>;
}

interface FailoverEvent {
  readonly topology: 'Sentinel' | 'cluster';
  readonly name: string;
  /** Run by the bounded run too (the others only with HARDENING_FULL=1). */
  readonly bounded: boolean;
  /**
   * Money moves may stop at most this long after the event began, in seconds (a replica to spare:
   * under `auto` the paused one counts until the sentinels see it down, `down-after-milliseconds`
   * 1 s plus their next reading).
   */
  readonly stopsAtMostS?: number;
  deploy(): Promise<EventDeployment>;
}

const ROLE_PORT = (role: string) => Number(role.split('\n')[2]);
/** Connections of one proxy to the primary: commands, subscription and the acknowledged writes' lanes. */
const PROXY_CONNECTIONS = 2 + ACK_LANES;

async function sentinelEvent(
  replicas: number,
  disrupt: (s: TestSentinel) => Promise<number>,
  serverArgs: readonly string[] = [],
): Promise<EventDeployment> {
  const sentinel = await startRedisSentinel({ replicas, minReplicasToWrite: MIN_REPLICAS_TO_WRITE, serverArgs });
  return { env: sentinel.env, disrupt: () => disrupt(sentinel), stop: () => sentinel.stop() };
}

/** A cluster, the primary serving GENERATION_KEY (the victim) and its replica. */
async function clusterEvent(disrupt: (c: TestCluster, victim: TestRedis, replica: TestRedis) => Promise<number>): Promise<EventDeployment> {
  const cluster = await startRedisCluster({ minReplicasToWrite: MIN_REPLICAS_TO_WRITE });
  const victim = await cluster.primaryOf(GENERATION_KEY);
  let replica: TestRedis | undefined;
  for (const node of cluster.nodes) {
    const role = await redisCli(node.port, 'ROLE');
    if (role.startsWith('slave') && ROLE_PORT(role) === victim.port) replica = node;
  }
  if (!replica) throw new Error(`no replica of ${victim.port}`);
  const of = replica;
  return { env: cluster.env, disrupt: () => disrupt(cluster, victim, of), stop: () => cluster.stop() };
}

async function untilTrue(limitMs: number, what: string, check: () => Promise<boolean>): Promise<void> {
  if ((await within(limitMs, 100, check)) === undefined) throw new Error(`${what}: not within ${limitMs} ms`);
}

const EVENTS: FailoverEvent[] = [
  {
    topology: 'Sentinel',
    name: '`kill -9` of the primary (back as a replica once the other is promoted)',
    bounded: false,
    deploy: () =>
      sentinelEvent(1, async (s) => {
        await s.primary.kill();
        const at = Date.now();
        await untilTrue(20_000, 'promotion', async () => (await s.primaryPort()) === s.replica.port);
        await s.primary.start(['--replicaof', '127.0.0.1', String(s.replica.port)]);
        return at;
      }),
  },
  {
    topology: 'Sentinel',
    name: '`SENTINEL FAILOVER` (planned switchover)',
    bounded: true,
    deploy: () =>
      sentinelEvent(1, async (s) => {
        // The window: how long the proxies' connections (2 × PROXY_CONNECTIONS) take to leave the old primary.
        const clients = async () => Number(/connected_clients:(\d+)/.exec(await redisCli(s.primary.port, 'INFO', 'clients'))?.[1]);
        const base = await clients();
        const at = Date.now();
        let moved: number | undefined;
        const watching = within(20_000, 25, async () => (await clients()) <= base - 2 * PROXY_CONNECTIONS).then((ms) => (moved = ms));
        await redisCli(s.sentinels[0]!.port, 'SENTINEL', 'FAILOVER', SENTINEL_NAME);
        await untilTrue(20_000, 'promotion', async () => (await s.primaryPort()) === s.replica.port);
        const promoted = Date.now();
        await watching;
        figures.note(
          `Sentinel, SENTINEL FAILOVER: the proxies' ${2 * PROXY_CONNECTIONS} connections off the old primary ${moved === undefined ? 'not within 20 s' : `${((at + moved - promoted) / 1000).toFixed(2)} s after the sentinels named the new one`}`,
        );
        // The promoted replica has no replica until the sentinels turn the old primary into one (on
        // their next look at it, up to 10 s later): the event is over once it follows the new one.
        await untilTrue(30_000, 'old primary reconfigured', async () => {
          const role = await redisCli(s.primary.port, 'ROLE');
          return (
            role.startsWith('slave') &&
            ROLE_PORT(role) === s.replica.port &&
            (await redisCli(s.primary.port, 'INFO', 'replication')).includes('master_link_status:up')
          );
        });
        const following = Date.now();
        figures.note(
          `Sentinel, SENTINEL FAILOVER: the replica named primary ${((promoted - at) / 1000).toFixed(1)} s after the command, the old primary following it ${((following - at) / 1000).toFixed(1)} s after it`,
        );
        return following;
      }),
  },
  {
    topology: 'Sentinel',
    name: '`SENTINEL FAILOVER` with the runbook (`repl-diskless-sync-delay 0`, deploy/redis/follow-switch.sh)',
    bounded: false,
    deploy: () =>
      sentinelEvent(
        1,
        async (s) => {
          const sidecar = spawn('sh', [FOLLOW_SWITCH], {
            env: { ...process.env, SENTINEL_HOST: '127.0.0.1', SENTINEL_PORT: String(s.sentinels[0]!.port), SENTINEL_NAME },
            stdio: ['ignore', 'pipe', 'ignore'],
            detached: true,
          });
          let said = '';
          sidecar.stdout.on('data', (chunk: Buffer) => (said += chunk.toString()));
          try {
            await sleep(300);
            const at = Date.now();
            await redisCli(s.sentinels[0]!.port, 'SENTINEL', 'FAILOVER', SENTINEL_NAME);
            await untilTrue(20_000, 'old primary reconfigured', async () => {
              const role = await redisCli(s.primary.port, 'ROLE');
              return (
                role.startsWith('slave') &&
                ROLE_PORT(role) === s.replica.port &&
                (await redisCli(s.primary.port, 'INFO', 'replication')).includes('master_link_status:up')
              );
            });
            figures.note(
              `Sentinel, SENTINEL FAILOVER with the runbook: the old primary following the new one ${((Date.now() - at) / 1000).toFixed(1)} s after the command; the sidecar said: ${said.trim().split('\n')[0] ?? 'nothing'}`,
            );
            return at;
          } finally {
            if (sidecar.pid !== undefined) process.kill(-sidecar.pid, 'SIGTERM');
          }
        },
        ['--repl-diskless-sync-delay', '0'],
      ),
  },
  {
    topology: 'Sentinel',
    name: `the replica paused (\`DEBUG SLEEP ${DOWN_S}\`)`,
    bounded: true,
    deploy: () =>
      sentinelEvent(1, async (s) => {
        await debugSleep(s.replica.port, DOWN_S);
        return Date.now();
      }),
  },
  {
    topology: 'Sentinel',
    name: `the replica killed, started again ${DOWN_S} s later`,
    bounded: false,
    deploy: () =>
      sentinelEvent(1, async (s) => {
        await s.replica.kill();
        await sleep(DOWN_S * 1000);
        await s.replica.start(['--replicaof', '127.0.0.1', String(s.primary.port)]);
        return Date.now();
      }),
  },
  {
    topology: 'Sentinel',
    name: `two replicas, one paused (\`DEBUG SLEEP ${DOWN_S}\`)`,
    bounded: false,
    stopsAtMostS: 5,
    deploy: () =>
      sentinelEvent(2, async (s) => {
        const at = Date.now();
        await debugSleep(s.replica.port, DOWN_S);
        return at;
      }),
  },
  {
    topology: 'cluster',
    name: '`kill -9` of a primary (back as a replica once the other is promoted)',
    bounded: false,
    deploy: () =>
      clusterEvent(async (c, victim) => {
        await victim.kill();
        const at = Date.now();
        await untilTrue(20_000, 'promotion', async () => (await c.primaryOf(GENERATION_KEY)) !== victim);
        await victim.start();
        return at;
      }),
  },
  ...(['', 'FORCE'] as const).map((force): FailoverEvent => ({
    topology: 'cluster',
    name: `\`CLUSTER FAILOVER${force ? ` ${force}` : ''}\` on a replica`,
    bounded: false,
    deploy: () =>
      clusterEvent(async (c, victim, replica) => {
        const at = Date.now();
        await redisCli(replica.port, 'CLUSTER', 'FAILOVER', ...(force ? [force] : []));
        await untilTrue(20_000, 'promotion', async () => (await c.primaryOf(GENERATION_KEY)) === replica);
        await untilTrue(20_000, 'old primary following', async () => (await redisCli(victim.port, 'ROLE')).startsWith('slave'));
        return at;
      }),
  })),
  {
    topology: 'cluster',
    name: `a replica paused (\`DEBUG SLEEP ${DOWN_S}\`)`,
    bounded: false,
    deploy: () =>
      clusterEvent(async (_c, _victim, replica) => {
        await debugSleep(replica.port, DOWN_S);
        return Date.now();
      }),
  },
];

/** The figures of one event (a row of docs/hardening.md's events table). */
interface EventFigures {
  keys: number;
  charges: number;
  doublesInLoop: number;
  doublesInRepeat: number;
  refused: number;
  blocked: number;
  resumeS: number | undefined;
  /** Seconds from the event to the moment money moves answered again (0: never stopped). */
  stoppedS: number | undefined;
  replayed: number;
  settled: number;
}

async function runEvent(event: FailoverEvent): Promise<EventFigures> {
  const label = `${event.topology}, ${event.name}`;
  const upstream = await startRecordingUpstream();
  upstream.on('GET', PROFILE_PATH, { json: { user: { id: 7 }, userInfo: {} } });
  upstream.on('POST', DEPOSIT_PATH, { json: { transaction_id: 'ch_event', status: 'pending' }, delayMs: 20 });
  const deployment = await event.deploy();
  const proxies: TestProxy[] = [];
  try {
    for (let i = 0; i < 2; i++)
      proxies.push(await startProxy(upstream.url, { ...deployment.env, UPSTREAM_TIMEOUT_MS: String(EVENT_UPSTREAM_TIMEOUT_MS) }));
    const [a, b] = proxies as [TestProxy, TestProxy];
    const token = fakeJwt({ sub: '7', n: Math.random() });
    const tag = `event-${Math.random().toString(36).slice(2)}`;
    const key = (i: number) => `${tag}-${i}`;
    const blocked = new Set<string>();
    const submit = async (proxy: TestProxy, k: string, amount: number) => {
      const answer = await send(proxy.url, 'POST', '/api/payments/deposit', {
        json: { userId: 7, creditAmount: amount, paymentMethod: 'pix', currency: 'BRL' },
        token,
        headers: { 'idempotency-key': k },
      });
      figures.inputs++;
      figures.status(answer.status === 503 ? `503 ${(answer.json as { error?: string } | undefined)?.error}` : answer.status);
      figures.check(
        answer.status === 200 || answer.status === 409 || answer.status === 503,
        `${label}: a deposit answered ${answer.status}`,
      );
      // In progress, yet the BFF never received it: a marker that no move owns.
      if (answer.status === 409 && !callsByKey(upstream).has(k)) blocked.add(k);
      return answer;
    };
    // Ready: a deposit goes through on each proxy.
    for (const [i, p] of [a, b].entries()) {
      figures.check(
        (await within(20_000, 250, async () => (await submit(p, `${tag}-ready-${i}`, 1)).status === 200)) !== undefined,
        `${label}: money moves never answered before the event`,
      );
    }

    const settled = new Array<boolean>(EVENT_KEYS).fill(false);
    let lastAttemptAt = 0;
    let disruption: Promise<number> | undefined;
    let overAt: number | undefined;
    let eventAt = 0;
    const loopStarted = Date.now();
    const deposit = async (i: number) => {
      await sleep(loopStarted + i * PACE_MS - Date.now());
      if (i === Math.floor(EVENT_KEYS / 4)) {
        figures.faults++;
        eventAt = Date.now();
        disruption = deployment.disrupt();
        disruption.then(
          (at) => (overAt = at),
          () => (overAt = Date.now()),
        );
      }
      for (let attempt = 0; attempt < ATTEMPTS && !settled[i]; attempt++) {
        if (attempt > 0) await sleep(ATTEMPT_PAUSE_MS);
        lastAttemptAt = Date.now();
        if ((await submit((i + attempt) % 2 === 0 ? a : b, key(i), 1_000 + i)).status === 200) settled[i] = true;
      }
    };
    // Probes: two fresh deposits every 250 ms from the event on, until 4 rounds in a row answered
    // 200 after the event was over (or 30 s after it).
    const rounds: { at: number; ok: boolean }[] = [];
    const prober = async () => {
      while (disruption === undefined) await sleep(20);
      for (let round = 0, okInRow = 0; ; round++) {
        const at = Date.now();
        const answers = await Promise.all([a, b].map((p, j) => submit(p, `${tag}-probe-${round}-${j}`, 50_000 + j)));
        const ok = answers.every((r) => r.status === 200);
        rounds.push({ at, ok });
        okInRow = ok ? okInRow + 1 : 0;
        if (overAt !== undefined && ((okInRow >= 4 && at > overAt) || Date.now() - overAt > 30_000)) break;
        await sleep(250);
      }
    };
    await Promise.all([...Array.from({ length: EVENT_KEYS }, (_, i) => deposit(i)), prober()]);
    await disruption;

    const failed = rounds.filter((r) => !r.ok);
    const lastFailure = failed.at(-1);
    const resumedAt = lastFailure === undefined ? undefined : rounds.find((r) => r.ok && r.at > lastFailure.at)?.at;
    const resumeS =
      lastFailure === undefined ? 0 : resumedAt === undefined ? undefined : Math.max(0, resumedAt - (overAt ?? resumedAt)) / 1000;
    const stoppedS = lastFailure === undefined ? 0 : resumedAt === undefined ? undefined : (resumedAt - eventAt) / 1000;

    const before = callsByKey(upstream);
    const loopKeys = Array.from({ length: EVENT_KEYS }, (_, i) => key(i));
    const charges = loopKeys.reduce((sum, k) => sum + (before.get(k) ?? 0), 0);
    const doublesInLoop = [...before.values()].filter((n) => n > 1).length;

    // The repeat pass, once every marker's lease has ended.
    await sleep(lastAttemptAt + LEASE_MS + 500 - Date.now());
    let replayed = 0;
    for (let i = 0; i < EVENT_KEYS; i += 10) {
      await Promise.all(
        loopKeys.slice(i, i + 10).map(async (k, j) => {
          const r = await submit((i + j) % 2 === 0 ? b : a, k, 1_000 + i + j);
          if (settled[i + j] && r.status === 200 && r.headers.get('idempotent-replayed') === 'true') replayed++;
        }),
      );
    }
    const afterRepeat = callsByKey(upstream);
    const doublesInRepeat = loopKeys.filter((k) => (before.get(k) ?? 0) >= 1 && (afterRepeat.get(k) ?? 0) > (before.get(k) ?? 0)).length;
    const refused = settled.filter((s) => !s).length;
    const result: EventFigures = {
      keys: EVENT_KEYS,
      charges,
      doublesInLoop,
      doublesInRepeat,
      refused,
      blocked: blocked.size,
      resumeS,
      stoppedS,
      replayed,
      settled: EVENT_KEYS - refused,
    };
    figures.upstreamCallsForRejected += [...afterRepeat.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0);
    figures.check(doublesInLoop === 0, `${label}: ${doublesInLoop} keys charged twice in the loop`);
    figures.check(doublesInRepeat === 0, `${label}: ${doublesInRepeat} settled keys charged again in the repeat pass`);
    figures.check(blocked.size === 0, `${label}: ${blocked.size} keys left blocked (409 with nothing charged)`);
    figures.check(replayed === result.settled, `${label}: ${result.settled - replayed} settled keys not replayed`);
    figures.check(
      resumeS !== undefined && resumeS * 1000 <= RESUME_LIMIT_MS,
      `${label}: money moves resumed ${resumeS ?? 'never'} s after the event (limit ${RESUME_LIMIT_MS / 1000} s)`,
    );
    if (event.stopsAtMostS !== undefined) {
      const lastFailedAt = lastFailure === undefined ? eventAt : lastFailure.at;
      figures.check(
        (lastFailedAt - eventAt) / 1000 <= event.stopsAtMostS,
        `${label}: money stopped until ${((lastFailedAt - eventAt) / 1000).toFixed(1)} s after the event (limit ${event.stopsAtMostS} s)`,
      );
    }
    figures.note(
      `| ${event.topology} | ${event.name} | ${result.keys} | ${charges} | ${doublesInLoop} | ${doublesInRepeat} (${replayed}/${result.settled} replayed) | ${refused} | ${blocked.size} | ${resumeS === undefined ? 'never' : resumeS.toFixed(1)} (${stoppedS === undefined ? 'never' : stoppedS.toFixed(1)} from the event) |`,
    );
    return result;
  } finally {
    for (const proxy of proxies) await proxy.close();
    await upstream.close();
    await deployment.stop();
  }
}

/*
 * The exactly-once rows of the topologies operators run (docs/operations.md "Redis topologies"): a
 * crashed primary that is not started again, two replicas of which one lags behind a held link, a
 * managed endpoint (`REDIS_URL` behind a relay that a switchover re-points while the old connections
 * stay open, or that a crash re-points at the promoted replica), two real deposits without a key, a
 * long queue wait, the only replica down while an instance is restarted, a second master on the same
 * sentinels switched over, and a cluster slot migrating. Each on a deployment of its own,
 * with two proxies (`REDIS_MIN_REPLICAS_ACK` at its default, `auto`, unless the row says otherwise)
 * and a table row in the figures: keys, charges, doubles, keys left blocked, resume time.
 */

/** A proxy instance: in this process (`startProxy`) or a process of its own (`proxyProcess`). */
type Instance = Pick<TestProxy, 'url'>;

/** The amount of the deposit of `key` (`<tag>-<n>`: 1,000 + n cents), the same at every submission of it. */
function amountOf(key: string): number {
  const n = Number(key.slice(key.lastIndexOf('-') + 1));
  return Number.isInteger(n) ? 1_000 + n : 1;
}

/** A deposit of `amount` by the session `token`, with `key` as its `Idempotency-Key` (none when undefined). */
function depositOn(proxy: Instance, token: string, key: string | undefined, amount: number) {
  return send(proxy.url, 'POST', '/api/payments/deposit', {
    json: { userId: 7, creditAmount: amount, paymentMethod: 'pix', currency: 'BRL' },
    token,
    headers: key === undefined ? {} : { 'idempotency-key': key },
  });
}

/** A recording upstream with the profile and the deposit routes (the deposit answered after `delayMs`). */
async function depositUpstream(delayMs = 20): Promise<RecordingUpstream> {
  const upstream = await startRecordingUpstream();
  upstream.on('GET', PROFILE_PATH, { json: { user: { id: 7 }, userInfo: {} } });
  upstream.on('POST', DEPOSIT_PATH, { json: { transaction_id: 'ch_row', status: 'pending' }, delayMs });
  return upstream;
}

/** Counts an answer in the figures; only 200, 409 and 503 are expected of a money move here. */
function counted<A extends { status: number; json: unknown }>(label: string, answer: A): A {
  figures.inputs++;
  figures.status(answer.status === 503 ? `503 ${(answer.json as { error?: string } | undefined)?.error}` : answer.status);
  figures.check(answer.status === 200 || answer.status === 409 || answer.status === 503, `${label}: a deposit answered ${answer.status}`);
  return answer;
}

/**
 * Settles `keys` (each tried across both proxies until one answers 200, for at most `limitMs`) and
 * returns the keys that did.
 */
async function settle(
  label: string,
  [a, b]: readonly Instance[],
  token: string,
  keys: readonly string[],
  limitMs = 10_000,
): Promise<Set<string>> {
  const done = new Set<string>();
  await Promise.all(
    keys.map(async (key, i) => {
      const ms = await within(limitMs, 200, async () => {
        const r = counted(label, await depositOn((i % 2 === 0 ? a : b) as Instance, token, key, amountOf(key)));
        return r.status === 200;
      });
      if (ms !== undefined) done.add(key);
    }),
  );
  return done;
}

/**
 * The repeat pass: every settled key once more on the other proxy; resolves to how many were
 * replayed (`Idempotent-Replayed: true`), each tried for at most `limitMs` (its answer may still be
 * on its way to the store).
 */
async function replayAll(
  label: string,
  [a, b]: readonly Instance[],
  token: string,
  keys: readonly string[],
  limitMs = 10_000,
): Promise<number> {
  let replayed = 0;
  await Promise.all(
    keys.map(async (key, i) => {
      const ms = await within(limitMs, 250, async () => {
        const r = counted(label, await depositOn((i % 2 === 0 ? b : a) as Instance, token, key, amountOf(key)));
        return r.status === 200 && r.headers.get('idempotent-replayed') === 'true';
      });
      if (ms !== undefined) replayed++;
    }),
  );
  return replayed;
}

/**
 * Seconds until both proxies take a fresh deposit again (probes every 250 ms from now), or
 * `undefined` after `limitMs`; `probeKey` names the probes (default: fresh keys under `tag`).
 */
async function resumeOf(
  label: string,
  proxies: readonly Instance[],
  token: string,
  tag: string,
  limitMs: number,
  probeKey: (round: number, j: number) => string = (round, j) => `${tag}-probe-${round}-${j}`,
): Promise<number | undefined> {
  let round = 0;
  const ms = await within(limitMs, 250, async () => {
    round++;
    const answers = await Promise.all(proxies.map((p, j) => depositOn(p, token, probeKey(round, j), 70_000 + j)));
    return answers.map((r) => counted(label, r)).every((r) => r.status === 200);
  });
  return ms === undefined ? undefined : ms / 1000;
}

/** One line of the table of these rows (docs/hardening.md row 19). */
function tableRow(
  label: string,
  upstream: RecordingUpstream,
  keys: readonly string[],
  settled: number,
  replayed: number,
  blocked: number,
  resume: string,
): void {
  const calls = callsByKey(upstream);
  const charges = keys.reduce((sum, k) => sum + (calls.get(k) ?? 0), 0);
  const doubles = keys.filter((k) => (calls.get(k) ?? 0) > 1).length;
  figures.check(doubles === 0, `${label}: ${doubles} keys charged twice`);
  figures.check(blocked === 0, `${label}: ${blocked} keys left blocked`);
  figures.check(replayed === settled, `${label}: ${settled - replayed} settled keys not replayed`);
  figures.upstreamCallsForRejected += [...calls.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0);
  figures.note(`| ${label} | ${keys.length} | ${charges} | ${doubles} | ${replayed}/${settled} | ${blocked} | ${resume} |`);
}

/** Keys that answer 409 while the BFF never received them (a marker that no move owns). */
async function blockedKeys(
  proxies: readonly Instance[],
  upstream: RecordingUpstream,
  token: string,
  keys: readonly string[],
): Promise<number> {
  let blocked = 0;
  for (const [i, key] of keys.entries()) {
    if (callsByKey(upstream).has(key)) continue;
    const r = await depositOn(proxies[i % proxies.length] as Instance, token, key, amountOf(key));
    if (r.status === 409) blocked++;
  }
  return blocked;
}

async function startPair(upstream: RecordingUpstream, env: Readonly<Record<string, string>>): Promise<TestProxy[]> {
  return [
    await startProxy(upstream.url, { ...env, UPSTREAM_TIMEOUT_MS: '3000' }),
    await startProxy(upstream.url, { ...env, UPSTREAM_TIMEOUT_MS: '3000' }),
  ];
}

/** Whether a slot is served by `node` (the cluster's `CLUSTER SLOTS` as it answers now). */
async function servedBy(node: TestRedis): Promise<(slot: number) => boolean> {
  const ranges = (JSON.parse(await redisCli(node.port, '--json', 'CLUSTER', 'SLOTS')) as [number, number, [string, number]][]).filter(
    ([, , [, port]]) => port === node.port,
  );
  return (slot) => ranges.some(([from, to]) => slot >= from && slot <= to);
}

/** A crashed primary that is not started again (a lost VM): `auto` resumes on the promoted replica, a floor of 1 refuses. */
async function crashedNotRestarted(topology: 'Sentinel' | 'cluster'): Promise<void> {
  const label = `${topology}, primary crashed and not started again`;
  const upstream = await depositUpstream();
  const sentinel = topology === 'Sentinel' ? await startRedisSentinel({ minReplicasToWrite: 0 }) : undefined;
  const cluster = topology === 'cluster' ? await startRedisCluster({ minReplicasToWrite: 0 }) : undefined;
  const env = (sentinel ?? cluster)?.env ?? {};
  const proxies: TestProxy[] = [];
  try {
    proxies.push(...(await startPair(upstream, env)));
    const floor = await startProxy(upstream.url, { ...env, REDIS_MIN_REPLICAS_ACK: '1', UPSTREAM_TIMEOUT_MS: '3000' });
    proxies.push(floor);
    const token = fakeJwt({ sub: '7', n: Math.random() });
    const tag = `crash-${topology}-${Math.random().toString(36).slice(2)}`;
    // In the cluster, only the keys whose records the killed primary serves: the others never stop.
    const victim = sentinel
      ? sentinel.primary
      : await (cluster as TestCluster).primaryOf(recordKey({ move: 'deposit', token, key: `${tag}-0`, body: '' }));
    const served = sentinel ? () => true : await servedBy(victim);
    const pool = Array.from({ length: 2_000 }, (_, i) => `${tag}-${i}`).filter((key) =>
      served(calculateSlot(recordKey({ move: 'deposit', token, key, body: '' }))),
    );
    const keys = pool.slice(0, 12);
    const probes = pool.slice(12);
    const before = await settle(label, proxies.slice(0, 2), token, keys.slice(0, 8));
    figures.check(before.size === 8, `${label}: ${8 - before.size} keys not settled before the crash`);
    figures.faults++;
    await victim.kill();
    const promoted = await within(20_000, 100, async () =>
      sentinel
        ? (await sentinel.primaryPort()) !== victim.port
        : (await (cluster as TestCluster).primaryOf(recordKey({ move: 'deposit', token, key: keys[0] as string, body: '' }))) !== victim,
    );
    figures.check(promoted !== undefined, `${label}: no replica promoted`);
    let probe = 0;
    const resumeS = await resumeOf(
      label,
      proxies.slice(0, 2),
      token,
      tag,
      RESUME_LIMIT_MS,
      () => probes[probe++ % probes.length] as string,
    );
    figures.check(
      resumeS !== undefined,
      `${label}: money moves did not resume under auto within ${RESUME_LIMIT_MS / 1000} s of the promotion`,
    );
    // The keys of the killed primary's slots (all of them with Sentinel) go through on the promoted one.
    const after = await settle(label, proxies.slice(0, 2), token, keys.slice(8));
    figures.check(after.size === 4, `${label}: ${4 - after.size} keys refused after the promotion`);
    // Under an operator floor of 1, the promoted primary alone refuses: 503 with Retry-After, nothing sent, /readyz says why.
    const refusedKey = probes.at(-1) as string;
    const refused = counted(label, await depositOn(floor, token, refusedKey, 9));
    figures.check(
      refused.status === 503 && (refused.json as { error?: string }).error === 'idempotency_unavailable',
      `${label}: floor 1 answered ${refused.status}`,
    );
    figures.check(
      refused.headers.get('retry-after') === '1',
      `${label}: the 503 carries Retry-After ${refused.headers.get('retry-after')}`,
    );
    figures.check(!callsByKey(upstream).has(refusedKey), `${label}: a refused move reached the upstream`);
    const ready = await send(floor.url, 'GET', '/readyz');
    figures.check(
      ready.status === 200 && (ready.json as { moneyMoves?: string }).moneyMoves === 'refused',
      `${label}: /readyz under the floor said ${ready.text.slice(0, 160)}`,
    );
    const replayed = await replayAll(label, proxies.slice(0, 2), token, [...before, ...after]);
    const blocked = await blockedKeys(proxies.slice(0, 2), upstream, token, keys);
    const sinceKill =
      resumeS === undefined
        ? 'never'
        : `${((promoted ?? 0) / 1000 + resumeS).toFixed(1)} s after the kill (${resumeS.toFixed(1)} after the promotion); floor 1: refused`;
    tableRow(label, upstream, keys, before.size + after.size, replayed, blocked, sinceKill);
  } finally {
    for (const proxy of proxies) await proxy.close();
    await upstream.close();
    await sentinel?.stop();
    await cluster?.stop();
  }
}

/**
 * Two replicas, the one the sentinels would promote first (priority 10) lagging behind a held link
 * while the other (priority 100) acknowledges: money moves are refused while it lags (under "any 1
 * of them" they were taken on the other alone); then the primary crashes, the lagging one is
 * promoted, and no key is charged twice.
 */
async function laggingReplica(): Promise<void> {
  const label = 'Sentinel, two replicas, the first to promote lagging behind a held link, then a crash';
  const upstream = await depositUpstream();
  const sentinel = await startRedisSentinel({
    replicas: 2,
    minReplicasToWrite: 0,
    replicaPriorities: [10, 100],
    relayed: [0],
    failoverTimeoutMs: 60_000,
    // As docs/operations.md asks of a deployment: the other replica, ahead of the promoted one,
    // resyncs in full from it, and starts at once instead of after the default 5 s.
    serverArgs: ['--repl-diskless-sync-delay', '0'],
  });
  const proxies: TestProxy[] = [];
  try {
    proxies.push(...(await startPair(upstream, sentinel.env)));
    const token = fakeJwt({ sub: '7', n: Math.random() });
    const tag = `lag-${Math.random().toString(36).slice(2)}`;
    const keys = Array.from({ length: 15 }, (_, i) => `${tag}-${i}`);
    const before = await settle(label, proxies, token, keys.slice(0, 5));
    figures.check(before.size === 5, `${label}: ${5 - before.size} keys not settled before the hold`);
    figures.faults++;
    sentinel.relays.get(0)?.hold(true);
    const held = await Promise.all(keys.slice(5, 10).map((key, i) => depositOn(proxies[i % 2] as TestProxy, token, key, amountOf(key))));
    const refused = held
      .map((r) => counted(label, r))
      .filter((r) => r.status === 503 && (r.json as { error?: string }).error === 'idempotency_unavailable').length;
    figures.check(refused === 5, `${label}: ${5 - refused} of 5 moves taken while the promotable replica lagged`);
    const ready = await send((proxies[0] as TestProxy).url, 'GET', '/readyz');
    figures.check((ready.json as { moneyMoves?: string }).moneyMoves === 'refused', `${label}: /readyz said ${ready.text.slice(0, 160)}`);
    figures.faults++;
    await sentinel.primary.kill();
    const lagging = sentinel.replicas[0] as TestRedis;
    const promoted = await within(20_000, 100, async () => (await sentinel.primaryPort()) === lagging.port);
    figures.check(promoted !== undefined, `${label}: the lagging replica (priority 10) was not the one promoted`);
    const resumeS = await resumeOf(label, proxies, token, tag, RESUME_LIMIT_MS);
    figures.check(resumeS !== undefined, `${label}: money moves did not resume within ${RESUME_LIMIT_MS / 1000} s of the promotion`);
    const after = await settle(label, proxies, token, keys.slice(5));
    const replayed = await replayAll(label, proxies, token, [...before, ...after]);
    const blocked = await blockedKeys(proxies, upstream, token, keys);
    tableRow(
      label,
      upstream,
      keys,
      before.size + after.size,
      replayed,
      blocked,
      resumeS === undefined ? 'never' : `${resumeS.toFixed(1)} s after the promotion; ${refused} refused while it lagged`,
    );
  } finally {
    for (const proxy of proxies) await proxy.close();
    await upstream.close();
    await sentinel.stop();
  }
}

/**
 * A managed endpoint: `REDIS_URL` names a relay in front of a primary with one replica
 * (`REDIS_MIN_REPLICAS_ACK=1`). The switchover re-points the relay and swaps the roles while the
 * proxies' connections stay on the old primary, which answers `READONLY`: they reconnect. A third
 * proxy at the default 0 logs the warning that names `REDIS_MIN_REPLICAS_ACK`.
 */
async function managedEndpoint(): Promise<void> {
  const label = 'REDIS_URL behind a relay (managed endpoint), switchover keeping the connections';
  const upstream = await depositUpstream();
  const args = ['--repl-diskless-sync-delay', '0'];
  const primary = await startRedis({ args });
  const replica = await startRedis({ args: [...args, '--replicaof', '127.0.0.1', String(primary.port)] });
  const relay = await startRelay(primary.port);
  const proxies: TestProxy[] = [];
  try {
    await within(10_000, 100, async () => (await redisCli(replica.port, 'INFO', 'replication')).includes('master_link_status:up'));
    const env = { REDIS_URL: `redis://127.0.0.1:${relay.port}` };
    proxies.push(...(await startPair(upstream, { ...env, REDIS_MIN_REPLICAS_ACK: '1' })));
    const unacknowledged = await startProxy(upstream.url, env);
    const warned = await within(3_000, 50, async () =>
      unacknowledged.logs.lines.some((l) => l.includes('REDIS_MIN_REPLICAS_ACK') && l.includes('"level":"warn"')),
    );
    figures.check(warned !== undefined, `${label}: no warning naming REDIS_MIN_REPLICAS_ACK at the start with 0 and a replica`);
    await unacknowledged.close();
    const token = fakeJwt({ sub: '7', n: Math.random() });
    const tag = `managed-${Math.random().toString(36).slice(2)}`;
    const keys = Array.from({ length: 10 }, (_, i) => `${tag}-${i}`);
    const before = await settle(label, proxies, token, keys.slice(0, 5));
    figures.check(before.size === 5, `${label}: ${5 - before.size} keys not settled before the switchover`);
    figures.faults++;
    relay.retarget(replica.port);
    await redisCli(replica.port, 'REPLICAOF', 'NO', 'ONE');
    await redisCli(primary.port, 'REPLICAOF', '127.0.0.1', String(replica.port));
    const resumeS = await resumeOf(label, proxies, token, tag, RESUME_LIMIT_MS);
    figures.check(
      resumeS !== undefined,
      `${label}: money moves did not resume within ${RESUME_LIMIT_MS / 1000} s (READONLY must reconnect)`,
    );
    const after = await settle(label, proxies, token, keys.slice(5));
    const replayed = await replayAll(label, proxies, token, [...before, ...after]);
    const blocked = await blockedKeys(proxies, upstream, token, keys);
    tableRow(
      label,
      upstream,
      keys,
      before.size + after.size,
      replayed,
      blocked,
      resumeS === undefined ? 'never' : `${resumeS.toFixed(1)} s after the switchover`,
    );
  } finally {
    for (const proxy of proxies) await proxy.close();
    await upstream.close();
    await relay.close();
    await replica.stop();
    await primary.stop();
  }
}

/**
 * A managed endpoint's crash failover: `REDIS_URL` names a relay in front of a primary with one
 * replica (`REDIS_MIN_REPLICAS_ACK=1`); deposits run while the primary is killed (`kill -9`), the
 * replica promoted, the relay re-pointed at it and the lost node replaced by a new replica of the
 * promoted one (as the provider does). Every marker and answer was acknowledged by the replica: no key
 * is charged twice. (At 0, the moves taken while the replica's link was held are charged again.)
 */
async function managedCrash(): Promise<void> {
  const label = 'REDIS_URL behind a relay (managed endpoint), `kill -9` of the primary, the relay re-pointed at the promoted replica';
  const upstream = await depositUpstream(200);
  const args = ['--repl-diskless-sync-delay', '0'];
  const primary = await startRedis({ args });
  // The replica follows through a relay of its own, held for a moment before the crash: what it has
  // not acknowledged then is lost with the primary.
  const link = await startRelay(primary.port);
  const replica = await startRedis({ args: [...args, '--replicaof', '127.0.0.1', String(link.port)] });
  const relay = await startRelay(primary.port);
  const proxies: TestProxy[] = [];
  try {
    await untilTrue(10_000, 'replica in sync', async () =>
      (await redisCli(replica.port, 'INFO', 'replication')).includes('master_link_status:up'),
    );
    proxies.push(...(await startPair(upstream, { REDIS_URL: `redis://127.0.0.1:${relay.port}`, REDIS_MIN_REPLICAS_ACK: '1' })));
    const [a, b] = proxies as [TestProxy, TestProxy];
    const token = fakeJwt({ sub: '7', n: Math.random() });
    const tag = `managed-crash-${Math.random().toString(36).slice(2)}`;
    const keys = Array.from({ length: 16 }, (_, i) => `${tag}-${i}`);
    const before = await settle(label, proxies, token, keys.slice(0, 4));
    figures.check(before.size === 4, `${label}: ${4 - before.size} keys not settled before the crash`);
    // The replica's link held: these moves are refused (nothing acknowledges their markers), never sent.
    link.hold(true);
    const held = await Promise.all(keys.slice(4, 8).map((key, i) => depositOn(i % 2 === 0 ? a : b, token, key, amountOf(key))));
    const refused = held.map((r) => counted(label, r)).filter((r) => r.status === 503).length;
    figures.check(refused === 4, `${label}: ${4 - refused} of 4 moves taken while the replica's link was held`);
    // The others are submitted one every 150 ms (each retried across both instances until it
    // settles) while the primary crashes, 600 ms in.
    const during = Promise.all(
      keys.slice(8).map(async (key, i) => {
        await sleep(i * 150);
        return settle(label, i % 2 === 0 ? [a, b] : [b, a], token, [key], 30_000);
      }),
    ).then((sets) => new Set(sets.flatMap((set) => [...set])));
    await sleep(600);
    figures.faults++;
    await primary.kill();
    const killedAt = Date.now();
    relay.retarget(replica.port);
    relay.cut();
    await redisCli(replica.port, 'REPLICAOF', 'NO', 'ONE');
    await primary.start([...args, '--replicaof', '127.0.0.1', String(replica.port)]);
    const resumeS = await resumeOf(label, proxies, token, tag, RESUME_LIMIT_MS);
    const resumedAt = Date.now();
    figures.check(resumeS !== undefined, `${label}: money moves did not resume within ${RESUME_LIMIT_MS / 1000} s of the crash`);
    const settled = new Set([...(await during), ...(await settle(label, proxies, token, keys.slice(4, 8)))]);
    figures.check(settled.size === keys.length - 4, `${label}: ${keys.length - 4 - settled.size} keys never settled after the crash`);
    const replayed = await replayAll(label, proxies, token, [...before, ...settled]);
    const blocked = await blockedKeys(proxies, upstream, token, keys);
    tableRow(
      label,
      upstream,
      keys,
      before.size + settled.size,
      replayed,
      blocked,
      resumeS === undefined
        ? 'never'
        : `${((resumedAt - killedAt) / 1000).toFixed(1)} s after the kill; ${refused} refused while the replica lagged`,
    );
  } finally {
    for (const proxy of proxies) await proxy.close();
    await upstream.close();
    await relay.close();
    await link.close();
    await replica.stop();
    await primary.stop();
  }
}

/** Two genuine deposits of one amount without a key, 6 s apart: two upstream keys; a double click within 5 s: one. */
async function twoDeposits(): Promise<void> {
  const label = 'two identical deposits without a key, 6 s apart';
  const upstream = await depositUpstream();
  const redis = await startRedis();
  const proxies: TestProxy[] = [];
  try {
    proxies.push(...(await startPair(upstream, { REDIS_URL: redis.url })));
    const [a, b] = proxies as [TestProxy, TestProxy];
    const token = fakeJwt({ sub: '7', n: Math.random() });
    const first = counted(label, await depositOn(a, token, undefined, 4321));
    const click = counted(label, await depositOn(b, token, undefined, 4321));
    figures.check(
      first.status === 200 && click.status === 200 && click.headers.get('idempotent-replayed') === 'true',
      `${label}: the double click was not replayed (${click.status})`,
    );
    await sleep(6_000);
    const second = counted(label, await depositOn(b, token, undefined, 4321));
    figures.check(
      second.status === 200 && second.headers.get('idempotent-replayed') === null,
      `${label}: the second deposit was not sent (${second.status})`,
    );
    const keys = upstream.requests
      .filter((r) => r.method === 'POST' && r.path === DEPOSIT_PATH)
      .map((r) => String(r.headers['idempotency-key']));
    figures.check(keys.length === 2 && new Set(keys).size === 2, `${label}: upstream keys ${keys.join(', ')}`);
    figures.note(
      `| ${label} | 2 submissions (+1 double click) | ${keys.length} | 0 | 1/1 | 0 | ${new Set(keys).size} distinct upstream keys |`,
    );
  } finally {
    for (const proxy of proxies) await proxy.close();
    await upstream.close();
    await redis.stop();
  }
}

/**
 * A long queue: one instance's deposits wait up to 15 s for the endpoint's one slot
 * (`UPSTREAM_QUEUE_WAIT_MS`); the last one is repeated on the other instance while it still waits,
 * past the time limit plus the margin (where the lease used to end): never sent twice.
 */
async function longQueue(): Promise<void> {
  const label = 'a 15 s queue wait, a repeat on the other instance while the move still waits';
  const upstream = await depositUpstream(1_900);
  const redis = await startRedis();
  const env = {
    REDIS_URL: redis.url,
    UPSTREAM_QUEUE_WAIT_MS: '15000',
    UPSTREAM_ENDPOINT_MAX_IN_FLIGHT: '1',
    UPSTREAM_ENDPOINT_QUEUE: '16',
    UPSTREAM_TIMEOUT_MS: '3000',
  };
  const proxies = [await startProxy(upstream.url, env), await startProxy(upstream.url, env)];
  try {
    const [a, b] = proxies as [TestProxy, TestProxy];
    const token = fakeJwt({ sub: '7', n: Math.random() });
    const tag = `queue-${Math.random().toString(36).slice(2)}`;
    const keys = Array.from({ length: 7 }, (_, i) => `${tag}-${i}`);
    // The session's profile is read (and cached) first, so that the deposits queue only for their own endpoint.
    await send(a.url, 'GET', '/api/auth/profile', { token });
    const started = Date.now();
    const queued = Promise.all(keys.map((key) => depositOn(a, token, key, amountOf(key))));
    // 9 s: past the time limit plus the margin (8 s); the last key waits in A's queue until about 11.4 s.
    await sleep(9_000 - (Date.now() - started));
    const last = keys.at(-1) as string;
    const stillQueued = !callsByKey(upstream).has(last);
    const repeat = counted(label, await depositOn(b, token, last, amountOf(last)));
    figures.check(stillQueued, `${label}: the last key had already left A's queue at 9 s (the machine is too slow for this row)`);
    figures.check(
      repeat.status === 409 || repeat.headers.get('idempotent-replayed') === 'true',
      `${label}: the repeat on B answered ${repeat.status} without a replay`,
    );
    const answers = (await queued).map((r) => counted(label, r));
    figures.check(
      answers.every((r) => r.status === 200),
      `${label}: queued deposits answered ${answers.map((r) => r.status).join()}`,
    );
    const replayed = await replayAll(label, proxies, token, keys);
    tableRow(label, upstream, keys, keys.length, replayed, 0, `the repeat at 9 s answered ${repeat.status}`);
  } finally {
    for (const proxy of proxies) await proxy.close();
    await upstream.close();
    await redis.stop();
  }
}

/** The ids of the clients connected to the server at `port` (`CLIENT LIST`), the asking one left out. */
async function clientIds(port: number): Promise<Set<string>> {
  const lines = (await redisCli(port, 'CLIENT', 'LIST')).split('\n').filter((line) => !line.includes('cmd=client|list'));
  return new Set(lines.map((line) => /^id=(\d+)/.exec(line)?.[1]).filter((id) => id !== undefined));
}

/**
 * A second master on the same sentinels (another application's primary): its `+switch-master` (a
 * `SENTINEL FAILOVER` of its name) while deposits run must not make the store reconnect or refuse —
 * the store follows its own primary's name only.
 */
async function secondMaster(): Promise<void> {
  const label = 'Sentinel, a second master on the same sentinels switched over (`+switch-master` of another name)';
  const other = 'another-application';
  const upstream = await depositUpstream();
  const sentinel = await startRedisSentinel();
  const otherPrimary = await startRedis();
  const otherReplica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(otherPrimary.port)] });
  const proxies: TestProxy[] = [];
  try {
    for (const s of sentinel.sentinels) {
      await redisCli(s.port, 'SENTINEL', 'MONITOR', other, '127.0.0.1', String(otherPrimary.port), '2');
      await redisCli(s.port, 'SENTINEL', 'SET', other, 'down-after-milliseconds', '1000', 'failover-timeout', '5000');
    }
    await untilTrue(15_000, `the sentinels see ${other}'s replica`, async () => {
      const fields = (await redisCli(sentinel.sentinels[0]!.port, 'SENTINEL', 'MASTER', other)).split('\n');
      return Number(fields[fields.indexOf('num-slaves') + 1]) >= 1;
    });
    proxies.push(...(await startPair(upstream, sentinel.env)));
    const token = fakeJwt({ sub: '7', n: Math.random() });
    const tag = `other-${Math.random().toString(36).slice(2)}`;
    const keys = Array.from({ length: 12 }, (_, i) => `${tag}-${i}`);
    const before = await settle(label, proxies, token, keys.slice(0, 4));
    figures.check(before.size === 4, `${label}: ${4 - before.size} keys not settled before the switch`);
    const connected = await clientIds(sentinel.primary.port);
    figures.faults++;
    await redisCli(sentinel.sentinels[0]!.port, 'SENTINEL', 'FAILOVER', other);
    // Deposits while the other master's switch is announced: each must be taken at once, none refused.
    const during: { status: number }[] = [];
    const switched = within(
      20_000,
      100,
      async () =>
        Number((await redisCli(sentinel.sentinels[0]!.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', other)).split('\n')[1]) ===
        otherReplica.port,
    );
    for (const [i, key] of keys.slice(4).entries()) {
      during.push(counted(label, await depositOn(proxies[i % 2] as TestProxy, token, key, amountOf(key))));
      await sleep(250);
    }
    figures.check((await switched) !== undefined, `${label}: ${other} was not switched over`);
    await sleep(1_000);
    const refused = during.filter((r) => r.status !== 200).length;
    figures.check(
      refused === 0,
      `${label}: ${refused} deposits not taken during the other master's switch (${during.map((r) => r.status).join()})`,
    );
    const now = await clientIds(sentinel.primary.port);
    const left = [...connected].filter((id) => !now.has(id));
    figures.check(left.length === 0, `${label}: ${left.length} connections to our primary closed (the store reconnected)`);
    const replayed = await replayAll(label, proxies, token, keys);
    const blocked = await blockedKeys(proxies, upstream, token, keys);
    tableRow(
      label,
      upstream,
      keys,
      keys.length,
      replayed,
      blocked,
      `0 (never stopped: ${refused} refused, ${left.length} of ${connected.size} connections to our primary closed)`,
    );
  } finally {
    for (const proxy of proxies) await proxy.close();
    await upstream.close();
    await sentinel.stop();
    await otherReplica.stop();
    await otherPrimary.stop();
  }
}

/**
 * A cluster slot migrating while deposits run: every deposit key of one slot, the slot moved from its
 * primary to another (`CLUSTER SETSLOT … IMPORTING`/`MIGRATING`, then `MIGRATE` of its keys in two
 * steps, then `SETSLOT … NODE`). Meanwhile new moves (absent on the source: `ASK`) and replays of
 * settled keys (half of them already moved) are answered; after it, `MOVED`. 0 doubles.
 */
async function slotMigration(): Promise<void> {
  const label = 'cluster, a slot migrating (`SETSLOT MIGRATING`/`IMPORTING`, `MIGRATE`) while deposits run';
  const upstream = await depositUpstream();
  const cluster = await startRedisCluster();
  const proxies: TestProxy[] = [];
  try {
    const token = fakeJwt({ sub: '7', n: Math.random() });
    const tag = `slot-${Math.random().toString(36).slice(2)}`;
    const record = (key: string) => recordKey({ move: 'deposit', token, key, body: '' });
    const slot = calculateSlot(record(`${tag}-0`));
    // Twelve deposit keys whose records share that slot (one in 16,384 candidates).
    const keys: string[] = [];
    for (let i = 0; keys.length < 12 && i < 2_000_000; i++) if (calculateSlot(record(`${tag}-${i}`)) === slot) keys.push(`${tag}-${i}`);
    figures.check(keys.length === 12, `${label}: only ${keys.length} keys found in slot ${slot}`);
    const source = await cluster.primaryOf(record(keys[0] as string));
    const primaries: TestRedis[] = [];
    for (const node of cluster.nodes) if ((await redisCli(node.port, 'ROLE')).startsWith('master')) primaries.push(node);
    const target = primaries.find((n) => n !== source) as TestRedis;
    const id = async (node: TestRedis) => (await redisCli(node.port, 'CLUSTER', 'MYID')).trim();
    proxies.push(...(await startPair(upstream, cluster.env)));
    const [a, b] = proxies as [TestProxy, TestProxy];
    const before = await settle(label, proxies, token, keys.slice(0, 4));
    figures.check(before.size === 4, `${label}: ${4 - before.size} keys not settled before the migration`);
    figures.faults++;
    await redisCli(target.port, 'CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', await id(source));
    await redisCli(source.port, 'CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', await id(target));
    const migrate = async (names: readonly string[]) => {
      if (names.length > 0) await redisCli(source.port, 'MIGRATE', '127.0.0.1', String(target.port), '', '0', '5000', 'KEYS', ...names);
    };
    // Half of the settled keys moved: their replays are asked of the target (ASK), the others answered by the source.
    await migrate(keys.slice(0, 2).map(record));
    const whileMigrating = await Promise.all([
      ...keys.slice(0, 4).map((key, i) => depositOn(i % 2 === 0 ? b : a, token, key, amountOf(key))),
      ...keys.slice(4, 8).map((key, i) => depositOn(i % 2 === 0 ? a : b, token, key, amountOf(key))),
    ]);
    const answered = whileMigrating.map((r) => counted(label, r));
    const replaysDuring = answered.slice(0, 4).filter((r) => r.status === 200 && r.headers.get('idempotent-replayed') === 'true').length;
    const newDuring = answered.slice(4).filter((r) => r.status === 200 && r.headers.get('idempotent-replayed') === null).length;
    figures.check(
      replaysDuring === 4,
      `${label}: ${4 - replaysDuring} of 4 settled keys not replayed while the slot migrated (${answered
        .slice(0, 4)
        .map((r) => r.status)
        .join()})`,
    );
    figures.check(
      newDuring === 4,
      `${label}: ${4 - newDuring} of 4 new moves not taken while the slot migrated (${answered
        .slice(4)
        .map((r) => r.status)
        .join()})`,
    );
    const onTarget = Number(await redisCli(target.port, 'CLUSTER', 'COUNTKEYSINSLOT', String(slot)));
    await migrate((await redisCli(source.port, 'CLUSTER', 'GETKEYSINSLOT', String(slot), '1000')).split('\n').filter(Boolean));
    for (const node of primaries) await redisCli(node.port, 'CLUSTER', 'SETSLOT', String(slot), 'NODE', await id(target));
    figures.check((await cluster.primaryOf(record(keys[0] as string))) === target, `${label}: the slot was not moved to ${target.port}`);
    const after = await settle(label, proxies, token, keys.slice(4));
    const replayed = await replayAll(label, proxies, token, [...before, ...after]);
    const blocked = await blockedKeys(proxies, upstream, token, keys);
    const refusals = answered.filter((r) => r.status !== 200).length;
    tableRow(
      label,
      upstream,
      keys,
      before.size + after.size,
      replayed,
      blocked,
      `0 (never stopped: ${refusals} of ${answered.length} moves and replays refused while it migrated; ${onTarget} records already on the target then, ${replaysDuring}/4 settled keys replayed)`,
    );
  } finally {
    for (const proxy of proxies) await proxy.close();
    await upstream.close();
    await cluster.stop();
  }
}

/**
 * How long the only replica stays down in the row below, in seconds: past the marker's lease (8 s:
 * the 1 s queue wait + 2 s time limit + 5 s; after it, without the hand-off, a repeat would go
 * upstream again once Redis takes writes) in the bounded run, the issue's 70 s in the full one.
 */
const REPLICA_DOWN_S = FULL ? 70 : 10;

/**
 * The only replica down for {@link REPLICA_DOWN_S} (its primary refusing writes meanwhile,
 * `min-replicas-to-write 1`), while five answers are on their way from the BFF, and one proxy
 * instance (a process of its own) stopped by SIGTERM and started again meanwhile: its answers are
 * handed to the other instance at shutdown, replayed there, stored once the replica is back, never
 * charged again.
 */
async function replicaDownInstanceRestarted(): Promise<void> {
  const label = `Sentinel, the only replica down ${REPLICA_DOWN_S} s, an instance restarted meanwhile (SIGTERM, a new process)`;
  const upstream = await depositUpstream(1_000);
  const sentinel = await startRedisSentinel({ minReplicasToWrite: 1 });
  const env = {
    NODE_ENV: 'test',
    BFF_BASE_URL: upstream.url,
    UPSTREAM_TIMEOUT_MS: '2000',
    RATE_LIMIT_API_PER_MIN: '0',
    RATE_LIMIT_API_PER_ADDRESS_PER_MIN: '0',
    LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
    ...sentinel.env,
  };
  const [a, b] = [await proxyProcess(env), await proxyProcess(env)];
  try {
    await Promise.all([a.start(), b.start()]);
    const token = fakeJwt({ sub: '7', n: Math.random() });
    const tag = `down-${Math.random().toString(36).slice(2)}`;
    const keys = Array.from({ length: 10 }, (_, i) => `${tag}-${i}`);
    const before = await settle(label, [a, b], token, keys.slice(0, 5));
    figures.check(before.size === 5, `${label}: ${5 - before.size} keys not settled before the replica went down`);
    // Five moves on A, their markers acknowledged; the replica killed while the BFF still answers them.
    const inFlight = keys.slice(5);
    const answered = Promise.all(inFlight.map((key) => depositOn(a, token, key, amountOf(key))));
    await untilTrue(5_000, 'the five moves at the BFF', async () => inFlight.every((key) => callsByKey(upstream).has(key)));
    figures.faults++;
    await sentinel.replica.kill();
    const downAt = Date.now();
    const answers = (await answered).map((r) => counted(label, r));
    figures.check(
      answers.every((r) => r.status === 200),
      `${label}: the moves under way answered ${answers.map((r) => r.status).join()}`,
    );
    figures.faults++;
    const exit = await a.stop('SIGTERM');
    const handed = /handed to the other instances/.test(a.output());
    figures.check(exit === 0 && handed, `${label}: A exited ${exit}, hand-off logged: ${handed} ${a.output().slice(-300)}`);
    await a.start();
    // B replays them at once from the queue it took over; the new A sends nothing (409 or 503).
    const onB = await Promise.all(inFlight.map((key) => depositOn(b, token, key, amountOf(key))));
    const replayedOnB = onB
      .map((r) => counted(label, r))
      .filter((r) => r.status === 200 && r.headers.get('idempotent-replayed') === 'true').length;
    figures.check(
      replayedOnB === inFlight.length,
      `${label}: ${inFlight.length - replayedOnB} handed-off answers not replayed by B while the replica was down`,
    );
    await sleep(downAt + REPLICA_DOWN_S * 1000 - Date.now());
    const onA = await Promise.all(inFlight.map((key) => depositOn(a, token, key, amountOf(key))));
    figures.check(
      onA.map((r) => counted(label, r)).every((r) => r.status !== 200 || r.headers.get('idempotent-replayed') === 'true'),
      `${label}: the new A charged a key while the replica was down`,
    );
    await sentinel.replica.start(['--replicaof', '127.0.0.1', String(sentinel.primary.port)]);
    const resumeS = await resumeOf(label, [a, b], token, tag, RESUME_LIMIT_MS);
    figures.check(resumeS !== undefined, `${label}: money moves did not resume within ${RESUME_LIMIT_MS / 1000} s of the replica's return`);
    const replayed = await replayAll(label, [a, b], token, keys);
    const blocked = await blockedKeys([a, b], upstream, token, keys);
    tableRow(
      label,
      upstream,
      keys,
      keys.length,
      replayed,
      blocked,
      resumeS === undefined
        ? 'never'
        : `${resumeS.toFixed(1)} s after the replica's return; ${replayedOnB}/${inFlight.length} handed-off answers replayed by the other instance meanwhile`,
    );
  } finally {
    await a.stop('SIGKILL');
    await b.stop('SIGKILL');
    await upstream.close();
    await sentinel.stop();
  }
}

describe('row 19: Redis failover', { skip: HAVE_REDIS ? false : 'redis-server is not installed (.ci/run installs it)' }, () => {
  after(() => figures.write());

  test('Sentinel: a killed primary, 200 deposits, 0 doubles, moves resume after the promotion', { timeout: 120_000 }, async () => {
    await run('Sentinel', sentinelDeployment);
    assert.equal(figures.failureCount, 0, figures.summary());
  });

  test('cluster: a killed primary, 200 deposits, 0 doubles, moves resume after the promotion', { timeout: 120_000 }, async () => {
    await run('cluster', clusterDeployment);
    assert.equal(figures.failureCount, 0, figures.summary());
  });

  for (const event of EVENTS) {
    test(
      `${event.topology}: ${event.name}: 0 doubles, 0 keys left blocked, every settled key replayed`,
      { skip: event.bounded || FULL ? false : 'HARDENING_FULL=1 runs it', timeout: 240_000 },
      async () => {
        await figures.run(`${event.topology}, ${event.name}`, () => runEvent(event));
        assert.equal(figures.failureCount, 0, figures.summary());
      },
    );
  }

  test(
    'Sentinel: the primary crashed and not started again: auto resumes on the promoted replica, a floor of 1 refuses',
    { timeout: 90_000 },
    async () => {
      await figures.run('Sentinel, primary crashed and not started again', () => crashedNotRestarted('Sentinel'));
      assert.equal(figures.failureCount, 0, figures.summary());
    },
  );

  test(
    'cluster: a primary crashed and not started again',
    { skip: FULL ? false : 'HARDENING_FULL=1 runs it', timeout: 120_000 },
    async () => {
      await figures.run('cluster, primary crashed and not started again', () => crashedNotRestarted('cluster'));
      assert.equal(figures.failureCount, 0, figures.summary());
    },
  );

  test(
    'Sentinel: two replicas, the first to promote lagging: moves refused while it lags, 0 doubles after the crash',
    { timeout: 90_000 },
    async () => {
      await figures.run('Sentinel, two replicas, one lagging', laggingReplica);
      assert.equal(figures.failureCount, 0, figures.summary());
    },
  );

  test(
    'REDIS_URL managed endpoint: a switchover that keeps the connections (READONLY reconnects), the start warning at 0',
    { timeout: 60_000 },
    async () => {
      await figures.run('REDIS_URL managed endpoint', managedEndpoint);
      assert.equal(figures.failureCount, 0, figures.summary());
    },
  );

  test(
    'Sentinel: the only replica down, an instance restarted meanwhile: its answers handed off, replayed, never charged again',
    { timeout: 60_000 + REPLICA_DOWN_S * 1000 },
    async () => {
      await figures.run('Sentinel, the only replica down, an instance restarted', replicaDownInstanceRestarted);
      assert.equal(figures.failureCount, 0, figures.summary());
    },
  );

  test('Sentinel: a second master on the same sentinels switched over: no reconnect, no refusal', { timeout: 60_000 }, async () => {
    await figures.run('Sentinel, a second master switched over', secondMaster);
    assert.equal(figures.failureCount, 0, figures.summary());
  });

  test('REDIS_URL managed endpoint: a crash, the relay re-pointed at the promoted replica: 0 doubles', { timeout: 60_000 }, async () => {
    await figures.run('REDIS_URL managed endpoint, crash', managedCrash);
    assert.equal(figures.failureCount, 0, figures.summary());
  });

  test(
    'cluster: a slot migrating while deposits run: ASK and MOVED followed, settled keys replayed, 0 doubles',
    { timeout: 60_000 },
    async () => {
      await figures.run('cluster, a slot migrating', slotMigration);
      assert.equal(figures.failureCount, 0, figures.summary());
    },
  );

  test('two identical deposits without a key 6 s apart: two upstream keys, two charges', { timeout: 30_000 }, async () => {
    await figures.run('two deposits without a key', twoDeposits);
    assert.equal(figures.failureCount, 0, figures.summary());
  });

  test('a long queue wait: a move still queued on one instance is never sent by the other', { timeout: 60_000 }, async () => {
    await figures.run('a long queue wait', longQueue);
    assert.equal(figures.failureCount, 0, figures.summary());
  });
});
