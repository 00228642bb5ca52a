/**
 * Hardening row 4, the CSRF matrix (docs/behaviour.md "CSRF defence"): on every state-changing route of the
 * active tables, login and registration included, method × content type (`application/json`,
 * `text/plain`, form, multipart) × `Sec-Fetch-Site` × `Origin`.
 *
 * A combination is forbidden when `Sec-Fetch-Site` is `cross-site`, when an `Origin` is present and
 * not allowed (by default: host and port equal to `Host`, any scheme), or when the body's media type
 * is not one the route accepts. Pass: a forbidden combination answers 403 `csrf_rejected` or 415 and
 * calls nothing upstream; an allowed one answers what the same request without those headers answers.
 * The matrix runs twice: with the default origin rule, and with `ALLOWED_ORIGINS` set.
 *
 * Side-effecting reads (docs/behaviour.md "CSRF defence", last paragraph): the `GET` rows declared
 * `sideEffects` — exactly game start, sports launch, the partner B and support-desk tokens and KYC
 * start — × `Sec-Fetch-Site` × `Origin` (and `HEAD`): cross-site or a foreign origin answers 403
 * `csrf_rejected` with no upstream call; same-origin answers what the plain request answers and
 * reaches the upstream. Every other `GET` sent cross-site answers what it answers without the header.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fakeJwt } from '../helpers/recording-upstream.js';
import { jsonOf, keepAliveAgent, rawRequest, runPool } from './helpers/client.js';
import { FULL, Figures } from './helpers/figures.js';
import { type Harness, startHarness } from './helpers/harness.js';
import { multipartBody, type RouteCase, sampleOf, sampleRequest } from './helpers/routes.js';

const figures = new Figures('csrf', 4, 'CSRF matrix');
const agent = keepAliveAgent(8);
let h: Harness;
let listed: Harness;
const ALLOWED = 'https://www.example.com';
const OPERATOR = 'operator-credential-for-hardening';

before(async () => {
  h = await startHarness({ CACHE_PURGE_TOKEN: OPERATOR });
  listed = await startHarness({ ALLOWED_ORIGINS: `${ALLOWED},https://admin.example.com`, CACHE_PURGE_TOKEN: OPERATOR });
});
after(async () => {
  agent.destroy();
  await h.close();
  await listed.close();
  figures.write();
});

const SITES: (string | undefined)[] = FULL
  ? [undefined, 'same-origin', 'same-site', 'none', 'cross-site']
  : [undefined, 'same-origin', 'cross-site'];

function origins(port: number): { value: string | undefined; allowedByDefault: boolean; allowedByList: boolean }[] {
  const all = [
    { value: undefined, allowedByDefault: true, allowedByList: true },
    { value: `http://127.0.0.1:${port}`, allowedByDefault: true, allowedByList: false },
    { value: `https://127.0.0.1:${port}`, allowedByDefault: true, allowedByList: false },
    { value: 'https://evil.example', allowedByDefault: false, allowedByList: false },
    { value: 'null', allowedByDefault: false, allowedByList: false },
    { value: `http://127.0.0.1:${port + 1}`, allowedByDefault: false, allowedByList: false },
    { value: ALLOWED, allowedByDefault: false, allowedByList: true },
    { value: `${ALLOWED}.evil.example`, allowedByDefault: false, allowedByList: false },
  ];
  return FULL
    ? all
    : all.filter(
        (o) => o.value === undefined || o.value.startsWith('http://127') || o.value === 'https://evil.example' || o.value === ALLOWED,
      );
}

interface Typed {
  name: string;
  contentType: string;
  body: Buffer;
}

function bodies(rc: RouteCase, seed: number): Typed[] {
  const sample = sampleRequest(rc, seed);
  const value = rc.route.body ? sampleOf(rc.route.body, seed) : {};
  const json = sample.contentType === 'application/json' && sample.body ? sample.body : Buffer.from(JSON.stringify(value ?? {}));
  const record = value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const form =
    new URLSearchParams(Object.entries(record).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString() || 'a=1';
  const multi =
    rc.multipart && sample.body && sample.contentType
      ? { body: sample.body, contentType: sample.contentType }
      : multipartBody({ data: json.toString('utf8') });
  return [
    { name: 'application/json', contentType: 'application/json', body: json },
    { name: 'text/plain', contentType: 'text/plain', body: json },
    { name: 'form', contentType: 'application/x-www-form-urlencoded', body: Buffer.from(form) },
    { name: 'multipart', contentType: multi.contentType, body: multi.body },
  ];
}

async function matrix(target: Harness, byList: boolean): Promise<void> {
  const cases = target.cases.filter((rc) => rc.stateChanging);
  const jobs: (() => Promise<void>)[] = [];
  let n = 0;
  for (const rc of cases) {
    const typed = bodies(rc, 11);
    const pathOf = sampleRequest(rc, 11).path;
    for (const t of typed) {
      const accepted = rc.contentTypes.includes(t.contentType.split(';')[0] as string);
      // The answer of the same request without CSRF headers, for "allowed combinations work".
      let baseline: Promise<number> | undefined;
      const baselineStatus = () => {
        baseline ??= rawRequest(target.base, {
          method: rc.method,
          path: pathOf,
          headers: {
            cookie: target.cookie(fakeJwt({ sub: '7', base: `${rc.label}${t.name}` })),
            'content-type': t.contentType,
            ...(rc.auth === 'operator' ? { authorization: `Bearer ${OPERATOR}` } : {}),
          },
          body: t.body,
          agent,
        }).then((r) => r.status);
        return baseline;
      };
      for (const site of SITES) {
        for (const origin of origins(target.port)) {
          const rid = `csrf-${byList ? 'l' : 'd'}-${n++}`;
          jobs.push(async () => {
            const headers: Record<string, string> = {
              cookie: target.cookie(fakeJwt({ sub: '7', rid })),
              'content-type': t.contentType,
              'x-request-id': rid,
            };
            if (rc.auth === 'operator') headers.authorization = `Bearer ${OPERATOR}`;
            if (site) headers['sec-fetch-site'] = site;
            if (origin.value) headers.origin = origin.value;
            const res = await rawRequest(target.base, { method: rc.method, path: pathOf, headers, body: t.body, agent });
            figures.inputs++;
            figures.status(res.status || res.error || 'no answer');
            const originOk = byList ? origin.allowedByList : origin.allowedByDefault;
            const csrf = site === 'cross-site' || !originOk;
            const forbidden = csrf || !accepted;
            const label = `${byList ? '[ALLOWED_ORIGINS] ' : ''}${rc.label} ${t.name} site=${site ?? '-'} origin=${origin.value ?? '-'}`;
            const calls = target.upstream.byRid.get(rid)?.length ?? 0;
            if (forbidden) {
              figures.upstreamCallsForRejected += calls;
              figures.check(calls === 0, `${label}: forbidden but ${calls} upstream call(s)`);
              if (csrf) {
                const error = (jsonOf(res.body) as { error?: unknown } | undefined)?.error;
                figures.check(
                  res.status === 403 && error === 'csrf_rejected',
                  `${label}: expected 403 csrf_rejected, got ${res.status} ${String(error)}`,
                );
              } else if (rc.route.alwaysSucceeds === true) {
                // Logout answers success whatever the proxy refused (spec 5.5): 200 with the cleared cookie, nothing upstream.
                const cleared = String(res.headers['set-cookie'] ?? '').includes('Max-Age=0');
                figures.check(res.status === 200 && cleared, `${label}: expected 200 with the cleared cookie, got ${res.status}`);
              } else {
                figures.check(res.status === 415, `${label}: expected 415, got ${res.status}`);
              }
            } else {
              const expected = await baselineStatus();
              figures.check(res.status === expected, `${label}: allowed but answered ${res.status} (without the headers: ${expected})`);
            }
          });
        }
      }
    }
  }
  await runPool(jobs, 6);
}

test('row 4: forbidden method × type × site × origin combinations call nothing upstream; allowed ones work', async () => {
  await figures.run('csrf', async () => {
    const routes = h.cases.filter((rc) => rc.stateChanging);
    figures.check(
      routes.some((rc) => rc.url === '/api/auth/login'),
      'login is in the matrix',
    );
    figures.check(
      routes.some((rc) => rc.url === '/api/auth/register'),
      'registration is in the matrix',
    );
    await matrix(h, false);
    await matrix(listed, true);
    figures.check(
      h.crashes.length + listed.crashes.length === 0,
      `uncaught errors: ${[...h.crashes, ...listed.crashes].slice(0, 3).join('; ')}`,
    );
    figures.note(
      `${routes.length} state-changing route cases × 4 content types × ${SITES.length} Sec-Fetch-Site × ${origins(h.port).length} Origin values, default rule and ALLOWED_ORIGINS`,
    );
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});

/** The side-effecting reads of the contract, by URL. */
const SIDE_EFFECT_GETS = [
  '/api/games/start',
  '/api/kyc/start',
  '/api/sports/launch',
  '/api/sports/partner-b-token',
  '/api/user/support-desk-token',
];

/** A request path for a read: the sample, with a game for the game start (it needs `slug` or `gameId`). */
function readPath(rc: RouteCase): string {
  return rc.url === '/api/games/start' ? '/api/games/start?slug=book-of-x&mode=real' : sampleRequest(rc, 11).path;
}

async function sideEffectMatrix(target: Harness, byList: boolean): Promise<{ refused: number; passed: number }> {
  const flagged = target.cases.filter((rc) => rc.route.sideEffects === true);
  let refused = 0;
  let passed = 0;
  let n = 0;
  const jobs: (() => Promise<void>)[] = [];
  for (const rc of flagged) {
    const path = readPath(rc);
    const baseRid = `se-base-${byList ? 'l' : 'd'}${rc.url.replace(/[^A-Za-z0-9]/g, '-')}`;
    const baseline = rawRequest(target.base, {
      method: 'GET',
      path,
      headers: { cookie: target.cookie(fakeJwt({ sub: '7' })), 'x-request-id': baseRid },
      agent,
    });
    for (const method of ['GET', 'HEAD']) {
      for (const site of SITES) {
        for (const origin of origins(target.port)) {
          const rid = `se-${byList ? 'l' : 'd'}-${n++}`;
          jobs.push(async () => {
            const headers: Record<string, string> = { cookie: target.cookie(fakeJwt({ sub: '7', rid })), 'x-request-id': rid };
            if (site) headers['sec-fetch-site'] = site;
            if (origin.value) headers.origin = origin.value;
            const res = await rawRequest(target.base, { method, path, headers, agent });
            figures.inputs++;
            figures.status(res.status || res.error || 'no answer');
            const originOk = byList ? origin.allowedByList : origin.allowedByDefault;
            const label = `${byList ? '[ALLOWED_ORIGINS] ' : ''}${method} ${path} site=${site ?? '-'} origin=${origin.value ?? '-'}`;
            const calls = target.upstream.byRid.get(rid)?.length ?? 0;
            if (site === 'cross-site' || !originOk) {
              refused++;
              figures.upstreamCallsForRejected += calls;
              figures.check(calls === 0, `${label}: refused but ${calls} upstream call(s)`);
              const error = method === 'HEAD' ? 'csrf_rejected' : (jsonOf(res.body) as { error?: unknown } | undefined)?.error;
              figures.check(
                res.status === 403 && error === 'csrf_rejected',
                `${label}: expected 403 csrf_rejected, got ${res.status} ${String(error)}`,
              );
            } else {
              passed++;
              const base = await baseline;
              figures.check(
                res.status === base.status,
                `${label}: allowed but answered ${res.status} (without the headers: ${base.status})`,
              );
              const baseCalls = target.upstream.byRid.get(baseRid)?.length ?? 0;
              figures.check(calls === baseCalls && calls > 0, `${label}: ${calls} upstream call(s), the plain request made ${baseCalls}`);
            }
          });
        }
      }
    }
  }
  await runPool(jobs, 6);
  return { refused, passed };
}

test('row 4: side-effecting GETs are refused cross-site or from a foreign origin, with nothing upstream; same-origin passes', async () => {
  await figures.run('side-effecting GETs', async () => {
    const flagged = h.cases.filter((rc) => rc.route.sideEffects === true);
    figures.check(
      JSON.stringify(flagged.map((rc) => `${rc.method} ${rc.url}`).sort()) ===
        JSON.stringify(SIDE_EFFECT_GETS.map((u) => `GET ${u}`).sort()),
      `flagged rows: ${flagged.map((rc) => rc.label).join(', ')}`,
    );
    const byDefault = await sideEffectMatrix(h, false);
    const byList = await sideEffectMatrix(listed, true);

    // Every other read is not concerned: cross-site answers what the plain request answers.
    const others = h.cases.filter((rc) => rc.method === 'GET' && rc.route.sideEffects !== true && rc.url.startsWith('/api/'));
    let controls = 0;
    await runPool(
      others.map((rc) => async () => {
        const path = readPath(rc);
        const cookie = h.cookie(fakeJwt({ sub: '7', control: rc.url }));
        const plain = await rawRequest(h.base, { method: 'GET', path, headers: { cookie }, agent });
        const cross = await rawRequest(h.base, { method: 'GET', path, headers: { cookie, 'sec-fetch-site': 'cross-site' }, agent });
        figures.inputs += 2;
        figures.status(cross.status || cross.error || 'no answer');
        controls++;
        const error = (jsonOf(cross.body) as { error?: unknown } | undefined)?.error;
        figures.check(error !== 'csrf_rejected', `GET ${path} cross-site: refused as CSRF, but it has no side effect`);
        figures.check(cross.status === plain.status, `GET ${path} cross-site: ${cross.status}, plain: ${plain.status}`);
      }),
      6,
    );
    figures.note(
      `side-effecting GETs: ${flagged.length} rows (${flagged.map((rc) => rc.url).join(', ')}) × GET/HEAD × ${SITES.length} Sec-Fetch-Site × ${origins(h.port).length} Origin, both rules: ` +
        `${byDefault.refused + byList.refused} refused (403, 0 upstream calls), ${byDefault.passed + byList.passed} passed; ${controls} other GETs sent cross-site answered as without the header`,
    );
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});
