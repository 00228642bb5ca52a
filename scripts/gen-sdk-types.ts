/**
 * Writes the browser SDK's route types (`packages/browser/src/browser/openapi.gen.ts`) from the proxy's
 * OpenAPI document, the one `GET /openapi.json` serves (built from the route tables and their schemas),
 * with openapi-typescript (`npm run gen:sdk-types`; `npm run build:sdk` runs it first). With
 * `--check`, exits 1 when the file differs from what the route tables give, instead of writing it
 * (test/sdk-route-types.test.ts runs that).
 *
 * Kept from the document: the paths the client calls (`ROUTES` of packages/browser), their request
 * bodies and success answers (an error answer is a `ProxyError`, not a return value), and the
 * components those use. The records whose fields the specification lists (spec 2.2, 2.3, 2.5, 2.6:
 * `CLOSED_RECORDS`) are closed types: fields the proxy passes on beyond them stay in the answer at
 * run time, not in the type.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { ROUTES } from '../packages/browser/src/browser/routes.js';
import { writeOrCheck } from './generated-file.js';
import { openapiDocument } from './openapi-document.js';

/** Components closed in the SDK's types: the records of spec part 2 whose fields the specification lists. */
export const CLOSED_RECORDS: readonly string[] = [
  'AuthUser',
  'AuthUserInfo',
  'LoginResponse',
  'ProfileResponse',
  'ValidateDocumentResponse',
];

type Json = Record<string, unknown>;

const target = new URL('../packages/browser/src/browser/openapi.gen.ts', import.meta.url);

const HEADER = `/**
 * The request bodies and success answers of the routes the proxy client calls, generated from the
 * proxy's OpenAPI document (the route tables' schemas, as \`GET /openapi.json\` serves them) by
 * \`npm run gen:sdk-types\` (scripts/gen-sdk-types.ts). Do not edit: test/sdk-route-types.test.ts
 * fails when this file and the route tables differ.
 *
 * @module
 */
`;

/** Removes `additionalProperties: true` from a closed record (its own object and the objects of its `allOf`/`anyOf`/`oneOf`). */
function close(schema: unknown): void {
  if (typeof schema !== 'object' || schema === null) return;
  const s = schema as Json;
  if (s.additionalProperties === true) delete s.additionalProperties;
  for (const key of ['allOf', 'anyOf', 'oneOf']) for (const part of (s[key] as unknown[] | undefined) ?? []) close(part);
}

/** The `$ref` names a value uses, recursively. */
function refsOf(value: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(value)) for (const v of value) refsOf(v, out);
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.add(v.replace('#/components/schemas/', ''));
      else refsOf(v, out);
    }
  }
  return out;
}

/** The document cut to the client's paths, their bodies and success answers, and the components they use. */
export function sdkDocument(doc: Json): Json {
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const kept: Record<string, Record<string, Json>> = {};
  for (const route of ROUTES) {
    const method = route.method.toLowerCase();
    const operation = paths[route.path]?.[method];
    if (!operation) continue;
    const responses = Object.fromEntries(
      Object.entries((operation.responses as Record<string, Json>) ?? {})
        .filter(([status]) => /^2\d\d$/.test(status))
        .map(([status, answer]) => [status, { description: answer.description, ...(answer.content ? { content: answer.content } : {}) }]),
    );
    kept[route.path] ??= {};
    (kept[route.path] as Record<string, Json>)[method] = {
      operationId: operation.operationId,
      summary: operation.summary,
      ...(operation.parameters ? { parameters: operation.parameters } : {}),
      ...(operation.requestBody ? { requestBody: operation.requestBody } : {}),
      responses,
    };
  }
  const all = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, unknown>;
  const used = refsOf(kept, new Set());
  // The components those use, and theirs, until nothing new is found.
  for (let grown = true; grown;) {
    grown = false;
    for (const name of [...used]) {
      for (const ref of refsOf(all[name], new Set())) {
        if (used.has(ref)) continue;
        used.add(ref);
        grown = true;
      }
    }
  }
  const schemas: Record<string, unknown> = {};
  for (const name of [...used].sort()) {
    const schema = structuredClone(all[name]);
    if (CLOSED_RECORDS.includes(name)) close(schema);
    schemas[name] = schema;
  }
  return { openapi: doc.openapi, info: doc.info, paths: kept, components: { schemas } };
}

/** The text of `openapi.gen.ts` the route tables give now. */
export async function renderSdkTypes(): Promise<string> {
  const ast = await openapiTS(sdkDocument(await openapiDocument()) as never, { exportType: false, rootTypes: false });
  return HEADER + astToString(ast);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeOrCheck(target, await renderSdkTypes(), 'packages/browser/src/browser/openapi.gen.ts', 'npm run gen:sdk-types');
}
