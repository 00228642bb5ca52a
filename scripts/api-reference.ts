/**
 * docs/api-reference.md rendered from the OpenAPI document (`scripts/openapi-document.ts`), the one
 * description of the routes: per area (the document's tags, in its order), per operation its
 * summary, its description (specification section, session, upstream calls, HTTP caching) and its
 * parameters, path, query, header and body, from the schemas the document holds. Written by
 * `npm run docs:api`, checked by `test/api-reference.test.ts`.
 */
import type { Json } from './openapi-document.js';

const HEADER = [
  '# API reference',
  '',
  'Generated from the OpenAPI document (`GET /openapi.json`) by `npm run docs:api`; do not edit by hand.',
  'Every route answers errors with the envelope of spec 7.4 (`{ ok: false, error, detail }`), passes',
  'upstream 401/403 bodies through byte for byte (except pre-authentication routes, which answer',
  'form-level errors), and answers 401 `{ "reason": "no_token" }` without calling upstream when a session',
  "is needed and the cookie is absent (`invalid_token` when it is not a well-formed JWT or, with the BFF's",
  'keys, its signature fails; `token_expired` when it has expired). Invalid input answers 400',
  '`invalid_request`; state-changing routes refuse cross-site requests (403 `csrf_rejected`) and bodies',
  "of another media type (415). Money amounts are integer cents. Each operation's error answers are in",
  "the document itself (`GET /docs` shows it, outside production); the names of the proxy's own errors",
  'are in the section "Error envelope" of [behaviour.md](behaviour.md), the rules behind them in',
  '[concepts.md](concepts.md).',
  '',
];

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** A cell's text: pipes escaped, on one line. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

/** A schema's type as a cell shows it: `string`, `integer[]`, `"a" \| "b"`. */
function typeOf(schema: Json): string {
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Json[]).map(typeOf).join(' \\| ');
  if (schema.const !== undefined) return `\`${JSON.stringify(schema.const)}\``;
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).map((v) => `\`${JSON.stringify(v)}\``).join(' \\| ');
  if (schema.type === 'array') return `${typeOf((schema.items ?? {}) as Json)}[]`;
  if (typeof schema.type === 'string') return schema.type;
  return 'any';
}

/** A schema's bounds and description as a cell shows them. */
function constraints(schema: Json, description?: unknown): string {
  const out: string[] = [];
  const text = typeof description === 'string' ? description : schema.description;
  if (typeof text === 'string') out.push(text);
  if (schema.minimum !== undefined) out.push(`≥ ${String(schema.minimum)}`);
  if (schema.exclusiveMinimum !== undefined) out.push(`> ${String(schema.exclusiveMinimum)}`);
  if (schema.maximum !== undefined) out.push(`≤ ${String(schema.maximum)}`);
  if (schema.maxLength !== undefined) out.push(`≤ ${String(schema.maxLength)} chars`);
  if (schema.maxItems !== undefined) out.push(`≤ ${String(schema.maxItems)} items`);
  if (typeof schema.pattern === 'string') out.push(`pattern \`${schema.pattern}\``);
  return cell(out.join('; '));
}

/** The rows of a body schema: one per property, `?` marking an optional one, and the other fields it accepts. */
function bodyRows(where: string, schema: Json): string[] {
  const props = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required ?? []) as string[]);
  const names = Object.keys(props);
  if (names.length === 0 && schema.additionalProperties === undefined)
    return [`| ${where} | (${typeOf(schema)}) | | ${constraints(schema)} |`];
  const rows = names.map(
    (name) =>
      `| ${where} | \`${name}\`${required.has(name) ? '' : '?'} | ${typeOf(props[name] as Json)} | ${constraints(props[name] as Json)} |`,
  );
  const extra = schema.additionalProperties;
  if (extra !== undefined && extra !== false) {
    const notes = ['accepted'];
    if (typeof schema.maxProperties === 'number') notes.push(`at most ${schema.maxProperties} fields in all`);
    rows.push(`| ${where} | (any other field) | ${extra === true ? 'any' : typeOf(extra as Json)} | ${notes.join('; ')} |`);
  }
  return rows;
}

/** The parameter rows of an operation: path, query and header parameters, then its body's fields. */
function parameterRows(op: Json): string[] {
  const rows: string[] = [];
  for (const p of (op.parameters ?? []) as Json[]) {
    const name = `\`${String(p.name)}\`${p.required === true ? '' : '?'}`;
    rows.push(
      `| ${String(p.in)} | ${name} | ${typeOf((p.schema ?? {}) as Json)} | ${constraints((p.schema ?? {}) as Json, p.description)} |`,
    );
  }
  const body = op.requestBody as Json | undefined;
  for (const [type, media] of Object.entries((body?.content ?? {}) as Record<string, Json>)) {
    rows.push(...bodyRows(type === 'multipart/form-data' ? 'multipart' : 'body', (media.schema ?? {}) as Json));
  }
  return rows;
}

/**
 * The Markdown of docs/api-reference.md for an OpenAPI document.
 * @param doc - the document as `GET /openapi.json` answers it.
 */
export function renderApiReference(doc: Json): string {
  const lines = [...HEADER];
  const paths = doc.paths as Record<string, Record<string, Json>>;
  for (const tag of (doc.tags ?? []) as { name: string; description?: string }[]) {
    const operations = Object.entries(paths).flatMap(([path, item]) =>
      METHODS.filter((m) => (item[m]?.tags as string[] | undefined)?.[0] === tag.name).map((m) => ({
        path,
        method: m,
        op: item[m] as Json,
      })),
    );
    if (operations.length === 0) continue;
    lines.push(`## ${tag.name}`, '');
    if (tag.description) lines.push(tag.description, '');
    for (const { path, method, op } of operations) {
      lines.push(`### ${method.toUpperCase()} \`${path}\``, '');
      if (typeof op.description === 'string') lines.push(op.description, '');
      const rows = parameterRows(op);
      if (rows.length > 0) lines.push('| in | name | type | notes |', '|---|---|---|---|', ...rows, '');
    }
  }
  return `${lines.join('\n').trimEnd()}\n`;
}
