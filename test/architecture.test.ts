// docs/architecture.md "Habits" (habit 14): no import cycle in src/ (type-only imports included) and imports point down.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { findCycles, type ImportGraph, layerOf, layerViolations, readImportGraph } from './helpers/import-graph.js';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

const graphOf = (edges: Record<string, string[]>): ImportGraph => new Map(Object.entries(edges).map(([k, v]) => [k, new Set(v)]));

describe('the checker', () => {
  test('finds a cycle through several modules and a self-import, and none in a tree', () => {
    const cycles = findCycles(graphOf({ 'a.ts': ['b.ts'], 'b.ts': ['c.ts'], 'c.ts': ['a.ts'], 'd.ts': ['d.ts'], 'e.ts': ['a.ts'] }));
    assert.deepEqual(cycles.map((c) => c.join(',')).sort(), ['a.ts,b.ts,c.ts', 'd.ts']);
    assert.deepEqual(findCycles(graphOf({ 'a.ts': ['b.ts', 'c.ts'], 'b.ts': ['c.ts'], 'c.ts': [] })), []);
  });

  test('finds an upward import, routes ↔ pipeline, and one route table importing another', () => {
    const violations = layerViolations(
      graphOf({
        'catalogue/catalogue.ts': ['routes/route.ts'],
        'pipeline/auth-gate.ts': ['routes/route.ts'],
        'routes/payments.ts': ['routes/user.ts', 'routes/route.ts', 'session/identity.ts'],
        'routes/index.ts': ['routes/payments.ts'],
        'session/identity.ts': ['upstream/services.ts'],
        'routes/user.ts': [],
        'routes/route.ts': [],
        'upstream/services.ts': [],
      }),
    );
    assert.deepEqual(violations.sort(), [
      'catalogue/catalogue.ts → routes/route.ts: imports a higher layer',
      'pipeline/auth-gate.ts → routes/route.ts: routes and pipeline never import each other',
      'routes/payments.ts → routes/user.ts: a route table imports another route table',
    ]);
  });

  test('orders the layers of docs/architecture.md "Habits" (habit 14)', () => {
    const order = ['errors/ref.ts', 'session/cookie.ts', 'catalogue/catalogue.ts', 'routes/auth.ts', 'app.ts', 'server.ts'].map(layerOf);
    assert.deepEqual(order, [0, 1, 2, 3, 4, 5]);
    assert.equal(layerOf('pipeline/csrf.ts'), layerOf('routes/route.ts'));
    assert.equal(layerOf('elsewhere/x.ts'), -1);
  });
});

describe('src/', () => {
  const graph = readImportGraph(SRC);

  test('is read whole: every module, with the imports of the pipeline and the routes', () => {
    assert.ok(graph.size > 100, `read ${graph.size} modules`);
    assert.ok(graph.get('app.ts')?.has('pipeline/auth-gate.ts'));
    assert.ok(graph.get('routes/payments.ts')?.has('session/identity.ts'));
  });

  test('has no import cycle, type-only imports included', () => {
    assert.deepEqual(findCycles(graph), []);
  });

  test('imports point down (docs/architecture.md "Habits" (habit 14))', () => {
    assert.deepEqual(layerViolations(graph), []);
  });
});

/** The modules of `root` that read `process.env` (in code; comments do not count). */
function readersOfProcessEnv(root: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
    if (!entry.endsWith('.ts')) continue;
    const file = join(root, entry);
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
    let found = false;
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyAccessExpression(node) && node.name.text === 'env' && node.expression.getText(source) === 'process') found = true;
      if (!found) ts.forEachChild(node, visit);
    };
    visit(source);
    if (found) out.push(relative(root, file));
  }
  return out.sort();
}

test('src/server.ts is the only module of the server that reads process.env; the sandbox and doctor entry points read their own', () => {
  // The doctor's entry point reads the password of its --login (DOCTOR_PASSWORD or --password-env).
  assert.deepEqual(readersOfProcessEnv(SRC), ['doctor/main.ts', 'sandbox/main.ts', 'server.ts']);
});
