/**
 * Request bodies of an existing front end where the specification gives no shape (spec 4.12), and
 * password recovery held to fixed fields, over real sockets against a recording upstream:
 *
 * - `POST /api/auth/recovery`: the ForgotPasswordPayload of spec 2.3 (`{ login, captcha_token? }`,
 *   no `step`) starts the recovery at `POST /auth/passwords/reset/options`; every step forwards
 *   exactly its own fields, refuses any other (aliases such as `new_password`, `phone`, `token`) and
 *   any value of the wrong type or over its bound with 400, and a body over 16 KiB with 413, with
 *   nothing sent upstream;
 * - `POST /api/address/lookup-by-postal-code` and `POST /api/tracking/attribution`: the known fields
 *   keep their types; other scalar fields are forwarded unchanged;
 * - `POST /api/cache/purge`: the operator's JSON body is forwarded as given (`paths` and `tags`
 *   still checked), and the proxy's caches are emptied;
 * - the OpenAPI document shows these bodies with their known fields, open where they are open;
 * - the whole recovery, through the proxy, against the embedded sandbox BFF (same field lists).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createServer } from '../../src/app.js';
import { type Recorded, send, useProxyWithRecorder } from '../helpers/recording-upstream.js';

const OPERATOR = 'operator-secret-0123456789';
const { upstream, proxy } = useProxyWithRecorder({ UPSTREAM_TIMEOUT_MS: '2000', CACHE_PURGE_TOKEN: OPERATOR });
const operator = { authorization: `Bearer ${OPERATOR}` };

beforeEach(() => {
  for (const cache of proxy.app.deps.caches.values()) cache.clear();
});

function only(): Recorded {
  assert.equal(upstream.requests.length, 1, `one upstream call: ${upstream.requests.map((r) => `${r.method} ${r.path}`).join(', ')}`);
  return upstream.requests[0] as Recorded;
}

/** Sends each body and asserts a 400 `invalid_request` (or the given status) with nothing sent upstream. */
async function refused(path: string, bodies: readonly unknown[], options: { status?: number; headers?: Record<string, string> } = {}) {
  for (const json of bodies) {
    const res = await send(proxy.url, 'POST', path, { json, headers: options.headers });
    const label = JSON.stringify(json).slice(0, 160);
    assert.equal(res.status, options.status ?? 400, `${path} ${label}: ${res.text.slice(0, 200)}`);
    if ((options.status ?? 400) === 400) assert.equal((res.json as Record<string, unknown>).error, 'invalid_request', label);
    assert.equal(upstream.requests.length, 0, `${path} ${label}: nothing sent upstream`);
  }
}

const LOGIN = 'demo@example.com';

/** A valid body of every recovery step, with every field it takes, and the path it must reach. */
const STEP_BODIES = [
  { path: '/auth/passwords/reset/options', json: { login: LOGIN, captcha_token: 'cap-1' } },
  { path: '/auth/passwords/reset/options', json: { step: 'options', login: LOGIN, captcha_token: 'cap-1' } },
  { path: '/auth/passwords/reset/by-email', json: { step: 'by-email', login: LOGIN, captcha_token: 'cap-2' } },
  { path: '/auth/passwords/reset/by-sms', json: { step: 'by-sms', login: LOGIN, captcha_token: 'cap-3' } },
  { path: '/auth/passwords/reset/validate-code', json: { step: 'validate-code', login: LOGIN, code: '123456', captcha_token: 'cap-4' } },
  {
    path: '/auth/passwords/reset/confirm',
    json: {
      step: 'confirm',
      login: LOGIN,
      code: '123456',
      password: 'New#2026',
      password_confirmation: 'New#2026',
      captcha_token: 'cap-5',
    },
  },
] as const;

describe('spec 4.1, 2.3 /api/auth/recovery', () => {
  test('the ForgotPasswordPayload without a step starts the recovery: POST /auth/passwords/reset/options with { login }', async () => {
    upstream.on('POST', '/auth/passwords/reset/options', { json: { email: 'd**o@example.com', options: ['email', 'sms'] } });
    const res = await send(proxy.url, 'POST', '/api/auth/recovery', { json: { login: LOGIN } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { email: 'd**o@example.com', options: ['email', 'sms'] });
    const rec = only();
    assert.equal(rec.method, 'POST');
    assert.equal(rec.path, '/auth/passwords/reset/options');
    assert.deepEqual(rec.json, { login: LOGIN });
    assert.equal(rec.headers.authorization, undefined, 'a pre-authentication call carries no Bearer');
  });

  test('every step reaches its upstream path with exactly its fields (never `step`)', async () => {
    for (const { path, json } of STEP_BODIES) {
      upstream.requests.length = 0;
      const res = await send(proxy.url, 'POST', '/api/auth/recovery', { json });
      assert.equal(res.status, 200, `${JSON.stringify(json)}: ${res.text}`);
      const rec = only();
      assert.equal(rec.path, path);
      const { step: _selector, ...fields } = json as Record<string, unknown>;
      assert.deepEqual(rec.json, fields, path);
    }
  });

  test('each step refuses a field outside its list (aliases included) with 400 and nothing sent', async () => {
    const outside: Record<string, readonly Record<string, unknown>[]> = {
      none: [{ code: '123456' }, { password: 'x1234567' }, { email: LOGIN }, { phone: '11987654321' }],
      options: [{ code: '123456' }, { new_password: 'x1234567' }, { user_id: 1002 }],
      'by-email': [{ email: LOGIN }, { code: '123456' }, { password: 'x1234567' }],
      'by-sms': [{ phone: '11987654321' }, { ddi: '55' }, { code: '123456' }],
      'validate-code': [{ token: '123456' }, { password: 'x1234567' }, { email: LOGIN }],
      confirm: [{ new_password: 'x1234567' }, { token: '123456' }, { user_id: 1002 }, { phone: '11987654321' }],
    };
    const base: Record<string, Record<string, unknown>> = {
      none: { login: LOGIN },
      options: { step: 'options', login: LOGIN },
      'by-email': { step: 'by-email', login: LOGIN },
      'by-sms': { step: 'by-sms', login: LOGIN },
      'validate-code': { step: 'validate-code', login: LOGIN, code: '123456' },
      confirm: { step: 'confirm', login: LOGIN, code: '123456', password: 'New#2026' },
    };
    for (const [step, extras] of Object.entries(outside)) {
      // The base body is accepted: the refusal below is the extra field's.
      const ok = await send(proxy.url, 'POST', '/api/auth/recovery', { json: base[step] });
      assert.equal(ok.status, 200, `${step}: ${ok.text}`);
      upstream.requests.length = 0;
      await refused(
        '/api/auth/recovery',
        extras.map((extra) => ({ ...base[step], ...extra })),
      );
    }
    // The body an outside test sent: a login and a phone, a user id, a token, a long new password, a nested value.
    await refused('/api/auth/recovery', [
      { step: 'by-sms', login: LOGIN, phone: '11987654321', user_id: 1002, token: ['x'], new_password: 'p'.repeat(3000), x: { y: [1] } },
    ]);
  });

  test('a step missing a field it needs, an unknown step, or a field of the wrong type: 400 naming it, nothing sent', async () => {
    const missing = await send(proxy.url, 'POST', '/api/auth/recovery', { json: { step: 'confirm', login: LOGIN, code: '123456' } });
    assert.equal(missing.status, 400);
    assert.match(String((missing.json as Record<string, unknown>).detail), /password/);
    const noCode = await send(proxy.url, 'POST', '/api/auth/recovery', { json: { step: 'validate-code', login: LOGIN } });
    assert.equal(noCode.status, 400);
    assert.match(String((noCode.json as Record<string, unknown>).detail), /code/);
    assert.equal(upstream.requests.length, 0);
    await refused('/api/auth/recovery', [
      {},
      { step: 'reset', login: LOGIN },
      { login: 42 },
      { login: [LOGIN] },
      { login: LOGIN, captcha_token: 7 },
      { step: 'validate-code', login: LOGIN, code: 123456 },
      { step: 'confirm', login: LOGIN, code: '123456', password: true },
      { step: 'confirm', login: LOGIN, code: '123456', password: 'New#2026', password_confirmation: null },
    ]);
  });

  test('every string is bounded (400) and so is the body (413 over 16 KiB): nothing sent', async () => {
    await refused('/api/auth/recovery', [
      { login: 'a'.repeat(321) },
      { login: '' },
      { login: LOGIN, captcha_token: 'c'.repeat(4097) },
      { step: 'validate-code', login: LOGIN, code: '1'.repeat(17) },
      { step: 'validate-code', login: LOGIN, code: '12 34' },
      { step: 'confirm', login: LOGIN, code: '123456', password: 'p'.repeat(257) },
      { step: 'confirm', login: LOGIN, code: '123456', password: 'New#2026', password_confirmation: 'p'.repeat(257) },
    ]);
    const megabyte = { login: LOGIN, captcha_token: 'c'.repeat(1024 * 1024) };
    const manyKeys = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, 1]));
    await refused('/api/auth/recovery', [megabyte, { login: LOGIN, ...manyKeys }], { status: 413 });
  });

  test('the largest valid body (every field of confirm at its bound, 4-byte characters) is within the limit', async () => {
    const wide = '\u{1F600}';
    const json = {
      step: 'confirm',
      login: wide.repeat(320),
      code: 'A'.repeat(16),
      password: wide.repeat(256),
      password_confirmation: wide.repeat(256),
      captcha_token: 'c'.repeat(4096),
    };
    const res = await send(proxy.url, 'POST', '/api/auth/recovery', { json });
    assert.equal(res.status, 200, res.text.slice(0, 200));
    assert.equal(only().path, '/auth/passwords/reset/confirm');
  });
});

describe('spec 4.2 /api/address/lookup-by-postal-code', () => {
  test('{ postal_code, cep } reaches POST /apicep unchanged', async () => {
    upstream.on('POST', '/apicep', { json: { cep: '01001-000', street: 'Praça da Sé' } });
    const json = { postal_code: '01001000', cep: '01001000' };
    const res = await send(proxy.url, 'POST', '/api/address/lookup-by-postal-code', { json });
    assert.equal(res.status, 200, res.text);
    const rec = only();
    assert.equal(rec.path, '/apicep');
    assert.deepEqual(rec.json, json);
  });

  test('cep keeps its type and pattern; other fields are scalars, bounded in count, size and body: 400/413, nothing sent', async () => {
    await refused('/api/address/lookup-by-postal-code', [
      { postal_code: '01001000' },
      { cep: 1001000 },
      { cep: '0100100' },
      { cep: '01001000', country: { code: 'BR' } },
      { cep: '01001000', numbers: [1, 2] },
      { cep: '01001000', street: 's'.repeat(2049) },
      { cep: '01001000', 'bad-name': 1 },
      { cep: '01001000', ...Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`f${i}`, i])) },
    ]);
    await refused(
      '/api/address/lookup-by-postal-code',
      [
        {
          cep: '01001000',
          a: 'x'.repeat(2000),
          b: 'x'.repeat(2000),
          c: 'x'.repeat(2000),
          d: 'x'.repeat(2000),
          e: 'x'.repeat(2000),
          f: 'x'.repeat(2000),
          g: 'x'.repeat(2000),
          h: 'x'.repeat(2000),
          i: 'x'.repeat(2000),
        },
      ],
      {
        status: 413,
      },
    );
  });
});

describe('spec 4.10, 6.3 /api/tracking/attribution', () => {
  test("a provider's event with its own fields is forwarded with them, plus the cookie attribution, address and user agent", async () => {
    upstream.on('POST', '/attribution', { status: 202, json: { id: 'e1' } });
    const json = { event: 'first_deposit', event_name: 'first_deposit', userId: 4242, value: 50 };
    const res = await send(proxy.url, 'POST', '/api/tracking/attribution', {
      json: { ...json, ip: '203.0.113.9', user_agent: 'forged' },
      headers: {
        cookie: `_ga=GA1.1.111.222; cookie_tracking=${encodeURIComponent(JSON.stringify({ utm_source: 'news' }))}`,
        'user-agent': 'test-agent',
      },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { ok: true });
    const rec = only();
    assert.equal(rec.path, '/attribution');
    const { timestamp, ...rest } = rec.json as Record<string, unknown>;
    assert.equal(typeof timestamp, 'number');
    assert.deepEqual(rest, { ...json, utm_source: 'news', ga_client_id: '111.222', ip: '127.0.0.1', user_agent: 'test-agent' });
  });

  test('the known fields keep their types, other fields stay scalars: 400 with nothing sent', async () => {
    await refused('/api/tracking/attribution', [
      { event_name: 'first_deposit' },
      { event: 'first_deposit', value: 'fifty' },
      { event: 'first_deposit', value: -1 },
      { event: 'first_deposit', userId: 4242, currency: 'real' },
      { event: 'first_deposit', timestamp: '2026-01-01' },
      { event: 'first_deposit', properties: { a: { deep: 1 } } },
      { event: 'first_deposit', items: [{ id: 1 }] },
      { event: 'first_deposit', meta: { a: 1 } },
      { event: 'first_deposit', note: 'n'.repeat(2049) },
    ]);
  });
});

describe('spec 4.10 /api/cache/purge', () => {
  test("the operator's { keys, tags } reaches CACHE_PURGE_URL as given, and the proxy's caches are emptied", async () => {
    upstream.on('GET', '/casino-games/list/', { json: { data: [] } });
    await send(proxy.url, 'GET', '/api/games/list');
    assert.equal(proxy.app.deps.caches.get('catalogue')?.size, 1);
    upstream.requests.length = 0;
    const json = { keys: ['casino:home', 'casino:list:1'], tags: ['casino'] };
    const res = await send(proxy.url, 'POST', '/api/cache/purge', { headers: operator, json });
    assert.equal(res.status, 200, res.text);
    assert.equal((res.json as { cleared: Record<string, number> }).cleared.catalogue, 1);
    assert.equal(proxy.app.deps.caches.get('catalogue')?.size, 0);
    const rec = only();
    assert.equal(rec.path, '/purge');
    assert.deepEqual(rec.json, json);
    assert.equal(rec.headers.authorization, undefined);
  });

  test('prefixes, hosts, everything, nested file records: forwarded as given', async () => {
    const bodies = [
      { prefixes: ['www.example.com/casino/'] },
      { hosts: ['www.example.com'] },
      { purge_everything: true },
      { files: [{ url: 'https://www.example.com/a.css', headers: { Origin: 'https://www.example.com' } }] },
      { paths: ['/casino'], tags: ['casino'], mode: 'soft' },
    ];
    for (const json of bodies) {
      upstream.requests.length = 0;
      const res = await send(proxy.url, 'POST', '/api/cache/purge', { headers: operator, json });
      assert.equal(res.status, 200, `${JSON.stringify(json)}: ${res.text}`);
      assert.deepEqual(only().json, json);
    }
  });

  test('`paths` and `tags` keep their types, the body is an object of at most 64 KiB: 400/413, nothing sent, nothing purged', async () => {
    upstream.on('GET', '/casino-games/list/', { json: { data: [] } });
    await send(proxy.url, 'GET', '/api/games/list');
    upstream.requests.length = 0;
    await refused(
      '/api/cache/purge',
      [{ tags: 'casino' }, { paths: ['casino'] }, { paths: [1] }, { keys: ['a'], tags: [{ t: 1 }] }, ['casino']],
      {
        headers: operator,
      },
    );
    const wrong = await send(proxy.url, 'POST', '/api/cache/purge', { headers: operator, json: { tags: 'casino' } });
    assert.match(String((wrong.json as Record<string, unknown>).detail), /^body\.tags /);
    await refused('/api/cache/purge', [{ keys: Array.from({ length: 3000 }, (_, i) => `casino:list:${i}:${'k'.repeat(20)}`) }], {
      status: 413,
      headers: operator,
    });
    assert.equal(proxy.app.deps.caches.get('catalogue')?.size, 1, 'a refused purge empties nothing');
  });
});

describe('the OpenAPI document shows these bodies', () => {
  type Schema = Record<string, unknown> & { properties?: Record<string, unknown>; required?: string[] };
  async function bodySchema(path: string): Promise<{ required: boolean; schema: Schema }> {
    const res = await fetch(`${proxy.url}/openapi.json`);
    assert.equal(res.status, 200);
    const doc = (await res.json()) as {
      paths: Record<string, { post: { requestBody: { required: boolean; content: Record<string, { schema: Schema }> } } }>;
    };
    const body = doc.paths[path]?.post.requestBody;
    assert.ok(body, `${path} has a request body`);
    return { required: body.required, schema: body.content['application/json']?.schema as Schema };
  }

  test('postal-code lookup and attribution: open objects (scalar extra fields) with their known fields', async () => {
    for (const [path, known] of [
      ['/api/address/lookup-by-postal-code', ['cep']],
      ['/api/tracking/attribution', ['event', 'value', 'properties', 'utm_source', 'ga_client_id']],
    ] as const) {
      const { schema } = await bodySchema(path);
      for (const field of known) assert.ok(schema.properties?.[field], `${path}: ${field}`);
      const extra = schema.additionalProperties as { anyOf?: { type: string }[] };
      assert.deepEqual(extra.anyOf?.map((s) => s.type).sort(), ['boolean', 'null', 'number', 'string'], path);
      assert.equal(schema.maxProperties, 64, path);
    }
  });

  test('cache purge: an optional open object with `paths` and `tags`', async () => {
    const { required, schema } = await bodySchema('/api/cache/purge');
    assert.equal(required, false);
    assert.ok(schema.properties?.paths && schema.properties.tags);
    assert.equal(schema.additionalProperties, true);
  });

  test('recovery: the steps and their fields, `step` optional (the ForgotPasswordPayload starts it), closed', async () => {
    const { required, schema } = await bodySchema('/api/auth/recovery');
    assert.equal(required, true);
    assert.deepEqual(schema.required, ['login']);
    assert.deepEqual(Object.keys(schema.properties ?? {}).sort(), [
      'captcha_token',
      'code',
      'login',
      'password',
      'password_confirmation',
      'step',
    ]);
    assert.equal(schema.additionalProperties, false);
    assert.match(String(schema.description), /ForgotPasswordPayload/);
    const steps = (schema.allOf as { then: Schema }[]).map(({ then }) =>
      Object.keys(then.properties ?? {})
        .sort()
        .join(','),
    );
    assert.deepEqual(steps, [
      'captcha_token,login,step',
      'captcha_token,login,step',
      'captcha_token,login,step',
      'captcha_token,code,login,step',
      'captcha_token,code,login,password,password_confirmation,step',
    ]);
  });
});

describe('the recovery through the proxy against the sandbox BFF', () => {
  let app: FastifyInstance;
  let base = '';
  before(async () => {
    app = await createServer({ NODE_ENV: 'test', LOG_LEVEL: 'silent', RATE_LIMIT_PREAUTH_PER_MIN: '0' });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await app.close();
  });

  test('ForgotPasswordPayload, code by e-mail, validate-code, confirm; then the new password logs in', async () => {
    const login = '2fa@example.com';
    const options = await send(base, 'POST', '/api/auth/recovery', { json: { login } });
    assert.equal(options.status, 200, options.text);
    assert.ok(((options.json as Record<string, unknown>).options as string[]).includes('email'), options.text);
    assert.equal((await send(base, 'POST', '/api/auth/recovery', { json: { step: 'by-email', login } })).status, 200);
    const codes = await fetch(`${app.sandboxUrls?.BFF_BASE_URL ?? ''}/__sandbox/recovery-codes?login=${encodeURIComponent(login)}`);
    const { code } = (await codes.json()) as { code: string };
    assert.match(code, /^[0-9]{6}$/);
    const valid = await send(base, 'POST', '/api/auth/recovery', { json: { step: 'validate-code', login, code } });
    assert.equal(valid.status, 200, valid.text);
    const alias = await send(base, 'POST', '/api/auth/recovery', { json: { step: 'confirm', login, code, new_password: 'Changed#2026' } });
    assert.equal(alias.status, 400, 'an alias of the password never reaches the BFF');
    const confirm = await send(base, 'POST', '/api/auth/recovery', {
      json: { step: 'confirm', login, code, password: 'Changed#2026', password_confirmation: 'Changed#2026' },
    });
    assert.equal(confirm.status, 200, confirm.text);
    const relogin = await send(base, 'POST', '/api/auth/login', { json: { login, password: 'Changed#2026' } });
    assert.equal(relogin.status, 200, relogin.text);
  });
});
