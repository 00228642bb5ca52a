/**
 * Scenario family **tracing**: the passthrough with `OTEL_EXPORTER_OTLP_ENDPOINT` (a local collector,
 * on the upstream's CPU), each row against the same without tracing, at the sampling ratios an
 * operator runs: `OTEL_TRACES_SAMPLER=parentbased_traceidratio` with `OTEL_TRACES_SAMPLER_ARG` 0
 * (exporter on, nothing sampled), 0.01 and 0.1, and full sampling (the SDK's default sampler), in the
 * OTLP encoding `BENCH_OTLP_PROTOCOL` gives (`http/json`, the proxy's default, or `http/protobuf`), plus
 * full sampling in the other encoding. Each row has its own proxy, exporting below its own path of the
 * collector (`/t/<target>`), which counts its exports apart. Tracing off is the proxy that serves the
 * passthrough only ({@link PASSTHROUGH_ONLY_ROW}), as each tracing proxy does.
 *
 * @module
 */
import { call, type Check, findRow, fmt, type RowReport, type ScenarioFamily, skipReason, unmeasured } from '../harness.js';
import type { CollectorCounts } from '../collector.js';
import { startBenchServer } from '../harness.js';
import { PASSTHROUGH_ONLY_ROW } from './routes.js';

/** The OTLP/HTTP encodings of the exporter (`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`). */
export const OTLP_PROTOCOLS = ['http/json', 'http/protobuf'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** One tracing row: its target id, the sampling ratio (`undefined`: the SDK's default sampler, every request) and the encoding. */
interface TracingRow {
  id: string;
  target: string;
  ratio: number | undefined;
  protocol: OtlpProtocol;
}

/** The sampling ratios of the rows, in the table's order (`undefined`: full sampling, the default sampler). */
const RATIOS: readonly (number | undefined)[] = [0, 0.01, 0.1, undefined];

/** Floor of each ratio's requests/s against tracing off (issue 36). */
const TARGET_FLOORS: readonly [ratio: number, floor: number][] = [
  [0.1, 0.9],
  [0.01, 0.95],
];

/** The encoding of the rows (`BENCH_OTLP_PROTOCOL`, default `http/json`). */
export function benchProtocol(env: NodeJS.ProcessEnv = process.env): OtlpProtocol {
  const value = env.BENCH_OTLP_PROTOCOL || 'http/json';
  if (!(OTLP_PROTOCOLS as readonly string[]).includes(value))
    throw new Error(`BENCH_OTLP_PROTOCOL: expected ${OTLP_PROTOCOLS.join(' or ')}, got "${value}"`);
  return value as OtlpProtocol;
}

/** The tracing rows for an encoding: each ratio in it, and full sampling in the other one. */
export function tracingRows(protocol: OtlpProtocol): TracingRow[] {
  const other = protocol === 'http/json' ? 'http/protobuf' : 'http/json';
  const short = (p: OtlpProtocol) => (p === 'http/json' ? 'json' : 'protobuf');
  const rows: TracingRow[] = RATIOS.map((ratio) =>
    ratio === undefined
      ? // The round-3 row (full sampling) keeps its id.
        { id: 'tracing/passthrough', target: 'proxy-tracing', ratio, protocol }
      : { id: `tracing/ratio-${ratio}`, target: `proxy-tracing-${ratio}`, ratio, protocol },
  );
  rows.push({ id: `tracing/${short(other)}`, target: `proxy-tracing-${short(other)}`, ratio: undefined, protocol: other });
  return rows;
}

/** The proxy's environment for a row (the collector's path for its target). */
function tracingEnv(row: TracingRow, collectorPort: number): Record<string, string> {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collectorPort}/t/${row.target}`,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: row.protocol,
    ...(row.ratio === undefined ? {} : { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: String(row.ratio) }),
  };
}

const rowsOfProtocol = tracingRows(benchProtocol());

function label(row: TracingRow): string {
  const sampling = row.ratio === undefined ? 'every request' : `parentbased_traceidratio ${row.ratio}`;
  return `proxy, OTLP ${row.protocol}, ${sampling}`;
}

/** The tracing family: one row per sampling ratio and encoding (see the module documentation). */
export const tracing: ScenarioFamily = {
  scenarios: { tracing: 'passthrough, tracing on (vs off)' },
  targetLabels: Object.fromEntries(rowsOfProtocol.map((r) => [r.target, label(r)])),
  comparisons: rowsOfProtocol.map((r) => ({
    label: `passthrough, ${label(r)}, against tracing off`,
    row: r.id,
    base: PASSTHROUGH_ONLY_ROW,
  })),

  async plan(ctx) {
    const collector = await startBenchServer('collector', [], ctx.pinned ? '1' : undefined);
    const base = ctx.rows.some((r) => r.id === PASSTHROUGH_ONLY_ROW) ? PASSTHROUGH_ONLY_ROW : undefined;
    if (!base) ctx.skipped.push('tracing: its ratio needs the passthrough scenario');
    for (const row of rowsOfProtocol) {
      await ctx.startProxyTarget(row.target, tracingEnv(row, collector.port));
      ctx.observe(row.target, 'collector', collector.child.pid as number);
      ctx.rows.push({ ...ctx.passthroughRow(row.id, 'tracing', row.target), base });
    }
    tracingCollectors.set(ctx.findings, collector.port);
  },

  async afterRuns(ctx) {
    const port = tracingCollectors.get(ctx.findings);
    if (port === undefined) return;
    ctx.findings.collector = await call(`http://127.0.0.1:${port}/__bench/exports`).then(
      (res) => JSON.parse(res.text) as CollectorCounts,
      () => null,
    );
  },

  checks(rows, inputs) {
    if (!inputs.wanted.has('tracing')) return [];
    const checks: Check[] = [];
    const received = inputs.findings.collector;
    for (const row of rowsOfProtocol) {
      const report = rows.find((r) => r.id === row.id);
      if (!report) continue;
      const counts = received?.byPrefix[`/t/${row.target}`] ?? { exports: 0, bytes: 0 };
      const detail = received ? `${counts.exports} exports, ${fmt(counts.bytes / 1024, 0)} KiB` : 'no answer from the collector';
      // At full sampling a batch (512 spans) fills within the runs; at 0.01 a short run may export
      // nothing before the batch delay (5 s): its exports are reported only.
      if (row.ratio === 0) {
        checks.push({
          name: `${row.id}: nothing sampled, nothing exported`,
          ok: received !== null && counts.exports === 0,
          kind: 'correctness',
          detail,
        });
      } else if (row.ratio === undefined) {
        checks.push({
          name: `${row.id}: the collector received at least one export during the runs`,
          ok: counts.exports >= 1,
          kind: 'correctness',
          detail,
        });
      } else {
        checks.push({ name: `${row.id}: exports received: reported`, ok: true, kind: 'reported', detail });
      }
    }
    for (const [ratio, floor] of TARGET_FLOORS) {
      const name = `tracing sampled at ${ratio} (parentbased_traceidratio) vs tracing off ≥ ${floor.toFixed(2)}× rps`;
      const row: RowReport | undefined = rows.find((r) => r.id === `tracing/ratio-${ratio}`);
      if (!row || row.ratio === undefined)
        checks.push(unmeasured(name, skipReason(inputs.skipped, 'tracing') ?? 'the row or tracing off did not run'));
      else checks.push({ name, ok: row.ratio >= floor, kind: 'target', detail: `${fmt(row.ratio, 2)}×` });
    }
    const full = findRow(rows, 'tracing', 'proxy-tracing');
    if (full)
      checks.push({
        name: 'tracing at full sampling vs tracing off: reported',
        ok: true,
        kind: 'reported',
        detail: `${fmt(full.ratio, 2)}×`,
      });
    return checks;
  },
};

/** The collector's port of a bench run (keyed by the run's findings: one per run). */
const tracingCollectors = new WeakMap<object, number>();
