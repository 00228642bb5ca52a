/**
 * Splits a V8 CPU profile (`.cpuprofile`, from `--cpu-prof`) of one proxy process into the steps of a
 * request, in µs of CPU per answer: the deposit's split in `history/2026-11-bench-rounds-1-4.md` (round 4) and the tracing
 * rows' A/B come from it.
 *
 * Every sample is given to the step of the nearest frame on its stack whose script matches a rule of
 * {@link STEPS} (the first rule that matches, in the table's order): a built-in such as `JSON.parse` or
 * a `Buffer` method counts for the code that called it. Samples with no matching frame count as
 * `Node.js internals` when a `node:` script is on the stack, else under V8's own names
 * (`(garbage collector)`, `(program)`); `(idle)` is left out.
 *
 * ```sh
 * BENCH_PROXY_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=<dir>" BENCH_SCENARIOS=deposit \
 *   BENCH_SECONDS=6 BENCH_RUNS=1 BENCH_WARMUP=1 BENCH_NODE=24 npm run bench
 * node --import tsx bench/profile-steps.ts <dir>/<the deposit process>.cpuprofile <answers>
 * ```
 *
 * `<answers>`: the requests the process answered over its life (its `GET /metrics` count, or the
 * bench's answers of its rows plus the warm-up's); without it, milliseconds in all are printed.
 *
 * @module
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A script of the proxy's own (`src/` or `dist/`, outside `node_modules`) whose path below it matches `path`. */
function ours(path: string): RegExp {
  return new RegExp(`^(?!.*/node_modules/).*/(?:src|dist)/${path}`);
}

/** A rule that matches where either of two does. */
function either(a: RegExp, b: RegExp): RegExp {
  return new RegExp(`(?:${a.source})|(?:${b.source})`);
}

/** The steps, in the order their rules are tried: a name and what a frame's script URL (or function) must match. */
export const STEPS: readonly [step: string, rule: RegExp][] = [
  ['idempotency guard and double-submit store', ours('state/(idempotency|memory|store|redis)\\.[jt]s')],
  ['session: profile cache, token, attribution', ours('session/')],
  ['route handler and payload mapping', ours('(routes|contracts|envelope|wallet|payments)[/.]')],
  ['upstream client and endpoint guard (ours)', ours('upstream/')],
  [
    'rate limits and client address',
    either(ours('(pipeline/rate-limit|state/rate-limit-store)'), /\/node_modules\/(@fastify\/rate-limit|ipaddr\.js|proxy-addr)\//),
  ],
  [
    'log line (pino, redaction)',
    either(ours('pipeline/logging'), /\/node_modules\/(pino|pino-std-serializers|fast-redact|sonic-boom|@pinojs)\//),
  ],
  ['metrics (prom-client)', either(ours('pipeline/(metrics|histogram-cells)'), /\/node_modules\/prom-client\//)],
  ['tracing (OpenTelemetry)', either(ours('pipeline/tracing'), /\/node_modules\/(@opentelemetry|@fastify\/otel)\//)],
  [
    'body parsing and schema validation',
    either(ours('pipeline/body'), /\/node_modules\/(ajv|fast-json-stringify|secure-json-parse|@sinclair|fast-uri)\//),
  ],
  ['caches (lru-cache)', /\/node_modules\/lru-cache\//],
  ['other pipeline steps (ours)', ours('')],
  ['undici (upstream HTTP)', /\/node_modules\/undici\/|^wasm:/],
  [
    'Fastify (router, hooks, reply, cookies)',
    /\/node_modules\/(fastify|find-my-way|avvio|@fastify|light-my-request|fast-querystring|toad-cache|cookie)\//,
  ],
  ['other packages', /\/node_modules\//],
  ['Node.js http, net, streams, timers', /^node:/],
];

/** µs (or ms in all) per step of one profile: `{ step: microseconds }`, largest first. */
export function stepsOf(profile: CpuProfile): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
  const stepOfNode = new Map<number, string>();
  const stepOf = (id: number): string => {
    const known = stepOfNode.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id) as ProfileNode;
    const { url, functionName } = node.callFrame;
    let step: string | undefined;
    if (url !== '') step = STEPS.find(([, rule]) => rule.test(url))?.[0];
    if (step === undefined) {
      const parent = parentOf.get(id);
      if (parent === undefined || functionName === '(garbage collector)' || functionName === '(program)' || functionName === '(idle)') {
        step = functionName === '' || functionName === '(root)' ? '(root)' : functionName;
      } else {
        step = stepOf(parent);
      }
    }
    stepOfNode.set(id, step);
    return step;
  };
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const step = stepOf(id);
    if (step === '(idle)') return;
    totals.set(step, (totals.get(step) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return new Map([...totals.entries()].sort((a, b) => b[1] - a[1]));
}

function main(): void {
  const [path, answersArg] = process.argv.slice(2);
  if (path === undefined) {
    process.stderr.write('usage: node --import tsx bench/profile-steps.ts <file.cpuprofile> [answers]\n');
    process.exit(2);
  }
  const answers = answersArg === undefined ? undefined : Number(answersArg);
  const steps = stepsOf(JSON.parse(readFileSync(path, 'utf8')) as CpuProfile);
  const total = [...steps.values()].reduce((a, b) => a + b, 0);
  const unit = answers ? 'µs per answer' : 'ms in all';
  const value = (us: number) => (answers ? us / answers : us / 1000).toFixed(1);
  process.stdout.write(`| step | ${unit} | share |\n|---|---|---|\n`);
  for (const [step, us] of steps) process.stdout.write(`| ${step} | ${value(us)} | ${((100 * us) / total).toFixed(1)}% |\n`);
  process.stdout.write(`| busy in all | ${value(total)} | 100% |\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
