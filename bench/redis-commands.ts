/**
 * What one deposit costs Redis, by command: the `redis-commands` scenario's measurement. It sends
 * deposits one at a time (never two in flight) to a proxy with `REDIS_URL`, and reads from the
 * redis-server the commands it ran (`INFO commandstats`, reset before) and the reads it processed
 * (`INFO stats` `total_reads_processed`: with one request in flight, one read per round trip, however
 * many commands a pipeline or a `MULTI` sends in it), and the order of one deposit's commands
 * (`MONITOR`, keys and values left out). Then it replays that sequence against the same server three
 * ways, to measure what batching would save: one round trip per command (as sent), one pipeline (every
 * command in one write), one `EVAL` of a script that runs them all.
 *
 * The replay measures round trips only: the proxy's guard decides its next command from the answer of
 * the one before, which a pipeline cannot; a script could (it runs server-side).
 *
 * @module
 */
import { Redis } from 'ioredis';
import { clientHeaders } from './clients.js';

/** One command of a deposit, as MONITOR shows it: its name and how many arguments it had. */
export interface MonitoredCommand {
  /** Upper-case command name (`SET`, `GET`, `EVAL`, `MULTI`…). */
  name: string;
  /** Arguments after the name (their count only: keys and values are never kept). */
  args: number;
}

/** The report of the `redis-commands` scenario (`results.json`, `redisCommands`). */
export interface RedisCommandReport {
  /** Deposits sent, one at a time. */
  deposits: number;
  /** Of them, answered 2xx. */
  succeeded: number;
  /** Commands per deposit, by name (lower-case, as `INFO commandstats` names them). */
  commandsPerDeposit: Record<string, number>;
  /** All commands per deposit. */
  totalPerDeposit: number;
  /** Reads the server processed per deposit (`total_reads_processed`): its round trips, one request in flight. */
  roundTripsPerDeposit: number;
  /** The same for the passthrough GETs sent the same way (the proxy's floor with `REDIS_URL`: 0 expected). */
  passthroughCommandsPerRequest: number;
  /** One deposit's commands in order (MONITOR), names and argument counts. */
  sequence: MonitoredCommand[];
  /**
   * The exactly-once records the deposits left (`front-proxy:idem:*`), measured on the server: how many,
   * and their median value length and `MEMORY USAGE` in bytes (the kept answer, with its key and
   * Redis's own overhead).
   */
  records: { count: number; medianBytes: number; medianMemoryBytes: number } | null;
  /** The replay of `sequence`: microseconds per deposit's worth, median of `replays` rounds. */
  replay: { replays: number; sequentialUs: number; pipelinedUs: number; scriptUs: number } | null;
}

/** `INFO commandstats` as calls by command (`cmdstat_set:calls=12,…` → `{ set: 12 }`; Redis 7 names subcommands `config|resetstat`). */
export function parseCommandStats(info: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out[match[1] as string] = Number(match[2]);
  return out;
}

/** One field of an `INFO` section (`total_reads_processed:123`), or `NaN`. */
export function infoField(info: string, field: string): number {
  const match = new RegExp(`^${field}:(\\d+)`, 'm').exec(info);
  return match ? Number(match[1]) : Number.NaN;
}

/** Commands the bench's own connection sends while measuring, left out of the counts. */
const OWN_COMMANDS = new Set(['info', 'config', 'monitor', 'client', 'ping', 'hello', 'select']);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** What {@link measureRedisCommands} sends its requests to. */
export interface RedisCommandTarget {
  redisUrl: string;
  /** Base URL of a proxy with `REDIS_URL` = `redisUrl`, no other client of that server busy. */
  proxy: string;
  depositPath: string;
  /** The deposit body; `__N__` becomes a different amount for every request. */
  depositBody: string;
  passthroughPath: string;
  /** Deposits (and passthrough GETs) to send, one at a time. */
  count: number;
  /** Replay rounds of the sequence (each 200 sequences). */
  replays: number;
}

async function send(url: string, method: 'GET' | 'POST', headers: Record<string, string>, body?: string): Promise<number> {
  const res = await fetch(url, { method, headers, body });
  await res.arrayBuffer();
  return res.status;
}

/**
 * Counts the Redis commands and round trips of `count` deposits (and of `count` passthrough GETs)
 * sent one at a time, records one deposit's sequence, and replays it (see the module documentation).
 * Every wait is bounded: each request by fetch's own timeouts, the whole by the caller's.
 */
export async function measureRedisCommands(target: RedisCommandTarget): Promise<RedisCommandReport> {
  const admin = new Redis(target.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await admin.connect();
  try {
    // A session per burst of deposits, as the deposit row sends them (the profile cache is warm after the first).
    const sessions = clientHeaders(Math.max(1, Math.ceil(target.count / 64)), true);
    const headersOf = (i: number) => ({ ...(sessions[Math.floor(i / 64)] ?? sessions[0]), 'content-type': 'application/json' });
    const bodyOf = () => target.depositBody.replaceAll('__N__', String(1 + Math.floor(Math.random() * 1_000_000)));
    // One deposit per session first (its profile fetched and kept), so that the counts are the deposit's own.
    for (let i = 0; i < target.count; i += 64) await send(`${target.proxy}${target.depositPath}`, 'POST', headersOf(i), bodyOf());

    const count = async (run: () => Promise<void>) => {
      await admin.config('RESETSTAT');
      await run();
      const stats = parseCommandStats(await admin.info('commandstats'));
      const reads = infoField(await admin.info('stats'), 'total_reads_processed');
      for (const name of Object.keys(stats)) if (OWN_COMMANDS.has(name.split('|')[0] as string)) delete stats[name];
      // The admin connection's own reads since the reset: the two INFO commands.
      return { stats, reads: reads - 2 };
    };

    let passthroughCommands = 0;
    const passthrough = await count(async () => {
      for (let i = 0; i < target.count; i++) await send(`${target.proxy}${target.passthroughPath}`, 'GET', headersOf(i));
    });
    passthroughCommands = Object.values(passthrough.stats).reduce((a, b) => a + b, 0);

    let succeeded = 0;
    const deposits = await count(async () => {
      for (let i = 0; i < target.count; i++) {
        const status = await send(`${target.proxy}${target.depositPath}`, 'POST', headersOf(i), bodyOf());
        if (status >= 200 && status < 300) succeeded++;
      }
    });
    const commandsPerDeposit: Record<string, number> = {};
    for (const [name, calls] of Object.entries(deposits.stats)) commandsPerDeposit[name] = calls / target.count;
    const totalPerDeposit = Object.values(commandsPerDeposit).reduce((a, b) => a + b, 0);

    // One deposit's sequence, from MONITOR (names and argument counts only).
    const monitor = await admin.monitor();
    const sequence: MonitoredCommand[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      const name = String(args[0] ?? '').toUpperCase();
      if (!OWN_COMMANDS.has(name.toLowerCase())) sequence.push({ name, args: args.length - 1 });
    });
    await send(`${target.proxy}${target.depositPath}`, 'POST', headersOf(0), bodyOf());
    await new Promise((resolve) => setTimeout(resolve, 100));
    monitor.disconnect();

    const records = await keptRecords(admin);
    const replay = sequence.length > 0 ? await replaySequence(admin, sequence, target.replays) : null;
    return {
      records,
      deposits: target.count,
      succeeded,
      commandsPerDeposit,
      totalPerDeposit,
      roundTripsPerDeposit: deposits.reads / target.count,
      passthroughCommandsPerRequest: passthroughCommands / target.count,
      sequence,
      replay,
    };
  } finally {
    admin.disconnect();
  }
}

/** The exactly-once records on the server (see {@link RedisCommandReport.records}); `null` when there are none. */
async function keptRecords(admin: Redis): Promise<RedisCommandReport['records']> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await admin.scan(cursor, 'MATCH', 'front-proxy:idem:*', 'COUNT', 1000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0' && keys.length < 10_000);
  if (keys.length === 0) return null;
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const lengths = await Promise.all(keys.map((key) => admin.strlen(key)));
  const usage = await Promise.all(keys.map((key) => admin.memory('USAGE', key).then((n) => Number(n ?? 0))));
  return { count: keys.length, medianBytes: median(lengths), medianMemoryBytes: median(usage) };
}

/** Sequences per replay round. */
const SEQUENCES_PER_ROUND = 200;

/**
 * The sequence's round-trip cost three ways, on keys of the bench's own (`bench:replay:*`): each
 * command awaited in turn, all in one pipeline, all in one `EVAL`. `MULTI`/`EXEC` and scripts of the
 * sequence are replayed as a `SET` of a ~1 KB value (their shape, not their meaning, is what is timed).
 * @returns microseconds per sequence, medians of `rounds` rounds of {@link SEQUENCES_PER_ROUND}.
 */
async function replaySequence(
  client: Redis,
  sequence: readonly MonitoredCommand[],
  rounds: number,
): Promise<{ replays: number; sequentialUs: number; pipelinedUs: number; scriptUs: number }> {
  const value = 'x'.repeat(1024);
  const plain = sequence.filter((c) => c.name !== 'MULTI' && c.name !== 'EXEC');
  const commands = plain.map((c, i): [string, ...string[]] =>
    c.name === 'GET' ? ['get', `bench:replay:${i}`] : ['set', `bench:replay:${i}`, value, 'PX', '60000'],
  );
  const script = `for i = 1, #KEYS do if ARGV[i] == 'get' then redis.call('GET', KEYS[i]) else redis.call('SET', KEYS[i], ARGV[#KEYS + 1], 'PX', 60000) end end return 1`;
  const keys = commands.map((c) => c[1] as string);
  const kinds = commands.map((c) => c[0]);
  const time = async (once: () => Promise<unknown>) => {
    const started = process.hrtime.bigint();
    for (let i = 0; i < SEQUENCES_PER_ROUND; i++) await once();
    return Number(process.hrtime.bigint() - started) / 1000 / SEQUENCES_PER_ROUND;
  };
  const sequential: number[] = [];
  const pipelined: number[] = [];
  const scripted: number[] = [];
  for (let round = 0; round < rounds; round++) {
    sequential.push(
      await time(async () => {
        for (const [name, ...args] of commands) await client.call(name, ...args);
      }),
    );
    pipelined.push(await time(() => client.pipeline(commands).exec()));
    scripted.push(await time(() => client.eval(script, keys.length, ...keys, ...kinds, value)));
  }
  await client.del(...keys);
  return { replays: rounds, sequentialUs: median(sequential), pipelinedUs: median(pipelined), scriptUs: median(scripted) };
}

/** The report as lines of text, printed under the table. */
export function formatRedisCommands(report: RedisCommandReport): string[] {
  const f = (n: number, d = 2) => n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
  const lines = [
    `Redis per deposit (${report.deposits} deposits one at a time, ${report.succeeded} answered 2xx): ${f(report.totalPerDeposit)} commands, ${f(report.roundTripsPerDeposit)} round trips`,
    `  by command: ${
      Object.entries(report.commandsPerDeposit)
        .map(([name, n]) => `${name} ${f(n)}`)
        .join(', ') || 'none'
    }; passthrough GET: ${f(report.passthroughCommandsPerRequest)} commands per request`,
    `  one deposit's sequence (MONITOR): ${report.sequence.map((c) => `${c.name}(${c.args})`).join(' → ') || 'none'}`,
  ];
  if (report.records) {
    const r = report.records;
    lines.push(
      `  kept records: ${r.count} (front-proxy:idem:*), median value ${r.medianBytes} bytes, MEMORY USAGE ${r.medianMemoryBytes} bytes`,
    );
  }
  if (report.replay) {
    const r = report.replay;
    lines.push(
      `  replayed (${r.replays} × ${SEQUENCES_PER_ROUND}, median): one round trip per command ${f(r.sequentialUs, 1)} µs, one pipeline ${f(r.pipelinedUs, 1)} µs, one EVAL ${f(r.scriptUs, 1)} µs per deposit's worth`,
    );
  }
  return lines;
}
