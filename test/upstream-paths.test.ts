/**
 * The path-segment check against traversal look-alikes (docs/behaviour.md "Upstream requests"): every
 * character whose compatibility normalisation (NFKC) holds `.`, `/` or `\` is refused by
 * `safeSegment` and, percent-encoded, by `rawSubPath`; the set is derived here from the engine's own
 * Unicode data by scanning every code point, so the test follows new Unicode versions too.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isTraversalLookAlike, rawSubPath, safeSegment, UnsafePathError } from '../src/upstream/paths.js';

/** Every code point other than ASCII `.`, `/` and `\` whose NFKC form holds one of them. */
function lookAlikes(): number[] {
  const out: number[] = [];
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp === 0x2e || cp === 0x2f || cp === 0x5c) continue;
    if (/[./\\]/.test(String.fromCodePoint(cp).normalize('NFKC'))) out.push(cp);
  }
  return out;
}

const SEGMENT = { prefix: '/api/core-sportbook/', upstream: '/core-sportbook/' };

function utf8Escaped(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

describe('traversal look-alikes in path segments', () => {
  const all = lookAlikes();

  test('U+FE52 (small full stop) and U+FE68 (small reverse solidus) are refused, alone and as "..\\"', () => {
    for (const value of ['\ufe52', '\ufe68', '\ufe52\ufe52', '\ufe52\ufe52\ufe68admin', 'a\ufe52b', 'x\ufe68y']) {
      assert.throws(() => safeSegment('id', value), UnsafePathError, JSON.stringify(value));
    }
    for (const raw of ['%EF%B9%92%EF%B9%92', '%EF%B9%A8admin', 'events/%EF%B9%92%EF%B9%92/x']) {
      assert.throws(() => rawSubPath(`${SEGMENT.prefix}${raw}`, SEGMENT.prefix, SEGMENT.upstream), UnsafePathError, raw);
    }
  });

  test('the scan finds the known look-alikes (the engine has the Unicode data)', () => {
    for (const cp of [0x2024, 0x2025, 0x2026, 0xfe52, 0xfe68, 0xff0e, 0xff0f, 0xff3c]) {
      assert.ok(all.includes(cp), `U+${cp.toString(16).toUpperCase()} is found by the scan`);
    }
    assert.ok(all.length >= 30, `${all.length} look-alikes`);
  });

  test('property: every code point whose NFKC form holds ".", "/" or "\\" is refused, inside a name too', () => {
    const passed: string[] = [];
    for (const cp of all) {
      const ch = String.fromCodePoint(cp);
      assert.equal(isTraversalLookAlike(ch), true, `U+${cp.toString(16)}`);
      for (const value of [ch, `a${ch}b`, `file${ch}pdf`]) {
        try {
          safeSegment('id', value);
          passed.push(`U+${cp.toString(16).toUpperCase()} in ${JSON.stringify(value)}`);
        } catch (error) {
          assert.ok(error instanceof UnsafePathError);
        }
      }
      assert.throws(() => rawSubPath(`${SEGMENT.prefix}a${utf8Escaped(ch)}b`, SEGMENT.prefix, SEGMENT.upstream), UnsafePathError);
    }
    assert.deepEqual(passed, []);
  });

  test('ASCII rules unchanged: a dot inside a name passes, "." and ".." and "a..b" are refused; other letters pass', () => {
    assert.equal(safeSegment('file', 'file.pdf'), 'file.pdf');
    assert.equal(safeSegment('v', 'v1.2.3'), 'v1.2.3');
    for (const value of ['.', '..', 'a..b', 'a/b', 'a\\b']) assert.throws(() => safeSegment('id', value), UnsafePathError, value);
    assert.deepEqual(rawSubPath(`${SEGMENT.prefix}docs/file.pdf`, SEGMENT.prefix, SEGMENT.upstream), {
      path: '/core-sportbook/docs/file.pdf',
      rawQuery: '',
    });
    // Non-ASCII that is not a look-alike stays allowed (percent-encoded once).
    assert.equal(safeSegment('name', 'São-Paulo'), 'S%C3%A3o-Paulo');
    assert.equal(safeSegment('name', 'jogo-⚽'), `jogo-${encodeURIComponent('⚽')}`);
    assert.equal(isTraversalLookAlike('.'), false, 'ASCII is judged by the ASCII rules');
  });

  test('a lone surrogate is refused (it has no UTF-8 form)', () => {
    assert.throws(() => safeSegment('id', 'a\ud800b'), UnsafePathError);
    assert.throws(() => safeSegment('id', '\udc00'), UnsafePathError);
    assert.equal(safeSegment('id', 'a\u{1F600}'), `a${encodeURIComponent('\u{1F600}')}`);
  });
});
