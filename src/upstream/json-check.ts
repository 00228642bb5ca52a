/**
 * Whether an upstream body is JSON, decided over its bytes without building its value
 * (docs/behaviour.md "Upstream answers", "JSON": a 2xx that is not JSON is 502 `upstream_bad_response`).
 * A route that passes the upstream's bytes on needs only the verdict; `JSON.parse` would build the
 * whole tree for the collector to take back at once.
 *
 * The verdict is `JSON.parse`'s on the body decoded as UTF-8 (`Buffer#toString('utf8')`), exactly:
 *
 * - the grammar is RFC 8259's, which `JSON.parse` follows (no comments, trailing commas, `NaN`,
 *   single quotes; white space is space, tab, LF and CR only);
 * - a byte of 0x80 or more is, once decoded, a character above U+007F (or U+FFFD where the bytes are not
 *   UTF-8): allowed inside a string, refused anywhere else. Decoding never swallows an ASCII byte
 *   (WHATWG's UTF-8 decoder ends a broken sequence before it), so every ASCII byte reads as itself;
 * - nesting deeper than {@link MAX_DEPTH} levels is left to `JSON.parse` itself, which has no limit of
 *   its own in V8.
 *
 * @module
 */

/** Deepest nesting checked over the bytes; a deeper body is decided by `JSON.parse`. */
export const MAX_DEPTH = 512;

/** What a byte is inside a string: 0 an ordinary character, 1 the closing quote, 2 an escape, 3 a control character. */
const IN_STRING = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) IN_STRING[c] = 3;
IN_STRING[0x22] = 1;
IN_STRING[0x5c] = 2;

/** The characters after `\` that make an escape (RFC 8259 §7), `u` included (four hex digits follow). */
const ESCAPES = new Uint8Array(256);
for (const c of '"\\/bfnrtu') ESCAPES[c.charCodeAt(0)] = 1;

/** Hex digits. */
const HEX = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1;

/** Whether each open container is an object (1) or an array (0), outermost first; one check runs at a time. */
const OPEN = new Uint8Array(MAX_DEPTH);

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const PLUS = 0x2b;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** What the scan expects next: a value, what follows a value (`,` or a close), an object's member name, its `:`. */
const VALUE = 0;
const AFTER_VALUE = 1;
const MEMBER_NAME = 2;
const NAME_SEPARATOR = 3;

/**
 * The verdict over the bytes: `true` or `false`, or `undefined` when the nesting goes deeper than
 * {@link MAX_DEPTH} (not decided here). One loop over the bytes with the open containers in
 * {@link OPEN}: a byte is read once, and no value is made.
 */
function verdict(bytes: Uint8Array, from: number): boolean | undefined {
  const n = bytes.length;
  const open = OPEN;
  const inString = IN_STRING;
  let depth = 0;
  let expect = VALUE;
  let i = from;
  let c: number;
  for (;;) {
    c = i < n ? (bytes[i] as number) : -1;
    while (c === SPACE || c === LF || c === CR || c === TAB) c = ++i < n ? (bytes[i] as number) : -1;
    if (c === QUOTE && (expect === VALUE || expect === MEMBER_NAME)) {
      // A string (RFC 8259 §7): a value, or a member's name.
      i++;
      for (;;) {
        while (i < n && inString[bytes[i] as number] === 0) i++;
        if (i >= n) return false;
        const kind = inString[bytes[i] as number];
        i++;
        if (kind === 1) break;
        if (kind === 3 || i >= n) return false;
        const escaped = bytes[i] as number;
        i++;
        if (ESCAPES[escaped] === 0) return false;
        if (escaped === 0x75) {
          if (i + 4 > n) return false;
          const hex = (HEX[bytes[i] as number] as number) + (HEX[bytes[i + 1] as number] as number);
          if (hex + (HEX[bytes[i + 2] as number] as number) + (HEX[bytes[i + 3] as number] as number) !== 4) return false;
          i += 4;
        }
      }
      expect = expect === MEMBER_NAME ? NAME_SEPARATOR : AFTER_VALUE;
    } else if (expect === AFTER_VALUE) {
      if (depth === 0) return i === n;
      const object = open[depth - 1] === 1;
      if (c === COMMA) {
        expect = object ? MEMBER_NAME : VALUE;
      } else if (c === (object ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        depth--;
      } else {
        return false;
      }
      i++;
    } else if (expect === MEMBER_NAME) {
      return false;
    } else if (expect === NAME_SEPARATOR) {
      if (c !== COLON) return false;
      i++;
      expect = VALUE;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      const object = c === OPEN_OBJECT;
      c = ++i < n ? (bytes[i] as number) : -1;
      while (c === SPACE || c === LF || c === CR || c === TAB) c = ++i < n ? (bytes[i] as number) : -1;
      if (c === (object ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        i++;
        expect = AFTER_VALUE;
      } else {
        if (depth === MAX_DEPTH) return undefined;
        open[depth++] = object ? 1 : 0;
        expect = object ? MEMBER_NAME : VALUE;
      }
    } else if (c === 0x74) {
      // true
      if (i + 4 > n || bytes[i + 1] !== 0x72 || bytes[i + 2] !== 0x75 || bytes[i + 3] !== 0x65) return false;
      i += 4;
      expect = AFTER_VALUE;
    } else if (c === 0x66) {
      // false
      if (i + 5 > n || bytes[i + 1] !== 0x61 || bytes[i + 2] !== 0x6c || bytes[i + 3] !== 0x73 || bytes[i + 4] !== 0x65) return false;
      i += 5;
      expect = AFTER_VALUE;
    } else if (c === 0x6e) {
      // null
      if (i + 4 > n || bytes[i + 1] !== 0x75 || bytes[i + 2] !== 0x6c || bytes[i + 3] !== 0x6c) return false;
      i += 4;
      expect = AFTER_VALUE;
    } else {
      // A number (RFC 8259 §6): -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
      if (c === MINUS) c = ++i < n ? (bytes[i] as number) : -1;
      if (c === ZERO) {
        c = ++i < n ? (bytes[i] as number) : -1;
      } else if (c > ZERO && c <= NINE) {
        do c = ++i < n ? (bytes[i] as number) : -1;
        while (c >= ZERO && c <= NINE);
      } else {
        return false;
      }
      if (c === DOT) {
        c = ++i < n ? (bytes[i] as number) : -1;
        if (c < ZERO || c > NINE) return false;
        do c = ++i < n ? (bytes[i] as number) : -1;
        while (c >= ZERO && c <= NINE);
      }
      if (c === 0x65 || c === 0x45) {
        c = ++i < n ? (bytes[i] as number) : -1;
        if (c === PLUS || c === MINUS) c = ++i < n ? (bytes[i] as number) : -1;
        if (c < ZERO || c > NINE) return false;
        do c = ++i < n ? (bytes[i] as number) : -1;
        while (c >= ZERO && c <= NINE);
      }
      expect = AFTER_VALUE;
    }
  }
}

/**
 * Whether `bytes` from `from` are one JSON text: `JSON.parse(bytes.toString('utf8', from))` would
 * succeed (see the module's notes), without building its value. Empty or white-space-only input is
 * not JSON. Nesting deeper than {@link MAX_DEPTH} is decided by `JSON.parse`.
 *
 * @param bytes - the body, as the upstream sent it.
 * @param from - where the JSON text starts (3 past a UTF-8 byte-order mark, which the caller drops).
 * @returns `true` when the bytes are JSON; never throws.
 */
export function isJsonBytes(bytes: Buffer, from = 0): boolean {
  const found = verdict(bytes, from);
  if (found !== undefined) return found;
  try {
    JSON.parse(bytes.toString('utf8', from));
    return true;
  } catch {
    return false;
  }
}
