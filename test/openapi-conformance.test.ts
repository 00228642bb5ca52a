/**
 * The OpenAPI document is true (`GET /openapi.json`): every documented operation is called on
 * the proxy in front of its embedded sandbox, over real sockets, without a session, with the demo
 * user's session, and with a bad body where it takes one; each answer's status, media type, headers
 * and body are checked against the document by an OpenAPI validator the project does not write
 * (`openapi-backend`, with Ajv's JSON Schema 2020-12 dialect, the one of OpenAPI 3.1). The test
 * fails on the first run with any violation, listing all of them.
 *
 * What is checked, per answer:
 * - its status is one of the operation's responses (`200`, `4XX` or `default`);
 * - its media type is one the response documents, and a response without `content` has no body;
 * - every header the response marks `required` is present, and every documented header present
 *   validates against its schema;
 * - a JSON body validates against the response's `application/json` schema.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { AnySchema, Options, ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { OpenAPIBackend } from 'openapi-backend';
import { createServer } from '../src/app.js';
import { REQUEST_EXAMPLES } from '../src/contracts/answers.js';
import { encodeQuery, multipartBody, sampleOf } from './hardening/helpers/routes.js';

type Json = Record<string, unknown>;
interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  schema?: unknown;
}
interface MediaType {
  schema?: unknown;
}
interface ResponseObject {
  description?: string;
  headers?: Record<string, { required?: boolean; schema?: unknown }>;
  content?: Record<string, MediaType>;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, MediaType> };
  responses: Record<string, ResponseObject>;
  security?: Record<string, unknown>[];
}

const PURGE_TOKEN = 'operator-token-0123456789';
/** The longest a call may take (a loaded machine included). */
const ANSWER_WITHIN_MS = 15_000;
/** Operations called at once. */
const WALKERS = 6;
const DEMO = { login: 'demo@example.com', password: 'Demo#2026' };

/** Values for path and query parameters by name (or by `<path> <name>`), where a generated one would never reach the sandbox's data. */
const PARAMETER_VALUES: Readonly<Record<string, string>> = {
  provider: 'google',
  slug: 'golden-fortune',
  '/api/games/category/{slug} slug': 'slots',
  '/api/games/provider/{slug} slug': 'aurora-studios',
  subPath: 'events',
  id: 'report-1',
  currency: 'BRL',
  transactionId: 'tx-1',
  code: 'WELCOME',
  slugs: 'golden-fortune,wild-fortune',
  search: 'fla',
  kyc_id: 'kyc-1',
  claimType: 'daily',
  page: '1',
  per_page: '10',
};

/** Request bodies by operation, where the one generated from the schema would not show the success answer. */
const BODIES: Readonly<Record<string, unknown>> = {
  ...REQUEST_EXAMPLES,
  'POST /api/auth/recovery': { login: DEMO.login },
  'POST /api/auth/validate-document': { number: '52998224725' },
  'POST /api/games/search': { search: 'fla' },
  'POST /api/games/stats-batch': { slugs: ['golden-fortune', 'wild-fortune'] },
  'POST /api/search/unified': { search: 'fla' },
  'POST /api/wallet/transactions': { page: 1 },
  'POST /api/wallet/refresh': {},
  'POST /api/rewards/list': {},
};

/**
 * Operations that end the session or change the account for good: called last (their session
 * case), so that the others see the ordinary demo user.
 */
const LAST = new Set([
  'POST /api/auth/logout',
  'POST /api/auth/logout-auto',
  'PATCH /api/user/self-exclusion',
  'PATCH /api/user/timeout-limits',
  'POST /api/user/change-password',
  'PATCH /api/validation/email/change',
]);

/** Validators compiled so far, by options and schema (see {@link sharedAjv}). */
const compiled = new Map<string, ValidateFunction>();

/**
 * Ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1, with the `format`s) that compiles each
 * schema once: the validator compiles one schema per operation, status and header set from the
 * dereferenced document, most of them the same shared answers (the envelope, `X-Error-Ref`), and
 * compiling them all again would take most of the run.
 */
function sharedAjv(options: Options): Ajv2020.default {
  const ajv = new Ajv2020.default({ ...options, strict: false, allErrors: true });
  addFormats.default(ajv);
  const compile = ajv.compile.bind(ajv);
  ajv.compile = ((schema: AnySchema, meta?: boolean) => {
    const key = `${JSON.stringify(options.coerceTypes ?? false)}|${JSON.stringify(schema)}`;
    let validate = compiled.get(key);
    if (!validate) {
      validate = compile(schema, meta);
      compiled.set(key, validate);
    }
    return validate;
  }) as typeof ajv.compile;
  return ajv;
}

let app: FastifyInstance;
let base = '';
let cookieName = '';
let doc: Json;
let api: OpenAPIBackend;

async function login(): Promise<string> {
  const res = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(DEMO),
  });
  assert.equal(res.status, 200, await res.clone().text());
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  assert.ok(cookie.startsWith(`${cookieName}=`), cookie);
  return cookie;
}

before(async () => {
  app = await createServer({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    CACHE_PURGE_TOKEN: PURGE_TOKEN,
    RATE_LIMIT_PREAUTH_PER_MIN: '100000',
    RATE_LIMIT_LOGIN_FAILURES: '100000',
    RATE_LIMIT_BEACON_PER_MIN: '100000',
    RATE_LIMIT_API_PER_MIN: '100000',
    // The answers under test, not the load shedding of a busy machine.
    LOAD_SHED_EVENT_LOOP_DELAY_MS: '0',
  });
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  cookieName = app.deps.config.sessionCookieName;
  const res = await fetch(`${base}/openapi.json`);
  assert.equal(res.status, 200);
  doc = (await res.json()) as Json;
  api = new OpenAPIBackend({
    definition: structuredClone(doc) as never,
    strict: true,
    quick: true,
    customizeAjv: (_ajv, options) => sharedAjv(options) as never,
  });
  await api.init();
});

after(async () => {
  await app?.close();
});

/** A call: what was sent, for messages, and the answer. */
interface Answer {
  label: string;
  status: number;
  headers: Headers;
  body: Buffer;
}

/** The response object that documents `status` (exact, then `4XX`, then `default`). */
function responseFor(op: Operation, status: number): ResponseObject | undefined {
  return op.responses[String(status)] ?? op.responses[`${Math.floor(status / 100)}XX`] ?? op.responses.default;
}

/** Whether a documented media range (`text/html`, `text/*`, `*\/*`) covers a media type. */
function covers(range: string, type: string): boolean {
  if (range === '*/*' || range === type) return true;
  return range.endsWith('/*') && type.startsWith(range.slice(0, -1));
}

/** The violations of one answer to `op` (empty when it conforms). */
function violations(op: Operation, answer: Answer): string[] {
  const out: string[] = [];
  const where = `${answer.label} → ${answer.status}`;
  const response = responseFor(op, answer.status);
  if (!response) return [`${where}: status not documented (${Object.keys(op.responses).join(', ')})`];
  const type = (answer.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const media = Object.keys(response.content ?? {});
  if (media.length === 0) {
    if (answer.body.length > 0) out.push(`${where}: a body (${type || 'no content-type'}) where the document has none`);
  } else if (answer.body.length === 0 && answer.status !== 304) {
    out.push(`${where}: no body where the document has ${media.join(', ')}`);
  } else if (!media.some((m) => covers(m, type))) {
    out.push(`${where}: content type ${type || '(none)'} where the document has ${media.join(', ')}`);
  }
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    if (header.required === true && !answer.headers.has(name)) out.push(`${where}: required header ${name} is missing`);
  }
  const present: Record<string, string> = {};
  for (const name of Object.keys(response.headers ?? {})) {
    const value = answer.headers.get(name);
    if (value !== null) present[name.toLowerCase()] = value;
  }
  const headerResult = api.validator.validateResponseHeaders(present, op.operationId, {
    statusCode: answer.status,
    setMatchType: 'any' as never,
  });
  for (const e of headerResult.errors ?? []) out.push(`${where}: header ${e.instancePath} ${e.message ?? ''}`);
  if (/^application\/([a-z.+-]+\+)?json$/.test(type) && answer.body.length > 0) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.body.toString('utf8'));
    } catch {
      out.push(`${where}: ${type} body is not JSON`);
      return out;
    }
    const result = api.validator.validateResponse(parsed, op.operationId, answer.status);
    for (const e of result.errors ?? []) {
      out.push(
        `${where}: body${e.instancePath} ${e.message ?? ''} ${e.params ? JSON.stringify(e.params) : ''} in ${answer.body.toString('utf8').slice(0, 200)}`,
      );
    }
  }
  return out;
}

/** A value for a parameter: the table's, then one generated from its schema. */
function parameterValue(path: string, p: Parameter, seed: number): string {
  return PARAMETER_VALUES[`${path} ${p.name}`] ?? PARAMETER_VALUES[p.name] ?? String(sampleOf(p.schema, seed));
}

/** The URL of an operation with its required query parameters (and the table's optional ones). */
function urlOf(path: string, op: Operation, seed: number): string {
  const params = op.parameters ?? [];
  let url = path;
  for (const p of params.filter((x) => x.in === 'path'))
    url = url.replace(`{${p.name}}`, encodeURIComponent(parameterValue(path, p, seed)).replace(/%2F/g, '/'));
  const query: Record<string, string> = {};
  for (const p of params.filter((x) => x.in === 'query')) {
    if (p.required || PARAMETER_VALUES[p.name] !== undefined) query[p.name] = parameterValue(path, p, seed);
  }
  return `${url}${encodeQuery(query)}`;
}

type Case = 'no session' | 'session' | 'bad body';

/** Calls one operation as `kind` asks; `cookie` is the session for the `session` and `bad body` cases. */
async function call(method: string, path: string, op: Operation, kind: Case, cookie: string, seed: number): Promise<Answer> {
  const key = `${method} ${path}`;
  const url = urlOf(path, op, seed);
  const headers: Record<string, string> = {};
  if (kind !== 'no session') headers.cookie = cookie;
  if (op.security?.some((s) => 'operatorBearer' in s) && kind !== 'no session') headers.authorization = `Bearer ${PURGE_TOKEN}`;
  if (op.parameters?.some((p) => p.in === 'header' && p.name === 'Idempotency-Key')) headers['idempotency-key'] = randomUUID();
  let body: Buffer | undefined;
  const content = op.requestBody?.content ?? {};
  if (content['multipart/form-data']) {
    if (kind === 'bad body') {
      body = Buffer.from('{"file":1}');
      headers['content-type'] = 'application/json';
    } else {
      const form = multipartBody(
        { endpoint: 'selfie' },
        { name: 'id.png', type: 'image/png', data: Buffer.from('89504e470d0a1a0a0000', 'hex') },
      );
      body = form.body;
      headers['content-type'] = form.contentType;
    }
  } else if (content['application/json']) {
    const value =
      kind === 'bad body' ? ['not', 'the', 'documented', 'body'] : (BODIES[key] ?? sampleOf(content['application/json'].schema, seed));
    body = Buffer.from(JSON.stringify(value));
    headers['content-type'] = 'application/json';
  }
  const label = `${method} ${url} [${kind}]`;
  try {
    const res = await fetch(`${base}${url}`, {
      method,
      headers,
      body: body ? new Uint8Array(body) : undefined,
      redirect: 'manual',
      signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
    });
    return { label, status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
  } catch (error) {
    throw new Error(`${label}: no whole answer within ${ANSWER_WITHIN_MS} ms`, { cause: error });
  }
}

/** Every operation of the document, the ones of {@link LAST} at the end. */
function operations(): { method: string; path: string; op: Operation }[] {
  const all = Object.entries(doc.paths as Record<string, Record<string, Operation>>).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      op: api.router.getOperation(op.operationId) as unknown as Operation,
    })),
  );
  return [...all.filter((o) => !LAST.has(`${o.method} ${o.path}`)), ...all.filter((o) => LAST.has(`${o.method} ${o.path}`))];
}

describe('every documented operation answers as the document says', () => {
  test('without a session, with the demo session, and with a bad body: 0 violations', async () => {
    const found: string[] = [];
    const statuses = new Map<string, number>();
    let cookie = await login();
    let calls = 0;
    /** Calls one operation in each case, in order, and checks every answer. */
    const walk = async (index: number, { method, path, op }: { method: string; path: string; op: Operation }) => {
      assert.ok(op?.operationId, `${method} ${path} is an operation of the validator`);
      const matched = api.router.matchOperation({ method, path: urlOf(path, op, index).split('?')[0] as string, headers: {} });
      if (matched?.operationId !== op.operationId)
        found.push(`${method} ${path}: the URL called matches ${matched?.operationId ?? 'no operation'}`);
      const kinds: Case[] = ['no session', 'session'];
      if (op.requestBody) kinds.push('bad body');
      for (const kind of kinds) {
        const answer = await call(method, path, op, kind, cookie, index);
        // CONFORMANCE_TRACE=1 prints every answer, to see what the walk reached.
        if (process.env.CONFORMANCE_TRACE) console.log(`${answer.label} ${answer.status} ${answer.body.toString('utf8').slice(0, 160)}`);
        calls++;
        statuses.set(`${answer.status}`, (statuses.get(`${answer.status}`) ?? 0) + 1);
        found.push(...violations(op, answer));
        if (LAST.has(`${method} ${path}`) && kind !== 'no session') cookie = await login();
      }
    };
    const all = operations();
    const first = all.filter((o) => !LAST.has(`${o.method} ${o.path}`));
    // A few operations at a time (each one's cases in order); the ones that change the account, one by one after them.
    for (let i = 0; i < first.length; i += WALKERS) {
      await Promise.all(first.slice(i, i + WALKERS).map((o, j) => walk(i + j, o)));
    }
    for (const [j, o] of all.slice(first.length).entries()) await walk(first.length + j, o);
    assert.deepEqual(found, [], `${found.length} violations in ${calls} answers`);
    assert.ok(calls >= 250, `${calls} answers`);
    // The walk reached the sandbox's answers, not only the proxy's refusals.
    assert.ok((statuses.get('200') ?? 0) + (statuses.get('201') ?? 0) >= 80, JSON.stringify(Object.fromEntries(statuses)));
  });

  test('the checks find an answer that disagrees with the document', () => {
    const readyz = api.router.getOperation('getReadyz') as unknown as Operation;
    const json = (status: number, value: unknown, extra: Record<string, string> = {}): Answer => ({
      label: 'GET /readyz [made up]',
      status,
      headers: new Headers({ 'content-type': 'application/json', ...extra }),
      body: Buffer.from(JSON.stringify(value)),
    });
    assert.match(violations(readyz, json(418, {})).join('\n'), /status not documented/);
    assert.match(violations(readyz, json(503, { ok: true })).join('\n'), /required header X-Error-Ref is missing/);
    assert.match(
      violations(readyz, json(503, { ok: true }, { 'x-error-ref': 'EP0001-EM0001' })).join('\n'),
      /body\/ok must be equal to constant/,
    );
    assert.match(
      violations(readyz, json(503, { ok: false, error: 'x', detail: 'y' }, { 'x-error-ref': 'nope' })).join('\n'),
      /header \/headers\/x-error-ref must match pattern/,
    );
    const html: Answer = {
      label: 'GET /readyz [made up]',
      status: 503,
      headers: new Headers({ 'content-type': 'text/html', 'x-error-ref': 'EP0001-EM0001' }),
      body: Buffer.from('<p>'),
    };
    assert.match(violations(readyz, html).join('\n'), /content type text\/html where the document has application\/json/);
    assert.deepEqual(
      violations(readyz, json(503, { ok: false, error: 'not_ready', detail: 'BFF' }, { 'x-error-ref': 'EP0001-EM0001' })),
      [],
    );
  });
});
