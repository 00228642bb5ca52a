/**
 * Scenario family **refusals**: answers the proxy gives without the upstream. A passthrough GET without
 * the session cookie (401), and an authenticated GET whose upstream path always answers 503, so that
 * the proxy's circuit for it opens and it refuses at once (`503 upstream_circuit_open`). After the
 * runs, a sample refusal.
 *
 * @module
 */
import {
  againstReference,
  call,
  type Check,
  envelopeError,
  isMissingRoute,
  probe,
  type RowSpec,
  type ScenarioFamily,
  sumCalls,
} from '../harness.js';
import { PROFILE_UPSTREAM } from './routes.js';

/**
 * Authenticated GET routes of the `circuit-open` row, in order of preference: the first the proxy
 * serves whose upstream path no other row calls. The bench upstream answers that path 503, always.
 */
const REFUSAL_CANDIDATES = ['/api/user/login-history', '/api/payments/bank-list', '/api/user/last-casino-games'];
/** The proxy's `UPSTREAM_CIRCUIT_FAILURES` default: failures in a row that open an endpoint's circuit. */
const CIRCUIT_FAILURES = 5;
/** The proxy's `UPSTREAM_CIRCUIT_PAUSE_MS` default, in seconds: an open circuit's one trial call per pause. */
const CIRCUIT_PAUSE_SECONDS = 5;

/** The refusals family: 401 without cookie, 503 with the circuit open. */
export const refusals: ScenarioFamily = {
  scenarios: {
    'no-cookie': '401 without cookie',
    'circuit-open': '503 refusal (circuit open)',
  },
  hostNodeScenarios: ['no-cookie'],
  comparisons: [
    { label: "401 without cookie, the measured Node.js against the bench's", row: 'no-cookie/proxy', base: 'no-cookie/proxy-host-node' },
  ],

  async plan(ctx) {
    if (ctx.wanted.has('no-cookie')) {
      const spec: RowSpec = { ...ctx.passthroughRow('no-cookie/proxy', 'no-cookie', 'proxy'), session: false, expect: 401 };
      if (await ctx.wantRow(spec)) ctx.rows.push(...ctx.withHost(spec));
    }
    if (!ctx.wanted.has('circuit-open')) return;
    // An authenticated GET whose upstream path no other row calls; the upstream answers it 503 from
    // now on, and the proxy's circuit for it opens after CIRCUIT_FAILURES of them in a row.
    let refusal: { path: string; upstreamPath: string } | undefined;
    for (const path of REFUSAL_CANDIDATES) {
      if (path === ctx.passthrough.path) continue;
      const res = await probe(ctx.upstream, ctx.proxyPort, { method: 'GET', path, headers: {}, session: true });
      if (isMissingRoute(res) || res.status < 200 || res.status >= 300) continue;
      const upstreamPath = Object.keys(res.calls).find((p) => p !== PROFILE_UPSTREAM);
      if (!upstreamPath || upstreamPath === ctx.passthrough.upstreamPath) continue;
      refusal = { path, upstreamPath };
      break;
    }
    if (!refusal) {
      ctx.skipped.push(`circuit-open: the proxy serves none of ${REFUSAL_CANDIDATES.filter((p) => p !== ctx.passthrough.path).join(', ')}`);
      return;
    }
    await call(`${ctx.upstream}/__bench/unavailable`, { method: 'POST', body: refusal.upstreamPath });
    const spec: RowSpec = { ...ctx.passthroughRow('circuit-open/proxy', 'circuit-open', 'proxy'), path: refusal.path, expect: 503 };
    // Open the circuit before the runs, one request at a time: the runs then measure refusals only
    // (and one trial call per pause), not the 50 calls in flight while it opens.
    let answer: { status: number; error: string | undefined } = { status: 0, error: undefined };
    let sent = 0;
    while (sent < CIRCUIT_FAILURES + 3 && answer.error !== 'upstream_circuit_open') {
      const res = await probe(ctx.upstream, ctx.proxyPort, spec);
      answer = { status: res.status, error: envelopeError(res.text) };
      sent++;
    }
    if (answer.status === 503 && answer.error === 'upstream_circuit_open') {
      ctx.rows.push(spec);
      ctx.say(
        `503 refusal route: GET ${refusal.path} → upstream ${refusal.upstreamPath}, answered 503 by the upstream; circuit open after ${sent - 1} calls`,
      );
    } else {
      ctx.skipped.push(
        `circuit-open: GET ${refusal.path} still answered ${answer.status} ${answer.error ?? ''} after ${sent} upstream 503s in a row, not 503 upstream_circuit_open`,
      );
    }
  },

  async afterRuns(ctx) {
    // A sample refusal: the second of two requests in a row (the first may be the circuit's trial call).
    const row = ctx.rows.find((r) => r.id === 'circuit-open/proxy');
    if (!row) return;
    await probe(ctx.upstream, ctx.proxyPort, row);
    const res = await probe(ctx.upstream, ctx.proxyPort, row);
    ctx.findings.refusalSample = { status: res.status, error: envelopeError(res.text), retryAfter: res.header('retry-after') };
  },

  checks(rows, inputs) {
    const { seconds } = inputs;
    const checks: Check[] = [
      ...againstReference(rows, inputs, 'no-cookie', '401 without cookie vs the reference passthrough ≥ 2.5× rps', 2.5),
      ...againstReference(rows, inputs, 'circuit-open', '503 refusals (circuit open) vs the reference passthrough ≥ 2.5× rps', 2.5),
    ];
    for (const noCookie of rows.filter((r) => r.scenario === 'no-cookie')) {
      checks.push({
        name: `${noCookie.id}: every answer refused (≥ 400), nothing sent upstream`,
        ok: noCookie.total.non2xx === noCookie.total.requests && noCookie.total.upstreamCalls === 0 && noCookie.total.errors === 0,
        kind: 'correctness',
        detail: `${noCookie.total.non2xx} of ${noCookie.total.requests} refused, ${noCookie.total.upstreamCalls} upstream calls`,
      });
    }
    const refusal = rows.find((r) => r.scenario === 'circuit-open' && r.target === 'proxy');
    if (refusal) {
      // An open circuit sends one trial call per pause; the failures that opened it came before the runs
      // (the bench opens it first), and a few more are allowed for a circuit that had closed meanwhile.
      const allowed = Math.floor(seconds / CIRCUIT_PAUSE_SECONDS) + CIRCUIT_FAILURES + 1;
      const counts = refusal.runs.map((run) => sumCalls(run.upstreamCalls));
      const sample = inputs.findings.refusalSample;
      checks.push(
        {
          name: `${refusal.id}: every answer refused, the upstream called at most ${allowed} times per ${seconds} s run (a trial per ${CIRCUIT_PAUSE_SECONDS} s pause, + ${CIRCUIT_FAILURES + 1})`,
          ok: refusal.total.non2xx === refusal.total.requests && refusal.total.errors === 0 && counts.every((c) => c <= allowed),
          kind: 'correctness',
          detail: `${refusal.total.non2xx} of ${refusal.total.requests} refused; ${counts.join(', ')} upstream calls per run`,
        },
        {
          name: `${refusal.id}: a sample after the runs is 503 upstream_circuit_open with Retry-After`,
          ok: sample?.status === 503 && sample.error === 'upstream_circuit_open' && sample.retryAfter !== null,
          kind: 'correctness',
          detail: sample
            ? `${sample.status} ${sample.error ?? '(no error field)'}, Retry-After ${sample.retryAfter ?? 'none'}`
            : 'no sample',
        },
      );
    }
    return checks;
  },
};
