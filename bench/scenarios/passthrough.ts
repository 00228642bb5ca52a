/**
 * Scenario family **passthrough**: an authenticated GET the proxy forwards to the BFF, against the
 * reference (`node:http` + one undici `Pool`; also started with `npm start`'s Node.js options), the
 * bare Fastify + `@fastify/reply-from` peer and the assembled peer (`peer-assembled.ts`: reply-from
 * with pino request logging, `@fastify/cookie`, `@fastify/rate-limit` per session and prom-client
 * request metrics, the proxy a team would put together instead); the reference passthrough is the base
 * of every other ratio.
 * The main proxy serves every family's routes; one more proxy in the same configuration serves the
 * passthrough only (`proxy-passthrough-only`, {@link PASSTHROUGH_ONLY_ROW}), as the reference, the peer
 * and the proxies of the tracing and `REDIS_URL` rows do: the base those rows are compared with, and
 * beside the main proxy, what serving many routes costs the passthrough.
 * Its `afterPlan` starts the reference and the peer whenever any family's row loads them. The
 * reference and the peer run with the heap limit of the proxy's container as the proxy does
 * (`containerHeapOptions`), so that every ratio compares like with like; one more proxy runs without
 * it (`proxy-no-heap-limit`): the passthrough's ratio to it is what the limit costs.
 *
 * @module
 */
import { COOKIE_NAME } from '../clients.js';
import {
  type Check,
  containerHeapOptions,
  findRow,
  fmt,
  pairedRatio,
  probe,
  type ScenarioFamily,
  startBenchServer,
  startNodeOptions,
  type TargetId,
  unmeasured,
} from '../harness.js';
import { PASSTHROUGH_ONLY_ROW } from './routes.js';

/** The passthrough family (see the module documentation). */
export const passthrough: ScenarioFamily = {
  scenarios: { passthrough: 'authenticated passthrough GET' },
  targetLabels: {
    reference: 'reference node:http+Pool',
    'reference-tuned': 'reference, npm start options',
    peer: 'peer Fastify+reply-from',
    'peer-assembled': 'peer assembled (reply-from, pino, cookie, rate-limit, prom-client)',
    'proxy-passthrough-only': 'proxy, passthrough only',
    'proxy-no-heap-limit': 'proxy, no heap limit, passthrough only',
  },
  hostNodeScenarios: ['passthrough'],
  comparisons: [
    { label: 'passthrough against the reference', row: 'passthrough/proxy', base: 'passthrough/reference' },
    {
      label: "passthrough against the reference started with npm start's Node.js options too",
      row: 'passthrough/proxy',
      base: 'passthrough/reference-tuned',
    },
    { label: 'passthrough against the Fastify + reply-from peer', row: 'passthrough/proxy', base: 'passthrough/peer' },
    {
      label: 'passthrough against the assembled peer (reply-from, pino, cookie, rate-limit, prom-client)',
      row: 'passthrough/proxy',
      base: 'passthrough/peer-assembled',
    },
    { label: "passthrough, the measured Node.js against the bench's", row: 'passthrough/proxy', base: 'passthrough/proxy-host-node' },
    {
      label: "passthrough, the main proxy (every row's routes) against a proxy serving the passthrough only",
      row: 'passthrough/proxy',
      base: PASSTHROUGH_ONLY_ROW,
    },
    {
      label: 'passthrough, a proxy serving the passthrough only, against the Fastify + reply-from peer',
      row: PASSTHROUGH_ONLY_ROW,
      base: 'passthrough/peer',
    },
    {
      label: "passthrough with the container's heap limit against none (what the limit costs; both serving the passthrough only)",
      row: PASSTHROUGH_ONLY_ROW,
      base: 'passthrough/proxy-no-heap-limit',
    },
  ],

  async plan(ctx) {
    // `reference-tuned` is the reference with the Node.js options `npm start` gives the proxy (e.g.
    // `--max-semi-space-size=8`): how much of the proxy's ratio is runtime tuning rather than code.
    const tuned = startNodeOptions().length > 0 ? (['reference-tuned'] as const) : [];
    ctx.rows.push(...ctx.withHost(ctx.passthroughRow('passthrough/proxy', 'passthrough', 'proxy')));
    for (const target of ['reference', ...tuned, 'peer', 'peer-assembled'] as const)
      ctx.rows.push(ctx.passthroughRow(`passthrough/${target}`, 'passthrough', target));
    await ctx.startProxyTarget('proxy-passthrough-only', {});
    ctx.rows.push(ctx.passthroughRow(PASSTHROUGH_ONLY_ROW, 'passthrough', 'proxy-passthrough-only'));
    if (containerHeapOptions().length > 0) {
      await ctx.startProxyTarget('proxy-no-heap-limit', {}, { heapLimit: false });
      ctx.rows.push(ctx.passthroughRow('passthrough/proxy-no-heap-limit', 'passthrough', 'proxy-no-heap-limit'));
    }
  },

  async afterPlan(ctx) {
    const needs = new Set(ctx.rows.map((r) => r.target));
    if (!needs.has('reference') && !needs.has('peer') && !needs.has('peer-assembled')) return;
    const args = [ctx.upstream, ctx.passthrough.upstreamPath, COOKIE_NAME];
    const cpus = ctx.pinned ? '0' : undefined;
    const node = ctx.targetNode;
    // The container's heap limit applies to every process the proxy is compared with (like with like).
    const heap = containerHeapOptions();
    ctx.addTarget('reference', await startBenchServer('reference', args, cpus, heap, node.execPath), node);
    ctx.addTarget('peer', await startBenchServer('peer', args, cpus, heap, node.execPath), node);
    ctx.addTarget('peer-assembled', await startBenchServer('peer-assembled', args, cpus, heap, node.execPath), node);
    const checked: TargetId[] = ['reference', 'peer', 'peer-assembled'];
    if (needs.has('reference-tuned')) {
      ctx.addTarget(
        'reference-tuned',
        await startBenchServer('reference', args, cpus, [...startNodeOptions(), ...heap], node.execPath),
        node,
      );
      checked.push('reference-tuned');
    }
    for (const id of checked) {
      const res = await probe(ctx.upstream, ctx.targets.get(id)?.port as number, ctx.passthroughRow('', 'passthrough', id));
      if (res.status !== 200) throw new Error(`${id} answered ${res.status}: ${res.text.slice(0, 200)}`);
    }
  },

  checks(rows, inputs) {
    if (!inputs.wanted.has('passthrough')) return [];
    const proxy = findRow(rows, 'passthrough', 'proxy');
    const peer = findRow(rows, 'passthrough', 'peer');
    const assembled = findRow(rows, 'passthrough', 'peer-assembled');
    const cpuName = 'passthrough vs the Fastify + reply-from peer, same run: CPU per request ≤ 1.5×';
    const rpsName = 'passthrough vs the assembled peer, same run ≥ 1.3× rps';
    const ran = (row: typeof proxy) => row !== undefined && row.runs.length > 0;
    if (!ran(proxy) || !ran(peer) || !ran(assembled)) {
      return [unmeasured(cpuName, 'the passthrough rows did not run'), unmeasured(rpsName, 'the passthrough rows did not run')];
    }
    const [p, bare, team] = [proxy, peer, assembled] as [NonNullable<typeof proxy>, NonNullable<typeof proxy>, NonNullable<typeof proxy>];
    const cpu = pairedRatio(p.runs, bare.runs, (r) => r.cpuUsPerRequest);
    const rps = pairedRatio(p.runs, team.runs, (r) => r.rps);
    const checks: Check[] = [
      { name: cpuName, ok: cpu <= 1.5, kind: 'target', detail: `${fmt(cpu, 2)}×` },
      { name: rpsName, ok: rps >= 1.3, kind: 'target', detail: `${fmt(rps, 2)}×` },
    ];
    return checks;
  },
};
