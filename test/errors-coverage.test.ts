/**
 * The link between the route tables (spec part 4) and the EP registry (spec 7.2): every BFF path a
 * route calls classifies to a known endpoint code, and every proxy route to its internal EP07xx code.
 *
 * A BFF upstream without a code classifies as EP0000; codes are appended to 7.2 first
 * (docs/adding-error-codes.md), and until then such an upstream is listed here as a gap. The test
 * fails both when a new unlisted gap appears and when a listed one gets a code.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../src/config.js';
import { endpointCodeFor, UNKNOWN_ENDPOINT_CODE } from '../src/errors/index.js';
import { allRouteTables } from '../src/routes/index.js';
import { activeRoutes } from '../src/routes/route.js';

/** BFF upstreams of spec part 4 without an EP row in spec 7.2 (method and path template): none left. */
const SPEC_7_2_GAPS = new Set<string>();

const routes = activeRoutes(allRouteTables, loadConfig({ NODE_ENV: 'production' }));

function sample(path: string): string {
  return path.replace(/\{[^}]+\}/g, 'sample-1').replace(/\*$/, 'sample');
}

describe('spec 7.2 ↔ spec part 4 route tables', () => {
  test('every BFF path a route calls has an endpoint code (known gaps listed)', () => {
    const missing: string[] = [];
    const covered: string[] = [];
    for (const r of routes) {
      for (const u of r.upstream) {
        if (u.service !== 'bff') continue;
        const key = `${u.method} ${u.path.split('?')[0]}`;
        const code = endpointCodeFor(u.method, sample(u.path.split('?')[0] ?? ''));
        if (code === UNKNOWN_ENDPOINT_CODE && !SPEC_7_2_GAPS.has(key)) missing.push(`${r.url} → ${key}`);
        if (code !== UNKNOWN_ENDPOINT_CODE && SPEC_7_2_GAPS.has(key)) covered.push(key);
      }
    }
    assert.deepEqual(missing, [], 'BFF upstreams that classify as EP0000');
    assert.deepEqual(covered, [], 'listed gaps that now have a code: remove them from SPEC_7_2_GAPS');
  });

  test('every proxy route classifies to an internal proxy code EP0700-EP0799', () => {
    for (const r of routes) {
      if (!r.url.startsWith('/api/')) continue;
      for (const method of Array.isArray(r.method) ? r.method : [r.method]) {
        const code = endpointCodeFor(method, sample(r.url.replace(/:([A-Za-z_]+)/g, '{$1}')));
        assert.match(code, /^EP07\d\d$/, `${method} ${r.url} → ${code}`);
      }
    }
  });
});
