/**
 * Scenario family **workers**: the passthrough with `WORKERS=1` and `WORKERS=2` (both with `REDIS_URL`,
 * which more than one worker needs), unpinned, after the pinned rows; `WORKERS=2`'s ratio is to
 * `WORKERS=1`'s. On two CPUs shared with the load generator and the upstream it cannot show a gain.
 *
 * @module
 */
import { pin } from '../proc.js';
import { type ScenarioFamily, sleep } from '../harness.js';

/** The workers family: `WORKERS=1` and `WORKERS=2`, unpinned. */
export const workers: ScenarioFamily = {
  scenarios: { workers: 'passthrough, unpinned' },
  targetLabels: { 'proxy-w1': 'proxy WORKERS=1', 'proxy-w2': 'proxy WORKERS=2' },
  comparisons: [{ label: 'passthrough with WORKERS=2 against WORKERS=1 (unpinned)', row: 'workers/proxy-w2', base: 'workers/proxy-w1' }],

  async plan(ctx) {
    const redis = await ctx.redis();
    if (!redis) {
      ctx.skipped.push('workers: redis-server is not installed (WORKERS=2 needs REDIS_URL)');
      return;
    }
    for (const target of ['proxy-w1', 'proxy-w2'] as const) {
      ctx.unpinnedRows.push({ ...ctx.passthroughRow(`workers/${target}`, 'workers', target, false), base: 'workers/proxy-w1' });
      ctx.observe(target, 'redis-server', redis.child.pid as number);
    }
  },

  async beforeUnpinned(ctx) {
    if (!ctx.unpinnedRows.some((r) => r.scenario === 'workers')) return;
    const redis = await ctx.redis();
    if (!redis) return;
    // Every process of the phase may use every CPU.
    if (ctx.pinned) for (const pid of [ctx.upstreamPid, redis.child.pid as number]) pin(pid, '0-1');
    for (const [id, count] of [
      ['proxy-w1', 1],
      ['proxy-w2', 2],
    ] as const) {
      await ctx.startProxyTarget(id, { REDIS_URL: redis.url }, { workers: count, cpus: undefined });
      await sleep(count > 1 ? 500 : 0); // the workers fork after the primary answers
      // The cluster's processes, now that the workers are up.
      const target = ctx.targets.get(id);
      if (target) ctx.addTarget(id, { child: target.child, port: target.port, metricsPort: target.metricsPort }, ctx.targetNode);
    }
  },
};
