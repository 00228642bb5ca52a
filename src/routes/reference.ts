/**
 * The API reference of the proxy routes, generated from the route tables (`docs/api-reference.md`,
 * `npm run docs:api`): every route with its method, auth need, parameters (query, path, body, from
 * the route's schemas), upstream calls and specification section. A test fails when the file and the
 * tables differ.
 *
 * @module
 */
import type { TSchema } from '@sinclair/typebox';
import { CATALOGUE_CACHE_CONTROL } from '../catalogue/representation.js';
import { ROUTE_ANSWERS } from '../contracts/answers.js';
import { allRouteTables } from './index.js';
import type { RouteSpec } from './route.js';

const AUTH_TEXT: Readonly<Record<RouteSpec['auth'], string>> = {
  required: 'session',
  none: 'none',
  operator: 'operator (`CACHE_PURGE_TOKEN`)',
};

function typeOf(schema: TSchema): string {
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.anyOf)) return (s.anyOf as TSchema[]).map(typeOf).join(' \\| ');
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  if (Array.isArray(s.enum)) return (s.enum as unknown[]).map((v) => `\`${JSON.stringify(v)}\``).join(' \\| ');
  if (s.type === 'array') return `${typeOf((s.items ?? {}) as TSchema)}[]`;
  if (typeof s.type === 'string') return s.type;
  return 'any';
}

function constraints(schema: TSchema): string {
  const s = schema as Record<string, unknown>;
  const out: string[] = [];
  if (typeof s.description === 'string') out.push(s.description);
  if (s.minimum !== undefined) out.push(`≥ ${String(s.minimum)}`);
  if (s.exclusiveMinimum !== undefined) out.push(`> ${String(s.exclusiveMinimum)}`);
  if (s.maximum !== undefined) out.push(`≤ ${String(s.maximum)}`);
  if (s.maxLength !== undefined) out.push(`≤ ${String(s.maxLength)} chars`);
  if (s.maxItems !== undefined) out.push(`≤ ${String(s.maxItems)} items`);
  if (typeof s.pattern === 'string') out.push(`pattern \`${s.pattern.replace(/\|/g, '\\|')}\``);
  return out.join('; ');
}

/** The largest string among a schema's alternatives (`Scalar` of a flat body), if any. */
function longestString(schema: Record<string, unknown>): number | undefined {
  const options = (Array.isArray(schema.anyOf) ? schema.anyOf : [schema]) as Record<string, unknown>[];
  const lengths = options.map((o) => o.maxLength).filter((n): n is number => typeof n === 'number');
  return lengths.length > 0 ? Math.max(...lengths) : undefined;
}

/**
 * The row of an open object's other fields: `additionalProperties` as a schema (a flat body: scalars)
 * or `true` (any JSON value); none for a closed object. What the route forwards of them, its summary
 * says (most forward them unchanged; the user routes drop the user-id fields).
 */
function otherFields(where: string, s: Record<string, unknown>): string[] {
  const extra = s.additionalProperties;
  if (extra === undefined || extra === false) return [];
  const notes = ['accepted'];
  if (typeof s.maxProperties === 'number') notes.push(`at most ${s.maxProperties} fields in all`);
  const names = (s.propertyNames as Record<string, unknown> | undefined)?.pattern;
  if (typeof names === 'string') notes.push(`names \`${names}\``);
  const longest = extra === true ? undefined : longestString(extra as Record<string, unknown>);
  if (longest !== undefined) notes.push(`strings ≤ ${longest} chars`);
  return [`| ${where} | (any other field) | ${extra === true ? 'any' : typeOf(extra as TSchema)} | ${notes.join('; ')} |`];
}

function parameters(where: string, schema: TSchema | undefined): string[] {
  if (!schema) return [];
  const s = schema as Record<string, unknown>;
  const props = (s.properties ?? {}) as Record<string, TSchema>;
  const required = new Set((s.required ?? []) as string[]);
  const names = Object.keys(props);
  if (names.length === 0 && s.additionalProperties === undefined) return [`| ${where} | (${typeOf(schema)}) | | ${constraints(schema)} |`];
  return [
    ...names.map((name) => {
      const prop = props[name] as TSchema;
      return `| ${where} | \`${name}\`${required.has(name) ? '' : '?'} | ${typeOf(prop)} | ${constraints(prop)} |`;
    }),
    ...otherFields(where, s),
  ];
}

/** The request body a row documents: its schema, else the body its handler checks (`ROUTE_ANSWERS`). */
function bodyOf(r: RouteSpec): TSchema | undefined {
  if (r.body) return r.body;
  const methods: readonly string[] = Array.isArray(r.method) ? r.method : [r.method];
  return methods.map((m) => ROUTE_ANSWERS[`${m} ${r.url}`]?.requestBody?.schema).find(Boolean);
}

/**
 * The HTTP caching line of a catalogue read answered from the shared cache (`catalogueCache` in
 * `ROUTE_ANSWERS`; spec 4.6 "cacheable"), or none.
 */
function httpCaching(r: RouteSpec): string[] {
  const list: readonly string[] = Array.isArray(r.method) ? r.method : [r.method];
  const cached = list.filter((m) => ROUTE_ANSWERS[`${m} ${r.url}`]?.catalogueCache === true);
  if (cached.length === 0) return [];
  const conditional = cached.includes('GET') ? '; `If-None-Match` naming it answers 304 without a body' : '';
  return [
    `- HTTP caching (from the shared cache, not with a forwarded session): \`Cache-Control: ${CATALOGUE_CACHE_CONTROL}\`, a strong \`ETag\`${conditional}; \`Content-Encoding: br\` or \`gzip\` by \`Accept-Encoding\` (bodies of 1 KiB and more); \`Vary: Accept-Encoding\``,
  ];
}

function methods(r: RouteSpec): string {
  return (Array.isArray(r.method) ? r.method : [r.method]).join(', ');
}

/** Renders the API reference Markdown for the given tables (default: every table). */
export function renderApiReference(tables: readonly (readonly RouteSpec[])[] = allRouteTables): string {
  const lines = [
    '# API reference',
    '',
    'Generated from the route tables by `npm run docs:api`; do not edit by hand. Every route answers',
    'errors with the envelope of spec 7.4 (`{ ok: false, error, detail }`), passes upstream 401/403 bodies',
    'through byte for byte (except pre-authentication routes, which answer form-level errors), and answers',
    '401 `{ "reason": "no_token" }` without calling upstream when a session is needed and the cookie is',
    'absent (`invalid_token` when it is not a well-formed JWT or, with the BFF\'s keys, its signature fails;',
    '`token_expired` when it has expired). Invalid input answers 400 `invalid_request`; state-changing routes refuse cross-site requests',
    '(403 `csrf_rejected`) and non-JSON bodies (415). Money amounts are integer cents. The same routes',
    'with their answers and errors: `GET /docs` (a browsable page) and `GET /openapi.json` (OpenAPI 3.1),',
    'outside production; the rules behind them: [concepts.md](concepts.md).',
    '',
  ];
  for (const table of tables) {
    const first = table[0];
    if (!first) continue;
    lines.push(`## spec ${first.spec.split(',')[0]}`, '');
    for (const r of table) {
      lines.push(`### ${methods(r)} \`${r.url}\``, '');
      lines.push(`${r.summary}.`, '');
      const flags = [
        `auth: ${AUTH_TEXT[r.auth]}`,
        r.preAuth ? 'pre-authentication (form-level errors)' : undefined,
        r.devOnly ? '**development only** (absent in production)' : undefined,
        `spec ${r.spec}`,
      ].filter(Boolean);
      lines.push(`- ${flags.join(' · ')}`);
      const upstream = r.upstream.map((u) => `\`${u.method} ${u.service === 'bff' ? '' : `{${u.service}}`}${u.path}\``);
      lines.push(`- upstream: ${upstream.length ? upstream.join(', ') : '— (answered by the proxy)'}`);
      lines.push(...httpCaching(r));
      const params = [
        ...parameters('path', r.params),
        ...parameters('query', r.querystring),
        ...parameters(r.contentTypes?.includes('multipart/form-data') ? 'multipart' : 'body', bodyOf(r)),
      ];
      if (params.length) lines.push('', '| in | name | type | notes |', '|---|---|---|---|', ...params);
      lines.push('');
    }
  }
  return `${lines.join('\n').trimEnd()}\n`;
}
