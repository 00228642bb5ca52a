/**
 * Scenario family **catalogue**: the cached reads. The catalogue list answered from the proxy's cache
 * (with a browser's `Accept-Encoding`), its revalidation (`If-None-Match` of the proxy's own `ETag`: a
 * `304` each), and the profile read cached per token (spec 8). After the runs, the catalogue page's body
 * bytes by coding.
 *
 * @module
 */
import { clientHeaders } from '../clients.js';
import {
  againstReference,
  type Check,
  fmt,
  isMissingRoute,
  probe,
  type RowSpec,
  type ScenarioFamily,
  skipReason,
  sumCalls,
  unmeasured,
} from '../harness.js';
import { BROWSER_ACCEPT_ENCODING, formatPageBytes, pageBytes, pageBytesProblems } from '../page-bytes.js';
import { PROFILE_UPSTREAM, SESSION_BURST } from './routes.js';

const CATALOGUE_PATH = '/api/games/list';
const PROFILE_PATH = '/api/auth/profile';
/** Time to live of a profile-cache entry (spec 8), in seconds. */
const PROFILE_TTL_SECONDS = 10;
/** Time to live of the catalogue cache with the default configuration (`CATALOGUE_CACHE_TTL_MS`), in seconds. */
const CATALOGUE_TTL_SECONDS = 60;

/** The catalogue family (see the module documentation). */
export const catalogue: ScenarioFamily = {
  scenarios: {
    catalogue: 'cached catalogue list',
    revalidate: 'catalogue revalidation (304)',
    profile: 'profile read (cached per token)',
  },
  hostNodeScenarios: ['catalogue'],
  comparisons: [
    { label: "catalogue, the measured Node.js against the bench's", row: 'catalogue/proxy', base: 'catalogue/proxy-host-node' },
  ],

  async plan(ctx) {
    // The catalogue rows send the Accept-Encoding of a browser (the reference passthrough sends none).
    const catalogueRow: RowSpec = {
      id: 'catalogue/proxy',
      scenario: 'catalogue',
      target: 'proxy',
      method: 'GET',
      path: CATALOGUE_PATH,
      headers: { 'accept-encoding': BROWSER_ACCEPT_ENCODING },
      session: false,
      expect: 'success',
      pinned: ctx.pinned,
    };
    if (ctx.wanted.has('catalogue') && (await ctx.wantRow(catalogueRow))) ctx.rows.push(...ctx.withHost(catalogueRow));
    if (ctx.wanted.has('revalidate')) {
      // The same request with If-None-Match: the ETag the proxy sends for it, fetched just before each
      // run (the bench upstream answers the same bytes on every fill, so it should not change).
      const spec: RowSpec = { ...catalogueRow, id: 'revalidate/proxy', scenario: 'revalidate', expect: 304 };
      const etagNow = async (): Promise<{ status: number; etag: string | null; text: string }> => {
        const res = await probe(ctx.upstream, ctx.proxyPort, catalogueRow);
        return { status: res.status, etag: res.status === 200 ? res.header('etag') : null, text: res.text };
      };
      const first = await etagNow();
      if (isMissingRoute(first)) ctx.skipped.push(`revalidate: GET ${CATALOGUE_PATH} is not served yet`);
      else if (first.status !== 200) throw new Error(`GET ${CATALOGUE_PATH} answered ${first.status}: ${first.text.slice(0, 300)}`);
      else if (!first.etag)
        ctx.skipped.push(`revalidate: no ETag: the proxy sent no ETag on GET ${CATALOGUE_PATH}, so there is no 304 to measure`);
      else {
        const check = await probe(ctx.upstream, ctx.proxyPort, spec, { 'if-none-match': first.etag });
        if (check.status !== 304) {
          ctx.skipped.push(
            `revalidate: GET ${CATALOGUE_PATH} with If-None-Match: ${first.etag} (the proxy's own ETag) answered ${check.status}, not 304`,
          );
        } else {
          let last = first.etag;
          ctx.rows.push({
            ...spec,
            prepare: async () => {
              last = (await etagNow()).etag ?? last;
              return { 'if-none-match': last };
            },
          });
          ctx.say(`revalidation: GET ${CATALOGUE_PATH} with If-None-Match: ${first.etag} answers 304`);
        }
      }
    }
    if (ctx.wanted.has('profile')) {
      const spec: RowSpec = {
        id: 'profile/proxy',
        scenario: 'profile',
        target: 'proxy',
        method: 'GET',
        path: PROFILE_PATH,
        headers: {},
        session: true,
        burst: SESSION_BURST,
        expect: 'success',
        pinned: ctx.pinned,
      };
      if (await ctx.wantRow(spec)) ctx.rows.push(spec);
    }
  },

  async afterRuns(ctx) {
    if (!ctx.rows.some((r) => r.id === 'catalogue/proxy')) return;
    try {
      ctx.findings.catalogueBytes = await pageBytes(`http://127.0.0.1:${ctx.proxyPort}${CATALOGUE_PATH}`, clientHeaders(1, false)[0]);
    } catch (error) {
      ctx.skipped.push(`catalogue: the page could not be fetched by coding: ${error instanceof Error ? error.message : String(error)}`);
    }
  },

  summary({ catalogueBytes }) {
    if (!catalogueBytes) return [];
    return [
      '',
      `catalogue page GET ${catalogueBytes.path}, body bytes by Accept-Encoding (fetched once after the runs; — : not sent in that coding):`,
      formatPageBytes(catalogueBytes, (coding) => (coding === BROWSER_ACCEPT_ENCODING ? `${coding} (the catalogue rows')` : coding)),
    ];
  },

  checks(rows, inputs) {
    const { seconds } = inputs;
    const checks: Check[] = [
      ...againstReference(rows, inputs, 'catalogue', 'cached catalogue vs the reference passthrough ≥ 1.5× rps', 1.5),
      ...againstReference(
        rows,
        inputs,
        'revalidate',
        'catalogue revalidation (If-None-Match, 304) vs the reference passthrough ≥ 2× rps',
        2,
      ),
    ];
    const page = inputs.findings.catalogueBytes;
    if (inputs.wanted.has('catalogue')) {
      const name = 'catalogue page bytes with br: reported, as a share of identity';
      const identity = page?.answers.find((a) => a.acceptEncoding === 'identity');
      const br = page?.answers.find((a) => a.acceptEncoding === 'br');
      if (!page || !identity || !br)
        checks.push(unmeasured(name, skipReason(inputs.skipped, 'catalogue') ?? 'the page was not fetched', 'reported'));
      else if (page.brShare === null)
        checks.push(unmeasured(name, `the proxy sent no Content-Encoding: br (identity ${fmt(identity.bytes)} bytes)`, 'reported'));
      else {
        checks.push({
          name,
          ok: true,
          kind: 'reported',
          detail: `${fmt(br.bytes)} of ${fmt(identity.bytes)} bytes: ${fmt(page.brShare * 100, 1)}% (gzip ${page.gzipShare === null ? '—' : `${fmt(page.gzipShare * 100, 1)}%`})`,
        });
      }
    }
    // Catalogue reads and revalidations are answered from the cache: no call, except the background
    // refresh when the entry's time to live ends.
    for (const row of rows.filter((r) => r.path === CATALOGUE_PATH)) {
      const allowed = Math.floor(seconds / CATALOGUE_TTL_SECONDS) + 1;
      const counts = row.runs.map((run) => sumCalls(run.upstreamCalls));
      checks.push({
        name: `${row.id}: answered from the cache (at most ${allowed} background refresh per ${seconds} s run, ${CATALOGUE_TTL_SECONDS} s time to live)`,
        ok: counts.every((c) => c <= allowed),
        kind: 'correctness',
        detail: `${counts.join(', ')} upstream calls per run`,
      });
    }
    if (page) {
      const problems = pageBytesProblems(page);
      checks.push({
        name: `catalogue page GET ${page.path} by Accept-Encoding: 200, the codings asked for, encoded bodies decode to the identity bytes, Vary: Accept-Encoding`,
        ok: problems.length === 0,
        kind: 'correctness',
        detail:
          problems.length > 0
            ? problems.join('; ')
            : page.answers.map((a) => `${a.acceptEncoding} → ${a.contentEncoding ?? 'identity'} ${a.bytes} B`).join(', '),
      });
    }
    const profile = rows.find((r) => r.scenario === 'profile' && r.target === 'proxy');
    if (profile) {
      // One fetch per token per 10 s: a run of S seconds sees at most floor(S / 10) + 1 fetches of each
      // token, and a run reads at most `count` tokens.
      const perToken = Math.floor(seconds / PROFILE_TTL_SECONDS) + 1;
      const allowed = profile.clients.count * perToken;
      const counts = profile.runs.map((run) => run.upstreamCalls[PROFILE_UPSTREAM] ?? 0);
      const others = profile.runs.reduce((n, run) => n + sumCalls(run.upstreamCalls) - (run.upstreamCalls[PROFILE_UPSTREAM] ?? 0), 0);
      checks.push({
        name:
          `profile: at most one upstream call per token per ${PROFILE_TTL_SECONDS} s (≤ ${perToken} per token per ${seconds} s run, ` +
          `${profile.clients.count} tokens: ≤ ${allowed} per run)`,
        ok: counts.every((c) => c <= allowed) && others === 0,
        kind: 'correctness',
        detail: profile.runs.map((run, i) => `${counts[i]} calls for ${run.requests} reads`).join('; '),
      });
    }
    return checks;
  },
};
