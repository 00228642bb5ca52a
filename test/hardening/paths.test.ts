/**
 * Hardening row 2, path traversal and SSRF (docs/behaviour.md "Upstream requests": a path segment taken
 * from input is percent-encoded and can never climb out of its route; redirects are never followed).
 *
 * The routes under test are found in the tables: every row whose upstream path has a `{...}`
 * placeholder or whose URL has a parameter or a wildcard. Each input that can reach such a
 * placeholder (path parameter, wildcard, query field, body field; for placeholders filled from the
 * session — `{id}`, `{userId}` — the fields `id`, `userId`, `user_id` are tried too) receives every
 * vector of {@link vectors}, sent as raw bytes over node:http (no URL normalisation).
 *
 * Pass: every upstream request stays inside the route's declared upstream paths (one segment per
 * placeholder, no `.`/`..` segment and no `/` or `\` once decoded and normalised with NFKC, so that an
 * upstream that folds look-alikes such as U+FE52 "﹒" or U+FE68 "﹨" cannot climb either), reaches the upstream host only (a canary host on
 * a second loopback address counts connections), and no answer is a 500. Then every route with an
 * upstream is called while the upstream answers 301/302/303/307/308 to the canary: nothing follows.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fakeJwt } from '../helpers/recording-upstream.js';
import { keepAliveAgent, rawRequest, runPool } from './helpers/client.js';
import { Figures } from './helpers/figures.js';
import { type Harness, startHarness } from './helpers/harness.js';
import { fillPath, type RouteCase, sampleOf, sampleRequest, upstreamPathAllowed } from './helpers/routes.js';
import { type Canary, startCanary } from './helpers/upstream.js';

const figures = new Figures('paths', 2, 'Path traversal and SSRF');
const TOKEN = fakeJwt({ sub: '7', role: 'paths' });
let h: Harness;
let canary: Canary;
const agent = keepAliveAgent(8);

before(async () => {
  canary = await startCanary();
  h = await startHarness();
});
after(async () => {
  agent.destroy();
  await h.close();
  await canary.close();
  figures.write();
});

/** The traversal and injection vectors, as they appear in a URL (percent-encoded where shown). */
function vectors(c: string): string[] {
  return [
    '..%2f..%2fadmin',
    '%2e%2e%2f%2e%2e%2fadmin',
    '%2e%2e',
    '.%2e',
    '..%5c..%5cadmin',
    '%252e%252e%252fadmin',
    '..%252f..%252fadmin',
    `//${c}/x`,
    `%2f%2f${c}%2fx`,
    `http:%2f%2f${c}%2fx`,
    `http://${c}/x`,
    `@${c}`,
    `x@${c}`,
    `${c}`,
    'a%3fx=1',
    'a?x=1',
    'a%23x',
    'a#x',
    ';x=1',
    '..;/admin',
    '%EF%BC%8E%EF%BC%8E%EF%BC%8Fadmin',
    '%EF%BC%8E%EF%BC%8E',
    '%E2%80%A4%E2%80%A4',
    '%E3%80%82%E3%80%82',
    '%EF%B9%92%EF%B9%92%EF%B9%A8admin',
    '%EF%B9%92%EF%B9%92',
    '%EF%B9%92%EF%B9%92%2fadmin',
    '%EF%B9%A8%EF%B9%A8evil%EF%B9%A8x',
    '%E2%80%A5',
    '%E2%92%88%E2%92%88',
    '..',
    '.',
    '..%00',
    '%00',
    '%c0%ae%c0%ae%c0%afadmin',
    '%e0%80%ae%e0%80%ae',
    'a%0d%0aHost:%20evil',
    '%u002e%u002e',
    'a/../../admin',
    '%5c%5cevil%5cx',
    'x%09..',
    '....%2f%2f',
    `%40${c}`,
    'admin%2f..%2f..%2f..%2fetc%2fpasswd',
  ];
}

function decoded(vector: string): string {
  try {
    return decodeURIComponent(vector);
  } catch {
    return vector;
  }
}

/** Where input can reach an upstream placeholder of a route. */
interface Injection {
  where: 'path' | 'wildcard' | 'query' | 'body';
  name: string;
}

function injectionsOf(rc: RouteCase): Injection[] {
  const placeholders = new Set<string>();
  for (const t of rc.route.upstream) for (const m of t.path.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) placeholders.add(m[1] as string);
  if (placeholders.size === 0 && rc.params.length === 0 && !rc.wildcard) return [];
  const out: Injection[] = [];
  const props = (schema: unknown) => Object.keys(((schema ?? {}) as { properties?: object }).properties ?? {});
  const query = props(rc.route.querystring);
  const body = props(rc.route.body);
  for (const name of rc.params) out.push({ where: 'path', name });
  if (rc.wildcard) out.push({ where: 'wildcard', name: '*' });
  const hasBody = rc.stateChanging && !rc.multipart;
  for (const name of placeholders) {
    if (rc.params.includes(name) || name === 'subPath') continue;
    let found = false;
    if (query.includes(name)) {
      out.push({ where: 'query', name });
      found = true;
    }
    if (hasBody && (body.includes(name) || rc.route.body === undefined)) {
      out.push({ where: 'body', name });
      found = true;
    }
    if (!found) {
      // filled from the session or another field: try the obvious names anyway
      for (const alias of ['id', 'userId', 'user_id', 'transactionId']) {
        if (hasBody) out.push({ where: 'body', name: alias });
        else out.push({ where: 'query', name: alias });
      }
    }
  }
  return out;
}

test('row 2: traversal and injection vectors never leave the route upstream nor reach another host; redirects are not followed', async () => {
  await figures.run('paths', async () => {
    const c = `${canary.host}:${canary.port}`;
    const list = vectors(c);
    figures.check(list.length >= 20, `only ${list.length} vectors`);
    const targets = h.cases.map((rc) => ({ rc, injections: injectionsOf(rc) })).filter((t) => t.injections.length > 0);
    figures.note(
      `${list.length} vectors on ${targets.length} route cases: ${targets.map((t) => `${t.rc.label} (${t.injections.map((i) => `${i.where}:${i.name}`).join(', ')})`).join('; ')}`,
    );
    let n = 0;
    let outside = 0;
    const jobs: (() => Promise<void>)[] = [];
    for (const { rc, injections } of targets) {
      for (const inj of injections) {
        for (const vector of list) {
          const rid = `path-${n++}`;
          jobs.push(async () => {
            const seed = 5;
            const sample = sampleRequest(rc, seed);
            const values: Record<string, string> = {};
            for (const p of rc.params) values[p] = 'ok1';
            let path = fillPath(
              rc,
              inj.where === 'path' ? { ...values, [inj.name]: vector } : values,
              inj.where === 'wildcard' ? vector : 'events/1',
            );
            let query = sample.path.includes('?') ? sample.path.slice(sample.path.indexOf('?') + 1) : '';
            let body = sample.body;
            if (inj.where === 'query') {
              const params = query.split('&').filter((kv) => kv && decodeURIComponent(kv.split('=')[0] ?? '') !== inj.name);
              params.push(`${encodeURIComponent(inj.name)}=${vector}`);
              query = params.join('&');
            }
            if (inj.where === 'body') {
              const base = rc.route.body ? sampleOf(rc.route.body, seed) : {};
              const object = base && typeof base === 'object' && !Array.isArray(base) ? base : {};
              body = Buffer.from(JSON.stringify({ ...object, [inj.name]: decoded(vector) }));
            }
            if (inj.where === 'wildcard' && rc.wildcard) {
              // also inside the sub-path, after a good segment
              path = n % 2 === 0 ? path : fillPath(rc, values, `events/${vector}/x`);
            }
            const headers: Record<string, string> = { cookie: h.cookie(TOKEN), 'x-request-id': rid };
            if (sample.contentType) headers['content-type'] = sample.contentType;
            const res = await rawRequest(h.base, { method: rc.method, path: `${path}${query ? `?${query}` : ''}`, headers, body, agent });
            figures.inputs++;
            figures.status(res.status || res.error || 'no answer');
            const label = `${rc.label} ${inj.where}:${inj.name}=${vector}`;
            if (res.status === -1) return;
            figures.check(res.status > 0, `${label}: no answer (${res.error})`);
            figures.check(res.status !== 500, `${label}: 500 ${res.body.toString('utf8').slice(0, 120)}`);
            for (const s of h.upstream.byRid.get(rid) ?? []) {
              if (!upstreamPathAllowed(rc, s.method, s.path)) {
                outside++;
                figures.fail(`${label}: upstream ${s.method} ${s.path} is outside the route`);
              }
              figures.check(s.headers.host === `127.0.0.1:${h.upstream.port}`, `${label}: upstream Host ${s.headers.host}`);
            }
          });
        }
      }
    }
    const started = Date.now();
    await runPool(jobs, 6);
    figures.note(`vectors: ${jobs.length} requests in ${Date.now() - started} ms`);
    figures.check(canary.connections === 0, `the canary host got ${canary.connections} connection(s)`);

    // Redirects: every route that calls an upstream, while the upstream redirects to the canary.
    let redirects = 0;
    for (const status of [301, 302, 303, 307, 308]) {
      h.upstream.fault('', (_req, res) => {
        res.writeHead(status, { location: `${canary.url}/stolen?token=x`, 'content-length': '0' });
        res.end();
      });
      const jobs2 = h.cases
        .filter((rc) => rc.route.upstream.length > 0)
        .map((rc) => async () => {
          const sample = sampleRequest(rc, 7);
          const headers: Record<string, string> = { cookie: h.cookie(fakeJwt({ sub: '7', n: redirects })) };
          if (sample.contentType) headers['content-type'] = sample.contentType;
          const res = await rawRequest(h.base, { method: rc.method, path: sample.path, headers, body: sample.body, agent });
          redirects++;
          figures.inputs++;
          figures.status(res.status || res.error || 'no answer');
          figures.check(res.status < 300 || res.status >= 400, `${rc.label}: the upstream ${status} reached the client as ${res.status}`);
          figures.check(res.headers.location === undefined, `${rc.label}: a Location header reached the client`);
          figures.check(res.status !== 500, `${rc.label}: 500 on an upstream ${status}`);
        });
      await runPool(jobs2, 6);
      h.upstream.heal();
    }
    figures.faults += redirects;
    figures.check(canary.connections === 0, `the canary host got ${canary.connections} connection(s) after the redirects`);
    figures.check(h.crashes.length === 0, `uncaught errors: ${h.crashes.slice(0, 3).join('; ')}`);
    figures.note(
      `upstream requests outside their route: ${outside}; canary connections: ${canary.connections}; redirect answers tried: ${redirects}`,
    );
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});
