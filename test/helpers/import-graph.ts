/**
 * The import graph of `src/` (every `import`, `import type`, `export … from` and dynamic `import()`
 * with a relative specifier), its cycles, and the layer rule of docs/architecture.md "Habits" (habit 14): imports point
 * down — `errors/` and `config.ts`; `upstream/`, `session/`, `state/`, `contracts/`, `envelope.ts`,
 * `browser/`; `catalogue/`, `playground/`, `sandbox/`, `doctor/`; `routes/` and `pipeline/` (neither imports the
 * other); `app.ts`; `server.ts`. Inside `routes/`, an area table imports only the route machinery
 * (`route.ts`, `context.ts`), never another area.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** Module → the modules it imports, as paths relative to the source root (`routes/auth.ts`). */
export type ImportGraph = Map<string, Set<string>>;

function collect(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...collect(full));
    else if (entry.name.endsWith('.ts')) out.push(full);
  }
  return out;
}

/** Reads the import graph of every `.ts` file below `root`. */
export function readImportGraph(root: string): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of collect(root)) {
    const from = relative(root, file);
    const targets = new Set<string>();
    for (const { fileName } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = relative(root, resolve(dirname(file), fileName)).replace(/\.js$/, '.ts');
      if (target.endsWith('.ts')) targets.add(target);
    }
    graph.set(from, targets);
  }
  return graph;
}

/** Every cycle of the graph, one per strongly connected component of more than one module (or a self-import). */
export function findCycles(graph: ImportGraph): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    indices.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indices.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, indices.get(w) as number));
      }
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)?.has(v)) cycles.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!indices.has(v)) visit(v);
  return cycles;
}

/** The layers, bottom first: a module may import its own layer or a lower one. */
export const LAYERS: readonly (readonly string[])[] = [
  ['errors/'],
  ['config.ts', 'config/', 'upstream/', 'session/', 'state/', 'contracts/', 'envelope.ts', 'proxy-errors.ts', 'browser/'],
  ['catalogue/', 'playground/', 'sandbox/', 'doctor/', 'streams/'],
  ['routes/', 'pipeline/'],
  ['app.ts'],
  ['server.ts'],
];

/** The layer of a module, or -1 when no layer names it. */
export function layerOf(module: string): number {
  return LAYERS.findIndex((layer) => layer.some((prefix) => (prefix.endsWith('/') ? module.startsWith(prefix) : module === prefix)));
}

const ROUTE_MACHINERY = new Set(['routes/route.ts', 'routes/context.ts']);
const ROUTE_COLLECTIONS = new Set(['routes/index.ts']);

/** Every import that breaks the layer rule, as `from → to: why`. */
export function layerViolations(graph: ImportGraph): string[] {
  const out: string[] = [];
  for (const [from, targets] of graph) {
    const fromLayer = layerOf(from);
    if (fromLayer < 0) out.push(`${from}: in no layer`);
    for (const to of targets) {
      const toLayer = layerOf(to);
      if (toLayer > fromLayer) out.push(`${from} → ${to}: imports a higher layer`);
      const areas = [from, to].map((m) => m.split('/')[0]);
      if (areas.includes('routes') && areas.includes('pipeline')) out.push(`${from} → ${to}: routes and pipeline never import each other`);
      if (from.startsWith('routes/') && to.startsWith('routes/') && !ROUTE_MACHINERY.has(to) && !ROUTE_COLLECTIONS.has(from)) {
        out.push(`${from} → ${to}: a route table imports another route table`);
      }
    }
  }
  return out;
}
