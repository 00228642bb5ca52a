/**
 * The OpenAPI document (`GET /openapi.json`, docs/behaviour.md "Operations"): a valid OpenAPI 3.1 document
 * built from the route tables, every operation with a stable unique `operationId`, its area tag, its
 * section, its body requirement as the proxy really applies it, its success answer and its error
 * answers (each with `X-Error-Ref`); the money moves with `Idempotency-Key`, 409, 422 and 503; the
 * same operations as the typed browser client; no response schema on any Fastify route (answers are
 * never serialised through the documentation); and nothing at all in production.
 *
 * The rule between the document and the browser client: every operation of the document under
 * `/api/` that is not tagged `Development` is a row of `packages/browser/src/browser/routes.ts` (same method, same
 * path), and every row of the client is such an operation. Development-only operations and the
 * probes outside `/api` (`/healthz`, `/readyz`) are in the document only.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import Fastify from 'fastify';
import { ROUTES } from '../packages/browser/src/browser/routes.js';
import { Value } from '@sinclair/typebox/value';
import { REQUEST_EXAMPLES, ROUTE_ANSWERS } from '../src/contracts/answers.js';
import { AMOUNT_BOUNDS } from '../src/contracts/payments.js';
import { FORM_STATUS_NAMES, UPSTREAM_STATUS_NAMES } from '../src/envelope.js';
import { isProxyErrorName, PROXY_ERRORS } from '../src/proxy-errors.js';
import { documentPath, OPENAPI_TAGS, operationIdOf } from '../src/pipeline/openapi.js';
import { allRouteTables } from '../src/routes/index.js';
import { type AppDeps, activeRoutes, registerRoutes } from '../src/routes/route.js';
import { fakeJwt, useProxiesWithRecorder } from './helpers/recording-upstream.js';

type Json = Record<string, unknown>;
interface Operation {
  operationId: string;
  tags: string[];
  description: string;
  parameters?: { in: string; name: string; required?: boolean }[];
  requestBody?: { required: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<string, Json>;
  security?: Record<string, unknown>[];
}
interface Doc {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: {
    responses: Record<string, Json>;
    schemas: Record<string, Json>;
    headers: Record<string, Json>;
    securitySchemes: Record<string, Json>;
  };
  tags: { name: string }[];
}

const PURGE_TOKEN = 'operator-token-0123456789';
const { upstream, proxies } = useProxiesWithRecorder([
  { env: { NODE_ENV: 'development', CACHE_PURGE_TOKEN: PURGE_TOKEN } },
  { env: { NODE_ENV: 'production' } },
]);
const dev = () => proxies[0];
const prod = () => proxies[1];

let cached: Doc | undefined;
async function documentOf(): Promise<Doc> {
  if (!cached) {
    const res = await fetch(`${dev().url}/openapi.json`);
    assert.equal(res.status, 200);
    cached = (await res.json()) as Doc;
  }
  return cached;
}

function operations(doc: Doc): { method: string; path: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
}

/** The route-table URL of a document path (`{slug}` → `:slug`, `{subPath}` → `*`). */
function routeUrl(path: string): string {
  return path.replace(/\{subPath\}$/, '*').replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

function resolve(doc: Doc, answer: Json): Json {
  const ref = answer.$ref;
  if (typeof ref !== 'string') return answer;
  const name = ref.replace('#/components/responses/', '');
  const found = doc.components.responses[name];
  assert.ok(found, `${ref} exists`);
  return found;
}

describe('the document', () => {
  test('is a valid OpenAPI 3.1 document, and the validator refuses a broken copy', async () => {
    const doc = await documentOf();
    assert.equal(doc.openapi, '3.1.0');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as never);
    assert.equal(validator.version, '3.1');
    assert.deepEqual(result.errors, undefined);
    assert.equal(result.valid, true);
    const broken = structuredClone(doc) as unknown as Json;
    delete ((broken.paths as Record<string, Record<string, Json>>)['/api/payments/deposit']?.post?.responses as Json)['200'];
    delete broken.info;
    assert.equal((await new Validator().validate(broken as never)).valid, false);
  });

  test('has every operation of the route tables, and only those (plus the health probes)', async () => {
    const doc = await documentOf();
    const expected = new Set(['GET /healthz', 'GET /readyz']);
    for (const r of activeRoutes(allRouteTables, dev().app.deps.config)) {
      for (const m of Array.isArray(r.method) ? r.method : [r.method]) expected.add(`${m} ${documentPath(r.url)}`);
    }
    const documentedOps = new Set(operations(doc).map(({ method, path }) => `${method} ${path}`));
    assert.deepEqual([...documentedOps].sort(), [...expected].sort());
  });

  test('every operation has a unique camelCase operationId, one area tag, and a description citing its section', async () => {
    const doc = await documentOf();
    const ids = new Set<string>();
    const tags = new Set<string>(OPENAPI_TAGS.map((t) => t.name));
    // The area of each route row, by `METHOD url` (the document's path back in the tables' syntax).
    const areaOf = new Map<string, string>();
    for (const r of allRouteTables.flat()) {
      for (const m of Array.isArray(r.method) ? r.method : [r.method]) areaOf.set(`${m} ${r.url}`, r.devOnly ? 'Development' : r.area);
    }
    assert.deepEqual(
      doc.tags.map((t) => t.name),
      [...tags],
    );
    for (const { method, path, op } of operations(doc)) {
      assert.match(op.operationId, /^[a-z]+(?:[A-Z][a-z0-9]*)+$/, `${method} ${path}`);
      assert.equal(op.operationId, operationIdOf(method, path));
      assert.ok(!ids.has(op.operationId), `${op.operationId} is unique`);
      ids.add(op.operationId);
      assert.equal(op.tags.length, 1, `${method} ${path} has one tag`);
      assert.ok(tags.has(op.tags[0] as string), `${method} ${path}: tag ${op.tags[0]}`);
      // The tag is the area of the route's table, whatever its path says; the probes are the proxy's own.
      const area = areaOf.get(`${method} ${routeUrl(path)}`) ?? (['/healthz', '/readyz'].includes(path) ? 'Infrastructure' : undefined);
      assert.equal(op.tags[0], area, `${method} ${path}: the area of its table`);
      if (path.startsWith('/api/'))
        assert.match(op.description, /\*\*Specification:\*\* section [0-9]/, `${method} ${path} cites its section`);
    }
    assert.equal(doc.paths['/api/payments/deposit']?.post?.operationId, 'postPaymentsDeposit');
    assert.equal(doc.paths['/api/games/category/{slug}']?.get?.operationId, 'getGamesCategoryBySlug');
    assert.equal(doc.paths['/api/payments/deposit']?.post?.tags[0], 'Payments');
    assert.equal(doc.paths['/api/auth/login']?.post?.tags[0], 'Authentication');
    assert.equal(doc.paths['/api/dev/visitor-info']?.get?.tags[0], 'Development');
    assert.equal(doc.paths['/api/income-report/status/{id}']?.get?.tags[0], 'Income report');
    assert.ok(!doc.tags.some((t) => /^spec/.test(t.name)), 'no tag named after a section number');
  });

  test('every operation has its success answer, and every error answer carries X-Error-Ref', async () => {
    const doc = await documentOf();
    for (const { method, path, op } of operations(doc)) {
      const statuses = Object.keys(op.responses);
      const success = statuses.filter((s) => /^2/.test(s));
      const created = ROUTE_ANSWERS[`${method} ${routeUrl(path)}`]?.created === true;
      // One success answer; 201 and 200 with the same body where the upstream's status of a created record passes through.
      assert.deepEqual(success, created ? ['200', '201'] : [success[0]], `${method} ${path} success answers`);
      if (created)
        assert.deepEqual(
          (op.responses['200'] as Json).content,
          (op.responses['201'] as Json).content,
          `${method} ${path}: 200 and 201 have the same body`,
        );
      const answer = op.responses[success[0] as string] as Json;
      if (success[0] !== '204') assert.ok(answer.content, `${method} ${path} success has a body schema`);
      for (const status of statuses.filter((s) => !/^[23]/.test(s))) {
        const error = resolve(doc, op.responses[status] as Json);
        assert.ok((error.headers as Json | undefined)?.['X-Error-Ref'], `${method} ${path} ${status} has X-Error-Ref`);
      }
      if (path === '/api/auth/logout' || path === '/api/auth/logout-auto') {
        // Logout answers success whatever the proxy refused on the way (spec 5.5): none of these refusals reaches a client.
        for (const refused of ['413', '415', '429'])
          assert.equal(op.responses[refused], undefined, `${method} ${path} documents no ${refused}`);
      } else if (path.startsWith('/api/')) {
        const limited = resolve(doc, op.responses['429'] as Json);
        assert.ok((limited.headers as Json)['Retry-After'], `${method} ${path} documents 429 with Retry-After`);
      }
      if (op.security?.some((s) => 'sessionCookie' in s)) {
        assert.match(
          JSON.stringify(resolve(doc, op.responses['401'] as Json)),
          /#\/components\/schemas\/NoToken/,
          `${method} ${path} 401 no_token`,
        );
      }
    }
    const header = doc.components.headers['X-Error-Ref'] as { schema: { pattern: string } };
    assert.equal(header.schema.pattern, '^EP[0-9]{4}-EM[0-9]{4}$');
    assert.deepEqual(doc.components.schemas.Envelope?.required, ['ok', 'error', 'detail']);
    assert.match(String(doc.components.schemas.UpstreamBody?.description), /byte for byte/);
    assert.deepEqual(doc.components.securitySchemes.sessionCookie, {
      type: 'apiKey',
      in: 'cookie',
      name: dev().app.deps.config.sessionCookieName,
      description: (doc.components.securitySchemes.sessionCookie as Json).description,
    });
  });

  test('the known answer shapes are documented (LoginResponse, profile, wallet, providers, catalogue)', async () => {
    const doc = await documentOf();
    const schemaOf = (path: string, method: string) => JSON.stringify(doc.paths[path]?.[method]?.responses['200']);
    assert.match(schemaOf('/api/auth/login', 'post'), /LoginResponse/);
    assert.match(schemaOf('/api/auth/profile', 'get'), /ProfileResponse/);
    assert.match(schemaOf('/api/wallet/refresh', 'post'), /WalletRefreshAnswer/);
    assert.match(schemaOf('/api/payments/providers', 'get'), /ProvidersAnswer/);
    assert.match(schemaOf('/api/games/list', 'get'), /CataloguePage/);
    assert.match(JSON.stringify(doc.components.schemas.LoginResponse), /AuthUser/);
    assert.ok(!JSON.stringify(doc.components.schemas.LoginResponse).includes('"access_token":'), 'the JWT is never in a documented body');
    const receipt = doc.paths['/api/wallet/receipt']?.post?.responses['200'] as { content: Json };
    assert.deepEqual(Object.keys(receipt.content).sort(), ['application/pdf', 'text/html']);
    for (const key of Object.keys(ROUTE_ANSWERS)) {
      const [method = '', url = ''] = key.split(' ');
      assert.ok(doc.paths[documentPath(url)]?.[method.toLowerCase()], `${key} of contracts/answers.ts is an operation`);
    }
  });

  test('the catalogue reads answered from the shared cache document their HTTP caching: ETag, Vary, Content-Encoding, Cache-Control; If-None-Match and 304 on a GET', async () => {
    const doc = await documentOf();
    const cached = [
      ['get', '/api/games/list'],
      ['post', '/api/games/search'],
      ['get', '/api/games/category/{slug}'],
      ['get', '/api/games/provider/{slug}'],
      ['get', '/api/games/top-wins'],
      ['get', '/api/games/statistics-dl'],
    ] as const;
    for (const [method, path] of cached) {
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${method} ${path}`);
      const success = op.responses['200'] as { headers?: Json };
      assert.deepEqual(
        Object.keys(success.headers ?? {}).sort(),
        ['Cache-Control', 'Content-Encoding', 'ETag', 'Vary'],
        `${method} ${path}`,
      );
      assert.match(JSON.stringify(success.headers?.['Cache-Control']), /public, max-age=30/);
      const conditional = method === 'get';
      assert.equal(
        op.parameters?.some((p) => p.in === 'header' && p.name === 'If-None-Match') === true,
        conditional,
        `${method} ${path} If-None-Match`,
      );
      assert.equal('304' in op.responses, conditional, `${method} ${path} 304`);
      if (conditional) {
        const notModified = resolve(doc, op.responses['304'] as Json);
        assert.deepEqual(Object.keys(notModified.headers as Json).sort(), ['Cache-Control', 'ETag', 'Vary']);
        assert.equal(notModified.content, undefined, '304 has no body');
      }
    }
    for (const [method, path] of [
      ['get', '/api/games/by-slugs'],
      ['post', '/api/games/stats-batch'],
      ['get', '/api/auth/profile'],
    ] as const) {
      const op = doc.paths[path]?.[method];
      assert.equal(op && '304' in op.responses, false, `${method} ${path}: no 304`);
      assert.equal(JSON.stringify(op?.responses['200']).includes('ETag'), false, `${method} ${path}: no ETag`);
    }
  });

  test('every money field of a money-carrying answer says its unit (integer cents, or currency units for the converted balance)', async () => {
    const doc = await documentOf();
    type Props = Record<string, { description?: string; $ref?: string }>;
    const props = (name: string) => (doc.components.schemas[name] as { properties: Props }).properties;
    const wallet = props('RealWallet');
    assert.match(String(wallet.balance?.description), /^currency units \(spec 2\.7 rule 2\)/);
    assert.match(String(wallet.balance_cents?.description), /^integer cents/);
    for (const field of ['withdrawable_balance', 'bonus_balance', 'cashback_balance']) {
      assert.match(String(wallet[field]?.description), /integer cents/, `RealWallet.${field}`);
      assert.match(String(props('WalletRecord')[field]?.description), /integer cents/, `WalletRecord.${field}`);
    }
    assert.match(String(props('WalletRecord').balance?.description), /integer cents/, 'the refreshed wallet is not converted');
    assert.match(JSON.stringify(props('DepositAnswer').real_wallet), /"balance":\{"description":"currency units/);
    assert.match(JSON.stringify(props('DepositAnswer').wallet), /"balance":\{"description":"currency units/);
    assert.match(JSON.stringify(props('WalletRefreshAnswer').wallet), /#\/components\/schemas\/WalletRecord/);
    for (const [name, field] of [
      ['ProviderView', 'min_amount'],
      ['ProviderView', 'max_amount'],
      ['DepositAnswer', 'amount'],
      ['WithdrawAnswer', 'amount'],
      ['WalletActionAnswer', 'amount'],
      ['CashbackAnswer', 'max_amount'],
    ] as const) {
      assert.match(String(props(name)[field]?.description), /integer cents/, `${name}.${field}`);
    }
    const envelope = props('Envelope');
    assert.match(String(envelope.minimumCents?.description), /^integer cents/);
    assert.match(String(envelope.maximumCents?.description), /^integer cents/);
    const withdraw = doc.paths['/api/payments/withdraw']?.post?.responses['422'] as Json;
    assert.match(JSON.stringify(resolve(doc, withdraw)), /amount_below_minimum.*minimumCents/);
    assert.match(
      JSON.stringify(
        doc.paths['/api/payments/withdraw']?.post?.responses['201'] ?? doc.paths['/api/payments/withdraw']?.post?.responses['200'],
      ),
      /WithdrawAnswer/,
    );
  });

  test('the money moves take Idempotency-Key and document 409, 422 and 503 idempotency_unavailable', async () => {
    const doc = await documentOf();
    const moves = operations(doc).filter(({ op }) => op.parameters?.some((p) => p.in === 'header' && p.name === 'Idempotency-Key'));
    assert.deepEqual(moves.map(({ method, path }) => `${method} ${path}`).sort(), [
      'POST /api/payments/deposit',
      'POST /api/payments/withdraw',
    ]);
    for (const { op } of moves) {
      assert.match(JSON.stringify(resolve(doc, op.responses['409'] as Json)), /request_in_progress/);
      assert.match(JSON.stringify(resolve(doc, op.responses['422'] as Json)), /idempotency_key_reused/);
      assert.match(JSON.stringify(resolve(doc, op.responses['503'] as Json)), /idempotency_unavailable/);
    }
    assert.ok(!doc.paths['/api/payments/providers']?.get?.responses['409']);
  });

  test('every error name an error answer cites is the registry\'s at that status, or a name the upstream gives (docs/behaviour.md "Error envelope")', async () => {
    const doc = await documentOf();
    const fromUpstream = new Set<string>([
      ...Object.values(UPSTREAM_STATUS_NAMES),
      ...Object.values(FORM_STATUS_NAMES),
      ...Object.keys(AMOUNT_BOUNDS),
      // The gate's 401 bodies are `{ reason }`, not envelopes (spec 7.3).
      'no_token',
      'invalid_token',
      'token_expired',
    ]);
    let cited = 0;
    for (const { method, path, op } of operations(doc)) {
      for (const [status, answer] of Object.entries(op.responses)) {
        if (!/^[45]\d\d$/.test(status)) continue;
        const { description } = resolve(doc, answer) as { description?: string };
        for (const [, name] of String(description).matchAll(/`([a-z][a-z0-9]*(?:_[a-z0-9]+)+)`/g)) {
          cited++;
          if (isProxyErrorName(name)) assert.equal(String(PROXY_ERRORS[name].status), status, `${method} ${path} ${status}: \`${name}\``);
          else
            assert.ok(
              fromUpstream.has(name as string),
              `${method} ${path} ${status}: \`${name}\` is neither in src/proxy-errors.ts nor a name of the upstream`,
            );
        }
      }
    }
    assert.ok(cited > 100, `${cited} names cited`);
  });
});

describe('request bodies', () => {
  /** A concrete URL for a document path. */
  const concrete = (path: string) =>
    path.replace('{slug}', 'slots').replace('{provider}', 'google').replace('{id}', '7').replace('{subPath}', 'x');

  test('a body is marked required exactly when the proxy refuses a request without one', async () => {
    const doc = await documentOf();
    const checked: string[] = [];
    for (const { method, path, op } of operations(doc)) {
      if (!op.requestBody || !op.requestBody.content['application/json']) continue;
      const headers: Record<string, string> = { cookie: `${dev().app.deps.config.sessionCookieName}=${fakeJwt()}` };
      if (op.security?.some((s) => 'operatorBearer' in s)) headers.authorization = `Bearer ${PURGE_TOKEN}`;
      const res = await fetch(`${dev().url}${concrete(path)}`, { method, headers });
      const text = await res.text();
      const refusedForBody = res.status === 400 && /"detail":"body/.test(text);
      assert.equal(
        refusedForBody,
        op.requestBody.required,
        `${method} ${path}: required ${op.requestBody.required}, answered ${res.status} ${text.slice(0, 120)}`,
      );
      checked.push(`${method} ${path}`);
    }
    assert.ok(checked.includes('POST /api/wallet/refresh') && checked.includes('POST /api/payments/deposit'), checked.join(', '));
    assert.equal(doc.paths['/api/wallet/refresh']?.post?.requestBody?.required, false);
    assert.equal(doc.paths['/api/payments/deposit']?.post?.requestBody?.required, true);
    assert.ok(upstream.requests.length > 0);
  });

  test('the example bodies are valid bodies of their routes', async () => {
    const doc = await documentOf();
    const rows = activeRoutes(allRouteTables, dev().app.deps.config);
    assert.ok(Object.keys(REQUEST_EXAMPLES).length >= 3);
    for (const [key, example] of Object.entries(REQUEST_EXAMPLES)) {
      const [method = '', url = ''] = key.split(' ');
      const row = rows.find((r) => r.url === url && (Array.isArray(r.method) ? r.method.includes(method as never) : r.method === method));
      assert.ok(row?.body, `${key} is a row with a body`);
      assert.deepEqual(
        [...Value.Errors(row.body, example)].map((e) => `${e.path} ${e.message}`),
        [],
        key,
      );
      assert.deepEqual(
        (doc.paths[documentPath(url)]?.[method.toLowerCase()]?.requestBody?.content['application/json'] as Json).example,
        example,
      );
    }
  });
});

describe('answers are never serialised through the documentation', () => {
  test('no route row becomes a Fastify route with a response schema', async () => {
    const app = Fastify();
    const schemas: { url: string; schema: Json | undefined }[] = [];
    app.addHook('onRoute', (route) => {
      schemas.push({ url: route.url, schema: route.schema as Json | undefined });
    });
    registerRoutes(app, activeRoutes(allRouteTables, dev().app.deps.config), {} as AppDeps);
    await app.ready();
    assert.ok(schemas.length > 90);
    assert.deepEqual(
      schemas.filter((s) => s.schema && 'response' in s.schema).map((s) => s.url),
      [],
    );
    await app.close();
  });
});

describe('the typed browser client and the document', () => {
  test('list the same operations (outside /api and development-only operations, which the client leaves out)', async () => {
    const doc = await documentOf();
    const documented = operations(doc)
      .filter(({ path, op }) => path.startsWith('/api/') && op.tags[0] !== 'Development')
      .map(({ method, path }) => `${method} ${path}`)
      .sort();
    const client = ROUTES.map((r) => `${r.method} ${documentPath(r.path)}`).sort();
    assert.deepEqual(client, documented);
  });
});

describe('production', () => {
  test('has no /openapi.json and no /docs', async () => {
    for (const path of ['/openapi.json', '/docs', '/docs/', '/docs/json', '/docs/static/index.html']) {
      assert.equal((await fetch(`${prod().url}${path}`)).status, 404, path);
    }
  });
});
