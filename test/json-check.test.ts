/**
 * The JSON check over an upstream body's bytes (`src/upstream/json-check.ts`) gives `JSON.parse`'s
 * verdict on the body decoded as UTF-8, exactly: a table of cases, then seeded generated inputs (valid
 * JSON written many ways, and its mutations: truncation, a byte changed, inserted or removed, random
 * bytes, invalid UTF-8) compared with `JSON.parse`; and the 2xx answer made with it (`upstreamSuccessAnswer`)
 * compared with the answer made by decoding and parsing the body.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { badResponse, JSON_CONTENT_TYPE, upstreamSuccessAnswer } from '../src/envelope.js';
import { isJsonBytes, MAX_DEPTH } from '../src/upstream/json-check.js';

/** `JSON.parse`'s verdict on the bytes from `from`, decoded as the check's callers decode them. */
function parses(bytes: Buffer, from = 0): boolean {
  try {
    JSON.parse(bytes.toString('utf8', from));
    return true;
  } catch {
    return false;
  }
}

const deep = (depth: number, inner = '1') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}null${'}'.repeat(depth)}`;

const CASES: readonly (readonly [text: string | Buffer, json: boolean])[] = [
  ['', false],
  [' \t\r\n', false],
  ['0', true],
  ['-0', true],
  ['01', false],
  ['-', false],
  ['1.', false],
  ['.5', false],
  ['+1', false],
  ['1e', false],
  ['1e+', false],
  ['1E-7', true],
  ['-12.5e+30', true],
  ['1.5.2', false],
  ['0x10', false],
  ['NaN', false],
  ['Infinity', false],
  ['true', true],
  ['tru', false],
  ['truex', false],
  ['false', true],
  ['null', true],
  ['nul', false],
  ['"a"', true],
  ['"a', false],
  ['"\\"', false],
  ['"\\u00e9\\uD800"', true],
  ['"\\u00g9"', false],
  ['"\\u00e"', false],
  ['"\\x41"', false],
  ['"\\/\\b\\f\\n\\r\\t\\\\\\""', true],
  ['"tab\there"', false],
  ['"nul\u0000"', false],
  ['"del\u007f"', true],
  ["'a'", false],
  ['{}', true],
  ['[]', true],
  [' { } ', true],
  ['{"a":1,}', false],
  ['[1,]', false],
  ['[,1]', false],
  ['[1 2]', false],
  ['{"a" 1}', false],
  ['{a:1}', false],
  ['{"a":1 "b":2}', false],
  ['{"a":[1,{"b":[]}],"c":{"d":"e"}}', true],
  ['[1]]', false],
  ['[[1]', false],
  ['{"a":1]', false],
  ['[1}', false],
  ['1 2', false],
  ['[] []', false],
  ['// c\n1', false],
  ['1 /* c */', false],
  ['\u00a01', false],
  ['\ufeff1', false],
  ['"é ☃ 😀 \u2028"', true],
  [Buffer.from([0x22, 0xff, 0xfe, 0x22]), true],
  [Buffer.from([0x22, 0xe2, 0x22]), true],
  [Buffer.from([0x22, 0xe2, 0x82, 0x22]), true],
  [Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]), true],
  [Buffer.from([0x31, 0x80]), false],
  [Buffer.from([0xc2, 0xa0, 0x31]), false],
  [Buffer.from([0x5b, 0xe2, 0x5d]), false],
  [deep(MAX_DEPTH - 1), true],
  [deep(MAX_DEPTH), true],
  [deep(MAX_DEPTH + 1), true],
  [deep(10_000), true],
  [deepObject(MAX_DEPTH + 1), true],
  [deep(MAX_DEPTH + 1, '1,'), false],
  [`${'['.repeat(10_000)}${']'.repeat(9_999)}`, false],
  [`${'['.repeat(MAX_DEPTH)}1${']'.repeat(MAX_DEPTH)} x`, false],
];

test('the check over the bytes gives JSON.parse’s verdict on a table of cases', () => {
  for (const [text, json] of CASES) {
    const bytes = typeof text === 'string' ? Buffer.from(text) : text;
    const label = JSON.stringify(bytes.toString('latin1').slice(0, 40));
    assert.equal(parses(bytes), json, `the table's verdict is JSON.parse's: ${label}`);
    assert.equal(isJsonBytes(bytes), json, label);
  }
});

test('the check starts where it is told: past a byte-order mark, which the caller drops', () => {
  const bom = Buffer.from([0xef, 0xbb, 0xbf]);
  assert.equal(isJsonBytes(Buffer.concat([bom, Buffer.from('{"a":1}')]), 3), true);
  assert.equal(isJsonBytes(Buffer.concat([bom, Buffer.from('{"a":1}')]), 0), false, 'the mark is no white space');
  assert.equal(isJsonBytes(bom, 3), false, 'nothing after the mark');
  assert.equal(isJsonBytes(Buffer.concat([bom, bom, Buffer.from('1')]), 3), false, 'a second mark');
  assert.equal(isJsonBytes(Buffer.from(`xx${deep(MAX_DEPTH + 5)}`), 2), true, 'the fallback past the nesting limit starts there too');
});

/** A JSON text of `value` written with one of several layouts: compact, indented, spaced with every white space. */
const layouts = fc.constantFrom(
  (value: unknown) => JSON.stringify(value),
  (value: unknown) => JSON.stringify(value, null, 2),
  (value: unknown) => JSON.stringify(value, null, '\t'),
  (value: unknown) => ` \r\n${JSON.stringify(value, null, '\r\n ')}\t `,
);

/** Strings with escapes a serialiser never writes (`\/`, `\u` of any character, upper-case hex). */
const escapedStrings = fc
  .array(
    fc.oneof(
      fc.constantFrom('\\/', '\\b', '\\f', '\\n', '\\r', '\\t', '\\"', '\\\\', '\\uD83D\\uDE00', '\\uDFFF', '\\u00E9', 'é', '😀'),
      fc.integer({ min: 0, max: 0xffff }).map((code) => `\\u${code.toString(16).padStart(4, '0')}`),
      fc.string({ maxLength: 4 }).map((s) => JSON.stringify(s).slice(1, -1)),
    ),
    { maxLength: 6 },
  )
  .map((parts) => `"${parts.join('')}"`);

/** Numbers as JSON writes them and as it never does (exponents, leading zeros' neighbours). */
const numbers = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc
    .tuple(
      fc.boolean(),
      fc.nat(),
      fc.option(fc.nat()),
      fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.nat(400))),
    )
    .map(
      ([minus, whole, fraction, exponent]) =>
        `${minus ? '-' : ''}${whole}${fraction === null ? '' : `.${fraction}`}${exponent === null ? '' : exponent.join('')}`,
    ),
);

/** Valid JSON texts: serialised values in several layouts, and hand-written strings and numbers inside arrays. */
const validTexts = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(fc.jsonValue({ maxDepth: 6 }), layouts).map(([value, layout]) => layout(value)) },
  { weight: 1, arbitrary: fc.tuple(fc.jsonValue({ maxDepth: 4, stringUnit: 'binary' }), layouts).map(([value, layout]) => layout(value)) },
  {
    weight: 2,
    arbitrary: fc.array(fc.oneof(escapedStrings, numbers), { minLength: 1, maxLength: 5 }).map((items) => `[${items.join(',')}]`),
  },
  { weight: 1, arbitrary: fc.oneof(escapedStrings, numbers) },
  { weight: 1, arbitrary: fc.integer({ min: MAX_DEPTH - 3, max: MAX_DEPTH + 3 }).map((depth) => deep(depth, '{"a":[1,"b"]}')) },
);

/** Bytes that often break JSON or UTF-8 when put anywhere. */
const NASTY_BYTES = [
  0x22, 0x5c, 0x2c, 0x3a, 0x5b, 0x5d, 0x7b, 0x7d, 0x20, 0x0a, 0x00, 0x1f, 0x7f, 0x80, 0xbf, 0xc0, 0xe2, 0xed, 0xef, 0xf0, 0xff, 0x2d, 0x2e,
  0x30, 0x65, 0x75,
];

/** A change to a valid text's bytes: truncation, a byte replaced, inserted or removed. */
const mutations = fc.oneof(
  fc.nat().map((at) => (bytes: Buffer) => bytes.subarray(0, at % (bytes.length + 1))),
  fc.tuple(fc.nat(), fc.oneof(fc.constantFrom(...NASTY_BYTES), fc.integer({ min: 0, max: 255 }))).map(([at, byte]) => (bytes: Buffer) => {
    const out = Buffer.from(bytes);
    if (out.length > 0) out[at % out.length] = byte;
    return out;
  }),
  fc.tuple(fc.nat(), fc.constantFrom(...NASTY_BYTES)).map(([at, byte]) => (bytes: Buffer) => {
    const cut = at % (bytes.length + 1);
    return Buffer.concat([bytes.subarray(0, cut), Buffer.from([byte]), bytes.subarray(cut)]);
  }),
  fc.nat().map((at) => (bytes: Buffer) => {
    if (bytes.length === 0) return bytes;
    const cut = at % bytes.length;
    return Buffer.concat([bytes.subarray(0, cut), bytes.subarray(cut + 1)]);
  }),
);

test('generated valid JSON passes', () => {
  fc.assert(
    fc.property(validTexts, (text) => {
      const bytes = Buffer.from(text);
      assert.equal(parses(bytes), true, `the generator writes JSON: ${text.slice(0, 80)}`);
      assert.equal(isJsonBytes(bytes), true, text.slice(0, 80));
    }),
    { seed: 0x55e, numRuns: 3_000 },
  );
});

test('generated JSON changed in its bytes gets JSON.parse’s verdict', () => {
  let refused = 0;
  fc.assert(
    fc.property(validTexts, fc.array(mutations, { minLength: 1, maxLength: 3 }), (text, changes) => {
      const bytes = changes.reduce<Buffer>((out, change) => change(out), Buffer.from(text));
      const expected = parses(bytes);
      if (!expected) refused++;
      assert.equal(isJsonBytes(bytes), expected, bytes.toString('latin1').slice(0, 80));
    }),
    { seed: 0x55e, numRuns: 6_000 },
  );
  assert.ok(refused > 1_000, `most changes break the text (${refused} refused)`);
});

test('random bytes get JSON.parse’s verdict', () => {
  const alphabet = fc.oneof(
    fc.constantFrom(...NASTY_BYTES, 0x31, 0x74, 0x72, 0x65, 0x6e, 0x6c, 0x66, 0x61, 0x73),
    fc.integer({ min: 0, max: 255 }),
  );
  fc.assert(
    fc.property(fc.array(alphabet, { maxLength: 24 }), (list) => {
      const bytes = Buffer.from(list);
      assert.equal(isJsonBytes(bytes), parses(bytes), bytes.toString('hex'));
    }),
    { seed: 0x55e, numRuns: 6_000 },
  );
});

/** The 2xx answer as it was made by decoding the body and parsing the text, for comparison. */
function answerByParsing(body: Buffer): { status: number; body: unknown; contentType?: string } {
  const decoded = body.toString('utf8');
  const text = decoded.startsWith('\ufeff') ? decoded.slice(1) : decoded;
  try {
    JSON.parse(text);
  } catch {
    return badResponse();
  }
  return { status: 200, body: text.length === body.length ? body : text, contentType: JSON_CONTENT_TYPE };
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

test('a 2xx answer sends what decoding and parsing sent: the same bytes, or the decoded text', () => {
  const cases: readonly (readonly [label: string, body: Buffer, sent: 'bytes' | 'text' | 'refused'])[] = [
    ['ASCII', Buffer.from('{"a":[1,2]}'), 'bytes'],
    ['a byte-order mark', Buffer.concat([BOM, Buffer.from('{"a":1}')]), 'text'],
    ['only a byte-order mark', BOM, 'refused'],
    ['UTF-8 beyond ASCII', Buffer.from('{"a":"é😀"}'), 'text'],
    ['lone bytes that are not UTF-8', Buffer.from([0x22, 0xff, 0x80, 0x22]), 'bytes'],
    ['a broken sequence and a valid one', Buffer.from([0x22, 0xff, 0xc3, 0xa9, 0x22]), 'text'],
    ['not JSON', Buffer.from('{"a":'), 'refused'],
  ];
  for (const [label, body, sent] of cases) {
    const answer = upstreamSuccessAnswer({ status: 200, headers: {}, body });
    assert.deepEqual(answer, answerByParsing(body), label);
    if (sent === 'bytes') assert.equal(answer.body, body, `${label}: the very buffer`);
    if (sent === 'text') assert.equal(typeof answer.body, 'string', label);
    if (sent === 'refused') assert.equal(answer.status, 502, label);
  }
});

test('generated 2xx bodies, valid and changed, are answered as decoding and parsing answered them', () => {
  fc.assert(
    fc.property(validTexts, fc.array(mutations, { maxLength: 2 }), fc.boolean(), (text, changes, bom) => {
      const changed = changes.reduce<Buffer>((out, change) => change(out), Buffer.from(text));
      const body = bom ? Buffer.concat([BOM, changed]) : changed;
      if (body.length === 0) return;
      assert.deepEqual(
        upstreamSuccessAnswer({ status: 200, headers: {}, body }),
        answerByParsing(body),
        body.toString('latin1').slice(0, 80),
      );
    }),
    { seed: 0x55e, numRuns: 3_000 },
  );
});
