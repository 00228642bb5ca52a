/** docs/api-reference.md is generated from the route tables; this test fails when they differ. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { renderApiReference } from '../src/routes/reference.js';

test('docs/api-reference.md matches the route tables (run npm run docs:api)', () => {
  const file = readFileSync(new URL('../docs/api-reference.md', import.meta.url), 'utf8');
  assert.equal(file, renderApiReference());
});

test('GET /openapi.json documents every route outside production and is absent in production', async () => {
  const { startRecordingUpstream, startProxy } = await import('./helpers/recording-upstream.js');
  const { activeRoutes } = await import('../src/routes/route.js');
  const { allRouteTables } = await import('../src/routes/index.js');
  const upstream = await startRecordingUpstream();
  const dev = await startProxy(upstream.url, { NODE_ENV: 'development' });
  const prod = await startProxy(upstream.url, { NODE_ENV: 'production' });
  try {
    const doc = (await (await fetch(`${dev.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    for (const r of activeRoutes(allRouteTables, dev.app.deps.config)) {
      const path = r.url.replace(/:([A-Za-z_]+)/g, '{$1}');
      const methods = Array.isArray(r.method) ? r.method : [r.method];
      for (const m of methods) {
        const entry = Object.entries(doc.paths).find(
          ([p]) => p === path || p === path.replace('*', '') || p === path.replace('*', '{*}'),
        );
        assert.ok(entry?.[1][m.toLowerCase()], `${m} ${r.url} is documented`);
      }
    }
    assert.equal((await fetch(`${prod.url}/openapi.json`)).status, 404);
  } finally {
    await dev.close();
    await prod.close();
    await upstream.close();
  }
});
