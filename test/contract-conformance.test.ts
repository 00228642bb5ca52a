// The judgement of upstream answers shared by the doctor and the live contract checks
// (src/contracts/conformance.ts), table-driven: each kind, paths with arrays, unions, no value ever.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type TSchema, Type } from '@sinclair/typebox';
import { ProfileAnswer } from '../src/contracts/answers.js';
import {
  checkAnswerBody,
  checkAnswerShape,
  type ContractFinding,
  contractFindingText,
  findingPath,
  MAX_EXTRA_FINDINGS,
  MAX_SHAPE_FINDINGS,
} from '../src/contracts/conformance.js';
import { UPSTREAM_ANSWER_EXPECTATIONS, UpstreamLoginResponse } from '../src/contracts/upstream-answers.js';
import { sampleProfile as samples } from './helpers/doctor-samples.js';

const sampleProfile = () => {
  const { user, userInfo } = samples(7);
  return { user, userInfo };
};

const Game = Type.Object({ slug: Type.String(), id: Type.Number() }, { additionalProperties: true });
const Page = Type.Object({
  data: Type.Array(Game),
  total: Type.Integer(),
  status: Type.Union([Type.Literal('open'), Type.Literal('closed')]),
});
const page = (over: Record<string, unknown> = {}) => ({
  data: [
    { slug: 'a', id: 1 },
    { slug: 'b', id: 2 },
  ],
  total: 2,
  status: 'open',
  ...over,
});

const brief = (findings: ContractFinding[]) => findings.map((f) => `${f.kind} ${f.path}`);

describe('checkAnswerShape', () => {
  const rows: { name: string; schema: typeof Page | typeof ProfileAnswer; value: unknown; want: string[] }[] = [
    { name: 'a conforming answer', schema: Page, value: page(), want: [] },
    { name: 'a missing field', schema: Page, value: { data: [], status: 'open' }, want: ['missing total'] },
    { name: 'a wrong type', schema: Page, value: page({ total: '2' }), want: ['type total'] },
    { name: 'an integer that is not one', schema: Page, value: page({ total: 2.5 }), want: ['type total'] },
    { name: 'an unknown enum value', schema: Page, value: page({ status: 'paused' }), want: ['enum status'] },
    { name: 'an enum field of another type is a type finding', schema: Page, value: page({ status: 3 }), want: ['type status'] },
    {
      name: 'a field inside array items, named with []',
      schema: Page,
      value: page({ data: [{ slug: 'a', id: 1 }, { id: 2 }] }),
      want: ['missing data[].slug'],
    },
    {
      name: 'the same path in several items is one finding',
      schema: Page,
      value: page({ data: [{ id: 1 }, { id: 2 }] }),
      want: ['missing data[].slug'],
    },
    {
      name: 'an extra field, at the top and inside items',
      schema: Page,
      value: page({ more: 1, data: [{ slug: 'a', id: 1, rank: 3 }] }),
      want: ['extra data[].*', 'extra *'],
    },
    {
      name: 'a key the schema does not name is written *, whatever it looks like',
      schema: Page,
      value: page({ '12345': true, 'a@b.example': 1, nickname: 2 }),
      want: ['extra *'],
    },
    { name: 'the whole body of another type', schema: Page, value: [1, 2], want: ['type (body)'] },
    {
      name: 'a nullable field of a third type',
      schema: ProfileAnswer,
      value: { ...sampleProfile(), user: { ...sampleProfile().user, ftd_date: 5 } },
      want: ['type user.ftd_date'],
    },
  ];
  for (const row of rows) {
    test(row.name, () => {
      assert.deepEqual(brief(checkAnswerShape(row.schema, row.value)), row.want);
    });
  }

  test('extra fields of array items are walked when the items schema names its fields', () => {
    const Closed = Type.Object({ data: Type.Array(Type.Object({ slug: Type.String() })) });
    assert.deepEqual(
      brief(
        checkAnswerShape(Closed, {
          data: [
            { slug: 'a', rank: 1 },
            { slug: 'b', rank: 2 },
          ],
        }),
      ),
      ['extra data[].*'],
    );
  });

  test('a union is judged against the branch the value comes closest to', () => {
    // the no-session branch of LoginResponse with a `type` the specification does not list
    assert.deepEqual(brief(checkAnswerShape(UpstreamLoginResponse, { type: 'captcha_required' })), ['enum type']);
    assert.deepEqual(brief(checkAnswerShape(UpstreamLoginResponse, { type: 'two_factor_code' })), []);
  });

  test('a finding says what the schema expects and the JSON type found, never a value', () => {
    const canary = 'CANARY-5be1';
    const value = { ...sampleProfile(), user: { ...sampleProfile().user, id: canary, email: 42, 'x@canary.example': canary } };
    const findings = checkAnswerShape(ProfileAnswer, value);
    assert.deepEqual(
      findings.find((f) => f.path === 'user.id'),
      { path: 'user.id', kind: 'type', expected: 'number', got: 'string' },
    );
    assert.ok(findings.some((f) => f.kind === 'extra' && f.path === 'user.*'));
    const text = JSON.stringify(findings) + findings.map(contractFindingText).join('\n');
    assert.ok(!text.includes('CANARY'), text);
  });

  test('at most MAX_SHAPE_FINDINGS errors and MAX_EXTRA_FINDINGS extras', () => {
    const Wide = Type.Object(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}`, Type.String()])));
    const Nested = Type.Object({
      bad: Wide,
      ...Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`o${i}`, Type.Object({ a: Type.Optional(Type.String()) })])),
    });
    const extras = { bad: {}, ...Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`o${i}`, { x: 1 }])) };
    const findings = checkAnswerShape(Nested, extras);
    assert.equal(findings.filter((f) => f.kind === 'missing').length, MAX_SHAPE_FINDINGS);
    assert.equal(findings.filter((f) => f.kind === 'extra').length, MAX_EXTRA_FINDINGS);
  });
});

describe('findingPath', () => {
  const Shape = Type.Object({
    user: Type.Object({ id: Type.Integer() }),
    data: Type.Array(Type.Object({ slug: Type.String() })),
    balances: Type.Record(Type.String(), Type.Object({ amount: Type.Integer() })),
    'a/b': Type.Object({ c: Type.Integer() }),
  });
  const rows: [string, unknown, TSchema, string][] = [
    ['', {}, Shape, '(body)'],
    ['/user/id', { user: { id: 'x' } }, Shape, 'user.id'],
    ['/data/3/slug', { data: [0, 0, 0, { slug: 1 }] }, Shape, 'data[].slug'],
    ['/0/a', [{ a: 1 }], Type.Array(Type.Object({ a: Type.String() })), '[].a'],
    ['/a~1b/c', { 'a/b': { c: 'x' } }, Shape, 'a/b.c'],
    ['/m/x~0y', { m: {} }, Shape, '*.*'],
    // A key the schema does not name is `*`, however field-like it looks: it may be a value.
    [
      '/balances/a972f868f6b7acda67119809215552f2/amount',
      { balances: { a972f868f6b7acda67119809215552f2: { amount: 'x' } } },
      Shape,
      'balances.*.amount',
    ],
    ['/user/eyJhbGciOiJIUzI1NiJ9SECRETTOKEN', { user: {} }, Shape, 'user.*'],
  ];
  for (const [pointer, value, schema, want] of rows) {
    test(`${pointer || '(root)'} → ${want}`, () => assert.equal(findingPath(pointer, value, schema), want));
  }
});

describe('unknown keys are never named', () => {
  test('extra fields under userInfo with a token-shaped key, a UUID and a JWT-like key are each written *', () => {
    const Profile = Type.Object({ userInfo: Type.Object({ name: Type.String() }) });
    const answer = {
      userInfo: {
        name: 'n',
        a972f868f6b7acda67119809215552f2: 1,
        '0f8fad5b-d9cb-469f-a165-70867728950e': 2,
        eyJhbGciOiJIUzI1NiJ9SECRETTOKEN: 3,
      },
    };
    const findings = checkAnswerShape(Profile, answer);
    assert.deepEqual(brief(findings), ['extra userInfo.*']);
    assert.ok(!JSON.stringify(findings).includes('a972f868'), 'no key of the answer in a finding');
  });
});

describe('checkAnswerBody', () => {
  const profile = UPSTREAM_ANSWER_EXPECTATIONS.EP0003 ?? {};
  const wallet = UPSTREAM_ANSWER_EXPECTATIONS.EP0034 ?? {};
  const rows: { name: string; expectation: typeof profile; body: string; want: string[]; json: boolean }[] = [
    { name: 'an HTML page is not_json', expectation: wallet, body: '<html>maintenance</html>', want: ['not_json (body)'], json: false },
    { name: 'an empty body the proxy needs is not_json', expectation: profile, body: '', want: ['not_json (body)'], json: false },
    { name: 'an empty body the proxy does not need is fine', expectation: wallet, body: '  ', want: [], json: false },
    { name: 'a JSON body with a byte-order mark', expectation: wallet, body: '\uFEFF{"balance":1}', want: [], json: true },
    { name: 'any JSON where no schema is known', expectation: {}, body: '[1,2]', want: [], json: true },
    {
      name: 'a drifted profile',
      expectation: profile,
      body: JSON.stringify({ ...sampleProfile(), user: { ...sampleProfile().user, id: '7' } }),
      want: ['type user.id'],
      json: true,
    },
  ];
  for (const row of rows) {
    test(row.name, () => {
      const { findings, json } = checkAnswerBody(row.expectation, Buffer.from(row.body));
      assert.deepEqual(brief(findings), row.want);
      assert.equal(json, row.json);
    });
  }
});

describe('contractFindingText', () => {
  const rows: [ContractFinding, string][] = [
    [{ path: 'user.id', kind: 'missing', expected: 'number' }, 'user.id: missing'],
    [{ path: 'deposit', kind: 'type', expected: 'array', got: 'string' }, 'deposit: expected array, got string'],
    [{ path: 'type', kind: 'enum', expected: 'one of "a", "b"', got: 'string' }, 'type: expected one of "a", "b", got another string'],
    [{ path: 'more', kind: 'extra' }, 'more: a field the specification does not name (kept as it is)'],
    [{ path: '(body)', kind: 'not_json' }, '(body): not JSON'],
  ];
  for (const [finding, want] of rows) test(finding.kind, () => assert.equal(contractFindingText(finding), want));
});
