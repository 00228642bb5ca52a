/**
 * The routes under test, read from the route tables at run time (`activeRoutes(allRouteTables,
 * config)`), so that tables added later are covered without editing the rows: one {@link RouteCase}
 * per route and method, sample inputs generated from the row's TypeBox schemas with fast-check,
 * the documented statuses of each route, and the upstream paths it may call.
 */
import fc from 'fast-check';
import type { Config } from '../../../src/config.js';
import { allRouteTables } from '../../../src/routes/index.js';
import { activeRoutes, type AuthNeed, type RouteSpec, type ServiceName } from '../../../src/routes/route.js';
import type { HttpMethod } from '../../../src/upstream/client.js';

/** Path prefixes of the services on the single test upstream (as `startProxy` configures them). */
export const SERVICE_PREFIX: Readonly<Record<ServiceName, string>> = {
  bff: '',
  sticker: '/sticker',
  referralV1: '/referral-v1',
  referralV2: '/referral-v2',
  ftdVerify: '/ftd/verify',
  ftdSend: '/ftd/send',
  attribution: '/attribution',
  cachePurge: '/purge',
};

/** Every service name, for rows that cover each upstream. */
export const SERVICES = Object.keys(SERVICE_PREFIX) as ServiceName[];

/** The service a recorded upstream path belongs to (the longest matching prefix; the BFF otherwise). */
export function serviceOfPath(path: string): ServiceName {
  let best: ServiceName = 'bff';
  let length = 0;
  for (const [name, prefix] of Object.entries(SERVICE_PREFIX) as [ServiceName, string][]) {
    if (prefix && (path === prefix || path.startsWith(`${prefix}/`) || path.startsWith(`${prefix}?`)) && prefix.length > length) {
      best = name;
      length = prefix.length;
    }
  }
  return best;
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** One route and one of its methods. */
export interface RouteCase {
  route: RouteSpec;
  method: HttpMethod;
  /** The Fastify URL (`/api/income-report/status/:id`, `/api/core-sportbook/*`). */
  url: string;
  auth: AuthNeed;
  stateChanging: boolean;
  /** Accepted request media types. */
  contentTypes: readonly string[];
  multipart: boolean;
  /** Names of the `:param` segments. */
  params: string[];
  wildcard: boolean;
  /** `METHOD url`, for messages. */
  label: string;
}

/** The active routes of a configuration, one case per method. */
export function routeCases(config: Config): RouteCase[] {
  const out: RouteCase[] = [];
  for (const route of activeRoutes(allRouteTables, config)) {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]) as HttpMethod[];
    for (const method of methods) {
      const contentTypes = route.contentTypes ?? ['application/json'];
      out.push({
        route,
        method,
        url: route.url,
        auth: route.auth,
        stateChanging: STATE_CHANGING.has(method),
        contentTypes,
        multipart: contentTypes.includes('multipart/form-data'),
        params: [...route.url.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1] as string),
        wildcard: route.url.includes('*'),
        label: `${method} ${route.url}`,
      });
    }
  }
  return out;
}

/** Every dev-only row of the tables (whatever the environment). */
export function devOnlyRoutes(): RouteSpec[] {
  return allRouteTables.flat().filter((r) => r.devOnly === true);
}

type Schema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  items?: Schema;
  const?: unknown;
  enum?: unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
  patternProperties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
};

function stringArb(schema: Schema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? 24, Math.max(min, 24));
  if (schema.pattern) {
    try {
      return fc
        .stringMatching(new RegExp(schema.pattern))
        .filter((s) => s.length >= min && s.length <= (schema.maxLength ?? Number.POSITIVE_INFINITY));
    } catch {
      // a pattern fast-check cannot read: plain strings
    }
  }
  return fc.string({ minLength: min, maxLength: max, unit: 'grapheme-ascii' });
}

/** An arbitrary of values valid for a JSON schema (the subset TypeBox produces for the route tables). */
export function schemaArb(schema: unknown, depth = 0): fc.Arbitrary<unknown> {
  const s = (schema ?? {}) as Schema;
  if (depth > 6) return fc.constant(null);
  if ('const' in s) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const union = s.anyOf ?? s.oneOf;
  if (union && union.length > 0) return fc.oneof(...union.map((u) => schemaArb(u, depth + 1)));
  if (s.allOf && s.allOf.length > 0) return schemaArb(s.allOf[0], depth + 1);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'string':
      return stringArb(s);
    case 'integer': {
      const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 0);
      const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : Math.max(min, 1_000_000));
      return fc.integer({ min: Math.ceil(min), max: Math.floor(max) });
    }
    case 'number': {
      const min = s.minimum ?? s.exclusiveMinimum ?? 0;
      const max = s.maximum ?? s.exclusiveMaximum ?? Math.max(min, 1_000_000);
      return fc.integer({ min: Math.ceil(min), max: Math.floor(max) });
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(schemaArb(s.items, depth + 1), {
        minLength: s.minItems ?? 0,
        maxLength: Math.max(s.minItems ?? 0, Math.min(s.maxItems ?? 3, 3)),
      });
    case 'object': {
      const props = s.properties ?? {};
      const keys = Object.keys(props);
      if (keys.length === 0) {
        const pattern = s.patternProperties ? Object.values(s.patternProperties)[0] : undefined;
        const values = pattern ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
        if (values) return fc.dictionary(fc.stringMatching(/^[a-z][a-z_]{0,11}$/), schemaArb(values, depth + 1), { maxKeys: 3 });
        return fc.constant({});
      }
      const shape: Record<string, fc.Arbitrary<unknown>> = {};
      for (const key of keys) shape[key] = schemaArb(props[key], depth + 1);
      return fc.record(shape, { requiredKeys: (s.required ?? []).filter((k) => keys.includes(k)) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** One value of an arbitrary, reproducible from `seed`. */
export function one<T>(arb: fc.Arbitrary<T>, seed: number): T {
  return fc.sample(arb, { numRuns: 1, seed })[0] as T;
}

/** A valid-looking value for a JSON schema (reproducible from `seed`). */
export function sampleOf(schema: unknown, seed: number): unknown {
  return one(schemaArb(schema), seed);
}

/** Encodes a query object (`{ a: 1, b: [2, 3] }` → `?a=1&b=2&b=3`); '' when empty. */
export function encodeQuery(query: unknown): string {
  if (!query || typeof query !== 'object') return '';
  const parts: string[] = [];
  for (const [key, value] of Object.entries(query as Record<string, unknown>)) {
    if (value === undefined) continue;
    const list = Array.isArray(value) ? value : [value];
    for (const item of list) {
      const text = typeof item === 'object' ? JSON.stringify(item) : String(item);
      parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(text)}`);
    }
  }
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

/** Fills the `:param` segments and the `*` of a route URL with values placed as written (no encoding). */
export function fillPath(rc: RouteCase, values: Record<string, string>, wildcard = 'events/1'): string {
  let path = rc.url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_m, name: string) => values[name] ?? 'x1');
  if (rc.wildcard) path = path.replace('*', wildcard);
  return path;
}

/** Property schema of a route's params / querystring / body, by name. */
export function fieldSchema(schema: unknown, name: string): unknown {
  const props = (schema as Schema | undefined)?.properties;
  return props?.[name];
}

/** A small multipart body: one `endpoint` field and one `file` part. */
export function multipartBody(fields: Record<string, string>, file?: { name: string; type: string; data: Buffer }) {
  const boundary = `----hardening${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`,
      ),
      file.data,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A request built for a route case. */
export interface Sample {
  path: string;
  body?: Buffer;
  contentType?: string;
}

/** A sample request for a route: path and query values and a body generated from its schemas. */
export function sampleRequest(rc: RouteCase, seed: number): Sample {
  const values: Record<string, string> = {};
  for (const name of rc.params) {
    values[name] = encodeURIComponent(
      String(sampleOf(fieldSchema(rc.route.params, name) ?? { type: 'string', pattern: '^[a-z0-9]{1,12}$' }, seed)),
    );
  }
  const query = rc.route.querystring ? encodeQuery(sampleOf(rc.route.querystring, seed)) : '';
  const path = `${fillPath(rc, values)}${query}`;
  if (!rc.stateChanging && rc.method !== 'DELETE') return { path };
  if (rc.multipart) {
    const { body, contentType } = multipartBody(
      { endpoint: 'selfie' },
      { name: 'id.png', type: 'image/png', data: Buffer.from('89504e470d0a1a0a0000', 'hex') },
    );
    return { path, body, contentType };
  }
  if (rc.method === 'DELETE' && !rc.route.body) return { path };
  const body = rc.route.body ? sampleOf(rc.route.body, seed) : {};
  return { path, body: Buffer.from(JSON.stringify(body)), contentType: 'application/json' };
}

/**
 * The statuses a route may answer (docs/behaviour.md "Error envelope", spec 7.4): success (200, 201, 202, 204); 400;
 * 401 on session and operator routes; 403 on session routes and state-changing methods (CSRF,
 * ownership); 404 on routes with path input; 409, 422, 429 (statuses the contract maps); 413 and
 * 415 on methods with a body; 502, 503 and 504 on routes that call an upstream. Never 500.
 */
export function documentedStatuses(rc: RouteCase): Set<number> {
  const out = new Set([200, 201, 202, 204, 400, 409, 422, 429]);
  if (rc.auth !== 'none') out.add(401);
  if (rc.auth !== 'none' || rc.stateChanging) out.add(403);
  if (rc.params.length > 0 || rc.wildcard) out.add(404);
  if (rc.stateChanging) {
    out.add(413);
    out.add(415);
  }
  if (rc.route.upstream.length > 0) {
    out.add(502);
    out.add(503);
    out.add(504);
  }
  return out;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * A test for "this upstream path is inside the route's declared upstream": the path (raw, as the
 * upstream received it) matches one of the route's upstream templates, where a `{name}` placeholder
 * is one segment (several on wildcard routes), and no decoded segment is `.` or `..` or holds a
 * separator. On wildcard rows the method may be any (the row declares one for documentation). A route
 * that reads the profile (the session user id) declares `GET /auth/user-profile` among its rows.
 */
export function upstreamPathAllowed(rc: RouteCase, method: string, path: string): boolean {
  return rc.route.upstream.some((t) => {
    // A wildcard row (a generic forwarder) declares one method for documentation and forwards the client's.
    if (t.method !== method && !rc.wildcard) return false;
    const prefix = SERVICE_PREFIX[t.service];
    const source = escapeRegex(`${prefix}${t.path}`).replace(/\\\{[A-Za-z_][A-Za-z0-9_]*\\\}/g, rc.wildcard ? '[^?#]+' : '[^/?#]+');
    if (!new RegExp(`^${source}/?$`).test(path)) return false;
    return path.split('/').every((segment) => {
      let decoded: string;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        return false;
      }
      // An upstream may fold compatibility look-alikes (U+FE52 small full stop → "."): judge the NFKC form too.
      const folded = decoded.normalize('NFKC');
      return [decoded, folded].every((d) => d !== '.' && d !== '..' && !/[/\\\u0000]/.test(d));
    });
  });
}
