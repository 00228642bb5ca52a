/**
 * The link between the route tables (spec part 4) and the EP registry (spec 7.2).
 *
 * Every route row of `allRouteTables` is walked, dev-only rows included. Each BFF upstream row is
 * called through the proxy's own upstream client (`UpstreamService`, with pools that record the
 * dispatched path and answer 502 at once), so the URL classified is the one the client produces:
 * the BFF base URL (origin, optionally a version prefix the classifier strips: `/v1`, `/v2`,
 * `/api/v2`), the row's path with its `{name}` segments filled by `buildPath`, and a query string.
 * That URL must classify to a BFF endpoint code: not EP0000, and not an internal proxy code.
 *
 * Not in the registry, by decision:
 * - the generic dev-only forwarder (`/api/dev/proxy/*`) calls any BFF path, so a failure carries
 *   the code of the path it forwarded (EP0000 for a path without a row);
 * - the external services (sticker API, referral, cashback, attribution, cache purge): spec 7.2
 *   lists BFF endpoints and proxy routes only, and EP matching ignores the host, so their paths must
 *   not match a BFF row. A failure of theirs is known by the proxy route's EP07xx code.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Dispatcher, Pool } from 'undici';
import { loadConfig } from '../../src/config.js';
import { classifyError, type EndpointCode, endpointGroupOf, UNKNOWN_ENDPOINT_CODE } from '../../src/errors/index.js';
import { DEV_PROXY } from '../../src/routes/dev.js';
import { allRouteTables } from '../../src/routes/index.js';
import { activeRoutes, type RouteSpec, type UpstreamTarget } from '../../src/routes/route.js';
import { type UpstreamRequest, UpstreamService } from '../../src/upstream/client.js';
import { buildPath, rawSubPath } from '../../src/upstream/paths.js';
import { PoolRegistry } from '../../src/upstream/pools.js';

/** Every row of every table, dev-only rows included (a development build registers them all). */
const routes: readonly RouteSpec[] = activeRoutes(allRouteTables, loadConfig({ NODE_ENV: 'development' }));

/** BFF base URLs: an origin alone, and with each version prefix spec 7.2 strips. */
const BFF_BASE_URLS = [
  'https://bff.example.com',
  'https://bff.example.com/v1',
  'https://bff.example.com/v2',
  'https://bff.example.com/api/v2',
];

/** Rows whose BFF upstream is any path (`/{subPath}` at the root): the forwarded path decides the code. */
const ANY_BFF_PATH = new Set(['/api/dev/proxy/*']);

/** Pools that record each dispatched call and answer it with a 502 at once, without a socket. */
class RecordingPools extends PoolRegistry {
  readonly dispatched: { origin: string; method: string; path: string }[] = [];
  constructor() {
    super(1_000);
  }
  override get(origin: string): Pool {
    const pool = {
      dispatch: (options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean => {
        this.dispatched.push({ origin, method: options.method, path: options.path });
        const controller = {} as Dispatcher.DispatchController;
        handler.onResponseStart?.(controller, 502, {}, 'Bad Gateway');
        handler.onResponseEnd?.(controller, {});
        return true;
      },
    };
    return pool as unknown as Pool;
  }
}

/** The absolute URL the upstream client dispatches for `req` on a service at `baseUrl`. */
async function dispatchedUrl(baseUrl: string, req: UpstreamRequest): Promise<string> {
  const pools = new RecordingPools();
  const res = await new UpstreamService('BASE_URL', baseUrl, pools).request(req);
  assert.equal(res.status, 502);
  const [call] = pools.dispatched;
  assert.ok(call, `nothing dispatched for ${req.method} ${req.path}`);
  assert.equal(call.method, req.method);
  return `${call.origin}${call.path}`;
}

/** The row's path with every `{name}` segment filled with a sample value, as `buildPath` fills it. */
function filled(template: string): string {
  const names = [...template.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1] as string);
  return buildPath(template, Object.fromEntries(names.map((n) => [n, 'sample-1'])));
}

/** Sample paths of a row: filled; on a wildcard route the last `{name}` also as two segments. */
function samplePaths(r: RouteSpec, template: string): string[] {
  const out = [filled(template)];
  if (r.url.endsWith('*') && /\{[^}]+\}$/.test(template)) out.push(filled(template.replace(/\{[^}]+\}$/, 'sample-1/sample-2')));
  return out;
}

function methodsOf(r: RouteSpec): readonly string[] {
  return Array.isArray(r.method) ? r.method : [r.method as string];
}

function codeOf(url: string, method: string): EndpointCode {
  return classifyError({ status: 502, data: { message: 'bad gateway' }, url, method }).endpointCode;
}

const bffTargets: { route: RouteSpec; target: UpstreamTarget }[] = routes.flatMap((r) =>
  r.upstream.filter((u) => u.service === 'bff' && !ANY_BFF_PATH.has(r.url)).map((target) => ({ route: r, target })),
);

describe('spec 7.2 ↔ spec part 4: every upstream a route can call has a code', () => {
  test('the walk covers every table, dev-only rows included', () => {
    assert.equal(routes.length, allRouteTables.flat().length, 'a row was dropped');
    assert.ok(
      routes.some((r) => r.devOnly === true),
      'no dev-only row walked',
    );
    assert.ok(bffTargets.length > 50, `only ${bffTargets.length} BFF upstream rows found`);
  });

  test('every BFF upstream row, as the upstream client calls it, classifies to a BFF endpoint code', async () => {
    const problems: string[] = [];
    for (const { route: r, target } of bffTargets) {
      for (const path of samplePaths(r, target.path)) {
        for (const base of BFF_BASE_URLS) {
          const url = await dispatchedUrl(base, { method: target.method, path, query: { page: 2, sample: 'a b' } });
          const code = codeOf(url, target.method);
          const group = endpointGroupOf(Number(code.slice(2)));
          if (code === UNKNOWN_ENDPOINT_CODE || group === 'internal') {
            problems.push(`${methodsOf(r).join('/')} ${r.url} → ${target.method} ${target.path}: ${url} is ${code}`);
          }
        }
      }
    }
    assert.deepEqual(
      problems,
      [],
      'A BFF upstream without an EP code: append one (spec 7.1, docs/adding-error-codes.md), mind first-match-wins order',
    );
  });

  test('rows that forward any BFF path are the dev-only generic forwarder, and it keeps the code of the path it forwards', async () => {
    const anyPath = routes.filter((r) => r.upstream.some((u) => u.service === 'bff' && /^\/\{[^}]+\}$/.test(u.path)));
    assert.deepEqual(anyPath.map((r) => r.url).sort(), [...ANY_BFF_PATH].sort());
    for (const r of anyPath) assert.equal(r.devOnly, true, `${r.url} forwards any BFF path outside development`);
    for (const { target } of bffTargets) {
      const path = filled(target.path);
      const forwarded = rawSubPath(`${DEV_PROXY.route}${path.slice(1)}?page=2`, DEV_PROXY.route, DEV_PROXY.upstream);
      const base = BFF_BASE_URLS[0] as string;
      const direct = await dispatchedUrl(base, { method: target.method, path, query: { page: 2 } });
      const viaDev = await dispatchedUrl(base, { method: target.method, path: forwarded.path, rawQuery: forwarded.rawQuery });
      assert.equal(codeOf(viaDev, target.method), codeOf(direct, target.method), `${target.method} ${path} through the forwarder`);
    }
  });

  test('external services have no code of their own: their paths match no BFF row; their routes carry an EP07xx code', async () => {
    const externals = routes.flatMap((r) => r.upstream.filter((u) => u.service !== 'bff').map((target) => ({ route: r, target })));
    assert.ok(externals.length > 0);
    for (const { route: r, target } of externals) {
      const url = await dispatchedUrl(`https://${target.service.toLowerCase()}.example.com`, {
        method: target.method,
        path: filled(target.path),
      });
      assert.equal(
        codeOf(url, target.method),
        UNKNOWN_ENDPOINT_CODE,
        `${target.service} ${target.method} ${target.path} matches a BFF row`,
      );
      assert.ok(r.url.startsWith('/api/'), `${r.url} calls ${target.service} but is not a proxy /api route`);
      for (const method of methodsOf(r))
        assert.match(codeOf(r.url.replace(/:([A-Za-z_]+)/g, 'sample-1'), method), /^EP07\d\d$/, `${method} ${r.url}`);
    }
  });

  test('every proxy /api route classifies to an internal proxy code EP0700-EP0799', () => {
    for (const r of routes) {
      if (!r.url.startsWith('/api/')) continue;
      for (const method of methodsOf(r)) {
        const path = r.url.replace(/:([A-Za-z_]+)/g, 'sample-1').replace(/\*$/, 'sample-1/sample-2');
        assert.match(codeOf(path, method), /^EP07\d\d$/, `${method} ${r.url}`);
      }
    }
  });
});
