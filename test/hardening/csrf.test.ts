/**
 * Hardening row 4, the CSRF matrix (CONTRACT.md "CSRF defence"): on every state-changing route of the
 * active tables, login and registration included, method × content type (`application/json`,
 * `text/plain`, form, multipart) × `Sec-Fetch-Site` × `Origin`.
 *
 * A combination is forbidden when `Sec-Fetch-Site` is `cross-site`, when an `Origin` is present and
 * not allowed (by default: host and port equal to `Host`, any scheme), or when the body's media type
 * is not one the route accepts. Pass: a forbidden combination answers 403 `csrf_rejected` or 415 and
 * calls nothing upstream; an allowed one answers what the same request without those headers answers.
 * The matrix runs twice: with the default origin rule, and with `ALLOWED_ORIGINS` set.
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

const SITES: (string | undefined)[] = FULL ? [undefined, 'same-origin', 'same-site', 'none', 'cross-site'] : [undefined, 'same-origin', 'cross-site'];

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
  return FULL ? all : all.filter((o) => o.value === undefined || o.value.startsWith('http://127') || o.value === 'https://evil.example' || o.value === ALLOWED);
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
  const form = new URLSearchParams(Object.entries(record).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString() || 'a=1';
  const multi = rc.multipart && sample.body && sample.contentType ? { body: sample.body, contentType: sample.contentType } : multipartBody({ data: json.toString('utf8') });
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
                figures.check(res.status === 403 && error === 'csrf_rejected', `${label}: expected 403 csrf_rejected, got ${res.status} ${String(error)}`);
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
    figures.check(routes.some((rc) => rc.url === '/api/auth/login'), 'login is in the matrix');
    figures.check(routes.some((rc) => rc.url === '/api/auth/register'), 'registration is in the matrix');
    await matrix(h, false);
    await matrix(listed, true);
    figures.check(h.crashes.length + listed.crashes.length === 0, `uncaught errors: ${[...h.crashes, ...listed.crashes].slice(0, 3).join('; ')}`);
    figures.note(
      `${routes.length} state-changing route cases × 4 content types × ${SITES.length} Sec-Fetch-Site × ${origins(h.port).length} Origin values, default rule and ALLOWED_ORIGINS`,
    );
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});
