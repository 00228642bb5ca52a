/**
 * Scenario family **state**: the proxy with `REDIS_URL` (a local redis-server the bench starts, on the
 * upstream's CPU). `redis`: the passthrough and the deposit against the same without `REDIS_URL`;
 * `redis-commands`: no load, the Redis commands and round trips of one deposit, counted on the server,
 * and what a pipeline or one script would save, replayed (`redis-commands.ts`).
 *
 * @module
 */
import type { Check, ScenarioFamily } from '../harness.js';
import { formatRedisCommands, measureRedisCommands } from '../redis-commands.js';
import { depositRow } from './money.js';
import { DEPOSIT_BODY, DEPOSIT_PATH, PASSTHROUGH_ONLY_ROW } from './routes.js';

/** Deposits the `redis-commands` scenario sends, one at a time. */
const COUNTED_DEPOSITS = 200;
/** Replay rounds of one deposit's command sequence. */
const REPLAY_ROUNDS = 5;

/** The state family: the `redis` rows and the `redis-commands` count. */
export const state: ScenarioFamily = {
  scenarios: {
    redis: 'with REDIS_URL (vs without)',
    'redis-commands': 'Redis commands per deposit (no load)',
  },
  targetLabels: {
    'proxy-redis': 'proxy, REDIS_URL',
    'proxy-deposit-redis': 'proxy (own process), REDIS_URL',
    'proxy-redis-commands': 'proxy (own process), REDIS_URL, commands counted',
  },
  comparisons: [
    {
      label: 'passthrough with REDIS_URL against without (both serving the passthrough only)',
      row: 'redis/passthrough',
      base: PASSTHROUGH_ONLY_ROW,
    },
    { label: 'deposit with REDIS_URL against without', row: 'redis/deposit', base: 'deposit/proxy' },
  ],

  async plan(ctx) {
    const redis = await ctx.redis();
    if (!redis) {
      ctx.skipped.push('redis: redis-server is not installed');
      return;
    }
    const env = { REDIS_URL: redis.url };
    if (ctx.wanted.has('redis-commands')) {
      // Its own proxy and a quiet server: counted before any load, so that no other row's commands mix in.
      const target = await ctx.startProxyTarget('proxy-redis-commands', env);
      ctx.say(`counting the Redis commands of ${COUNTED_DEPOSITS} deposits, one at a time`);
      ctx.findings.redisCommands = await measureRedisCommands({
        redisUrl: redis.url,
        proxy: `http://127.0.0.1:${target.port}`,
        depositPath: DEPOSIT_PATH,
        depositBody: DEPOSIT_BODY,
        passthroughPath: ctx.passthrough.path,
        count: COUNTED_DEPOSITS,
        replays: REPLAY_ROUNDS,
      });
    }
    if (!ctx.wanted.has('redis')) return;
    ctx.observe('proxy-redis', 'redis-server', redis.child.pid as number);
    ctx.observe('proxy-deposit-redis', 'redis-server', redis.child.pid as number);
    await ctx.startProxyTarget('proxy-redis', env);
    await ctx.startProxyTarget('proxy-deposit-redis', env);
    const passthroughBase = ctx.rows.some((r) => r.id === PASSTHROUGH_ONLY_ROW);
    const depositBase = ctx.rows.some((r) => r.id === 'deposit/proxy');
    ctx.rows.push({
      ...ctx.passthroughRow('redis/passthrough', 'redis', 'proxy-redis'),
      base: passthroughBase ? PASSTHROUGH_ONLY_ROW : undefined,
    });
    ctx.rows.push({
      ...depositRow('redis/deposit', 'redis', 'proxy-deposit-redis', ctx.pinned),
      base: depositBase ? 'deposit/proxy' : undefined,
    });
    if (!passthroughBase || !depositBase) ctx.skipped.push('redis: its ratios need the passthrough and deposit scenarios');
  },

  summary({ redisCommands }) {
    return redisCommands ? ['', ...formatRedisCommands(redisCommands)] : [];
  },

  checks(_rows, inputs) {
    if (!inputs.wanted.has('redis-commands')) return [];
    const report = inputs.findings.redisCommands;
    if (!report) return [];
    const checks: Check[] = [
      {
        name: 'redis-commands: every counted deposit answered 2xx, and the passthrough made no Redis command',
        ok: report.succeeded === report.deposits && report.passthroughCommandsPerRequest === 0,
        kind: 'correctness',
        detail: `${report.succeeded} of ${report.deposits} deposits 2xx; ${report.passthroughCommandsPerRequest} commands per passthrough GET`,
      },
      {
        name: 'redis-commands: commands and round trips per deposit: reported',
        ok: true,
        kind: 'reported',
        detail: `${report.totalPerDeposit.toFixed(2)} commands, ${report.roundTripsPerDeposit.toFixed(2)} round trips`,
      },
    ];
    return checks;
  },
};
