/**
 * Hardening row 10, dev routes in production (spec 1.6, docs/behaviour.md "Configuration", `NODE_ENV`): every dev-only path —
 * the dev-only rows of the tables, plus `/api/dev/proxy`, `/playground` and `/openapi.json` — in 14
 * spellings (case, `%2f`, `//`, `/./`, `/x/../`, trailing slash, an encoded letter, `;x=1`, `%00`,
 * backslashes, a debug query and cookie, HEAD, OPTIONS, POST) answers 404 with `NODE_ENV=production`
 * and calls nothing upstream; no such route is registered. Control: outside production the
 * canonical spelling of each dev-only row is served (so the row tests something).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { activeRoutes } from '../../src/routes/route.js';
import { allRouteTables } from '../../src/routes/index.js';
import { jsonOf, keepAliveAgent, rawRequest } from './helpers/client.js';
import { Figures } from './helpers/figures.js';
import { type Harness, startHarness } from './helpers/harness.js';
import { devOnlyRoutes } from './helpers/routes.js';

const figures = new Figures('dev-routes', 10, 'Dev routes in production');
let prod: Harness;
let dev: Harness;
const agent = keepAliveAgent(4);

before(async () => {
  prod = await startHarness({ NODE_ENV: 'production' });
  dev = await startHarness({ NODE_ENV: 'development' });
});
after(async () => {
  agent.destroy();
  await prod.close();
  await dev.close();
  figures.write();
});

/** The dev-only paths: the rows of the tables and the ones the specification and docs/behaviour.md "Development-only routes" name. */
function devPaths(): string[] {
  const paths = new Set<string>([
    '/api/dev/proxy',
    '/api/dev/proxy/auth/user-profile',
    '/playground',
    '/openapi.json',
    '/debug',
    '/debug/analytics',
    '/dev/ftd-cashback',
  ]);
  for (const r of devOnlyRoutes()) paths.add(r.url.replace('*', 'auth/user-profile').replace(/:([A-Za-z_]+)/g, 'x'));
  return [...paths];
}

interface Spelling {
  name: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

function spellings(path: string): Spelling[] {
  const segments = path.split('/').slice(1);
  const devIndex = Math.max(
    0,
    segments.findIndex((s) => s !== 'api'),
  );
  const upper = segments.map((s, i) => (i === devIndex ? s.toUpperCase() : s));
  const encodedLetter = segments.map((s, i) => (i === devIndex ? `%${s.charCodeAt(0).toString(16)}${s.slice(1)}` : s));
  const lastSlash = path.lastIndexOf('/');
  const slashEncoded = lastSlash > 0 ? `${path.slice(0, lastSlash)}%2f${path.slice(lastSlash + 1)}` : `/%2f${path.slice(1)}`;
  const last = segments.length - 1;
  const dotted = `/${[...segments.slice(0, last), '.', segments[last]].join('/')}`;
  return [
    { name: 'canonical', method: 'GET', path },
    { name: 'upper case', method: 'GET', path: `/${upper.join('/')}` },
    { name: '%2f for a slash', method: 'GET', path: slashEncoded },
    { name: 'double slash', method: 'GET', path: path.replace('/', '//').replace(/^\/\/\//, '//') },
    {
      name: 'inner double slash',
      method: 'GET',
      path: segments.length > 1 ? `/${segments[0]}//${segments.slice(1).join('/')}` : `//${segments[0]}`,
    },
    { name: '/./', method: 'GET', path: dotted },
    { name: '/x/../', method: 'GET', path: `/x/..${path}` },
    { name: 'trailing slash', method: 'GET', path: `${path}/` },
    { name: 'encoded letter', method: 'GET', path: `/${encodedLetter.join('/')}` },
    { name: ';x=1', method: 'GET', path: `${path};x=1` },
    { name: '%00', method: 'GET', path: `${path}%00` },
    { name: 'backslashes', method: 'GET', path: path.replaceAll('/', '\\').replace(/^\\/, '/') },
    { name: 'debug switches', method: 'GET', path: `${path}?debug=1&dev=1`, headers: { cookie: 'debug=1; dev=1', 'x-debug': '1' } },
    { name: 'HEAD', method: 'HEAD', path },
    { name: 'OPTIONS', method: 'OPTIONS', path },
    { name: 'POST', method: 'POST', path, headers: { 'content-type': 'application/json' }, body: '{}' },
  ];
}

test('row 10: every dev-only path in every spelling answers 404 in production and calls nothing', async () => {
  await figures.run('dev routes', async () => {
    figures.check(
      activeRoutes(allRouteTables, prod.proxy.app.deps.config).every((r) => !r.devOnly),
      'a dev-only row is active in production',
    );
    const tree = prod.proxy.app.printRoutes({ commonPrefix: false });
    for (const word of ['dev/', 'debug', 'playground', 'openapi', 'visitor-info', 'cache-policy']) {
      figures.check(!tree.includes(word), `a route with "${word}" is registered in production`);
    }
    const paths = devPaths();
    let spellingsTried = 0;
    for (const path of paths) {
      for (const s of spellings(path)) {
        const before = prod.upstream.seen.length;
        const res = await rawRequest(prod.base, { method: s.method, path: s.path, headers: s.headers, body: s.body, agent });
        spellingsTried++;
        figures.inputs++;
        figures.status(res.status || res.error || 'no answer');
        const label = `${s.method} ${s.path} (${s.name})`;
        if (res.status === -1) continue;
        figures.check(res.status === 404, `${label}: ${res.status} in production`);
        if (s.method !== 'HEAD') {
          figures.check((jsonOf(res.body) as { error?: unknown } | undefined)?.error === 'not_found', `${label}: not the 404 envelope`);
        }
        figures.check(prod.upstream.seen.length === before, `${label}: ${prod.upstream.seen.length - before} upstream call(s)`);
      }
    }
    // Control: the dev-only rows are served outside production.
    let served = 0;
    for (const r of devOnlyRoutes()) {
      const path = r.url.replace('*', 'auth/user-profile').replace(/:([A-Za-z_]+)/g, 'x');
      const method = (Array.isArray(r.method) ? r.method[0] : r.method) as string;
      const res = await rawRequest(dev.base, {
        method,
        path,
        headers: method === 'GET' ? {} : { 'content-type': 'application/json' },
        body: method === 'GET' ? undefined : '{}',
        agent,
      });
      if (res.status !== 404) served++;
      figures.check(res.status !== 404, `control: ${method} ${path} is 404 outside production`);
    }
    figures.check(prod.crashes.length + dev.crashes.length === 0, `uncaught errors: ${[...prod.crashes, ...dev.crashes].join('; ')}`);
    figures.note(
      `${paths.length} dev-only paths × ${spellingsTried / paths.length} spellings = ${spellingsTried} requests in production; ${served}/${devOnlyRoutes().length} dev-only rows served outside production`,
    );
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});
