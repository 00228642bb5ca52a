/**
 * Whether an upstream answer has the shape the proxy expects of it, pure: the judgement shared by the
 * doctor (`npm run doctor`, before go-live) and the sampled live checks of upstream answers
 * (`docs/behaviour.md "Operations"`, `UPSTREAM_CONTRACT_SAMPLE`), so that a finding in production
 * reads like a row of the doctor.
 *
 * A finding names a JSON path and a kind ({@link CONTRACT_FINDING_KINDS}), never a value of the
 * answer: array indices are written `[]` (`data[].slug`), a key of the answer that the schema does not
 * name and that does not look like a field name (digits, an e-mail, a token) is written `*`, and the
 * only thing said of a wrong value is its JSON type (`string`, `null`).
 *
 * @example
 * checkAnswerShape(ProfileAnswer, { user: { id: 'a' }, userInfo: {} });
 * // [{ path: 'user.id', kind: 'type', expected: 'number', got: 'string' }, { path: 'user.email', kind: 'missing', … }, …]
 *
 * @module
 */
import { Kind, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';

/** What is wrong at a path of an answer. */
export type ContractFindingKind = 'missing' | 'type' | 'enum' | 'extra' | 'not_json';

/** Every kind, in the order of {@link CONTRACT_FINDING_KINDS}. */
export const CONTRACT_FINDING_KIND_NAMES: readonly ContractFindingKind[] = ['missing', 'type', 'enum', 'extra', 'not_json'];

/** One kind of finding: how bad it is for the proxy (`fail`: the front end may break; `note`: passed on) and what it means. */
export interface ContractFindingKindRow {
  readonly level: 'fail' | 'note';
  readonly meaning: string;
}

/**
 * The finding table, shared by the doctor's rows and the live checks' metric and log line: a kind,
 * its level, its meaning. `extra` is never an error: the proxy passes unknown fields on as they are.
 */
export const CONTRACT_FINDING_KINDS: Readonly<Record<ContractFindingKind, ContractFindingKindRow>> = {
  missing: { level: 'fail', meaning: 'a field the specification requires is absent' },
  type: { level: 'fail', meaning: 'a field holds another JSON type than the specification says' },
  enum: { level: 'fail', meaning: 'a field holds a value outside the values the specification lists' },
  extra: { level: 'note', meaning: 'a field the specification does not name (passed on as it is; never an error)' },
  not_json: { level: 'fail', meaning: 'a success body that is not JSON, or an empty one where the proxy needs the body' },
};

/** One finding: where and what; `expected` comes from the schema, `got` is a JSON type name, never a value. */
export interface ContractFinding {
  /** JSON path: `user.id`, `data[].slug`, `(body)` for the whole body. */
  readonly path: string;
  readonly kind: ContractFindingKind;
  /** What the schema expects there (`number`, `string or null`, `one of "a", "b"`). */
  readonly expected?: string;
  /** The JSON type found (`string`, `null`, `array`…). */
  readonly got?: string;
}

/** The path of the whole body. */
export const BODY_PATH = '(body)';

/** Most findings other than `extra` reported per answer. */
export const MAX_SHAPE_FINDINGS = 8;
/** Most `extra` findings reported per answer. */
export const MAX_EXTRA_FINDINGS = 10;

/**
 * The key of an answer shown in a path: written out only when `schema` names it (an object schema's
 * property); any other key is `*` (docs/operations.md "Upstream contract checks"): a key the schema
 * does not know may be a value (an id, a token, an address), whatever it looks like.
 */
function shownKey(schema: TSchema | undefined, key: string): string {
  return propertyOf(schema, key) === undefined ? '*' : key;
}

/** The schema of the property `key` of an object schema, else `undefined` (no schema, not an object, an open record). */
function propertyOf(schema: TSchema | undefined, key: string): TSchema | undefined {
  const properties = (schema as { properties?: Record<string, TSchema> } | undefined)?.properties;
  return properties !== undefined && Object.hasOwn(properties, key) ? properties[key] : undefined;
}

/** The schema of the value under `key`: a named property's, else an open record's value schema. */
function childOf(schema: TSchema | undefined, key: string): TSchema | undefined {
  const named = propertyOf(schema, key);
  if (named !== undefined) return named;
  const patterns = (schema as { patternProperties?: Record<string, TSchema> } | undefined)?.patternProperties;
  return patterns === undefined ? undefined : Object.values(patterns)[0];
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** `a.b`, `a[]`, `[]`: a path plus one segment. */
function join(prefix: string, segment: string): string {
  if (segment === '[]') return `${prefix}[]`;
  return prefix === '' ? segment : `${prefix}.${segment}`;
}

/**
 * A JSON pointer of a schema error (`/data/0/slug`) as a finding path (`data[].slug`), read against
 * the value and its schema: a segment under an array is an index, written `[]`; a key the schema does
 * not name (an open record's key, a field it does not know) is `*`.
 */
export function findingPath(pointer: string, value: unknown, schema: TSchema): string {
  if (pointer === '' || pointer === '/') return BODY_PATH;
  let path = '';
  let current: unknown = value;
  let s: TSchema | undefined = schema;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    const here: TSchema | undefined = s === undefined ? undefined : branchOf(s, current);
    if (Array.isArray(current)) {
      path = join(path, '[]');
      current = current[Number(key)];
      s = here?.[Kind] === 'Array' ? (here as { items?: TSchema }).items : undefined;
    } else {
      path = join(path, shownKey(here, key));
      current = current !== null && typeof current === 'object' ? (current as Record<string, unknown>)[key] : undefined;
      s = childOf(here, key);
    }
  }
  return path === '' ? BODY_PATH : path;
}

/** The literal members of a schema (a `Literal`, or a union of literals only); `undefined` otherwise. */
function literalsOf(schema: TSchema): unknown[] | undefined {
  if (schema[Kind] === 'Literal') return [schema.const as unknown];
  const anyOf = (schema as { anyOf?: TSchema[] }).anyOf;
  if (anyOf === undefined || anyOf.length === 0 || !anyOf.every((s) => s[Kind] === 'Literal')) return undefined;
  return anyOf.map((s) => s.const as unknown);
}

/** What a schema expects, in words taken from the schema (never from the answer). */
export function expectedOf(schema: TSchema): string {
  const literals = literalsOf(schema);
  if (literals !== undefined) return `one of ${literals.map((l) => JSON.stringify(l)).join(', ')}`;
  const anyOf = (schema as { anyOf?: TSchema[] }).anyOf;
  if (anyOf !== undefined) return [...new Set(anyOf.map(expectedOf))].join(' or ');
  const kind = String(schema[Kind] ?? 'value');
  return kind === 'Unknown' || kind === 'Any' ? 'any value' : kind.toLowerCase();
}

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** The schema's compiled check, made once per schema object. */
function checkOf(schema: TSchema): TypeCheck<TSchema> {
  let check = compiled.get(schema);
  if (check === undefined) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check;
}

/** The branch of a union the value matches, else the one with the fewest errors (the one it was meant to be). */
function branchOf(schema: TSchema, value: unknown): TSchema {
  const anyOf = (schema as { anyOf?: TSchema[] }).anyOf;
  if (anyOf === undefined || literalsOf(schema) !== undefined) return schema;
  const match = anyOf.find((s) => checkOf(s).Check(value));
  if (match !== undefined) return match;
  let best = schema;
  let fewest = Number.POSITIVE_INFINITY;
  for (const branch of anyOf) {
    if (branch[Kind] !== 'Object') continue;
    let count = 0;
    for (const _ of Value.Errors(branch, value)) if (++count >= fewest) break;
    if (count < fewest) {
      fewest = count;
      best = branch;
    }
  }
  return best;
}

/**
 * The `extra` paths of `value`: fields its object schemas do not name, through named object fields and
 * arrays of them (open records, whose fields the specification does not show, are not walked).
 */
function extraPaths(schema: TSchema, value: unknown, prefix: string, out: Set<string>): void {
  const s = branchOf(schema, value);
  if (s[Kind] === 'Array' && Array.isArray(value)) {
    const items = (s as { items?: TSchema }).items;
    if (items !== undefined) for (const item of value) extraPaths(items, item, join(prefix, '[]'), out);
    return;
  }
  const properties = (s as { properties?: Record<string, TSchema> }).properties;
  if (s[Kind] !== 'Object' || properties === undefined || Object.keys(properties).length === 0) return;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return;
  for (const [key, v] of Object.entries(value)) {
    const sub = properties[key];
    if (sub === undefined) out.add(join(prefix, '*'));
    else extraPaths(sub, v, join(prefix, key), out);
  }
}

/**
 * The differences between a parsed JSON body and its schema (spec part 2 shapes, `src/contracts`):
 * `missing`, `type` and `enum` findings (at most {@link MAX_SHAPE_FINDINGS}, one per path), then the
 * `extra` fields (at most {@link MAX_EXTRA_FINDINGS}). A union at the top is judged against the branch
 * the value matches or comes closest to. Pure; never quotes a value.
 */
export function checkAnswerShape(schema: TSchema, value: unknown): ContractFinding[] {
  const target = branchOf(schema, value);
  const findings: ContractFinding[] = [];
  if (!checkOf(target).Check(value)) {
    const seen = new Set<string>();
    for (const error of Value.Errors(target, value)) {
      const path = findingPath(error.path, value, target);
      if (seen.has(path)) continue;
      seen.add(path);
      const got = jsonType(error.value);
      const literals = literalsOf(error.schema);
      const expected = expectedOf(error.schema);
      if (error.value === undefined) findings.push({ path, kind: 'missing', expected });
      else if (literals !== undefined && literals.some((l) => jsonType(l) === got)) findings.push({ path, kind: 'enum', expected, got });
      else findings.push({ path, kind: 'type', expected, got });
      if (findings.length === MAX_SHAPE_FINDINGS) break;
    }
  }
  const extras = new Set<string>();
  extraPaths(target, value, '', extras);
  for (const path of [...extras].slice(0, MAX_EXTRA_FINDINGS)) findings.push({ path, kind: 'extra' });
  return findings;
}

/** What the proxy expects of the 2xx answers of one upstream endpoint. */
export interface AnswerExpectation {
  /** Shape of a 2xx JSON body; absent: any JSON. */
  readonly schema?: TSchema | undefined;
  /** The proxy needs the body (login, refresh, profile): an empty 2xx answer is a `not_json` finding. */
  readonly needsBody?: boolean | undefined;
}

/**
 * Judges the body of a 2xx upstream answer (already decoded) against what the proxy expects of it:
 * an empty body is fine unless the proxy needs it (`not_json` at `(body)`); a body that does not parse
 * is `not_json`; a parsed body is held to `expectation.schema` ({@link checkAnswerShape}).
 *
 * @returns the findings (empty: the answer conforms), and whether the body was JSON at all.
 */
export function checkAnswerBody(expectation: AnswerExpectation, body: Buffer): { findings: ContractFinding[]; json: boolean } {
  let text = body.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === '') return { findings: expectation.needsBody === true ? [{ path: BODY_PATH, kind: 'not_json' }] : [], json: false };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { findings: [{ path: BODY_PATH, kind: 'not_json' }], json: false };
  }
  return { findings: expectation.schema === undefined ? [] : checkAnswerShape(expectation.schema, value), json: true };
}

/**
 * A finding as the doctor writes it under its row, and the live check's log line says it:
 * `user.id: missing`, `deposit: expected array, got string`, `type: expected one of "a", "b", got another string`.
 */
export function contractFindingText(finding: ContractFinding): string {
  switch (finding.kind) {
    case 'missing':
      return `${finding.path}: missing`;
    case 'type':
      return `${finding.path}: expected ${finding.expected ?? 'another type'}, got ${finding.got ?? 'another type'}`;
    case 'enum':
      return `${finding.path}: expected ${finding.expected ?? 'a listed value'}, got another ${finding.got ?? 'value'}`;
    case 'extra':
      return `${finding.path}: a field the specification does not name (kept as it is)`;
    case 'not_json':
      return `${finding.path}: not JSON`;
  }
}
