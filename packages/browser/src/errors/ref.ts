/**
 * The reference code of spec 7.1: `EP<dddd>-EM<dddd>`, each part four digits, zero-padded,
 * separated by `-`. A leading `#` is only a display prefix.
 *
 * Isomorphic: no Node built-ins, no imports outside `src/errors`.
 *
 * @module
 */

import { type EndpointCode, type EndpointGroupKey, ENDPOINT_GROUPS, formatMethods, getEndpoint } from './endpoint-codes.js';
import type { HttpMethod } from './endpoint-codes.js';
import { ERROR_GROUPS, type ErrorCode, type ErrorGroupKey, getError } from './error-codes.js';

/** A reference code (spec 7.1), for example `'EP0003-EM0005'` (no `#`). */
export type ErrorRef = `EP${string}-EM${string}`;

/** A well-formed EP code, known to this registry or not (spec 7.1). */
export type EndpointCodeText = `EP${string}`;

/** A well-formed EM code, known to this registry or not (spec 7.1). */
export type ErrorCodeText = `EM${string}`;

const MAX_CODE_NUMBER = 9999;

function pad4(n: number): string {
  return String(n).padStart(4, '0');
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** Whether `text.slice(from, from + 4)` is four ASCII digits. */
function fourDigitsAt(text: string, from: number): boolean {
  for (let i = from; i < from + 4; i++) {
    if (!isDigit(text.charCodeAt(i))) return false;
  }
  return true;
}

function codeNumber(value: number | string, prefix: 'EP' | 'EM', name: string): number {
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0 || value > MAX_CODE_NUMBER) {
      throw new RangeError(`${name} must be an integer from 0 to ${MAX_CODE_NUMBER}, got ${value}`);
    }
    return value;
  }
  if (typeof value === 'string') {
    if (value.length === 6 && value.startsWith(prefix) && fourDigitsAt(value, 2)) return Number(value.slice(2));
    throw new TypeError(`${name} must look like ${prefix}0003 (four digits), got ${JSON.stringify(value.slice(0, 40))}`);
  }
  throw new TypeError(`${name} must be a number or a ${prefix}dddd string`);
}

/**
 * Builds a reference code (spec 7.1).
 *
 * @param ep - the endpoint code: an integer 0-9999 or a string `EPdddd` (exactly four digits)
 * @param em - the error code: an integer 0-9999 or a string `EMdddd` (exactly four digits)
 * @returns `EPdddd-EMdddd`, zero-padded, without the `#` display prefix
 * @throws RangeError when a number is not an integer from 0 to 9999
 * @throws TypeError when a string is not `EPdddd` / `EMdddd`, or the value is neither
 * @example formatRef(3, 5) // 'EP0003-EM0005'
 * @example formatRef('EP0003', 'EM0005') // 'EP0003-EM0005'
 */
export function formatRef(ep: number | string, em: number | string): ErrorRef {
  return `EP${pad4(codeNumber(ep, 'EP', 'ep'))}-EM${pad4(codeNumber(em, 'EM', 'em'))}`;
}

/** A parsed reference code (spec 7.1). The codes are well formed, not necessarily known. */
export interface ParsedRef {
  /** The reference without the `#` display prefix, e.g. `'EP0003-EM0005'`. */
  readonly ref: ErrorRef;
  readonly endpointCode: EndpointCodeText;
  readonly errorCode: ErrorCodeText;
  /** Numeric part of the EP code (`3` for `EP0003`). */
  readonly endpointNumber: number;
  /** Numeric part of the EM code (`5` for `EM0005`). */
  readonly errorNumber: number;
}

/**
 * Parses a reference code (spec 7.1). Accepts exactly `EPdddd-EMdddd`, optionally preceded
 * by one `#`: upper-case letters, four digits each, nothing around it (trim user input first).
 * It checks the syntax only: codes from a newer registry parse too (see {@link explainRef}).
 *
 * @returns the parts, or `null` for anything else (wrong shape, lower case, surrounding
 *   white space, not a string). Never throws.
 * @example parseRef('#EP0003-EM0005') // { ref: 'EP0003-EM0005', endpointCode: 'EP0003', ... }
 * @example parseRef('EP3-EM5') // null
 */
export function parseRef(text: unknown): ParsedRef | null {
  if (typeof text !== 'string') return null;
  const s = text.startsWith('#') ? text.slice(1) : text;
  if (s.length !== 13 || !s.startsWith('EP') || s.slice(6, 9) !== '-EM' || !fourDigitsAt(s, 2) || !fourDigitsAt(s, 9)) {
    return null;
  }
  const endpointCode = s.slice(0, 6) as EndpointCodeText;
  const errorCode = s.slice(7) as ErrorCodeText;
  return {
    ref: s as ErrorRef,
    endpointCode,
    errorCode,
    endpointNumber: Number(s.slice(2, 6)),
    errorNumber: Number(s.slice(9)),
  };
}

/** The endpoint part of {@link RefExplanation}: a known EP row. */
export interface KnownEndpoint {
  readonly known: true;
  readonly code: EndpointCode;
  /** Methods as the specification writes them: `'POST'`, `'GET/POST/DELETE'`, `'any'`. */
  readonly method: string;
  readonly methods: readonly HttpMethod[] | 'any';
  /** Path pattern; `null` for EP0000. */
  readonly path: string | null;
  readonly meaning: string;
  readonly group: EndpointGroupKey;
  readonly groupTitle: string;
}

/** The error part of {@link RefExplanation}: a known EM row. */
export interface KnownError {
  readonly known: true;
  readonly code: ErrorCode;
  /** `'session'` (401 families) or `'status'` (other statuses). */
  readonly family: ErrorGroupKey;
  readonly familyTitle: string;
  /** The match column of spec 7.3. */
  readonly match: string;
  readonly meaning: string;
  /** Short English message for the user. */
  readonly message: string;
  readonly sessionEnding: boolean;
}

/**
 * The unknown marker of {@link RefExplanation}: a code this registry does not hold (from a
 * newer version, or never published), or `code: null` when the reference did not parse.
 */
export interface UnknownCode {
  readonly known: false;
  readonly code: string | null;
  /** A readable explanation, e.g. `'unknown endpoint code EP0999'`. */
  readonly meaning: string;
}

/** Result of {@link explainRef}. */
export interface RefExplanation {
  /** The normalised reference (no `#`), or `null` when the input did not parse. */
  readonly ref: ErrorRef | null;
  /** Whether the input parsed (see {@link parseRef}); the codes may still be unknown. */
  readonly valid: boolean;
  readonly endpoint: KnownEndpoint | UnknownCode;
  readonly error: KnownError | UnknownCode;
}

/**
 * Explains a reference code for support staff and logs (spec 7.1-7.3): the EP row
 * (method, path, meaning) and the EM row (family, meaning, user message).
 *
 * @param ref - a reference such as `'#EP0003-EM0005'` (see {@link parseRef} for the syntax)
 * @returns an explanation; an unknown code gives `{ known: false, code, meaning }` in its part,
 *   and an unparsable input gives `valid: false`, `ref: null` and `code: null` in both parts.
 *   Never throws.
 * @example explainRef('EP0001-EM0003').error.meaning // 'session expired'
 */
export function explainRef(ref: unknown): RefExplanation {
  const parsed = parseRef(ref);
  if (parsed === null) {
    const meaning = 'not a reference code (expected EPdddd-EMdddd)';
    return {
      ref: null,
      valid: false,
      endpoint: { known: false, code: null, meaning },
      error: { known: false, code: null, meaning },
    };
  }
  const ep = getEndpoint(parsed.endpointCode);
  const em = getError(parsed.errorCode);
  return {
    ref: parsed.ref,
    valid: true,
    endpoint: ep
      ? {
          known: true,
          code: ep.code,
          method: formatMethods(ep.methods),
          methods: ep.methods,
          path: ep.path,
          meaning: ep.meaning,
          group: ep.group,
          groupTitle: ENDPOINT_GROUPS[ep.group].title,
        }
      : { known: false, code: parsed.endpointCode, meaning: `unknown endpoint code ${parsed.endpointCode}` },
    error: em
      ? {
          known: true,
          code: em.code,
          family: em.group,
          familyTitle: ERROR_GROUPS[em.group].title,
          match: em.match,
          meaning: em.meaning,
          message: em.message,
          sessionEnding: em.sessionEnding,
        }
      : { known: false, code: parsed.errorCode, meaning: `unknown error code ${parsed.errorCode}` },
  };
}
