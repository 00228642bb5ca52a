/**
 * `npm run doctor -- --from-metrics <url>`: what the proxy's live contract checks saw in production
 * (docs/operations.md "Upstream contract checks"), as doctor rows: one row per EP code checked, with its
 * method and path from the probe table, the answers checked, and under it one line per kind of finding
 * (the finding table of `src/contracts/conformance.ts`) with how many of those answers had it.
 *
 * `<url>` answers the Prometheus text format: a proxy's metrics port (`http://pod:9464/metrics`, that
 * instance since its start), or Prometheus's federation endpoint
 * (`/federate?match[]={__name__=~"front_proxy_upstream_contract_.*"}`, every instance; samples of one
 * EP code and kind are summed over instances and workers). Exit codes: 0 no endpoint has a finding
 * other than `extra`; 1 one has; 2 bad options, or the URL does not answer metrics.
 *
 * @example
 * npm run doctor -- --from-metrics http://10.1.2.3:9464/metrics
 *
 * @module
 */
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { CONTRACT_FINDING_KIND_NAMES, CONTRACT_FINDING_KINDS, type ContractFindingKind } from '../contracts/conformance.js';
import { PROBES } from './probes.js';

const CHECKS = 'front_proxy_upstream_contract_checks_total';
const FINDINGS = 'front_proxy_upstream_contract_findings_total';
/** Longest wait for the metrics, headers and body, in ms. */
const FETCH_TIMEOUT_MS = 10_000;
/** Largest metrics text read, in bytes (a proxy's scrape is some hundred KiB). */
const MAX_METRICS_BYTES = 32 * 1024 * 1024;

/** What the checks of one EP code saw. */
export interface ContractTally {
  readonly endpoint: string;
  /** Answers checked. */
  checks: number;
  /** Answers with at least one finding of each kind. */
  readonly findings: Record<ContractFindingKind, number>;
}

function labelsOf(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const match of text.matchAll(/([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
    labels[match[1] as string] = (match[2] as string).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

/**
 * The contract-check counters of a Prometheus text exposition, summed by EP code (over instances and
 * workers, whatever other labels they carry), in EP code order. Other metrics are ignored.
 */
export function tallyContractMetrics(exposition: string): ContractTally[] {
  const byEndpoint = new Map<string, ContractTally>();
  const tally = (endpoint: string): ContractTally => {
    let t = byEndpoint.get(endpoint);
    if (t === undefined) {
      t = {
        endpoint,
        checks: 0,
        findings: Object.fromEntries(CONTRACT_FINDING_KIND_NAMES.map((k) => [k, 0])) as Record<ContractFindingKind, number>,
      };
      byEndpoint.set(endpoint, t);
    }
    return t;
  };
  for (const line of exposition.split('\n')) {
    const match = /^([a-z_]+)\{(.*)\}\s+(\S+)(?:\s+\d+)?$/.exec(line.trim());
    if (!match || (match[1] !== CHECKS && match[1] !== FINDINGS)) continue;
    const value = Number(match[3]);
    if (!Number.isFinite(value)) continue;
    const labels = labelsOf(match[2] as string);
    const endpoint = labels.endpoint;
    if (endpoint === undefined) continue;
    if (match[1] === CHECKS) tally(endpoint).checks += value;
    else if ((CONTRACT_FINDING_KIND_NAMES as readonly string[]).includes(labels.kind ?? ''))
      tally(endpoint).findings[labels.kind as ContractFindingKind] += value;
  }
  return [...byEndpoint.values()].sort((a, b) => a.endpoint.localeCompare(b.endpoint));
}

/** Whether an EP code's answers had a finding other than `extra`. */
function failing(t: ContractTally): boolean {
  return CONTRACT_FINDING_KIND_NAMES.some((k) => CONTRACT_FINDING_KINDS[k].level === 'fail' && t.findings[k] > 0);
}

/**
 * The report as text, the doctor's columns (EP, method, path) with the answers checked and a verdict
 * (`FAIL`: a finding other than `extra`; `note`: only `extra`; `pass`), each kind found on an indented
 * line. Pure.
 */
export function formatContractReport(url: string, tallies: readonly ContractTally[]): string {
  const lines = [
    `upstream contract checks seen at ${url}`,
    '',
    `${'EP'.padEnd(7)} ${'method'.padEnd(6)} ${'path'.padEnd(44)} ${'checked'.padStart(9)}  verdict`,
  ];
  for (const t of tallies) {
    const probe = PROBES.find((p) => p.code === t.endpoint);
    const note = CONTRACT_FINDING_KIND_NAMES.some((k) => t.findings[k] > 0);
    const verdict = failing(t) ? 'FAIL' : note ? 'note' : 'pass';
    lines.push(
      `${t.endpoint.padEnd(7)} ${(probe?.method ?? '-').padEnd(6)} ${(probe?.path ?? '-').padEnd(44)} ${String(t.checks).padStart(9)}  ${verdict}`,
    );
    for (const kind of CONTRACT_FINDING_KIND_NAMES) {
      const n = t.findings[kind];
      if (n === 0) continue;
      const row = CONTRACT_FINDING_KINDS[kind];
      lines.push(`        ${row.level === 'fail' ? '✗' : '·'} ${kind}: ${n} of ${t.checks} answers checked: ${row.meaning}`);
    }
  }
  if (tallies.length === 0) lines.push('(no answer checked: UPSTREAM_CONTRACT_SAMPLE=0, no METRICS_PORT, or no BFF traffic yet)');
  const failed = tallies.filter(failing).length;
  lines.push(
    '',
    `${tallies.length} endpoints checked, ${failed} with findings; the paths are in the log lines with event "upstream-contract"`,
  );
  return `${lines.join('\n')}\n`;
}

/** The `--from-metrics` URL of the command line, or `undefined` when the option is not there. */
export function fromMetricsOption(argv: readonly string[]): string | undefined {
  const given = argv.findIndex((a) => a === '--from-metrics' || a.startsWith('--from-metrics='));
  if (given === -1) return undefined;
  const arg = argv[given] as string;
  return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : (argv[given + 1] ?? '');
}

/**
 * Runs `--from-metrics`: reads `<url>` (within {@link FETCH_TIMEOUT_MS}), prints the report.
 * @returns the exit code (0, 1 or 2, see the module documentation).
 */
export async function runFromMetrics(argv: readonly string[]): Promise<number> {
  let url: string;
  try {
    const { values } = parseArgs({ args: [...argv], options: { 'from-metrics': { type: 'string' } }, strict: true });
    url = values['from-metrics'] ?? '';
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http');
  } catch (error) {
    process.stderr.write(
      `--from-metrics: expected an http:// or https:// URL of a metrics endpoint (and no other option): ${(error as Error).message}\nusage: npm run doctor -- --from-metrics <url>\n`,
    );
    return 2;
  }
  let text: string;
  try {
    const dispatcher = new Agent({ headersTimeout: FETCH_TIMEOUT_MS, bodyTimeout: FETCH_TIMEOUT_MS, maxResponseSize: MAX_METRICS_BYTES });
    const res = await request(url, { dispatcher, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    text = await res.body.text();
    await dispatcher.close();
    if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
  } catch (error) {
    process.stderr.write(`--from-metrics: ${new URL(url).origin} did not answer metrics: ${(error as Error).message}\n`);
    return 2;
  }
  const tallies = tallyContractMetrics(text);
  const shown = new URL(url);
  shown.username = '';
  shown.password = '';
  process.stdout.write(formatContractReport(shown.toString(), tallies));
  return tallies.some(failing) ? 1 : 0;
}
