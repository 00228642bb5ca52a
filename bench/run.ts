/**
 * `npm run bench`: the proxy (`npm start`'s command, `node <its options> dist/server.js`) in the
 * configuration of a production deployment (`NODE_ENV=production`, metrics on, the default rate limits,
 * behind a trusted load balancer, logging at `info`, tracing off) against a reference `node:http` +
 * undici `Pool` proxy (also started with the proxy's Node.js options, and with a minimal deposit of its
 * own) and a Fastify + `@fastify/reply-from` peer, all in front of one fast upstream, on loopback. The
 * proxies, the reference and the peer run on one Node.js (`BENCH_NODE`, default the npm registry's
 * `node@24`, the image's line), the upstream, the collector and autocannon on the bench's own; a second
 * proxy process on the bench's own Node.js (the machine's, 20) serves the passthrough, catalogue and
 * 401 rows once more beside them. The load comes from many clients: every request takes the next
 * session cookie and the next `X-Forwarded-For` address (`clients.ts`), so that no per-session or
 * per-address limit is reached. Each scenario runs for a fixed time, interleaved with the others,
 * `runs` times; the table shows medians. With `taskset` the proxies under test run on CPU 0 and the
 * upstream, the collector, Redis and the load generator on CPU 1.
 *
 * This module is the runner: it starts the upstream and the proxy, finds the passthrough route, asks
 * every scenario family (`scenarios/*.ts`, listed in `scenarios/index.ts`) for its targets and rows,
 * measures them interleaved, and prints the table, the comparisons, the targets and the checks. The
 * shared parts (processes, one measured run, the metrics) are in `harness.ts`.
 *
 * Environment: `BENCH_NODE` (`24` by default: `npx --yes -p node@24`; a version, `current` for the
 * Node.js running the bench, or the path of a `node` binary), `BENCH_SECONDS` (per run, default 10),
 * `BENCH_RUNS` (default 3), `BENCH_WARMUP` (seconds per row before the first run, default 2),
 * `BENCH_CONNECTIONS` (default 50), `BENCH_SESSIONS` (sessions and client addresses, default 4096),
 * `BENCH_TOOL` (`wrk` or `autocannon`; default `wrk` when installed), `BENCH_SCENARIOS`
 * (comma-separated {@link ScenarioId}s, default all), `BENCH_PIN=0` (no pinning), `BENCH_LOG` (the
 * proxy's log file, default `/dev/null`), `BENCH_RESULTS` (default `bench/results.json`),
 * `BENCH_PROXY_NODE_OPTIONS` (more Node.js options for the proxy processes only, given on their command
 * line, default none), `BENCH_RATE_LIMIT_API_PER_MIN` (the proxies' `RATE_LIMIT_API_PER_MIN` when set;
 * default: the proxy's default), `BENCH_OTLP_PROTOCOL` (`http/json` or `http/protobuf`: the OTLP
 * encoding of the tracing rows; full sampling runs in the other one too).
 *
 * @module
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import { renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { clientHeaders, DEFAULT_SESSIONS } from './clients.js';
import {
  type BenchContext,
  type BenchOptions,
  type BenchReport,
  type Check,
  type CheckInputs,
  children,
  type Findings,
  fmt,
  fmtStatuses,
  gitCommit,
  isMissingRoute,
  type MeasureContext,
  measure,
  median,
  type MetricsScrape,
  type NodeRuntime,
  type Observed,
  pairedRatio,
  type PassthroughRoute,
  peakProcessRss,
  probe,
  type ProxyLaunch,
  resolveNode,
  ROOT,
  type RowReport,
  type RowSpec,
  RSS_TARGET_MB,
  type RunResult,
  type ScenarioId,
  scrapeMetrics,
  startBenchServer,
  startNodeOptions,
  containerHeapOptions,
  startProxy,
  startRedisServer,
  stop,
  sumCalls,
  type Target,
  type TargetId,
} from './harness.js';
import { hasWrk, pickTool } from './load.js';
import { hasTaskset, pin, processTree, rssBytes } from './proc.js';
import { FAMILIES } from './scenarios/index.js';
import { PASSTHROUGH_CANDIDATES, PROFILE_UPSTREAM } from './scenarios/routes.js';

export type { BenchOptions, BenchReport, Check, Expected, RowReport, RunResult, ScenarioId, TargetId } from './harness.js';
export { pairedRatio, resolveNode, startNodeOptions, statusesOfRoute } from './harness.js';

/** Every scenario's name (`BENCH_SCENARIOS`), in the table's order: the families' own, in their order. */
export const SCENARIOS: readonly ScenarioId[] = FAMILIES.flatMap((f) => Object.keys(f.scenarios));

const SCENARIO_LABELS: Readonly<Record<ScenarioId, string>> = Object.assign({}, ...FAMILIES.map((f) => f.scenarios));

const TARGET_LABELS: Readonly<Record<TargetId, string>> = Object.assign(
  { proxy: 'proxy', 'proxy-host-node': "proxy on the bench's Node.js" },
  ...FAMILIES.map((f) => f.targetLabels ?? {}),
);

/** A target's label in the table (its id when no family names it). */
export function targetLabel(target: TargetId): string {
  return TARGET_LABELS[target] ?? target;
}

/** The table as text: one line per row, medians, ratio to the row's base (see {@link RowReport.ratio}). */
export function formatTable(rows: readonly RowReport[]): string {
  const header = [
    'scenario',
    'target',
    'node',
    'route',
    'req/s',
    'ratio',
    'p50 ms',
    'p99 ms',
    'CPU µs/req',
    'RSS MB',
    'non-2xx',
    'upstream calls/run',
  ];
  const lines = rows.map((r) => [
    SCENARIO_LABELS[r.scenario] ?? r.scenario,
    targetLabel(r.target),
    r.node,
    `${r.method} ${r.path}`,
    fmt(r.median.rps),
    r.ratio === undefined ? '-' : `${fmt(r.ratio, 2)}×`,
    fmt(r.median.p50Ms, 2),
    fmt(r.median.p99Ms, 2),
    fmt(r.median.cpuUsPerRequest, 1),
    fmt(r.median.rssMb, 0),
    String(r.total.non2xx + r.total.errors),
    r.runs.map((run) => sumCalls(run.upstreamCalls)).join(','),
  ]);
  const all = [header, ...lines];
  const widths = header.map((_, i) => Math.max(...all.map((l) => (l[i] ?? '').length)));
  const row = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [row(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(row)].join('\n');
}

/**
 * The checks of every row, whatever its family: the status of its answers, the metrics of each proxy
 * (correctness), the peak RSS of each proxy target (targets), the proxy on the bench's Node.js (reported).
 */
function commonChecks(rows: readonly RowReport[], inputs: CheckInputs): Check[] {
  const checks: Check[] = [];
  // Peak RSS of every proxy process, per target (a cluster: its largest process), then over all of them.
  const proxyRows = rows.filter((r) => r.target.startsWith('proxy'));
  const proxyTargets = [...new Set(proxyRows.map((r) => r.target))];
  for (const target of proxyTargets) {
    const list = proxyRows.filter((r) => r.target === target);
    const rss = peakProcessRss(list);
    checks.push({
      name: `peak RSS of ${targetLabel(target)} (${list[0]?.node}) ≤ ${RSS_TARGET_MB} MB per process (${list.map((r) => r.id).join(', ')})`,
      ok: rss <= RSS_TARGET_MB,
      kind: 'target',
      detail: `${fmt(rss, 0)} MB at most`,
    });
  }
  if (proxyTargets.length > 1) {
    const rss = peakProcessRss(proxyRows);
    checks.push({
      name: `peak RSS of every proxy row ≤ ${RSS_TARGET_MB} MB per process`,
      ok: rss <= RSS_TARGET_MB,
      kind: 'target',
      detail: `${fmt(rss, 0)} MB at most`,
    });
  }
  // The proxy on the bench's own Node.js beside the measured one: reported, no threshold.
  const hostRows = rows.filter((r) => r.target === 'proxy-host-node');
  if (hostRows.length > 0) {
    const reference = rows.find((r) => r.id === 'passthrough/reference');
    checks.push({
      name: `the proxy on the bench's Node.js (${hostRows[0]?.node}) vs the reference passthrough (${reference?.node ?? '-'}): reported`,
      ok: true,
      kind: 'reported',
      detail: hostRows
        .map((r) => {
          const same = rows.find((s) => s.scenario === r.scenario && s.target === 'proxy');
          return `${r.scenario} ${fmt(r.ratio, 2)}× (${same?.node ?? 'measured Node.js'}: ${fmt(same?.ratio, 2)}×)`;
        })
        .join(', '),
    });
  }
  for (const r of rows) {
    if (r.expect === 'success' || r.expect === 304) {
      checks.push({
        name: `${r.id}: no answer ≥ 400 or socket error`,
        ok: r.total.non2xx === 0 && r.total.errors === 0,
        kind: 'correctness',
        detail: `${r.total.non2xx} non-2xx, ${r.total.errors} errors in ${r.total.requests} answers`,
      });
    }
    if (r.expect !== 'success') {
      // Every answer of the route the proxy counted during the run had the expected status (the load
      // generators count only "≥ 400": a 304 would pass for a 200 there).
      const expected = String(r.expect);
      checks.push({
        name: `${r.id}: every answer ${expected} (the proxy's count of ${r.method} ${r.path} answers by status, per run)`,
        ok: r.runs.every(
          (run) =>
            run.statuses !== undefined &&
            Object.keys(run.statuses).every((s) => s === expected) &&
            (run.statuses[expected] ?? 0) >= run.requests,
        ),
        kind: 'correctness',
        detail: r.runs.map((run) => `${fmtStatuses(run.statuses)} for ${run.requests} answers`).join('; '),
      });
    }
  }
  for (const scrape of inputs.metrics) {
    checks.push({
      name: `${scrape.target}: GET /metrics answers 200 and counts every answer (front_proxy_http_request_duration_seconds_count ≥ answers measured)`,
      ok: scrape.status === 200 && scrape.requestCount >= scrape.measuredAnswers,
      kind: 'correctness',
      detail: `status ${scrape.status}, ${scrape.requestCount} counted, ${scrape.measuredAnswers} measured`,
    });
  }
  return checks;
}

/** The targets (printed only) and the correctness checks (failing the command) of every family and row. */
function buildChecks(rows: readonly RowReport[], inputs: CheckInputs): Check[] {
  const all = [...FAMILIES.flatMap((f) => f.checks?.(rows, inputs) ?? []), ...commonChecks(rows, inputs)];
  return [...all.filter((c) => c.kind !== 'correctness'), ...all.filter((c) => c.kind === 'correctness')];
}

/**
 * The lines printed under the table: the paired ratios of the families' comparisons (requests/s and CPU
 * per request) and, for the unpinned rows, where the CPU went (µs per request by process, medians of the runs).
 */
export function comparisonLines(rows: readonly RowReport[]): string[] {
  const lines: string[] = [];
  const rowOf = (id: string) => rows.find((r) => r.id === id);
  for (const { label, row: id, base: baseId } of FAMILIES.flatMap((f) => f.comparisons ?? [])) {
    const row = rowOf(id);
    const base = rowOf(baseId);
    if (!row?.runs.length || !base?.runs.length) continue;
    const rps = pairedRatio(row.runs, base.runs, (r) => r.rps);
    const cpu = pairedRatio(row.runs, base.runs, (r) => r.cpuUsPerRequest);
    const nodes = row.node === base.node ? '' : ` (${row.node} against ${base.node})`;
    lines.push(`${label}${nodes}: ${fmt(rps, 2)}× requests/s, ${fmt(cpu, 2)}× CPU per request`);
  }
  const unpinned = rows.filter((r) => !r.pinned && r.runs.length > 0);
  if (unpinned.length > 0) lines.push('where the CPU goes, unpinned rows (µs per request, median of the runs):');
  for (const row of unpinned) {
    const names = [...new Set(row.runs.flatMap((run) => Object.keys(run.cpuByProcess)))];
    const parts = names.map((name) => `${name} ${fmt(median(row.runs.map((run) => run.cpuByProcess[name] ?? Number.NaN)), 1)}`);
    lines.push(`  ${targetLabel(row.target)}: ${parts.join(', ')}`);
  }
  return lines;
}

/**
 * Runs the benchmark: resolves the measured Node.js, starts the upstream and the proxy, finds the
 * passthrough route, lets every family whose scenarios are wanted plan its targets and rows, warms up,
 * measures every row `runs` times interleaved (the pinned rows, then the unpinned ones), lets the
 * families fetch what they sample after the runs, and stops everything it started.
 *
 * @returns the report (also written to `resultsPath` when given).
 * @throws when a process does not start or a success scenario does not answer 2xx before the runs.
 */
export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const say = (text: string) => {
    if (options.print) process.stdout.write(`${text}\n`);
  };
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-if-needed.mjs')], { cwd: ROOT, stdio: 'inherit' });
  const targetNode = resolveNode(options.node);
  // The machine's own Node.js beside the measured one, unless they are the same version.
  const hostNode: NodeRuntime | undefined =
    targetNode.version === process.version ? undefined : { spec: 'current', version: process.version, execPath: process.execPath };
  const pinned = options.pin && hasTaskset() && os.cpus().length >= 2;
  if (pinned) pin(process.pid, '1');
  const wanted = new Set(options.scenarios);
  const skipped: string[] = [];
  const targets = new Map<TargetId, Target>();
  /** The Node.js version each target runs on. */
  const nodeOf = new Map<TargetId, string>();
  const cpuFor = (p: boolean) => (p ? '0' : undefined);
  const clients = { withSession: clientHeaders(options.sessions, true), anonymous: clientHeaders(options.sessions, false) };
  const launch = (node: NodeRuntime, env: Record<string, string> = {}, cpus = cpuFor(pinned), workers = 1): ProxyLaunch => ({
    workers,
    cpus,
    logPath: options.logPath,
    nodeOptions: options.proxyNodeOptions,
    node: node.execPath,
    env,
  });
  const findings: Findings = { collector: null, catalogueBytes: null, refusalSample: null, redisCommands: null, streams: null };

  try {
    const up = await startBenchServer('upstream', [], pinned ? '1' : undefined);
    const upstream = `http://127.0.0.1:${up.port}`;
    const addTarget = (id: TargetId, started: { child: ChildProcess; port: number; metricsPort?: number }, node: NodeRuntime) => {
      const pid = started.child.pid as number;
      targets.set(id, { id, child: started.child, port: started.port, metricsPort: started.metricsPort, pids: processTree(pid) });
      nodeOf.set(id, node.version);
    };
    say(
      `Node.js ${targetNode.version} (BENCH_NODE=${targetNode.spec}) for the proxies, the reference and the peer; ` +
        `${process.version} (the bench's own) for the upstream, the collector${options.tool === 'autocannon' ? ', autocannon' : ''}` +
        (hostNode ? " and the rows of the proxy on the bench's Node.js" : ''),
    );
    say(
      `starting the proxy (node ${[...startNodeOptions(), ...containerHeapOptions(), 'dist/server.js'].join(' ')}, NODE_ENV=production, metrics on, ` +
        `${process.env.BENCH_RATE_LIMIT_API_PER_MIN ? `RATE_LIMIT_API_PER_MIN=${process.env.BENCH_RATE_LIMIT_API_PER_MIN}` : 'default rate limits'}, ` +
        `TRUSTED_PROXIES=127.0.0.1, tracing off)${pinned ? ' on CPU 0' : ''}; load from ${options.sessions} sessions and client addresses`,
    );
    addTarget('proxy', await startProxy(upstream, launch(targetNode)), targetNode);
    const proxyPort = (targets.get('proxy') as Target).port;

    // Route discovery: the first passthrough candidate the proxy serves, and the upstream path it calls.
    let passthrough: PassthroughRoute | undefined;
    for (const path of PASSTHROUGH_CANDIDATES) {
      const res = await probe(upstream, proxyPort, { method: 'GET', path, headers: {}, session: true });
      if (isMissingRoute(res)) continue;
      if (res.status < 200 || res.status >= 300) throw new Error(`GET ${path} answered ${res.status}: ${res.text.slice(0, 300)}`);
      const upstreamPath = Object.keys(res.calls).find((p) => p !== PROFILE_UPSTREAM);
      if (!upstreamPath) continue;
      passthrough = { path, upstreamPath };
      break;
    }
    if (!passthrough) throw new Error(`the proxy serves none of ${PASSTHROUGH_CANDIDATES.join(', ')}`);
    say(`passthrough route: GET ${passthrough.path} → upstream ${passthrough.upstreamPath}`);

    // The proxy on the bench's own Node.js (the machine's), beside the measured one, for the rows the
    // families name; their ratio is to the same round's reference.
    let host: NodeRuntime | undefined;
    if (FAMILIES.some((f) => f.hostNodeScenarios?.some((s) => wanted.has(s)))) {
      if (hostNode) {
        addTarget('proxy-host-node', await startProxy(upstream, launch(hostNode)), hostNode);
        host = hostNode;
      } else {
        skipped.push(`proxy-host-node: the measured Node.js is the bench's own (${process.version}): no rows beside it`);
      }
    }

    const observed = new Map<TargetId, Observed[]>();
    let redisStarted: Promise<{ url: string; child: ChildProcess } | undefined> | undefined;
    const route = passthrough;
    const ctx: BenchContext = {
      options,
      pinned,
      upstream,
      upstreamPid: up.child.pid as number,
      targetNode,
      host,
      proxyPort,
      passthrough: route,
      wanted,
      targets,
      rows: [],
      unpinnedRows: [],
      skipped,
      findings,
      say,
      async startProxyTarget(id, env = {}, options = {}) {
        const cpus = 'cpus' in options ? options.cpus : cpuFor(pinned);
        const started = await startProxy(upstream, {
          ...launch(targetNode, env, cpus, options.workers ?? 1),
          heapLimit: options.heapLimit ?? true,
        });
        addTarget(id, started, targetNode);
        return targets.get(id) as Target;
      },
      addTarget,
      passthroughRow: (id, scenario, target, rowPinned = pinned) => ({
        id,
        scenario,
        target,
        method: 'GET',
        path: route.path,
        headers: {},
        session: true,
        expect: 'success',
        pinned: rowPinned,
      }),
      async wantRow(spec, port = proxyPort) {
        const res = await probe(upstream, port, spec);
        if (isMissingRoute(res)) {
          skipped.push(`${spec.scenario}: ${spec.method} ${spec.path} is not served yet`);
          return false;
        }
        const ok = spec.expect === 'success' ? res.status >= 200 && res.status < 300 : res.status === spec.expect;
        if (!ok) throw new Error(`${spec.method} ${spec.path} answered ${res.status}: ${res.text.slice(0, 300)}`);
        return true;
      },
      withHost: (spec) => (host ? [spec, { ...spec, id: `${spec.scenario}/proxy-host-node`, target: 'proxy-host-node' }] : [spec]),
      redis() {
        redisStarted ??= startRedisServer(pinned ? '1' : undefined);
        return redisStarted;
      },
      observe(target, name, pid) {
        observed.set(target, [...(observed.get(target) ?? []), { name, pid }]);
      },
    };

    for (const family of FAMILIES) {
      if (Object.keys(family.scenarios).some((s) => wanted.has(s))) await family.plan(ctx);
    }
    for (const family of FAMILIES) await family.afterPlan?.(ctx);
    const { rows, unpinnedRows } = ctx;
    if (rows.length === 0 || !rows.some((r) => r.target === 'proxy')) {
      // The proxy was started only for route discovery.
      await stop((targets.get('proxy') as Target).child);
      targets.delete('proxy');
    }

    const proxyIdleRssMb = targets.has('proxy') ? rssBytes((targets.get('proxy') as Target).pids) / (1024 * 1024) : Number.NaN;
    const rowCount = rows.length + unpinnedRows.length;
    say(
      `${rowCount} rows × (${options.warmupSeconds} s warm-up + ${options.runs} × ${options.seconds} s): ` +
        `about ${fmt((rowCount * (options.warmupSeconds + options.runs * (options.seconds + 0.5))) / 60, 1)} minutes of load`,
    );

    /** The processes beside a row's target whose CPU time its runs report: the upstream, and what the families added. */
    const observedFor = (target: TargetId): Observed[] => [
      { name: 'upstream', pid: up.child.pid as number },
      ...(observed.get(target) ?? []),
    ];
    const measureRows = async (list: readonly RowSpec[], phasePinned: boolean): Promise<Map<string, RunResult[]>> => {
      const results = new Map<string, RunResult[]>(list.map((r) => [r.id, []]));
      const context = (row: RowSpec, seconds: number): MeasureContext => ({
        tool: options.tool,
        upstream,
        seconds,
        connections: options.connections,
        pinned: phasePinned,
        clients,
        observed: observedFor(row.target),
      });
      if (options.warmupSeconds > 0) {
        for (const row of list) {
          say(`warm-up ${row.id} (${options.warmupSeconds} s)`);
          await measure(row, targets.get(row.target) as Target, context(row, options.warmupSeconds));
        }
      }
      for (let run = 1; run <= options.runs; run++) {
        for (const row of list) {
          const result = await measure(row, targets.get(row.target) as Target, context(row, options.seconds));
          results.get(row.id)?.push(result);
          say(
            `run ${run}/${options.runs} ${row.id}: ${fmt(result.rps)} req/s, p99 ${fmt(result.p99Ms, 2)} ms, ${fmt(result.cpuUsPerRequest, 1)} µs/req, ${result.non2xx} non-2xx`,
          );
        }
      }
      return results;
    };

    const results = await measureRows(rows, pinned);
    for (const family of FAMILIES) await family.afterRuns?.(ctx);
    if (unpinnedRows.length > 0) {
      // Unpinned phase: every process may use every CPU.
      if (pinned) pin(process.pid, '0-1');
      for (const family of FAMILIES) await family.beforeUnpinned?.(ctx);
      for (const [id, list] of await measureRows(unpinnedRows, false)) results.set(id, list);
    }

    const reference = results.get('passthrough/reference');
    const reports: RowReport[] = [...rows, ...unpinnedRows].map((spec) => {
      const runs = results.get(spec.id) ?? [];
      const m = (pick: (r: RunResult) => number) => median(runs.map(pick));
      const base = spec.base === undefined ? reference : results.get(spec.base);
      const rps = m((r) => r.rps);
      return {
        id: spec.id,
        scenario: spec.scenario,
        target: spec.target,
        method: spec.method,
        path: spec.path,
        headers: spec.headers,
        success: spec.expect === 'success',
        expect: spec.expect,
        node: nodeOf.get(spec.target) ?? targetNode.version,
        pinned: spec.pinned,
        clients: { count: options.sessions, withSession: spec.session, burst: spec.burst ?? 1 },
        runs,
        median: {
          rps,
          p50Ms: m((r) => r.p50Ms),
          p99Ms: m((r) => r.p99Ms),
          rssMb: m((r) => r.rssMb),
          cpuUsPerRequest: m((r) => r.cpuUsPerRequest),
        },
        total: {
          requests: runs.reduce((n, r) => n + r.requests, 0),
          non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
          errors: runs.reduce((n, r) => n + r.errors, 0),
          upstreamCalls: runs.reduce((n, r) => n + sumCalls(r.upstreamCalls), 0),
        },
        ratio: base === undefined || base.length === 0 ? undefined : pairedRatio(runs, base, (r) => r.rps),
      };
    });

    // After the runs: each proxy's metrics, once.
    const metrics: MetricsScrape[] = [];
    for (const target of targets.values()) {
      if (target.metricsPort === undefined) continue;
      const measuredAnswers = reports.filter((r) => r.target === target.id).reduce((n, r) => n + r.total.requests, 0);
      metrics.push({ target: target.id, ...(await scrapeMetrics(target.metricsPort)), measuredAnswers });
    }

    const checks = buildChecks(reports, { seconds: options.seconds, connections: options.connections, metrics, wanted, skipped, findings });
    const table = formatTable(reports);
    const report: BenchReport = {
      meta: {
        date: new Date().toISOString(),
        node: process.version,
        targetNode: { spec: targetNode.spec, version: targetNode.version },
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model ?? 'unknown',
        memoryGb: Math.round(os.totalmem() / 2 ** 30),
        commit: gitCommit(),
        tool: options.tool,
        proxyNodeOptions: options.proxyNodeOptions ?? null,
        seconds: options.seconds,
        runs: options.runs,
        warmupSeconds: options.warmupSeconds,
        connections: options.connections,
        sessions: options.sessions,
        rateLimitApiPerMin: process.env.BENCH_RATE_LIMIT_API_PER_MIN || 'default',
        pinned,
        proxyIdleRssMb,
        skipped,
      },
      rows: reports,
      metrics,
      ...findings,
      checks,
      table,
    };
    if (options.resultsPath) {
      const tmp = `${options.resultsPath}.tmp`;
      writeFileSync(tmp, `${JSON.stringify(report, null, 2)}\n`);
      renameSync(tmp, options.resultsPath);
    }
    say('');
    say(
      `${options.tool}, ${options.connections} connections, ${options.sessions} sessions and client addresses, ` +
        `${options.seconds} s × ${options.runs} runs (medians), ` +
        `${report.meta.cpus} CPUs (${report.meta.cpuModel}), ${pinned ? 'proxies on CPU 0, upstream and load on CPU 1' : 'unpinned'}` +
        (options.proxyNodeOptions ? `, extra proxy Node.js options ${options.proxyNodeOptions}` : ''),
    );
    say(
      `Node.js ${targetNode.version} (BENCH_NODE=${targetNode.spec}): the proxies, the reference and the peer; ` +
        `Node.js ${process.version} (the bench's own): the upstream${findings.collector ? ', the collector' : ''}${options.tool === 'autocannon' ? ', autocannon' : ''}` +
        (host ? ` and "${targetLabel('proxy-host-node')}"` : ''),
    );
    say(table);
    say(
      'ratio: median over the rounds of requests/s relative to the run of the same round of the reference passthrough ' +
        "(or of the row's base: redis and tracing rows, the same load without REDIS_URL or tracing; workers rows, WORKERS=1)",
    );
    for (const line of comparisonLines(report.rows)) say(line);
    for (const family of FAMILIES) for (const line of family.summary?.(findings) ?? []) say(line);
    say('');
    say(`proxy RSS before any load: ${fmt(proxyIdleRssMb, 0)} MB`);
    for (const s of skipped) say(`skipped: ${s}`);
    const mark = (c: Check) =>
      c.measured === false
        ? 'n/a '
        : c.kind === 'reported'
          ? 'info'
          : c.kind === 'target'
            ? c.ok
              ? 'met '
              : 'MISS'
            : c.ok
              ? 'ok  '
              : 'FAIL';
    say('targets (medians of the per-round ratios; printed, they never fail the command):');
    for (const c of checks.filter((k) => k.kind !== 'correctness')) say(`  ${mark(c)} ${c.name}: ${c.detail}`);
    say('checks (a FAIL makes the command exit with 1):');
    for (const c of checks.filter((k) => k.kind === 'correctness')) say(`  ${mark(c)} ${c.name}: ${c.detail}`);
    return report;
  } finally {
    await Promise.all([...children].map(stop));
  }
}

function intFromEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`${name}: expected a number ≥ ${min}, got "${raw}"`);
  return value;
}

/** `BENCH_NODE` when unset: the image's Node.js line, from the npm registry as CI runs it (`.ci/run`). */
const DEFAULT_NODE = '24';
/**
 * Seconds of load per row before its first run when `BENCH_WARMUP` is unset (at most `BENCH_SECONDS`):
 * 2 since round 3 (3 before), which keeps the 24 rows of a full run near 14 minutes on two CPUs (19
 * rows, 11 minutes, in round 3).
 */
const DEFAULT_WARMUP_SECONDS = 2;

/** The options of the command line, from the environment. */
export function optionsFromEnv(): BenchOptions {
  const seconds = intFromEnv('BENCH_SECONDS', 10, 1);
  const scenarios = (process.env.BENCH_SCENARIOS ?? SCENARIOS.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  for (const s of scenarios) {
    if (!(SCENARIOS as readonly string[]).includes(s))
      throw new Error(`BENCH_SCENARIOS: unknown scenario "${s}" (known: ${SCENARIOS.join(', ')})`);
  }
  return {
    seconds,
    runs: intFromEnv('BENCH_RUNS', 3, 1),
    warmupSeconds: intFromEnv('BENCH_WARMUP', Math.min(DEFAULT_WARMUP_SECONDS, seconds), 0),
    connections: intFromEnv('BENCH_CONNECTIONS', 50, 1),
    sessions: intFromEnv('BENCH_SESSIONS', DEFAULT_SESSIONS, 1),
    tool: pickTool(process.env.BENCH_TOOL),
    scenarios: scenarios as ScenarioId[],
    pin: process.env.BENCH_PIN !== '0',
    logPath: process.env.BENCH_LOG ?? '/dev/null',
    proxyNodeOptions: process.env.BENCH_PROXY_NODE_OPTIONS || undefined,
    resultsPath: process.env.BENCH_RESULTS ?? join(ROOT, 'bench', 'results.json'),
    print: true,
    node: process.env.BENCH_NODE || DEFAULT_NODE,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const stopAll = () => {
    for (const child of children) child.kill('SIGTERM');
    process.exit(130);
  };
  process.once('SIGINT', stopAll);
  process.once('SIGTERM', stopAll);
  try {
    const options = optionsFromEnv();
    if (options.tool === 'autocannon' && !hasWrk()) process.stdout.write('wrk is not installed: autocannon drives the load\n');
    const report = await runBench(options);
    process.exitCode = report.checks.some((c) => c.kind === 'correctness' && !c.ok) ? 1 : 0;
  } catch (error) {
    process.stderr.write(
      `bench failed: ${error instanceof Error ? (process.env.BENCH_DEBUG ? error.stack : error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  }
}
