/**
 * Scenario family **streams**: the live streams (docs/behaviour.md "Live streams"), measured by
 * `bench/streams.ts` on a proxy process of its own on the proxies' Node.js (`BENCH_NODE`): 5,000 idle
 * signed-in streams' RSS, delivery latency beside direct connections, a shared feed's fan-out, an
 * ordinary read with the streams open, WebSocket messages per second. No load rows: its figures are
 * printed under the table and kept in the report's `streams`; `npm run bench:streams` runs it alone.
 *
 * @module
 */
import type { Check, ScenarioFamily } from '../harness.js';
import { ADDED_P99_TARGET_MS, formatStreams, measureStreams, RSS_TARGET_STREAMS_MB } from '../streams.js';

/** The streams family. */
export const streams: ScenarioFamily = {
  scenarios: { streams: 'live streams (no load rows)' },

  async plan(ctx) {
    ctx.say('measuring the live streams (about a minute)');
    ctx.findings.streams = await measureStreams({ node: ctx.targetNode.execPath });
  },

  summary({ streams: report }) {
    return report ? ['', ...formatStreams(report)] : [];
  },

  checks(_rows, inputs) {
    if (!inputs.wanted.has('streams')) return [];
    const report = inputs.findings.streams;
    if (!report) return [];
    const added = report.latency.proxyP99 - report.latency.directP99;
    const checks: Check[] = [
      {
        name: `streams: ${report.streams} idle signed-in streams under ${RSS_TARGET_STREAMS_MB} MB RSS`,
        ok: report.rssIdleMb < RSS_TARGET_STREAMS_MB,
        kind: 'target',
        detail: `${report.rssIdleMb.toFixed(0)} MB, ${report.kbPerStream.toFixed(1)} KB per stream`,
      },
      {
        name: `streams: added delivery p99 under ${ADDED_P99_TARGET_MS} ms`,
        ok: added < ADDED_P99_TARGET_MS,
        kind: 'target',
        detail: `${added.toFixed(2)} ms (proxy ${report.latency.proxyP99.toFixed(2)}, direct ${report.latency.directP99.toFixed(2)})`,
      },
      {
        name: 'streams: one upstream stream for every anonymous viewer of a feed',
        ok: report.fanOut.upstreamStreams === 1,
        kind: 'correctness',
        detail: `${report.fanOut.upstreamStreams} upstream stream(s) for ${report.live} viewers`,
      },
      {
        name: 'streams: an ordinary read within 10% with the streams open',
        ok: report.readP99WithStreamsMs <= report.readP99Ms * 1.1,
        kind: 'target',
        detail: `p99 ${report.readP99Ms.toFixed(2)} → ${report.readP99WithStreamsMs.toFixed(2)} ms; the proxy's CPU per read ${report.readCpuUs.toFixed(0)} → ${report.readCpuWithStreamsUs.toFixed(0)} µs`,
      },
    ];
    return checks;
  },
};
