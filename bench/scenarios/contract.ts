/**
 * Scenario family **contract**: the cost of the live upstream contract checks (`UPSTREAM_CONTRACT_SAMPLE`,
 * docs/operations.md "Upstream contract checks"). Three proxies serve the passthrough and profile
 * rows only: the default sample (0.01, as production runs), checks off (`0`) and every answer checked
 * (`1`); each row is compared run for run with checks off: the default sample (target: within 2% of
 * the requests/s) and every answer checked (reported). (Until round 5 the default sample's rows were
 * the main proxy's, which serves every family's routes: a mix of routes, not the sample, made most of
 * the difference.)
 *
 * @module
 */
import { type Check, fmt, pairedRatio, type RowReport, type RowSpec, type ScenarioFamily, unmeasured } from '../harness.js';
import { SESSION_BURST } from './routes.js';

const PROFILE_PATH = '/api/auth/profile';
/** Requests/s floor of the default sample against checks off (the "within 2%"). */
const DEFAULT_FLOOR = 0.98;

/** The three proxies: the default sample, checks off, and every answer checked. */
const SAMPLES = [
  { target: 'proxy-contract-default', sample: undefined, suffix: 'default' },
  { target: 'proxy-contract-off', sample: '0', suffix: 'off' },
  { target: 'proxy-contract-all', sample: '1', suffix: 'all' },
] as const;

function profileRow(id: string, target: string, pinned: boolean): RowSpec {
  return {
    id,
    scenario: 'contract',
    target,
    method: 'GET',
    path: PROFILE_PATH,
    headers: {},
    session: true,
    burst: SESSION_BURST,
    expect: 'success',
    pinned,
  };
}

/** The contract family (see the module documentation). */
export const contract: ScenarioFamily = {
  scenarios: { contract: 'passthrough and profile, upstream contract checks (vs off)' },
  targetLabels: {
    'proxy-contract-default': 'proxy, UPSTREAM_CONTRACT_SAMPLE default (0.01)',
    'proxy-contract-off': 'proxy, UPSTREAM_CONTRACT_SAMPLE=0',
    'proxy-contract-all': 'proxy, UPSTREAM_CONTRACT_SAMPLE=1',
  },
  comparisons: [
    {
      label: 'passthrough, contract checks at the default sample (0.01), against checks off',
      row: 'contract/passthrough-default',
      base: 'contract/passthrough-off',
    },
    { label: 'passthrough, every answer checked, against checks off', row: 'contract/passthrough-all', base: 'contract/passthrough-off' },
    {
      label: 'profile, contract checks at the default sample (0.01), against checks off',
      row: 'contract/profile-default',
      base: 'contract/profile-off',
    },
    { label: 'profile, every answer checked, against checks off', row: 'contract/profile-all', base: 'contract/profile-off' },
  ],

  async plan(ctx) {
    for (const { target, sample, suffix } of SAMPLES) {
      const started = await ctx.startProxyTarget(target, sample === undefined ? {} : { UPSTREAM_CONTRACT_SAMPLE: sample });
      ctx.rows.push(ctx.passthroughRow(`contract/passthrough-${suffix}`, 'contract', target));
      const profile = profileRow(`contract/profile-${suffix}`, target, ctx.pinned);
      if (await ctx.wantRow(profile, started.port)) ctx.rows.push(profile);
    }
  },

  checks(rows, inputs) {
    if (!inputs.wanted.has('contract')) return [];
    const byId = (id: string): RowReport | undefined => rows.find((r) => r.id === id);
    const checks: Check[] = [];
    for (const what of ['passthrough', 'profile'] as const) {
      const off = byId(`contract/${what}-off`);
      const sampled = byId(`contract/${what}-default`);
      const all = byId(`contract/${what}-all`);
      const name = `${what}, contract checks at 0.01 vs off ≥ ${DEFAULT_FLOOR.toFixed(2)}× rps`;
      if (!off?.runs.length || !sampled?.runs.length) checks.push(unmeasured(name, `the ${what} rows did not both run`));
      else {
        const rps = pairedRatio(sampled.runs, off.runs, (r) => r.rps);
        const cpu = pairedRatio(sampled.runs, off.runs, (r) => r.cpuUsPerRequest);
        checks.push({ name, ok: rps >= DEFAULT_FLOOR, kind: 'target', detail: `${fmt(rps, 3)}× rps, ${fmt(cpu, 3)}× CPU per request` });
      }
      if (off?.runs.length && all?.runs.length) {
        const rps = pairedRatio(all.runs, off.runs, (r) => r.rps);
        const cpu = pairedRatio(all.runs, off.runs, (r) => r.cpuUsPerRequest);
        checks.push({
          name: `${what}, every answer checked vs off: reported`,
          ok: true,
          kind: 'reported',
          detail: `${fmt(rps, 3)}× rps, ${fmt(cpu, 3)}× CPU per request`,
        });
      }
    }
    return checks;
  },
};
