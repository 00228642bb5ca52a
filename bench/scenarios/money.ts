/**
 * Scenario family **money**: the deposit (`POST /api/payments/deposit`, spec 2.7), validated, mapped and
 * guarded against double submission, in its own proxy process (the guard remembers up to 10,000
 * deposits, and that memory would otherwise count in every other row's RSS), against the reference's
 * least deposit (parse, check, map, POST upstream, parse, convert, serialise).
 *
 * @module
 */
import type { Check, RowSpec, ScenarioFamily } from '../harness.js';
import { DEPOSIT_PATH, DEPOSIT_REQUEST, DEPOSIT_UPSTREAM } from './routes.js';

/** The deposit row against a target: every family that loads deposits (the Redis one too) uses it. */
export function depositRow(id: string, scenario: string, target: string, pinned: boolean): RowSpec {
  return {
    id,
    scenario,
    target,
    ...DEPOSIT_REQUEST,
    headers: { ...DEPOSIT_REQUEST.headers },
    expect: 'success',
    pinned,
  };
}

/** The money family: the deposit row and its reference. */
export const money: ScenarioFamily = {
  scenarios: { deposit: 'deposit POST (validated, mapped)' },
  targetLabels: { 'proxy-deposit': 'proxy (own process)' },
  comparisons: [{ label: "deposit against the reference's deposit", row: 'deposit/proxy', base: 'deposit/reference' }],

  async plan(ctx) {
    const target = await ctx.startProxyTarget('proxy-deposit');
    const spec = depositRow('deposit/proxy', 'deposit', 'proxy-deposit', ctx.pinned);
    if (await ctx.wantRow(spec, target.port)) {
      ctx.rows.push(spec);
      // The same deposits against the reference: the least plain Node.js does for one, i.e. the floor of the deposit row.
      ctx.rows.push({ ...spec, id: 'deposit/reference', target: 'reference' });
    }
  },

  checks(rows, { connections }) {
    // Money moves reach the upstream once per submission: one POST /wallet/add-credit per answered
    // deposit, plus at most one per connection for the deposits in flight when the load stopped.
    const checks: Check[] = [];
    for (const row of rows.filter((r) => r.path === DEPOSIT_PATH && r.method === 'POST')) {
      const pairs = row.runs.map((run) => ({ calls: run.upstreamCalls[DEPOSIT_UPSTREAM] ?? 0, answers: run.requests }));
      checks.push({
        name: `${row.id}: one upstream POST ${DEPOSIT_UPSTREAM} per answered deposit (at most ${connections} more: in flight at the stop)`,
        ok: pairs.every(({ calls, answers }) => calls >= answers && calls - answers <= connections),
        kind: 'correctness',
        detail: pairs.map(({ calls, answers }) => `${calls} calls for ${answers} answers`).join('; '),
      });
    }
    return checks;
  },
};
