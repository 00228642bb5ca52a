/**
 * The histogram with bound label sets (pipeline/histogram-cells.ts) gives the exposition text
 * prom-client's own `Histogram` gives for the same observations, bucket bounds included (a value
 * equal to a bound counts in that bucket), and aggregates across registries as a sum.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AggregatorRegistry, Histogram, Registry } from 'prom-client';
import { CellHistogram } from '../src/pipeline/histogram-cells.js';
import { DURATION_BUCKETS } from '../src/pipeline/metrics-registry.js';

const OBSERVATIONS: [Record<'method' | 'route', string>, number][] = [
  [{ method: 'GET', route: '/api/a' }, 0],
  [{ method: 'GET', route: '/api/a' }, 0.005],
  [{ method: 'GET', route: '/api/a' }, 0.0051],
  [{ method: 'GET', route: '/api/a' }, 10],
  [{ method: 'GET', route: '/api/a' }, 11],
  [{ method: 'POST', route: '/api/b' }, 0.3],
  [{ method: 'POST', route: '/api/b' }, 2.5],
  [{ method: 'GET', route: '/api/"quoted"\\' }, 0.02],
];

function pair() {
  const theirs = new Registry();
  const ours = new Registry();
  const reference = new Histogram({
    name: 'h_seconds',
    help: 'help',
    labelNames: ['method', 'route'],
    buckets: [...DURATION_BUCKETS],
    registers: [theirs],
  });
  const cells = new CellHistogram({
    name: 'h_seconds',
    help: 'help',
    labelNames: ['method', 'route'],
    buckets: DURATION_BUCKETS,
    registers: [ours],
  });
  return { theirs, ours, reference, cells };
}

test('the same exposition text as prom-client’s Histogram for the same observations', async () => {
  const { theirs, ours, reference, cells } = pair();
  const bound = new Map<string, ReturnType<typeof cells.labels>>();
  for (const [labels, value] of OBSERVATIONS) {
    reference.observe(labels, value);
    const key = `${labels.method} ${labels.route}`;
    if (!bound.has(key)) bound.set(key, cells.labels(labels));
    bound.get(key)?.observe(value);
  }
  assert.equal(await ours.metrics(), await theirs.metrics());
});

test('two cells of one label set read as one; a non-finite value is ignored; wrong labels throw', async () => {
  const { theirs, ours, reference, cells } = pair();
  const a = cells.labels({ method: 'GET', route: '/x' });
  const b = cells.labels({ method: 'GET', route: '/x' });
  a.observe(0.01);
  b.observe(0.2);
  b.observe(Number.NaN);
  reference.observe({ method: 'GET', route: '/x' }, 0.01);
  reference.observe({ method: 'GET', route: '/x' }, 0.2);
  assert.equal(await ours.metrics(), await theirs.metrics());
  assert.throws(() => cells.labels({ method: 'GET' } as Record<'method' | 'route', string>), TypeError);
  assert.throws(() => cells.labels({ method: 'GET', route: '/x', extra: 'y' } as Record<'method' | 'route', string>), TypeError);
});

test('across workers the values add up (AggregatorRegistry)', async () => {
  const one = pair();
  const two = pair();
  one.cells.labels({ method: 'GET', route: '/x' }).observe(0.01);
  two.cells.labels({ method: 'GET', route: '/x' }).observe(0.3);
  const aggregated = AggregatorRegistry.aggregate([await one.ours.getMetricsAsJSON(), await two.ours.getMetricsAsJSON()]);
  one.reference.observe({ method: 'GET', route: '/x' }, 0.01);
  one.reference.observe({ method: 'GET', route: '/x' }, 0.3);
  assert.equal(await aggregated.metrics(), await one.theirs.metrics());
});
