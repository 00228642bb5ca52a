// The doctor's pure parts (src/doctor/probes.ts, checks.ts), table-driven: the probe table against the EP
// registry and the route tables both ways, and the judgement of answers (docs/behaviour.md "Upstream answers").
import assert from 'node:assert/strict';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, test } from 'node:test';
import { dedupeFindings, judgeAnswer, type RawAnswer, verdictOf } from '../src/doctor/checks.js';
import { scrubText } from '../src/doctor/scrub.js';
import { PROBES, type Probe, UNPROBED } from '../src/doctor/probes.js';
import { ENDPOINT_LIST, endpointCodeFor } from '../src/errors/index.js';
import { allRouteTables } from '../src/routes/index.js';
import { buildPath } from '../src/upstream/paths.js';
import { sampleProfile } from './helpers/doctor-samples.js';

const sample = (probe: Probe): string =>
  buildPath(
    probe.path,
    Object.fromEntries(Object.entries(probe.params ?? {}).map(([k, v]) => [k, typeof v === 'string' ? v : v.fallback])),
  );

describe('the probe table', () => {
  test("each probe's path is matched by the EP registry to the probe's own code", () => {
    for (const probe of PROBES) assert.equal(endpointCodeFor(probe.method, sample(probe)), probe.code, `${probe.method} ${probe.path}`);
  });

  test('every BFF endpoint of the registry (EP0001-EP0699) has a probe or a reason why not', () => {
    const bffCodes = ENDPOINT_LIST.filter((e) => e.group !== 'internal' && e.group !== 'unrecognised').map((e) => e.code);
    const covered = new Set([...PROBES.map((p) => p.code), ...Object.keys(UNPROBED)]);
    assert.deepEqual(
      bffCodes.filter((c) => !covered.has(c)),
      [],
    );
    assert.ok(bffCodes.length > 90, `${bffCodes.length} BFF endpoints`);
  });

  test('every BFF call of the route tables is probed as the kind of call it is', () => {
    const problems: string[] = [];
    for (const route of allRouteTables.flat()) {
      for (const up of route.upstream) {
        if (up.service !== 'bff' || up.path.includes('{subPath}')) continue;
        const code = endpointCodeFor(up.method, up.path.replace(/\{[^}]+\}/g, 'x'));
        const probes = PROBES.filter((p) => p.code === code && p.method === up.method);
        if (probes.length === 0) problems.push(`${up.method} ${up.path} (${code}, ${route.url}): no probe`);
        // A side-effect GET of the route tables is never probed as a read (docs/behaviour.md "CSRF defence").
        if (route.sideEffects && up.method === 'GET' && probes.some((p) => p.kind === 'read' && p.path === up.path)) {
          problems.push(`${up.method} ${up.path}: a side-effect GET probed as a read`);
        }
        // A mutation is never probed as a read, except the reads the BFF takes as POST (listed here).
        const postReads = [
          '/auth/user-profile',
          '/documents/validate',
          '/apicep',
          '/users/list-referrals',
          '/bff/transactions',
          '/pix-keys/user-key',
        ];
        if (up.method !== 'GET' && probes.some((p) => p.kind === 'read') && !postReads.includes(up.path)) {
          problems.push(`${up.method} ${up.path}: a mutation probed as a read`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  test('the side-effect GETs of docs/behaviour.md "Upstream answers" (game start, sports launch, partner and support-desk tokens, KYC start) are never reads', () => {
    for (const path of [
      '/start-game-v2',
      '/core-sportbook/launch',
      '/sportsbook-partner-a/get-jwt',
      '/sportsbook-partner-b/token',
      '/bff/users/support-desk/create-or-update-user',
      '/bff/users/kyc',
    ]) {
      const probe = PROBES.find((p) => p.path === path);
      assert.equal(probe?.kind, 'side-effect', path);
    }
    for (const probe of PROBES.filter((p) => p.kind === 'money')) assert.ok(probe.session, probe.path);
  });
});

const profileProbe = PROBES.find((p) => p.code === 'EP0003') as Probe;
const listProbe = PROBES.find((p) => p.code === 'EP0143') as Probe;
const receiptProbe = PROBES.find((p) => p.code === 'EP0074') as Probe;
const optionalProbe = PROBES.find((p) => p.code === 'EP0200') as Probe;
const LIMIT = 64 * 1024;
const URL_OF = 'http://bff.test/casino-games/list';

const json = (value: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }, status = 200): RawAnswer => ({
  status,
  headers,
  body: Buffer.from(JSON.stringify(value)),
  overLimit: false,
});

const { user, userInfo, userWithoutId } = sampleProfile(1);

interface Case {
  name: string;
  probe: Probe;
  answer: RawAnswer;
  verdict: 'pass' | 'warn' | 'fail';
  /** A finding whose text matches. */
  says?: RegExp;
}

const CASES: Case[] = [
  { name: 'a JSON success', probe: listProbe, answer: json({ data: [] }), verdict: 'pass' },
  {
    name: 'a UTF-8 byte-order mark is ignored',
    probe: listProbe,
    answer: { ...json({}), body: Buffer.from('\uFEFF{"data":[]}') },
    verdict: 'pass',
  },
  {
    name: 'gzip although identity was asked',
    probe: listProbe,
    answer: { ...json({}), headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync('{"data":[]}') },
    verdict: 'warn',
    says: /Content-Encoding gzip although/,
  },
  {
    name: 'deflate',
    probe: listProbe,
    answer: { ...json({}), headers: { 'content-type': 'application/json', 'content-encoding': 'deflate' }, body: deflateSync('{}') },
    verdict: 'warn',
    says: /deflate/,
  },
  {
    name: 'br',
    probe: listProbe,
    answer: { ...json({}), headers: { 'content-type': 'application/json', 'content-encoding': 'br' }, body: brotliCompressSync('{}') },
    verdict: 'warn',
    says: /br although/,
  },
  {
    name: 'an unknown coding',
    probe: listProbe,
    answer: { ...json({}), headers: { 'content-encoding': 'compress' } },
    verdict: 'fail',
    says: /compress: a coding the proxy cannot decode \(502 upstream_bad_response\)/,
  },
  {
    name: 'gzip that is not gzip',
    probe: listProbe,
    answer: { ...json({}), headers: { 'content-encoding': 'gzip' } },
    verdict: 'fail',
    says: /not valid gzip data/,
  },
  {
    name: 'a small gzip body that inflates past the limit',
    probe: listProbe,
    answer: { ...json({}), headers: { 'content-encoding': 'gzip' }, body: gzipSync(Buffer.alloc(LIMIT * 4, 32)) },
    verdict: 'fail',
    says: /inflates past 65536 bytes \(502 upstream_response_too_large\)/,
  },
  {
    name: 'an answer over the limit',
    probe: listProbe,
    answer: { ...json({}), overLimit: true },
    verdict: 'fail',
    says: /over 65536 bytes: the proxy answers 502 upstream_response_too_large/,
  },
  {
    name: 'an HTML page',
    probe: listProbe,
    answer: { status: 200, headers: { 'content-type': 'text/html' }, body: Buffer.from('<html>maintenance</html>'), overLimit: false },
    verdict: 'fail',
    says: /^the body is an HTML page \(24 bytes\) \(Content-Type text\/html\)/,
  },
  {
    name: 'HTML without its media type',
    probe: listProbe,
    answer: { status: 200, headers: { 'content-type': 'text/plain' }, body: Buffer.from('<!DOCTYPE html><p>x</p>'), overLimit: false },
    verdict: 'fail',
    says: /^the body is an HTML page \(23 bytes\) \(Content-Type text\/plain\)/,
  },
  {
    name: 'plain text that is not HTML',
    probe: listProbe,
    answer: { status: 200, headers: { 'content-type': 'text/plain' }, body: Buffer.from('ok'), overLimit: false },
    verdict: 'fail',
    says: /^the body is not JSON \(Content-Type text\/plain\)/,
  },
  {
    name: 'an HTML error page is described, not quoted',
    probe: listProbe,
    answer: {
      status: 502,
      headers: { 'content-type': 'text/html' },
      body: Buffer.from('<html><title>Bad gateway</title></html>'),
      overLimit: false,
    },
    verdict: 'fail',
    says: /^a server error 502 with an HTML page \(39 bytes\) \(EP0143-EM\d{4}\)$/,
  },
  {
    name: 'a JWT in a reason is not quoted',
    probe: listProbe,
    answer: json({ reason: 'bad eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI3In0.c2ln' }, undefined, 400),
    verdict: 'fail',
    says: /^400 with reason "bad \[redacted JWT\]"/,
  },
  {
    name: 'JSON labelled text/plain',
    probe: listProbe,
    answer: json({ data: [] }, { 'content-type': 'text/plain' }),
    verdict: 'warn',
    says: /Content-Type text\/plain on a JSON body/,
  },
  {
    name: 'application/problem+json is JSON',
    probe: listProbe,
    answer: json({}, { 'content-type': 'application/problem+json' }),
    verdict: 'pass',
  },
  {
    name: 'an empty success where the body is not needed',
    probe: listProbe,
    answer: { status: 200, headers: {}, body: Buffer.alloc(0), overLimit: false },
    verdict: 'pass',
  },
  {
    name: 'an empty profile',
    probe: profileProbe,
    answer: { status: 200, headers: {}, body: Buffer.alloc(0), overLimit: false },
    verdict: 'fail',
    says: /empty answer where the proxy needs the body/,
  },
  { name: 'a whole profile', probe: profileProbe, answer: json({ user, userInfo }), verdict: 'pass' },
  {
    name: 'a profile without user.id',
    probe: profileProbe,
    answer: json({ user: userWithoutId, userInfo }),
    verdict: 'fail',
    says: /^user\.id: missing$/,
  },
  {
    name: 'a profile whose user.id is a string',
    probe: profileProbe,
    answer: json({ user: { ...user, id: '1' }, userInfo }),
    verdict: 'fail',
    says: /^user\.id: expected number, got string$/,
  },
  {
    name: 'extra fields are noted, not failed',
    probe: profileProbe,
    answer: json({ user: { ...user, nickname: 'x' }, userInfo, extra: 1 }),
    verdict: 'pass',
    says: /not name \(kept as they are\): user\.\*, \*$/,
  },
  {
    name: 'a redirect',
    probe: listProbe,
    answer: { status: 302, headers: { location: '/login' }, body: Buffer.alloc(0), overLimit: false },
    verdict: 'fail',
    says: /502 upstream_redirect/,
  },
  {
    name: 'a 401 whose reason the EM table maps',
    probe: profileProbe,
    answer: json({ reason: 'token_expired' }, undefined, 401),
    verdict: 'fail',
    says: /401 with reason "token_expired" \(EP0003-EM0003/,
  },
  {
    name: 'a 401 with an unmapped reason',
    probe: profileProbe,
    answer: json({ reason: 'mystery_reason' }, undefined, 401),
    verdict: 'fail',
    says: /no 401 row of the EM table maps \(EP0003-EM0005\)/,
  },
  { name: 'a 404 for a made-up id', probe: receiptProbe, answer: json({ reason: 'not_found' }, undefined, 404), verdict: 'pass' },
  {
    name: 'the receipt as a PDF',
    probe: receiptProbe,
    answer: { status: 200, headers: { 'content-type': 'application/pdf' }, body: Buffer.from('%PDF-1.4'), overLimit: false },
    verdict: 'pass',
  },
  {
    name: 'a 404 of an optional endpoint',
    probe: optionalProbe,
    answer: json({}, undefined, 404),
    verdict: 'pass',
    says: /does not offer it/,
  },
  {
    name: 'a 404 of a required read',
    probe: listProbe,
    answer: json({ message: 'Not Found' }, undefined, 404),
    verdict: 'fail',
    says: /the probe expects a success/,
  },
  { name: 'a 503', probe: listProbe, answer: json({ error: 'maintenance' }, undefined, 503), verdict: 'fail', says: /server error 503/ },
];

describe('judging an answer', () => {
  for (const c of CASES) {
    test(c.name, () => {
      const { findings } = judgeAnswer(c.probe, c.answer, LIMIT, URL_OF.replace('/casino-games/list', c.probe.path));
      assert.equal(verdictOf(findings), c.verdict, JSON.stringify(findings));
      if (c.says)
        assert.ok(
          findings.some((f) => c.says?.test(f.text)),
          `${c.says} in ${JSON.stringify(findings)}`,
        );
    });
  }
});

describe('one finding per field', () => {
  const f = (level: 'fail' | 'warn' | 'note', text: string) => ({ level, text });
  const table: [string, ReturnType<typeof f>[], ReturnType<typeof f>[]][] = [
    [
      'the shape check and the session check on user.id: the one that says why',
      [f('fail', 'user.id: missing'), f('fail', 'user.id: missing; the proxy needs it')],
      [f('fail', 'user.id: missing; the proxy needs it')],
    ],
    [
      'the worst level wins, at the place of the first',
      [f('note', 'a: x'), f('fail', 'b: y'), f('fail', 'a: shorter')],
      [f('fail', 'a: shorter'), f('fail', 'b: y')],
    ],
    [
      'identical texts without a field: once',
      [f('warn', 'Content-Encoding gzip although'), f('warn', 'Content-Encoding gzip although')],
      [f('warn', 'Content-Encoding gzip although')],
    ],
    [
      'different fields stay',
      [f('fail', 'user.id: missing'), f('fail', 'user.email: missing')],
      [f('fail', 'user.id: missing'), f('fail', 'user.email: missing')],
    ],
  ];
  for (const [name, input, expected] of table) test(name, () => assert.deepEqual(dedupeFindings(input), expected));
});

describe('scrubbing what the doctor writes', () => {
  const table: [string, string, string | undefined, string][] = [
    ['the password as given', 'bad password Demo#2026 here', 'Demo#2026', 'bad password [redacted] here'],
    ['the password escaped inside JSON', '{"password":"a\\"b\\\\c"}', 'a"b\\c', '{"password":"[redacted]"}'],
    ['the password percent-encoded', 'login=x&password=a%20b%26', 'a b&', 'login=x&password=[redacted]'],
    ['a JWS', 'token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI3In0.c2ln-x_y rejected', undefined, 'token [redacted JWT] rejected'],
    ['a JWT without signature', 'eyJhbGciOiJub25lIn0.eyJzdWIiOiI3In0.', undefined, '[redacted JWT]'],
    ['nothing to take out', 'user.id: missing', 'Demo#2026', 'user.id: missing'],
    ['no password given', 'Demo#2026', undefined, 'Demo#2026'],
  ];
  for (const [name, text, password, expected] of table) test(name, () => assert.equal(scrubText(text, [password]), expected));
  test('a reason that echoes the password is scrubbed before it is cut to 80 characters', () => {
    const password = `pw-${'x'.repeat(70)}-end`;
    const { findings } = judgeAnswer(
      listProbe,
      json({ reason: `invalid body: {"login":"qa@example.com","password":"${password}"}` }, undefined, 422),
      LIMIT,
      URL_OF,
      [password],
    );
    assert.ok(
      findings.every((f) => !f.text.includes('xxxxx')),
      JSON.stringify(findings),
    );
    assert.match(findings[0]?.text ?? '', /"password":"\[redacted\]"/);
  });
});
