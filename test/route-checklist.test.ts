/**
 * Where a new route goes (docs/architecture.md "Where to add"): for every row of the route tables, the
 * files the test suite requires beside its table, each named with what it lacks; one failure lists
 * them all for every route that lacks one. The same check run on a made-up row proves it names every
 * file a new route needs.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { ROUTES } from '../packages/browser/src/browser/routes.js';
import { PROBES, UNPROBED } from '../src/doctor/probes.js';
import { documentPath } from '../src/pipeline/openapi.js';
import { endpointCodeFor, type EndpointCode, UNKNOWN_ENDPOINT_CODE } from '../src/errors/index.js';
import { allRouteTables } from '../src/routes/index.js';
import { type RouteSpec } from '../src/routes/route.js';

const text = (path: string): string => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

/** The files a route's checks read, as they are on disk. */
interface Sources {
  readonly samples: string;
  readonly errorCodes: string;
  readonly apiReference: string;
  readonly openapiTypes: string;
}

/** `/api/games/category/:slug` → `/api/games/category/{}` (parameters compare by position). */
const pattern = (path: string): string =>
  path
    .split('/')
    .map((seg) => (seg.startsWith(':') || /^\{[^}]+\}$/.test(seg) ? '{}' : seg))
    .join('/');

const methodsOf = (r: RouteSpec): string[] => (Array.isArray(r.method) ? [...r.method] : [r.method]) as string[];

/**
 * What `route` lacks, as `file: what`, beside its row in `src/routes/<area>.ts`: the EP code of each
 * BFF call and what every EP code needs (the sample table of its test, a doctor's probe or the reason
 * for none, its row in docs/error-codes.md), the browser client's row, the generated API reference and
 * the SDK's generated OpenAPI types.
 */
function lacksOf(route: RouteSpec, sources: Sources): string[] {
  const out: string[] = [];
  const probed = new Set<string>([...PROBES.map((p) => p.code), ...Object.keys(UNPROBED)]);
  for (const up of route.upstream) {
    if (up.service !== 'bff' || up.path.includes('{subPath}')) continue;
    const code: EndpointCode = endpointCodeFor(up.method, up.path.replace(/\{[^}]+\}/g, 'x'));
    if (code === UNKNOWN_ENDPOINT_CODE) {
      out.push(
        `packages/browser/src/errors/endpoint-codes.ts and codes.lock.json: an EP code for ${up.method} ${up.path} (docs/adding-error-codes.md)`,
      );
      continue;
    }
    if (!sources.samples.includes(`'${code}'`)) out.push(`test/errors/endpoint-codes.test.ts: a SAMPLES row for ${code}`);
    if (!probed.has(code)) out.push(`src/doctor/probes.ts: a probe of ${code} (${up.method} ${up.path}), or its reason in UNPROBED`);
    if (!sources.errorCodes.includes(`| ${code} |`)) out.push(`docs/error-codes.md: the row of ${code} (npm run docs:errors)`);
  }
  const forBrowser = route.url.startsWith('/api/') && route.devOnly !== true;
  const typesMissing: string[] = [];
  for (const method of methodsOf(route)) {
    if (method === 'HEAD' || !forBrowser) continue;
    const row = ROUTES.find((c) => c.method === method && pattern(c.path) === pattern(route.url));
    if (row === undefined) {
      out.push(
        `packages/browser/src/browser/routes.ts: the client's row for ${method} ${route.url}, then npm run gen:sdk-types (openapi.gen.ts)`,
      );
    } else if (!row.path.includes('*') && !sources.openapiTypes.includes(`"${row.path}": {`)) {
      // (A wildcard row, the raw passthrough, has no operation of that path: the SDK types skip it.)
      typesMissing.push(row.path);
    }
  }
  const sections = methodsOf(route)
    .filter((m) => m !== 'HEAD')
    .map((m) => `### ${m} \`${documentPath(route.url)}\``);
  if (sections.some((section) => !sources.apiReference.includes(section))) {
    out.push(`docs/api-reference.md: the section of ${route.url} (npm run docs:api)`);
  }
  for (const path of new Set(typesMissing))
    out.push(`packages/browser/src/browser/openapi.gen.ts: the types of ${path} (npm run gen:sdk-types)`);
  return out;
}

const SOURCES: Sources = {
  samples: text('test/errors/endpoint-codes.test.ts'),
  errorCodes: text('docs/error-codes.md'),
  apiReference: text('docs/api-reference.md'),
  openapiTypes: text('packages/browser/src/browser/openapi.gen.ts'),
};

describe('where a new route goes', () => {
  test('every row of the route tables has what the suite requires beside its table', () => {
    const lacking = allRouteTables
      .flat()
      .map((r) => ({ route: `${methodsOf(r).join(', ')} ${r.url}`, lacks: lacksOf(r, SOURCES) }))
      .filter((r) => r.lacks.length > 0)
      .map((r) => `${r.route} lacks:\n  - ${r.lacks.join('\n  - ')}`);
    assert.deepEqual(lacking, []);
  });

  test('a made-up route with a new BFF call is told every file it still needs', () => {
    const made: RouteSpec = {
      area: 'Wallet',
      method: 'POST',
      url: '/api/wallet/made-up/:id',
      spec: '4.4',
      summary: 'a row that is nowhere else',
      auth: 'required',
      upstream: [{ service: 'bff', method: 'POST', path: '/made-up/{id}/nowhere' }],
      handler: async () => undefined,
    };
    const files = lacksOf(made, SOURCES).map((line) => line.slice(0, line.indexOf(':')));
    assert.deepEqual(files, [
      'packages/browser/src/errors/endpoint-codes.ts and codes.lock.json',
      'packages/browser/src/browser/routes.ts',
      'docs/api-reference.md',
    ]);
    // A new EP code of an existing BFF path is told the rest: its sample, probe and documented row.
    const known = { ...made, upstream: [{ service: 'bff' as const, method: 'GET' as const, path: '/users/wallet' }] };
    const none: Sources = { samples: '', errorCodes: '', apiReference: '', openapiTypes: '' };
    const withCode = lacksOf(known, none).map((line) => line.slice(0, line.indexOf(':')));
    assert.deepEqual(withCode, [
      'test/errors/endpoint-codes.test.ts',
      'docs/error-codes.md',
      'packages/browser/src/browser/routes.ts',
      'docs/api-reference.md',
    ]);
    // A route the client has (login) whose generated types are missing is told to generate them.
    const login = allRouteTables.flat().find((r) => r.url === '/api/auth/login') as RouteSpec;
    assert.deepEqual(
      lacksOf(login, { ...SOURCES, openapiTypes: '' }).map((line) => line.slice(0, line.indexOf(':'))),
      ['packages/browser/src/browser/openapi.gen.ts'],
    );
  });
});
