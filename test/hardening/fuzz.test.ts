/**
 * Hardening row 1, fuzzed input: requests generated with fast-check across every route of
 * `activeRoutes(allRouteTables, config)` — bodies of every JSON type, valid bodies with fields
 * missing, added or replaced, huge strings, deep nesting, `__proto__` / `constructor.prototype`
 * keys, broken and overlong UTF-8, wrong content types, and path and query values with `%00`,
 * overlong UTF-8, RTL overrides and emoji. The upstream answers 200 to everything, so every 4xx is
 * the proxy's own refusal and a 500 is a defect.
 *
 * Pass: no crash (uncaught error or hung request), no status outside the route's documented set
 * (`documentedStatuses`), no upstream call for a request the proxy refused (the read of the
 * session's profile is counted apart: it carries no input), `({}).polluted` still undefined.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { fakeJwt } from '../helpers/recording-upstream.js';
import { jsonOf, keepAliveAgent, rawRequest, runPool } from './helpers/client.js';
import { FULL, Figures, scaled } from './helpers/figures.js';
import { type Harness, startHarness } from './helpers/harness.js';
import { documentedStatuses, encodeQuery, fieldSchema, fillPath, multipartBody, type RouteCase, schemaArb } from './helpers/routes.js';

const figures = new Figures('fuzz', 1, 'Fuzzed input');
const COUNT = scaled(10_000, 400);
const SEED = Number(process.env.HARDENING_SEED ?? (FULL ? Date.now() % 2_147_483_647 : 20_260_101));
const TOKEN = fakeJwt({ sub: '7', role: 'fuzz' });
let h: Harness;
const agent = keepAliveAgent(8);

before(async () => {
  h = await startHarness({ UPSTREAM_TIMEOUT_MS: '3000' });
});
after(async () => {
  agent.destroy();
  await h.close();
  figures.write();
});

/** Values that have broken path and query handling elsewhere (already percent-encoded where needed). */
const NASTY_ENCODED = [
  '%00',
  'a%00b',
  '%C0%AE%C0%AE',
  '%C0%AF',
  '%E0%80%AE',
  '%ED%A0%80',
  '%FF%FE',
  '%E2%80%AE%E2%80%AD',
  '%F0%9F%98%80%F0%9F%92%A9',
  '%D8%A7%D9%84%D8%B9%D8%B1%D8%A8%D9%8A%D8%A9',
  '..',
  '%2e%2e',
  '%2F',
  'a%2fb',
  '%5c',
  '%25',
  '%ZZ',
  '%',
  '%EF%BC%8E%EF%BC%8E',
  '__proto__',
  'constructor',
  'prototype',
  '-1',
  '1e309',
  'NaN',
  'null',
  '0x1f',
  '%27%20OR%201%3D1--',
  '%3Cscript%3E',
  '%0d%0aX-Injected:%201',
  'x'.repeat(300),
];

const encodedString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_ENCODED) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 24 }).map((s) => encodeURIComponent(s)) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 20 }).map((n) => `%F0%9F%98%80`.repeat(n)) },
);

function paramArb(rc: RouteCase, name: string): fc.Arbitrary<string> {
  const schema = fieldSchema(rc.route.params, name) ?? { type: 'string', pattern: '^[a-z0-9]{1,12}$' };
  return fc.oneof(
    { weight: 2, arbitrary: schemaArb(schema).map((v) => encodeURIComponent(String(v))) },
    { weight: 3, arbitrary: encodedString },
  );
}

const QUERY_ATTACKS = [
  '__proto__[polluted]=1',
  'constructor[prototype][polluted]=1',
  '__proto__=x',
  'a[__proto__][polluted]=1',
  'toString=1&valueOf=2&hasOwnProperty=3',
  'page=1&page=2&page=3',
  'page[]=1',
  '%00=%00',
  '=',
  '&&&',
  'a=%E2%80%AE%F0%9F%98%80',
];

function queryArb(rc: RouteCase): fc.Arbitrary<string> {
  const valid = rc.route.querystring ? schemaArb(rc.route.querystring) : fc.constant({});
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant('') },
    { weight: 3, arbitrary: valid.map(encodeQuery) },
    {
      weight: 2,
      arbitrary: fc.tuple(valid, encodedString).map(([q, bad]) => {
        const keys = Object.keys((q ?? {}) as object);
        const text = encodeQuery(q);
        if (keys.length === 0) return `?q=${bad}`;
        const key = keys[bad.length % keys.length] as string;
        return `${text.replace(new RegExp(`${encodeURIComponent(key)}=[^&]*`), `${encodeURIComponent(key)}=${bad}`)}`;
      }),
    },
    { weight: 2, arbitrary: fc.constantFrom(...QUERY_ATTACKS).map((q) => `?${q}`) },
    {
      weight: 1,
      arbitrary: fc.dictionary(fc.stringMatching(/^[a-z_]{1,8}$/), encodedString, { maxKeys: 4 }).map(
        (d) =>
          `?${Object.entries(d)
            .map(([k, v]) => `${k}=${v}`)
            .join('&')}`,
      ),
    },
    { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 12_000 }).map((n) => `?search=${'z'.repeat(n)}`) },
  );
}

/** A body recipe: made when sent, so that 10,000 samples never hold megabytes each. */
interface BodyRecipe {
  kind: string;
  make: () => Buffer | undefined;
}

const text = (kind: string, value: string): BodyRecipe => ({ kind, make: () => Buffer.from(value) });

function nested(depth: number, object: boolean): string {
  return object ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}` : `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

const PROTO_TEXTS = [
  '{"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"a":{"__proto__":{"polluted":"yes"}}}',
  '{"__proto__":null}',
  '[{"__proto__":{"polluted":"yes"}}]',
  '{"\\u005f_proto__":{"polluted":"yes"}}',
  '{"prototype":{"polluted":"yes"},"constructor":"x"}',
];

function jsonBodyArb(rc: RouteCase): fc.Arbitrary<BodyRecipe> {
  const valid = rc.route.body ? schemaArb(rc.route.body) : fc.constant({});
  const asObject = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? { ...(v as object) } : {});
  return fc.oneof(
    { weight: 4, arbitrary: valid.map((v) => text('valid', JSON.stringify(v))) },
    {
      weight: 2,
      arbitrary: fc.tuple(valid, fc.nat()).map(([v, i]) => {
        const o = asObject(v);
        const keys = Object.keys(o);
        if (keys.length > 0) delete o[keys[i % keys.length] as string];
        return text('missing field', JSON.stringify(o));
      }),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(valid, fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }))
        .map(([v, extra]) => text('extra fields', JSON.stringify({ ...asObject(v), ...extra }))),
    },
    {
      weight: 3,
      arbitrary: fc.tuple(valid, fc.nat(), fc.jsonValue({ maxDepth: 3 })).map(([v, i, wrong]) => {
        const o = asObject(v);
        const keys = Object.keys(o);
        o[keys.length > 0 ? (keys[i % keys.length] as string) : 'x'] = wrong;
        return text('wrong type', JSON.stringify(o));
      }),
    },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => text('any JSON', JSON.stringify(v) ?? 'null')) },
    {
      weight: 1,
      arbitrary: fc.tuple(valid, fc.constantFrom(10_000, 300_000, 1_100_000)).map(([v, n]) => {
        const o = asObject(v);
        const key = Object.keys(o)[0] ?? 'x';
        return { kind: `huge string ${n}`, make: () => Buffer.from(JSON.stringify({ ...o, [key]: 'x'.repeat(n) })) };
      }),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom(64, 1_000, 10_000, 100_000), fc.boolean()).map(([d, o]) => ({
        kind: `deep nesting ${d}`,
        make: () => Buffer.from(nested(d, o)),
      })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(valid, fc.constantFrom(64, 5_000)).map(([v, d]) => {
        const o = asObject(v);
        const key = Object.keys(o)[0] ?? 'x';
        return { kind: `deep field ${d}`, make: () => Buffer.from(JSON.stringify(o).replace(/^\{/, `{"${key}":${nested(d, true)},`)) };
      }),
    },
    { weight: 2, arbitrary: fc.constantFrom(...PROTO_TEXTS).map((t) => text('prototype keys', t)) },
    {
      weight: 2,
      arbitrary: valid.map((v) => {
        const inner = JSON.stringify(asObject(v)).slice(1, -1);
        return text(
          'valid + __proto__',
          `{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}${inner ? `,${inner}` : ''}}`,
        );
      }),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        {
          kind: 'overlong UTF-8',
          make: () =>
            Buffer.concat([Buffer.from('{"login":"'), Buffer.from([0xc0, 0xae, 0xc0, 0xaf, 0xe0, 0x80, 0xae]), Buffer.from('"}')]),
        },
        { kind: 'invalid UTF-8', make: () => Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xed, 0xa0, 0x80, 0x22, 0x7d]) },
        { kind: 'UTF-16 JSON', make: () => Buffer.from('{"a":"b"}', 'utf16le') },
        { kind: 'BOM + JSON', make: () => Buffer.from('\ufeff{"a":"b"}') },
        { kind: 'NUL bytes', make: () => Buffer.from('{"a":"\u0000\u0000"}\u0000') },
        { kind: 'RTL and emoji', make: () => Buffer.from('{"login":"\u202eevil\u202d😀👩‍👩‍👧","password":"\u200f"}') },
        { kind: 'truncated JSON', make: () => Buffer.from('{"login":"a","password":') },
        { kind: 'trailing garbage', make: () => Buffer.from('{"a":1}garbage') },
        { kind: 'two documents', make: () => Buffer.from('{"a":1}{"a":2}') },
        { kind: 'lone surrogate escape', make: () => Buffer.from('{"login":"\\ud800","password":"\\udfff"}') },
        { kind: 'duplicate keys', make: () => Buffer.from('{"login":"a","login":{"$gt":""},"password":"b","password":["x"]}') },
        { kind: 'number edge cases', make: () => Buffer.from('{"a":1e400,"b":-0,"c":123456789012345678901234567890}') },
        { kind: 'empty', make: () => Buffer.alloc(0) },
        { kind: 'whitespace', make: () => Buffer.from('   \r\n\t  ') },
      ),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 256 }).map((bytes) => ({ kind: 'random bytes', make: () => Buffer.from(bytes) })) },
  );
}

function multipartArb(): fc.Arbitrary<{ body: BodyRecipe; contentType?: string }> {
  return fc.oneof(
    fc.constantFrom('selfie', '../../etc/passwd', '%2e%2e', 'document-front', '').map((endpoint) => {
      const { body, contentType } = multipartBody(
        { endpoint },
        { name: '../../x.png', type: 'image/png', data: Buffer.from('89504e47', 'hex') },
      );
      return { body: { kind: 'multipart', make: () => body }, contentType };
    }),
    fc.constant({ body: text('multipart without boundary', '--x\r\n\r\n--x--'), contentType: 'multipart/form-data' }),
    fc.constant({
      body: text('multipart broken', '--zzz\r\nContent-Disposition: form-data; name="file"\r\n\r\nabc'),
      contentType: 'multipart/form-data; boundary=zzz',
    }),
    fc.constant({
      body: { kind: 'multipart no file', make: () => multipartBody({ endpoint: 'selfie' }).body },
      contentType: 'multipart/form-data; boundary=x',
    }),
  );
}

const CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/json; charset=utf-16',
  'application/vnd.api+json',
  'application/jsonx',
  'application/json, text/plain',
  ';',
  'x'.repeat(2_000),
];

interface FuzzRequest {
  caseIndex: number;
  path: string;
  contentType?: string;
  cookie?: string;
  body?: BodyRecipe;
}

function requestArb(rc: RouteCase, caseIndex: number): fc.Arbitrary<FuzzRequest> {
  const params: Record<string, fc.Arbitrary<string>> = {};
  for (const name of rc.params) params[name] = paramArb(rc, name);
  const wildcard = fc
    .array(fc.oneof(encodedString, fc.constantFrom('events', '1', 'a.b', 'x_y')), { minLength: 1, maxLength: 4 })
    .map((s) => s.join('/'));
  const hasBody = rc.stateChanging;
  const body: fc.Arbitrary<{ body?: BodyRecipe; contentType?: string }> = !hasBody
    ? fc.oneof(
        { weight: 9, arbitrary: fc.constant({}) },
        { weight: 1, arbitrary: jsonBodyArb(rc).map((b) => ({ body: b, contentType: 'application/json' })) },
      )
    : rc.multipart
      ? fc.oneof(
          { weight: 4, arbitrary: multipartArb() },
          { weight: 1, arbitrary: jsonBodyArb(rc).map((b) => ({ body: b, contentType: 'application/json' })) },
        )
      : fc
          .tuple(
            jsonBodyArb(rc),
            fc.oneof(
              { weight: 12, arbitrary: fc.constant('application/json') },
              { weight: 1, arbitrary: fc.constant(undefined) },
              { weight: 6, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
            ),
          )
          .map(([b, t]) => ({
            body: b,
            ...(t === undefined ? {} : { contentType: t }),
          }));
  const cookie = fc.oneof(
    { weight: 17, arbitrary: fc.constant(h.cookie(TOKEN)) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(h.cookie(''), h.cookie('%00'), `${h.cookie('a')}; ${h.cookie('b')}`, h.cookie('x'.repeat(4_000))),
    },
  );
  return fc.record({ values: fc.record(params), wildcard, query: queryArb(rc), body, cookie }).map((r) => ({
    caseIndex,
    path: `${fillPath(rc, r.values, r.wildcard)}${r.query}`,
    ...r.body,
    ...(r.cookie === undefined ? {} : { cookie: r.cookie }),
  }));
}

test(`row 1: ${COUNT} fuzzed requests across every active route: no crash, only documented statuses, no upstream call for a refused request, no prototype pollution`, async () => {
  await figures.run('fuzz', async () => {
    const cases = h.cases;
    const protoBefore = Object.getOwnPropertyNames(Object.prototype).sort().join(',');
    const arb = fc.oneof(...cases.map((rc, i) => requestArb(rc, i)));
    const perRoute = new Map<string, number>();
    const kinds = new Map<string, number>();
    let profileReadsForRejected = 0;
    let n = 0;
    const CHUNK = 250;
    for (let start = 0; start < COUNT; start += CHUNK) {
      const batch = fc.sample(arb, { numRuns: Math.min(CHUNK, COUNT - start), seed: SEED + start });
      const jobs = batch.map((req) => async () => {
        const rc = cases[req.caseIndex] as RouteCase;
        const rid = `fz-${n++}`;
        const headers: Record<string, string> = { 'x-request-id': rid };
        if (req.cookie !== undefined) headers.cookie = req.cookie;
        if (req.contentType !== undefined) headers['content-type'] = req.contentType;
        const body = req.body?.make();
        const res = await rawRequest(h.base, { method: rc.method, path: req.path, headers, body, agent, timeoutMs: 10_000 });
        figures.inputs++;
        perRoute.set(rc.label, (perRoute.get(rc.label) ?? 0) + 1);
        if (req.body) kinds.set(req.body.kind, (kinds.get(req.body.kind) ?? 0) + 1);
        figures.status(res.status || res.error || 'no answer');
        const where = `${rc.label} ${req.path.slice(0, 120)} [${req.contentType ?? 'no type'}; ${req.body?.kind ?? 'no body'}]`;
        if (res.status === -1) return; // a request node:http itself refuses to send
        if (!figures.check(res.status > 0, `${where}: no answer (${res.error})`)) return;
        if (!documentedStatuses(rc).has(res.status)) {
          const logged = h.proxy.logs.lines
            .filter((l) => l.includes(`"reqId":"${rid}"`) && /"level":"error"/.test(l))
            .map((l) => l.slice(0, 600));
          figures.fail(
            `${where}: undocumented status ${res.status} ${res.body.toString('utf8').slice(0, 160)} ${logged.join(' ')} body=${body?.toString('utf8').slice(0, 200)}`,
          );
        }
        if (res.status >= 400) {
          // The upstream answers 200: every error is the proxy's own, in the envelope of spec 7.4.
          const json = jsonOf(res.body) as Record<string, unknown> | undefined;
          const enveloped =
            (json?.ok === false && typeof json.error === 'string' && typeof json.detail === 'string') ||
            // The gate's own 401s (docs/behaviour.md "Which routes need a session"): no cookie, or one that is not a well-formed JWT.
            (res.status === 401 && (json?.reason === 'no_token' || json?.reason === 'invalid_token'));
          figures.check(enveloped, `${where}: ${res.status} without the envelope: ${res.body.toString('utf8').slice(0, 160)}`);
        }
        if (res.status >= 400 && res.status < 500) {
          const calls = h.upstream.byRid.get(rid) ?? [];
          const forwarded = calls.filter((s) => !(s.method === 'GET' && s.path.endsWith('/auth/user-profile')));
          profileReadsForRejected += calls.length - forwarded.length;
          figures.upstreamCallsForRejected += forwarded.length;
          figures.check(
            forwarded.length === 0,
            `${where}: ${res.status} but ${forwarded.length} upstream call(s): ${forwarded.map((s) => `${s.method} ${s.path}`).join(', ')}`,
          );
        }
      });
      await runPool(jobs, 8);
      h.upstream.clearSeen();
    }
    const polluted = ({} as Record<string, unknown>).polluted;
    figures.check(polluted === undefined, `({}).polluted is ${String(polluted)}`);
    figures.check(Object.getOwnPropertyNames(Object.prototype).sort().join(',') === protoBefore, 'Object.prototype gained properties');
    figures.check(h.crashes.length === 0, `uncaught errors: ${h.crashes.slice(0, 3).join('; ')}`);
    const after = await rawRequest(h.base, { method: 'GET', path: '/api/version', agent });
    figures.check(after.status === 200, `the proxy still answers after the run: ${after.status}`);
    const untouched = cases.filter((rc) => !perRoute.has(rc.label)).map((rc) => rc.label);
    figures.check(untouched.length === 0 || !FULL, `routes never fuzzed: ${untouched.join(', ')}`);
    figures.note(`seed ${SEED}; ${cases.length} route cases, ${perRoute.size} fuzzed; ${kinds.size} body kinds`);
    figures.note(`profile reads (the session lookup, no input) during refused requests: ${profileReadsForRejected}`);
    figures.note(`({}).polluted: ${String(polluted)}`);
  });
  assert.equal(figures.failureCount, 0, figures.summary());
});
